"""tests/tools/compare_results.py: the check that a refactoring leaves every results table as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from compare_results import compare, main


def _write(root: Path, name: str, df: pd.DataFrame) -> None:
    p = root / name
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(p)


def test_equal_tables_pass_and_every_kind_of_difference_is_named(tmp_path, capsys):
    old, new = tmp_path / "old", tmp_path / "new"
    t = pd.DataFrame({"study": ["1A", "1A"], "value": [0.5, np.nan]})
    for root in (old, new):
        _write(root, "lpr/1A.parquet", t)
        _write(root, "benchmarks/score/m.parquet", pd.DataFrame({"s": [float(len(str(root)))]}))  # ignored
    assert compare(old, new) == []
    assert main([str(old), str(new)]) == 0 and "equal" in capsys.readouterr().out
    _write(new, "lpr/1A.parquet", t.assign(value=[0.5 + 1e-6, np.nan]))  # a number moved
    _write(new, "lpr/1B.parquet", t)  # a new table
    _write(old, "analysis/1A/stats.parquet", t)  # a table gone
    problems = compare(old, new)
    assert any(p.startswith("lpr/1A.parquet:") for p in problems)
    assert f"only in {new}: lpr/1B.parquet" in problems
    assert f"only in {old}: analysis/1A/stats.parquet" in problems
    assert compare(old, new, rtol=1e-3) != []  # tables still differ in files
    assert main([str(old), str(new)]) == 1


def test_a_moved_table_is_paired_by_rename(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    t = pd.DataFrame({"year": [1900, 1901], "d": [0.1, 0.2]})
    _write(old, "analysis/4A/figure_trend.parquet", t)
    _write(new, "analysis/4A/figures/trend.parquet", t)
    assert len(compare(old, new)) == 2  # gone + new
    rename = [(r"analysis/(\w+)/figure_(\w+)\.parquet", r"analysis/\1/figures/\2.parquet")]
    assert compare(old, new, rename=rename) == []
    _write(new, "analysis/4A/figures/trend.parquet", t.assign(d=[0.1, 0.3]))
    assert [p.split(":")[0] for p in compare(old, new, rename=rename)] == ["analysis/4A/figures/trend.parquet"]
    assert main([str(old), str(new), "--rename", r"analysis/(\w+)/figure_(\w+)\.parquet=analysis/\1/figures/\2.parquet"]) == 1
