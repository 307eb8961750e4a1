"""Every command and snippet in README.md and docs/ runs as written (issue 34).

The documentation's ```python and ```bash blocks are found with Sybil (its Markdown code-block
lexer) and each is run in a fresh working folder per page, as a reader would run it: a bash
block with ``bash -e`` (``fmat`` is this environment's command), a Python block with this
environment's ``python``. Output, diagrams and file formats are ```text (or no language) and
are not programs.

The hub, a GPU and SLURM are replaced by the stand-ins the other tests use: tiny models built
by :mod:`fmat.tiny` served by a stand-in hub (``tests/docs_stand_ins/sitecustomize.py``:
``fmat download bert-base-uncased`` fills the real cache layout from it; nothing reaches the
network), the tiny models as ``resources/demo_models/`` and the workflow's LPR table of Study 1A
as ``results/lpr/1A.parquet`` (made by the workflow's own lpr stage). A block that cannot run
here says why, on the line before it: ``<!-- not-run: REASON -->`` (the whole workflow, SLURM,
the 5 GB GloVe file...; each names where it is tested); ``test_every_block_runs_or_says_why``
counts them and prints "documented commands that run as written: N of N".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = ("python", "bash")
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.+?)\s*-->\s*$")
STAND_INS = Path(__file__).with_name("docs_stand_ins")
#: the words the documentation's examples use: the stand-in models hold them as whole words
WORDS = [
    "man",
    "woman",
    "boy",
    "girl",
    "he",
    "she",
    "He",
    "She",
    "His",
    "Her",
    "his",
    "her",
    "nurse",
    "engineer",
    "doctor",
    "teacher",
    "programmer",
    "works",
    "as",
    "is",
    "a",
    "an",
    "the",
    "The",
    "job",
    "leads",
    "teams",
    "raises",
    "children",
    "lead",
    "raise",
    "occupation",
    "Most",
    "men",
    "women",
    "career",
    "family",
    "fathers",
    "mothers",
    "are",
    "should",
    "be",
    "laughs",
    "laugh",
    "author",
]


@dataclass
class Block:
    doc: Path
    line: int
    language: str
    source: str
    reason: str | None

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def collect() -> list[Block]:
    from sybil import Sybil
    from sybil.parsers.markdown import CodeBlockParser

    sybil = Sybil(parsers=[CodeBlockParser(lang, evaluator=lambda example: None) for lang in LANGUAGES])
    blocks = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for example in sybil.parse(doc).examples():
            before = [ln for ln in text[: example.region.start].splitlines() if ln.strip()]
            match = NOT_RUN.search(before[-1]) if before else None
            blocks.append(
                Block(doc, example.line, example.region.lexemes["arguments"], example.parsed, match.group(1) if match else None)
            )
    return blocks


BLOCKS = collect()


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    """The stand-ins: a hub of tiny models (bert-base-uncased, roberta-base) and an empty cache."""
    from fmat.tiny import build_tiny_model

    root = tmp_path_factory.mktemp("docs_world")
    hub = root / "hub"
    build_tiny_model(hub / "bert-base-uncased", "bert-uncased", WORDS, seed=1)
    build_tiny_model(hub / "roberta-base", "roberta", WORDS, seed=2)
    (root / "hf").mkdir()
    # a reader who followed the README has downloaded these two (a page may use them without
    # showing the download again); README's own `fmat download` runs again as written
    res = subprocess.run(
        [sys.executable, "-m", "fmat.cli", "download", "bert-base-uncased", "roberta-base"],
        cwd=root,
        env=environment(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout
    return root


def _workflow_lpr(folder: Path) -> None:
    """results/lpr/1A.parquet as the workflow's lpr stage writes it, from stand-in scores."""
    import numpy as np

    from fmat.io import write_table
    from fmat.runner import label_scores
    from fmat.study import load_study
    from fmat_replication.lpr_stage import lpr

    study = REPO / "config" / "studies" / "1A.yaml"
    queries = load_study(study).queries
    rng = np.random.default_rng(1)
    paths = []
    for model in ("bert-base-uncased", "roberta-base"):
        t = queries.copy()
        t["output"] = t["token"] = t["M_word"].astype(str)
        t["prob"] = rng.uniform(0.01, 0.2, len(t))
        path = folder / "results" / "scores" / "1A" / f"{model}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(label_scores(t, model, queries), path)
        paths.append(path)
    out = folder / "results" / "lpr" / "1A.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    lpr(study, None, paths, out)


_FOLDERS: dict[Path, Path] = {}


def folder_for(doc: Path, world: Path) -> Path:
    """The page's fresh working folder: the repository's inputs (config, reports, data, profiles,
    benchmarks with their committed results) and the stand-ins; everything the page's commands
    write stays in it."""
    if doc not in _FOLDERS:
        work = world / "work" / doc.stem
        work.mkdir(parents=True)
        for name in ("config", "reports", "data", "profiles", "Snakefile", "rules", "scripts", "benchmarks"):
            (work / name).symlink_to(REPO / name)
        models = work / "resources" / "demo_models"
        models.mkdir(parents=True)
        (models / "tiny-bert-base-uncased").symlink_to(world / "hub" / "bert-base-uncased")
        _workflow_lpr(work)
        _FOLDERS[doc] = work
    return _FOLDERS[doc]


def environment(world: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "FMAT_", "PYTHON"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(STAND_INS),
        HF_HOME=str(world / "hf"),
        HF_HUB_OFFLINE="1",
        FMAT_DOCS_HUB=str(world / "hub"),
        PYTHONWARNINGS="ignore",
        MPLBACKEND="Agg",
    )
    return env


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.reason is None], ids=lambda b: b.id)
def test_documented_block_runs_as_written(block, world):
    work = folder_for(block.doc, world)
    if block.language == "python":
        argv = [sys.executable, "-c", block.source]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.source]
    res = subprocess.run(
        argv, cwd=work, env=environment(world), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600
    )
    assert res.returncode == 0, f"{block.id} ({block.language}) exited {res.returncode}:\n{res.stdout[-4000:]}"


def test_every_block_runs_or_says_why(capsys):
    run = [b for b in BLOCKS if b.reason is None]
    not_run = [b for b in BLOCKS if b.reason is not None]
    assert all(len(b.reason) > 10 for b in not_run), [b.id for b in not_run if len(b.reason) <= 10]
    # a floor, so that marking blocks not-run cannot quietly replace running them
    assert len(run) >= 14, f"only {len(run)} blocks run"
    commands = sum(_commands(b) for b in run)
    with capsys.disabled():
        print(
            f"\ndocumented commands that run as written: {commands} of {commands} ({len(run)} blocks; "
            f"+ {len(not_run)} block(s) marked not-run, each with its reason: "
            + "; ".join(f"{b.id}: {b.reason}" for b in not_run)
            + ")"
        )


def _commands(block: Block) -> int:
    """A Python block is one snippet; a bash block has one command per line (continuations joined)."""
    if block.language == "python":
        return 1
    lines = block.source.replace("\\\n", " ").splitlines()
    return sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))


def test_the_distribution_is_not_pypis_fmat_and_the_readme_says_how_to_install():
    """`fmat` on PyPI is another project (a materials-design tool): this library's distribution
    has its own name, and the README installs it from the repository."""
    import tomllib

    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["name"] == "fill-mask-association-test"
    assert meta["scripts"] == {"fmat": "fmat.cli:main"}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install -e ." in readme and "source .venv/bin/activate" in readme
    assert not re.search(r"pip install fmat\b(?!`? installs another)", readme.replace("\n", " "))
