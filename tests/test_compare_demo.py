"""benchmarks/compare_demo.py: two demo runs' tables compared, numbers to 1e-12 (issue 55)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_demo import compare, main


def _run(root: Path) -> Path:
    """A tiny results/ folder: a parquet table (numbers, text, a category, NaN), a csv, a tsv,
    and a benchmark table (ignored)."""
    res = root / "results"
    (res / "analysis" / "3A").mkdir(parents=True)
    (res / "benchmarks" / "lpr").mkdir(parents=True)
    pd.DataFrame(
        {
            "statistic": ["d", "t", "p"],
            "condition": pd.Categorical(["all", "all", "all"]),
            "value": [0.123456789, -2.5, np.nan],
            "n": [6, 6, 6],
            "flag": [True, False, True],
        }
    ).to_parquet(res / "analysis" / "3A" / "stats.parquet")
    (res / "summary.csv").write_text("model,r\nm1,0.5\n", encoding="utf-8")
    (res / "lock.tsv").write_text("model\tsha\nm1\tabc\n", encoding="utf-8")
    (res / "benchmarks" / "lpr" / "3A.tsv").write_text("s\tcpu_time\n1.5\t1.2\n", encoding="utf-8")
    return res


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _edit(res: Path, **changes) -> None:
    path = res / "analysis" / "3A" / "stats.parquet"
    t = pd.read_parquet(path)
    for column, (row, value) in changes.items():
        t.loc[row, column] = value
    t.to_parquet(path)


def test_equal_runs_pass_and_benchmarks_are_ignored(tmp_path, capsys):
    a = _run(tmp_path / "a")
    b = _copy(a, tmp_path / "b")
    (b / "benchmarks" / "lpr" / "3A.tsv").write_text("s\tcpu_time\n9.9\t9.9\n", encoding="utf-8")  # times differ
    _edit(b, value=(0, 0.123456789 * (1 + 1e-14)))  # within 1e-12 relative
    assert compare(a, b) == ([], 3)
    assert main([str(a), str(b)]) == 0
    assert "3 table(s) compared, all equal" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"value": (0, 0.123456789 + 1e-9)}, "stats.parquet: column 'value': 1 of 3 numbers differ beyond 1e-12"),
        ({"value": (2, 0.5)}, "column 'value': 1 of 3 numbers differ"),  # NaN became a number
        ({"statistic": (1, "F")}, "column 'statistic': 1 of 3 values differ (row 1: 't' vs 'F')"),
        ({"flag": (0, False)}, "column 'flag': 1 of 3 values differ"),
    ],
)
def test_a_changed_cell_fails_and_is_named(tmp_path, capsys, change, expected):
    a = _run(tmp_path / "a")
    b = _copy(a, tmp_path / "b")
    _edit(b, **change)
    problems, _ = compare(a, b)
    assert len(problems) == 1 and expected in problems[0], problems
    assert main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert expected in out and "NOT equal" in out


def test_a_missing_table_columns_dtypes_and_rows_are_differences(tmp_path):
    a = _run(tmp_path / "a")
    b = _copy(a, tmp_path / "b")
    (b / "lock.tsv").unlink()
    (b / "extra.parquet").parent.mkdir(exist_ok=True)
    pd.DataFrame({"x": [1]}).to_parquet(b / "extra.parquet")
    (b / "summary.csv").write_text("model,r\nm1,0.5000000001\n", encoding="utf-8")  # a text table: as written
    path = b / "analysis" / "3A" / "stats.parquet"
    t = pd.read_parquet(path)
    t.assign(n=t["n"].astype(float)).iloc[:2].to_parquet(path)
    problems, n = compare(a, b)
    assert n == 2
    text = "\n".join(problems)
    assert f"only in {a}: lock.tsv" in text and f"only in {b}: extra.parquet" in text
    assert "summary.csv: column 'r'" in text
    assert "dtypes differ: n: int64 vs float64" in text and "rows differ: 3 vs 2" in text
    t.drop(columns="flag").to_parquet(path)
    assert any("columns differ" in p for p in compare(a, b)[0])


def test_bad_folders_exit_2(tmp_path, capsys):
    a = _run(tmp_path / "a")
    with pytest.raises(SystemExit) as err:
        main([str(a), str(tmp_path / "nowhere")])
    assert err.value.code == 2 and "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as err:
        main([str(a), str(tmp_path / "empty")])
    assert err.value.code == 2 and "holds no table" in capsys.readouterr().err
