"""docs/architecture.md, "Where is this number made": every row names a rule that exists, whose
script calls the stage function named, and a producer function that writes the statistic; and
every statistic the paper prints has a row (so the table stays true when code moves)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _studies(cell: str) -> set[str]:
    """'1A–4D', '2A, 2B', 'all' -> study ids."""
    every = {f"{n}{c}" for n, cs in (("1", "ABC"), ("2", "ABCD"), ("3", "ABCD"), ("4", "ABCD")) for c in cs}
    cell = cell.strip()
    if cell == "all" or cell == "1A–4D":
        return every
    return {s.strip() for s in cell.split(",")}


def where_rows() -> list[dict]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Where is this number made", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("statistic", "") or set(cells[0]) <= set("-"):
            continue
        rows.append(
            {
                "statistics": _names(cells[0]) or [cells[0]],
                "studies": _studies(cells[1]),
                "rule": _names(cells[2])[0],
                "stage": _names(cells[3])[0],
                "producer": _names(cells[4])[0],
                "via": _names(cells[4])[1:],
            }
        )
    return rows


def resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def rule_script(rule: str) -> Path:
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        m = re.search(rf"^rule {re.escape(rule)}:\n(.*?)(?=^\S|\Z)", text, re.M | re.S)
        if m:
            script = re.search(r'script:\s*\n\s*"([^"]+)"', m.group(1))
            assert script, f"rule {rule} in {smk.name} has no script:"
            return (smk.parent / script.group(1)).resolve()
    raise AssertionError(f"no rule {rule!r} in rules/*.smk")


ROWS = where_rows()


def test_the_table_is_there():
    assert len(ROWS) >= 9
    assert {"reliability", "analysis", "compare_study"} <= {r["rule"] for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{'+'.join(r['statistics'])}@{r['producer'].rsplit('.', 1)[-1]}" for r in ROWS])
def test_each_row_is_true(row):
    # the rule exists and its script calls the stage function
    script = rule_script(row["rule"])
    tree = ast.parse(script.read_text(encoding="utf-8"))
    module, _, func = row["stage"].rpartition(".")
    imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert (module, func) in imported and func in called, f"{script.name} does not call {row['stage']}"
    stage = resolve(row["stage"])
    # the producer exists, and its source (or its module's constants) writes each statistic
    producer = resolve(row["producer"])
    source = inspect.getsource(producer)
    module_source = inspect.getsource(inspect.getmodule(producer))
    for stat in row["statistics"]:
        if stat.startswith("verdict"):
            assert "verdict" in source
            continue
        literal = f'"{stat}"'
        assert literal in source or (literal in module_source and re.search(r"\b[A-Z_]{4,}\b", source)), (
            f"{row['producer']} does not write {stat}"
        )
    # the chain is connected: the stage reaches the producer (directly or through the 'via' functions)
    chain = [stage] + [resolve(v) for v in row["via"] if "." in v]
    names = {row["producer"].rsplit(".", 1)[-1]} | {v.rsplit(".", 1)[-1] for v in row["via"]}
    texts = [inspect.getsource(f) for f in chain]
    if row["rule"] == "analysis":
        # the analysis stage runs the study's registered analysis: the producer lives in the package it dispatches to
        assert "run_analysis" in inspect.getsource(resolve("fmat_replication.analysis.analysis_stage"))
        assert producer.__module__.startswith("fmat.analyses.")
    else:
        assert any(re.search(rf"\b{re.escape(n)}\b", t) for n in names for t in texts), (
            f"{row['stage']} does not reach {row['producer']}"
        )


def test_every_statistic_the_paper_prints_has_a_producer():
    paper = pd.read_csv(REPO / "config" / "paper_results.tsv", sep="\t", dtype=str)
    covered = {(s, stat) for r in ROWS for s in r["studies"] for stat in r["statistics"]}
    missing = sorted({(r.study, r.statistic) for r in paper.itertuples()} - covered)
    assert not missing, f"statistics of the paper with no row in docs/architecture.md: {missing}"


def test_one_producer_per_statistic_and_study():
    """Two rows may name one statistic (b in 1C: the mixed model and the OLS) only with
    different producers of different conditions; never two rules for the same study."""
    seen: dict[tuple[str, str], str] = {}
    for r in ROWS:
        for s in r["studies"]:
            for stat in r["statistics"]:
                if (s, stat) in seen:
                    assert seen[(s, stat)] == r["rule"], f"{stat} of {s} made by two rules"
                seen[(s, stat)] = r["rule"]
    # the reliability statistics never come from an analysis
    assert all(
        seen[(s, "alpha")] == "reliability" and seen[(s, "ICC_average")] == "reliability" for s in ("1A", "2A", "3A", "4A")
    )


def test_the_check_can_fail(tmp_path, monkeypatch):
    """A row naming a function that does not exist, or a statistic it does not write, fails."""
    bad = dict(ROWS[0], producer="fmat.reliability.no_such_function")
    with pytest.raises(AttributeError):
        test_each_row_is_true(bad)
    wrong = dict(next(r for r in ROWS if r["rule"] == "analysis"), statistics=["no_such_statistic"])
    with pytest.raises(AssertionError, match="does not write"):
        test_each_row_is_true(wrong)


def test_each_rule_script_calls_one_function_of_its_stage():
    """scripts/*.py are thin: besides run_script, each imports exactly one function, from one
    stage module of fmat_replication, and calls it; nothing of the library directly."""
    for script in sorted((REPO / "scripts").glob("*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        imports = [
            (n.module, a.name)
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            for a in n.names
            if (n.module or "").startswith("fmat") and not (n.module == "fmat_replication.scripts" and a.name == "run_script")
        ]
        assert len(imports) == 1, (script.name, imports)
        module, name = imports[0]
        assert module.startswith("fmat_replication.") and module.count(".") == 1, (script.name, module)
        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert name in called, (script.name, name)
        assert callable(resolve(f"{module}.{name}"))


# ----------------------------------------------------------------------------- no detours (issue 33)

#: where the workflow's code lives: it imports fmat and fmat_replication as installed packages
WORKFLOW_CODE = ("Snakefile", "rules", "scripts", "reports", "fmat_replication")
_DETOUR = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=|\bPYTHONPATH\b")


def detours(root: Path = REPO) -> list[str]:
    """``file:line`` of every sys.path edit or PYTHONPATH set in the workflow's code under ``root``."""
    out = []
    for name in WORKFLOW_CODE:
        top = root / name
        files = (
            [top]
            if top.is_file()
            else sorted(p for p in top.rglob("*") if p.is_file() and p.suffix in (".py", ".smk", ".qmd", ".md"))
        )
        for path in files:
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _DETOUR.search(line):
                    out.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return out


def test_the_workflow_takes_no_detour_to_its_packages():
    """No script, rule, report or replication module puts the repository on sys.path or
    PYTHONPATH: fmat and fmat_replication are installed (make env; envs/*.post-deploy.sh)."""
    assert detours() == []


def test_the_detour_check_can_fail(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "x.py").write_text("import sys\nsys.path.insert(0, '..')\n")
    (tmp_path / "Snakefile").write_text('os.environ["PYTHONPATH"] = workflow.basedir\n')
    assert [d.split(":")[0] for d in detours(tmp_path)] == ["Snakefile", "scripts/x.py"]


def test_the_packages_import_from_outside_the_repository(tmp_path):
    """In a fresh interpreter started in a folder outside the repository, with no PYTHONPATH,
    fmat_replication (a stage module, the pages) imports: it is installed, not found through the
    working folder; and it is the one of this checkout (editable)."""
    import os
    import subprocess
    import sys

    code = (
        "import fmat, fmat_replication, fmat_replication.lpr_stage, fmat_replication.pages.render as r; "
        "print(fmat.__file__); print(fmat_replication.__file__); print(r.SOURCES['study'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    library, replication, source = res.stdout.split()
    assert Path(library).parent == REPO / "fmat"
    assert Path(replication).parent == REPO / "fmat_replication"
    assert Path(source) == REPO / "reports" / "study.qmd" and Path(source).is_file()


def test_no_module_name_means_two_things():
    """No top-level module name is in both packages: ``fmat.lpr`` is the library's LPR, and the
    replication's stage that makes the LPR table is ``fmat_replication.lpr_stage``."""

    def names(root: Path) -> set[str]:
        return {p.stem for p in root.glob("*.py") if p.stem != "__init__"} | {
            p.name for p in root.iterdir() if (p / "__init__.py").is_file()
        }

    shared = names(REPO / "fmat") & names(REPO / "fmat_replication")
    assert not shared, f"module names in both fmat/ and fmat_replication/: {sorted(shared)}"
