"""The conda environments of the rules (envs/*.yaml) agree with pyproject.toml's pins.

conda itself cannot run here, so this checks the text: every pip requirement of every env
names a package that pyproject.toml depends on, with the same version specifier, and every
rule's `conda:` directive points at an env that exists.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")


def _name(s: str) -> str:
    return re.sub(r"[-_.]+", "-", s).lower()


def _pins() -> dict[str, str]:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"])
    for extra in meta.get("optional-dependencies", {}).values():
        reqs += extra
    out = {}
    for req in reqs:
        name, spec = _REQ.match(req).groups()
        out[_name(name)] = spec.replace(" ", "")
    return out


ENVS = sorted((REPO / "envs").glob("*.yaml"))


def test_there_are_envs():
    assert {p.stem for p in ENVS} >= {"fmat", "score", "models", "criteria", "report"}


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_env_pins_equal_pyproject(env):
    pins = _pins()
    spec = yaml.safe_load(env.read_text())
    pip = [d for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert pip, f"{env.name}: no pip block"
    for req in pip[0]["pip"]:
        name, version = _REQ.match(req).groups()
        key = _name(name)
        assert key in pins, f"{env.name}: {name} is not a dependency in pyproject.toml"
        assert version.replace(" ", "") == pins[key], (
            f"{env.name}: {name}{version} but pyproject.toml pins {name}{pins[key]}")


def test_torch_is_pinned_where_models_run():
    """Scoring loads models (torch); downloads only need huggingface-hub."""
    pins = _pins()
    for stem in ("score",):
        text = (REPO / "envs" / f"{stem}.yaml").read_text()
        assert f"torch{pins['torch']}" in text.replace(" ", ""), stem


def test_every_rule_names_an_existing_env():
    used = set()
    for smk in list((REPO / "rules").glob("*.smk")):
        for m in re.finditer(r'conda:\s*\n\s*"([^"]+)"', smk.read_text()):
            used.add(m.group(1))
            assert (smk.parent / m.group(1)).resolve().exists(), f"{smk.name}: {m.group(1)} missing"
    assert used, "no conda: directives found"


#: runtime dependencies that fmat never imports itself, and why they are needed anyway
INDIRECT = {
    "protobuf": "transformers reads SentencePiece tokenizers (ALBERT, XLM-R) through it",
    "sentencepiece": "the slow-tokenizer conversion of SentencePiece models (ALBERT, XLM-R) needs it",
    "openpyxl": "pandas.read_excel's engine for the BLS table (xlsx)",
    "safetensors": "transformers reads model.safetensors with it (the weights format fmat prefers)",
    "pyarrow": "pandas' parquet engine: fmat.io reads and writes every parquet table with it",
}
#: distribution name -> import name, where they differ
IMPORT_NAME = {"pyyaml": "yaml", "huggingface-hub": "huggingface_hub", "scikit-learn": "sklearn",
               "jsonschema-rs": "jsonschema_rs"}


def test_every_runtime_dependency_is_used_by_the_package():
    """A runtime dependency is imported by fmat (or listed in INDIRECT with its reason): a package
    that only the tests import belongs in the [test] extra (pingouin was one)."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "fmat").rglob("*.py"))
    unused = []
    for req in meta["dependencies"]:
        name = _name(_REQ.match(req).group(1))
        module = IMPORT_NAME.get(name, name.replace("-", "_"))
        if name in INDIRECT:
            continue
        if not re.search(rf"^\s*(import|from)\s+{re.escape(module)}\b", source, re.M):
            unused.append(name)
    assert unused == [], f"runtime dependencies no module of fmat imports: {unused} (move them to [test])"
    assert set(INDIRECT) <= {_name(_REQ.match(r).group(1)) for r in meta["dependencies"]}
