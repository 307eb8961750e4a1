"""The dependencies' versions agree everywhere (issue 33): pyproject.toml gives the library's
ranges and fmat_replication/pyproject.toml the replication's, envs/lock.txt the exact versions
tested together (`make env` installs both distributions with it as pip constraints), and the
conda environments of the rules (envs/*.yaml) pin the lock; their post-deploy scripts install
the two packages of the checkout.

conda itself cannot run here, so this checks the text: every pip requirement of every env
names a locked package with the locked version, the lock satisfies every range of
pyproject.toml and holds nothing else, and every rule's `conda:` directive points at an env
that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")


def _name(s: str) -> str:
    return re.sub(r"[-_.]+", "-", s).lower()


#: the two distributions of this repository: the library and the replication built on it
PYPROJECTS = (REPO / "pyproject.toml", REPO / "fmat_replication" / "pyproject.toml")


def _meta(pyproject: Path) -> dict:
    return tomllib.loads(pyproject.read_text())["project"]


def _requirements() -> dict[str, Requirement]:
    """Every third-party requirement of both distributions (dependencies and extras); the
    replication's requirement of the library (a distribution of this repository) is left out."""
    ours = {_name(_meta(p)["name"]) for p in PYPROJECTS}
    reqs = []
    for pyproject in PYPROJECTS:
        meta = _meta(pyproject)
        reqs += meta["dependencies"]
        for extra in meta.get("optional-dependencies", {}).values():
            reqs += extra
        for group in tomllib.loads(pyproject.read_text()).get("dependency-groups", {}).values():
            reqs += [r for r in group if isinstance(r, str)]
    return {_name(r.name): r for r in map(Requirement, reqs) if _name(r.name) not in ours}


