"""tests/tools/compare_results.py: the check that a refactoring leaves every results table as it was."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from compare_results import compare, main  # noqa: E402


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
    _write(new, "lpr/1A.parquet", t.assign(value=[0.5 + 1e-6, np.nan]))      # a number moved
    _write(new, "lpr/1B.parquet", t)                                        # a new table
    _write(old, "analysis/1A/stats.parquet", t)                             # a table gone
    problems = compare(old, new)
    assert any(p.startswith("lpr/1A.parquet:") for p in problems)
    assert f"only in {new}: lpr/1B.parquet" in problems
    assert f"only in {old}: analysis/1A/stats.parquet" in problems
    assert compare(old, new, rtol=1e-3) != []            # tables still differ in files
    assert main([str(old), str(new)]) == 1
