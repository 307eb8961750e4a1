"""Adding an analysis family is four files (docs/adding-a-study.md, "Adding an analysis family"):
its analysis, its oracle, its test and its example study. The library ships one to copy,
``docs/examples/family/`` (``d_by_query``). Here the package is copied into a temporary folder,
the four files dropped in, and the family's own test and the tests every family must pass (the
page's per-item table, the property test, the oracle's rules) run there: nothing else needs
editing."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fmat import analyses

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "examples" / "family"
DOC = REPO / "docs" / "adding-a-study.md"
#: the files a family takes, as the example lays them out (relative to the repository's root)
FILES = [
    "config/studies/X1b.yaml",
    "fmat/analyses/d_by_query.py",
    "fmat/oracle/d_by_query.py",
    "tests/test_d_by_query.py",
]
#: the tests every family must pass, run in the copy
GENERIC = [
    "tests/test_d_by_query.py",
    "tests/test_study_page_items.py::test_the_page_shows_per_item_values_for_every_registered_family[d_by_query]",
    "tests/test_analyses_property.py::test_every_registered_family_is_drawn",
    "tests/test_analyses_property.py::test_a_file_that_passes_the_check_runs_or_says_what_to_fix[d_by_query]",
    "tests/test_oracle.py::test_the_oracle_loads_none_of_the_code_it_checks",
    "tests/test_oracle.py::test_the_oracle_states_each_formula_in_its_notes",
    "tests/test_oracle.py::test_every_oracle_is_the_oracle_of_a_registered_analysis",
]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_the_example_is_the_four_files_the_docs_list():
    assert _files(EXAMPLE) == FILES
    doc = DOC.read_text(encoding="utf-8")
    section = doc.split("## Adding an analysis family", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([^`]+)` \|", section, re.M) == [FILES[1], FILES[2], FILES[3], FILES[0]]
    # the page's code of d_by_query (run by tests/test_adding_a_study.py) is the shipped file
    blocks = [b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if '@register("d_by_query"' in b]
    assert blocks == [(EXAMPLE / FILES[1]).read_text(encoding="utf-8")]


@pytest.mark.slow  # about 15 s on an idle core: a pytest of its own in the copy
def test_a_family_added_in_a_copy_passes_every_family_test(tmp_path):
    root = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "fmat", root / "fmat", ignore=ignore)
    shutil.copytree(REPO / "config", root / "config")  # the studies, and the demo's models and world
    shutil.copytree(REPO / "tests" / "tools", root / "tests" / "tools", ignore=ignore)
    for name in ("conftest.py", "test_study_page_items.py", "test_analyses_property.py", "test_oracle.py"):
        shutil.copy(REPO / "tests" / name, root / "tests" / name)
    before = _files(root)
    for f in FILES:  # the four files, and nothing else
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(EXAMPLE / f, root / f)
    assert sorted(set(_files(root)) - set(before)) == FILES
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *GENERIC],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"{len(GENERIC) + 2} passed" in run.stdout, run.stdout[-2000:]  # test_d_by_query.py holds 3
    where = subprocess.run(
        [sys.executable, "-c", "import fmat; print(fmat.__file__)"], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert Path(where.stdout.strip()).is_relative_to(root), "the copy's package ran, not the checkout's"


def _named_families(path: Path, names: set[str]) -> list[str]:
    """The string constants of ``path``'s code (docstrings left out) that are a family's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{node.lineno}: {node.value}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in docs
    ]


def test_a_family_is_named_in_its_own_files_only():
    """The calibrated variants (``fmat power``, benchmarks/bench_calibration.py) come from the
    family's option types, the oracle's families from their files, the paper's table layouts
    from the paper's table numbers, a pooled-SD d from the family's ``register(pooled_sd=...)``
    (:func:`fmat.analyses.pooled_sd`), a benchmark's analysis from its study file: no list of
    family names is kept elsewhere, and no file is let off."""
    names = set(analyses.available())
    found = {}
    for folder in ("fmat", "fmat_replication", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = str(path.relative_to(REPO))
            own = path.parent.name in ("analyses", "oracle") and path.parent.parent.name == "fmat"
            if "__pycache__" in path.parts or own:
                continue
            hits = _named_families(path, names)
            if hits:
                found[rel] = hits
    assert not found, f"family names outside the families' own files: {found}"


def test_the_name_check_can_fail(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""stereotype_pairs in a docstring is fine."""\nLAYOUTS = {"stereotype_pairs": 7}\n')
    assert _named_families(f, {"stereotype_pairs"}) == ["2: stereotype_pairs"]
