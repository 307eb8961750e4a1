r"""Compare every table under two ``results/`` folders: the same files, and table-equal contents.

    python tests/tools/compare_results.py OLD/results NEW/results [--rtol 1e-9] [--rename OLD=NEW ...]

Used to show that a refactoring leaves the workflow's outputs as they were (issue 27: the demo's
outputs before and after the split of the library from the replication). Parquet tables are
compared with pandas (same columns, dtypes, row order; numbers equal within ``rtol``, NaN equal to
NaN); other files (HTML pages, JSON, logs, benchmarks) are not compared: pages carry timestamps
and provenance. Exit status 0 when equal, 1 with one line per difference.

``--rename OLD=NEW`` (a regular expression and its replacement, applied to OLD's relative paths)
pairs a table that the change moved, e.g. the figure tables of issue 27:
``--rename 'analysis/(\w+)/figure_(\w+)\.parquet=analysis/\1/figures/\2.parquet'``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

#: folders whose tables measure the run, not its results
IGNORED = ("benchmarks",)


def tables(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*.parquet")) if p.relative_to(root).parts[0] not in IGNORED}


def compare(old: Path, new: Path, rtol: float = 1e-9, rename: list[tuple[str, str]] = ()) -> list[str]:
    """One line per difference between the tables of ``old`` and ``new`` ([] when equal);
    ``rename``: ``(pattern, replacement)`` pairs applied to the old tables' relative paths."""
    a, b = tables(Path(old)), tables(Path(new))
    for pattern, replacement in rename:
        a = {re.sub(pattern, replacement, k): v for k, v in a.items()}
    problems = [f"only in {old}: {k}" for k in sorted(set(a) - set(b))]
    problems += [f"only in {new}: {k}" for k in sorted(set(b) - set(a))]
    for key in sorted(set(a) & set(b)):
        x, y = pd.read_parquet(a[key]), pd.read_parquet(b[key])
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=False, rtol=rtol, atol=0)
        except AssertionError as err:
            first = " ".join(str(err).split())[:300]
            problems.append(f"{key}: {first}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a table moved: regular expression over OLD's relative paths = its replacement",
    )
    args = ap.parse_args(argv)
    rename = [tuple(r.split("=", 1)) for r in args.rename]
    if any(len(r) != 2 for r in rename):
        ap.error("--rename takes OLD=NEW")
    problems = compare(args.old, args.new, args.rtol, rename)
    for line in problems:
        print(line)
    n = len(tables(args.old))
    print(f"{n} table(s) compared: " + ("equal" if not problems else f"{len(problems)} difference(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