def _lock() -> dict[str, str]:
    out = {}
    for line in (REPO / "envs" / "lock.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            out[_name(name)] = version.strip()
    return out


ENVS = sorted((REPO / "envs").glob("*.yaml"))


def test_there_are_envs():
    assert {p.stem for p in ENVS} >= {"fmat", "score", "models", "criteria", "report"}


def test_the_library_gives_ranges_and_the_lock_satisfies_them():
    reqs, lock = _requirements(), _lock()
    assert sorted(lock) == sorted(reqs), "envs/lock.txt and the pyproject.toml files name different packages"
    for name, req in reqs.items():
        assert not any(s.operator == "==" for s in req.specifier), f"pyproject.toml pins {req}: give a range"
        assert req.specifier.contains(lock[name]), f"envs/lock.txt has {name}=={lock[name]}, outside {req}"


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_env_pins_equal_the_lock(env):
    lock = _lock()
    spec = yaml.safe_load(env.read_text())
    pip = [d for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert pip, f"{env.name}: no pip block"
    for req in pip[0]["pip"]:
        name, version = _REQ.match(req).groups()
        key = _name(name)
        assert key in lock, f"{env.name}: {name} is not in envs/lock.txt"
        assert version.replace(" ", "") == f"=={lock[key]}", (
            f"{env.name}: {name}{version} but envs/lock.txt has {name}=={lock[key]}"
        )


def test_make_env_installs_with_the_lock():
    make = (REPO / "Makefile").read_text()
    installs = [line for line in make.splitlines() if "pip install" in line and "upgrade pip" not in line]
    assert installs and all("-c envs/lock.txt" in line for line in installs), installs


def test_make_env_installs_both_distributions_editable():
    """The library and the replication (its own pyproject), both editable, with the development
    group; the venv is made again when either pyproject changes, and its stamp is not the
    library's own command (.venv/bin/fmat), which a library-only install makes too (issue 42)."""
    make = (REPO / "Makefile").read_text()
    assert "env: $(ENV_STAMP)" in make.splitlines()
    target = next(line for line in make.splitlines() if line.startswith("$(ENV_STAMP):"))
    assert "pyproject.toml" in target.split() and "fmat_replication/pyproject.toml" in target.split()
    assert not any(line.startswith("$(BIN)/fmat:") for line in make.splitlines())
    install = next(line for line in make.splitlines() if "pip install" in line and "-e ." in line)
    assert "-e ./fmat_replication" in install and "--group dev" in install, install


def test_the_library_holds_the_library_and_the_replication_the_workflow():
    """Issue 42: the workflow's tools (snakemake, the SLURM plugin) are the replication's
    dependencies, not a library extra; the development tools are a dependency group, not an
    extra a user of the library could install. Issue 53: no Jupyter kernel renders a page, so its
    packages are in no pyproject, lock or environment."""
    library, replication = (_meta(p) for p in PYPROJECTS)
    lib = {_name(Requirement(r).name) for r in library["dependencies"]}
    rep = {_name(Requirement(r).name) for r in replication["dependencies"]}
    workflow = {"snakemake", "snakemake-executor-plugin-slurm"}
    assert workflow <= rep and not workflow & lib
    kernel = {"ipykernel", "nbclient", "papermill", "jupyter-client", "nbconvert", "jupytext"}
    assert not kernel & (lib | rep | set(_lock())), kernel & (lib | rep | set(_lock()))
    for env in (REPO / "envs").glob("*.yaml"):
        assert not [k for k in kernel if k in env.read_text()], env
    assert "optional-dependencies" not in library  # no [workflow] or [test] extra any more
    dev = {_name(Requirement(r).name) for r in tomllib.loads(PYPROJECTS[0].read_text())["dependency-groups"]["dev"]}
    assert {"pytest", "ruff", "snakefmt", "playwright", "pingouin"} <= dev and not dev & lib


def test_the_replication_requires_this_library_and_the_replication_only_packages():
    """fmat-replication depends on the library at a range its version satisfies, and openpyxl (the
    BLS table's xlsx reader: the replication's criteria only) is its dependency, not the library's."""
    library, replication = (_meta(p) for p in PYPROJECTS)
    reqs = {_name(r.name): r for r in map(Requirement, replication["dependencies"])}
    own = reqs[_name(library["name"])]
    assert own.specifier and own.specifier.contains(library["version"]), own
    assert "openpyxl" in reqs
    every_library_req = list(library["dependencies"]) + [r for e in library.get("optional-dependencies", {}).values() for r in e]
    assert "openpyxl" not in {_name(Requirement(r).name) for r in every_library_req}


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_each_env_installs_the_checkout_after_it_is_made(env):
    """Snakemake runs envs/<name>.post-deploy.sh in the new environment: it installs the library and
    the replication of the checkout the Snakefile names (FMAT_CHECKOUT), editable, with no
    dependencies (the yaml pins them). Checked as text: no conda here."""
    script = env.with_name(f"{env.stem}.post-deploy.sh")
    assert script.is_file(), f"{env.name}: no {script.name}"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    install = [ln for ln in text.splitlines() if "pip install" in ln]
    assert install == ['python -m pip install --no-deps -e "$checkout" -e "$checkout/fmat_replication"'], install
    assert "FMAT_CHECKOUT" in text
    assert "os.environ.update(FMAT_CHECKOUT=workflow.basedir)" in (REPO / "Snakefile").read_text()


def test_torch_is_pinned_where_models_run():
    """Scoring loads models (torch); downloads only need huggingface-hub."""
    lock = _lock()
    for stem in ("score",):
        text = (REPO / "envs" / f"{stem}.yaml").read_text()
        assert f"torch=={lock['torch']}" in text.replace(" ", ""), stem


def test_every_rule_names_an_existing_env():
    used = set()
    for smk in [*(REPO / "rules").glob("*.smk"), REPO / "benchmarks" / "concept.smk"]:
        for m in re.finditer(r'conda:\s*\n\s*"([^"]+)"', smk.read_text()):
            used.add(m.group(1))
            assert (smk.parent / m.group(1)).resolve().exists(), f"{smk.name}: {m.group(1)} missing"
    assert used, "no conda: directives found"


#: runtime dependencies that fmat never imports itself, and why they are needed anyway
INDIRECT = {
    "protobuf": "transformers reads SentencePiece tokenizers (ALBERT, XLM-R) through it",
    "sentencepiece": "the slow-tokenizer conversion of SentencePiece models (ALBERT, XLM-R) needs it",
    "safetensors": "transformers reads model.safetensors with it (the weights format fmat prefers)",
    "pyarrow": "pandas' parquet engine: fmat.io reads and writes every parquet table with it",
}
#: distribution name -> import name, where they differ
IMPORT_NAME = {
    "pyyaml": "yaml",
    "huggingface-hub": "huggingface_hub",
    "scikit-learn": "sklearn",
    "jsonschema-rs": "jsonschema_rs",
}


def test_every_runtime_dependency_is_used_by_the_package():
    """A runtime dependency is imported by fmat (or listed in INDIRECT with its reason): a package
    that only the tests import belongs in the dev dependency group (pingouin was one)."""
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
    assert unused == [], f"runtime dependencies no module of fmat imports: {unused} (move them to the dev group)"
    assert set(INDIRECT) <= {_name(_REQ.match(r).group(1)) for r in meta["dependencies"]}


def test_make_env_completes_a_venv_that_holds_only_the_library(tmp_path):
    """Issue 42: after the README's three library lines (a .venv with .venv/bin/fmat), `make env`
    said "Nothing to be done" and `make demo` then failed (`.venv/bin/snakemake: not found`).
    The environment's stamp is its own file, so make plans the rest of the install (dry run)."""
    import subprocess

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "fmat").write_text("#!/bin/sh\n", encoding="utf-8")  # what the library alone leaves
    res = subprocess.run(["make", "-n", "-C", str(REPO), "env", f"VENV={venv}"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "Nothing to be done" not in res.stdout
    assert "-e ./fmat_replication --group dev" in res.stdout and f"touch {venv}/.fmat-env" in res.stdout, res.stdout
