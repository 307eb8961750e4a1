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
        rows.append({"statistics": _names(cells[0]) or [cells[0]], "studies": _studies(cells[1]),
                     "rule": _names(cells[2])[0], "stage": _names(cells[3])[0], "producer": _names(cells[4])[0],
                     "via": _names(cells[4])[1:]})
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


@pytest.mark.parametrize("row", ROWS, ids=[f"{'+'.join(r['statistics'])}@{r['producer'].rsplit('.', 1)[-1]}"
                                          for r in ROWS])
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
        assert literal in source or (literal in module_source and re.search(r"\b[A-Z_]{4,}\b", source)), \
            f"{row['producer']} does not write {stat}"
    # the chain is connected: the stage reaches the producer (directly or through the 'via' functions)
    chain = [stage] + [resolve(v) for v in row["via"] if "." in v]
    names = {row["producer"].rsplit(".", 1)[-1]} | {v.rsplit(".", 1)[-1] for v in row["via"]}
    texts = [inspect.getsource(f) for f in chain]
    if row["rule"] == "analysis":
        # the analysis stage runs the study's registered analysis: the producer lives in the package it dispatches to
        assert "run_analysis" in inspect.getsource(resolve("fmat_replication.analysis.analysis_stage"))
        assert producer.__module__.startswith("fmat_replication.analyses.")
    else:
        assert any(re.search(rf"\b{re.escape(n)}\b", t) for n in names for t in texts), \
            f"{row['stage']} does not reach {row['producer']}"


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
    assert all(seen[(s, "alpha")] == "reliability" and seen[(s, "ICC_average")] == "reliability"
               for s in ("1A", "2A", "3A", "4A"))


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
        imports = [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
                   if (n.module or "").startswith("fmat")
                   and not (n.module == "fmat_replication.scripts" and a.name == "run_script")]
        assert len(imports) == 1, (script.name, imports)
        module, name = imports[0]
        assert module.startswith("fmat_replication.") and module.count(".") == 1, (script.name, module)
        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert name in called, (script.name, name)
        assert callable(resolve(f"{module}.{name}"))
