r"""Compare every table of two runs of the demo workflow: exit 0 when they hold the same numbers.

    python benchmarks/compare_demo.py BEFORE/results AFTER/results [--tol 1e-12] [--ignore benchmarks ...]

Made to show that a change for speed leaves every number the demo computes as it was (issue 55:
the analysis stage's shared fits, the tests' shared runs). Every table under the two folders
(``*.parquet``, ``*.csv``, ``*.tsv``, recursively) is compared:

- the same set of tables (relative paths);
- the same columns in the same order, the same dtypes, the same number of rows;
- numbers equal to ``--tol`` (default 1e-12) absolutely OR relatively (``|a - b| <= tol`` or
  ``|a - b| <= tol * max(|a|, |b|)``), NaN equal to NaN, infinities equal to themselves;
- everything else (text, categories, booleans, times) exactly equal, missing equal to missing.

Folders that measure the run rather than its results are left out (``--ignore``, default
``benchmarks``: the per-job times), and so are files that are not tables (pages carry timestamps,
logs carry times). Exit status 0 when every table is equal, 1 with one line per difference and a
summary, 2 for bad arguments (a folder that does not exist or holds no table).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: the table files compared, and how each is read
SUFFIXES = (".parquet", ".csv", ".tsv")
#: folders (first part of a table's relative path) that measure the run, not its results
IGNORED = ("benchmarks",)
TOL = 1e-12


def tables(root: Path, ignore=IGNORED) -> dict[str, Path]:
    """``{relative path: path}`` of every table under ``root``, the ignored folders left out."""
    root = Path(root)
    found = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and p.suffix in SUFFIXES and not any(part in ignore for part in rel.parts[:-1]):
            found[rel.as_posix()] = p
    return found


def read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    # text tables as text: the comparison is of what the file holds, not of a parser's guesses
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", dtype=str, keep_default_na=False)


def _numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)


def _same(p, q) -> bool:
    """Two cells of a non-numeric column: equal, or both missing (lists and arrays element-wise)."""
    if isinstance(p, (list, tuple, np.ndarray)) or isinstance(q, (list, tuple, np.ndarray)):
        try:
            return bool(np.array_equal(np.asarray(p, dtype=object), np.asarray(q, dtype=object)))
        except ValueError:
            return False
    p_na = p is None or (isinstance(p, float) and np.isnan(p)) or p is pd.NA or p is pd.NaT
    q_na = q is None or (isinstance(q, float) and np.isnan(q)) or q is pd.NA or q is pd.NaT
    if p_na or q_na:
        return p_na and q_na
    return bool(p == q)


def compare_frames(a: pd.DataFrame, b: pd.DataFrame, tol: float = TOL) -> list[str]:
    """One line per difference between two tables ([] when equal)."""
    if list(a.columns) != list(b.columns):
        return [f"columns differ: {list(a.columns)} vs {list(b.columns)}"]
    problems = []
    dtypes = [f"{c}: {a[c].dtype} vs {b[c].dtype}" for c in a.columns if str(a[c].dtype) != str(b[c].dtype)]
    if dtypes:
        problems.append("dtypes differ: " + "; ".join(dtypes))
    if len(a) != len(b):
        return [*problems, f"rows differ: {len(a)} vs {len(b)}"]
    for c in a.columns:
        x, y = a[c].reset_index(drop=True), b[c].reset_index(drop=True)
        if _numeric(x) and _numeric(y):
            u, v = x.to_numpy(dtype=float, na_value=np.nan), y.to_numpy(dtype=float, na_value=np.nan)
            with np.errstate(invalid="ignore"):
                diff = np.abs(u - v)
                scale = np.maximum(np.abs(u), np.abs(v))
                same = (diff <= tol) | (diff <= tol * scale) | (np.isnan(u) & np.isnan(v)) | (u == v)
            bad = np.flatnonzero(~same)
            if len(bad):
                i = bad[0]
                worst = np.nanmax(np.where(same, np.nan, diff)) if np.isfinite(diff[bad]).any() else float("nan")
                problems.append(
                    f"column {c!r}: {len(bad)} of {len(u)} numbers differ beyond {tol:g} "
                    f"(largest difference {worst:.3g}; row {i}: {u[i]!r} vs {v[i]!r})"
                )
        else:
            xs, ys = x.astype(object), y.astype(object)
            equal = np.array([_same(p, q) for p, q in zip(xs, ys)], dtype=bool)
            bad = np.flatnonzero(~equal) if len(equal) else np.array([], dtype=int)
            if len(bad):
                i = bad[0]
                problems.append(f"column {c!r}: {len(bad)} of {len(xs)} values differ (row {i}: {xs[i]!r} vs {ys[i]!r})")
    return problems


def compare(before: Path, after: Path, tol: float = TOL, ignore=IGNORED) -> tuple[list[str], int]:
    """``(problems, number of tables compared)``: one line per difference, [] when equal."""
    a, b = tables(before, ignore), tables(after, ignore)
    problems = [f"only in {before}: {k}" for k in sorted(set(a) - set(b))]
    problems += [f"only in {after}: {k}" for k in sorted(set(b) - set(a))]
    both = sorted(set(a) & set(b))
    for key in both:
        try:
            x, y = read(a[key]), read(b[key])
        except Exception as err:  # an unreadable table is a difference, named
            problems.append(f"{key}: cannot be read: {err}")
            continue
        problems += [f"{key}: {p}" for p in compare_frames(x, y, tol)]
    return problems, len(both)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="the results/ folder of one run")
    ap.add_argument("after", type=Path, help="the results/ folder of the other run")
    ap.add_argument("--tol", type=float, default=TOL, help=f"absolute or relative tolerance of numbers (default {TOL:g})")
    ap.add_argument(
        "--ignore",
        action="append",
        default=None,
        metavar="FOLDER",
        help="a folder whose tables are left out (default: benchmarks)",
    )
    args = ap.parse_args(argv)
    ignore = tuple(args.ignore) if args.ignore is not None else IGNORED
    for folder in (args.before, args.after):
        if not folder.is_dir():
            ap.error(f"{folder}: no such folder (give the results/ folders of two demo runs)")
        if not tables(folder, ignore):
            ap.error(f"{folder}: holds no table ({', '.join(SUFFIXES)}) outside {', '.join(ignore) or 'nothing'}")
    problems, n = compare(args.before, args.after, args.tol, ignore)
    for line in problems:
        print(line)
    if problems:
        print(f"compare_demo: {n} table(s) in both folders, {len(problems)} difference(s): NOT equal")
        return 1
    print(f"compare_demo: {n} table(s) compared, all equal (numbers to {args.tol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
