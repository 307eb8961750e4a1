"""The paper's numbers as data: ``config/paper_results.tsv`` (Bao, 2024, JPSP).

Every statistic the paper prints (ICCs, alphas, Tables 3-7 cell by cell, every in-text
r, t, b, SE, CI, beta, R2, d, F, p) is one row in the results shape of :mod:`fmat.results`
plus columns that say how it was printed. See ``docs/results.md`` for the columns, the
condition vocabulary and how a paper row meets the row our workflow computes.

    >>> from fmat_replication.paper import load_paper_results
    >>> paper = load_paper_results()                      # validated DataFrame
    >>> paper.query("study == '1A' and statistic == 'ICC_average'")["value"].item()
    0.82
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from fmat.errors import InputError
from fmat.results import KEY, NUMERIC, RESULT_COLUMNS, STATISTICS, results_frame, validate_results

#: the file shipped with the repository (config/ beside the package)
PAPER_FILE = Path(__file__).resolve().parents[1] / "config" / "paper_results.tsv"

#: columns after the results shape: how the number was printed, and where
EXTRA_NUMERIC = ["value_low", "value_high", "df_corrected"]
PAPER_COLUMNS = RESULT_COLUMNS + ["value_low", "value_high", "value_bound", "bound", "stars", "df_corrected", "source", "note"]

#: ``bound``: relation of the true p to the printed p ("" = printed exactly, "p = .44")
P_BOUNDS = {"", "<", ">"}
#: ``value_bound``: relation of the true value to ``value`` ("abs<": |value| < bound)
VALUE_BOUNDS = {"", "<", ">", "abs<"}
#: ``stars``: significance shown in a table cell ("ns": printed without stars in a starred table)
STARS = {"", "ns", "*", "**", "***"}
STUDIES = ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "3A", "3B", "3C", "3D", "4A", "4B", "4C", "4D"]
_GLOB = re.compile(r"[*?\[]")


CONDITIONS_FILE = Path(__file__).parent / "data" / "conditions.tsv"


def conditions() -> pd.DataFrame:
    """The documented condition vocabulary (``condition``, ``meaning``)."""
    return pd.read_csv(CONDITIONS_FILE, sep="\t", dtype=str, keep_default_na=False)


def is_pattern(text: str) -> bool:
    """True when a condition or model is a glob pattern ("*", "pair*", "gender_x_*")."""
    return bool(_GLOB.search(str(text)))


def stars_for(p: float) -> str:
    """APA stars of a p value as the paper's tables print them: *** p<.001, ** p<.01, * p<.05, else "ns"."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return next((stars for limit, stars in ((0.001, "***"), (0.01, "**"), (0.05, "*")) if p < limit), "ns")


def _decimals(text: str) -> float:
    """Printed decimals of a number as written ("0.82" -> 2, "128.23" -> 2, "47" -> 0, "" -> NaN)."""
    text = str(text).strip()
    if not text:
        return np.nan
    return float(len(text.split(".", 1)[1])) if "." in text else 0.0


def load_paper_results(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Read and validate the file of the paper's numbers: :data:`PAPER_COLUMNS` ("" where empty)
    plus ``digits``, the decimals printed for ``value`` (or ``value_low`` in a range row). Bad
    content raises :class:`~fmat.errors.InputError` naming the file, the line and the column."""
    path = Path(path) if path is not None else PAPER_FILE
    if not path.exists():
        raise InputError(
            f"file not found: {path}", where=str(path), fix="pass the path of paper_results.tsv (config/ of the repository)"
        )
    raw = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, na_filter=False)
    if list(raw.columns) != PAPER_COLUMNS:
        missing = [c for c in PAPER_COLUMNS if c not in raw.columns]
        extra = [c for c in raw.columns if c not in PAPER_COLUMNS]
        raise InputError(
            f"columns differ from the contract (missing {missing}, unknown {extra})",
            where=f"{path}: header",
            fix=f"use exactly these columns in order: {PAPER_COLUMNS}",
        )
    df = raw.copy()
    for col in NUMERIC + EXTRA_NUMERIC:
        bad = [i for i, v in enumerate(raw[col]) if v.strip() and not _is_number(v)]
        if bad:
            i = bad[0]
            raise InputError(
                f"{col} = {raw[col].iloc[i]!r} is not a number",
                where=f"{path}: line {i + 2}, column {col}",
                fix="write plain decimals (0.82, -3.92); leave the cell empty when not printed",
            )
        df[col] = pd.to_numeric(raw[col].replace("", np.nan)).astype(float)
    digits = [_decimals(v if v.strip() else lo) for v, lo in zip(raw["value"], raw["value_low"])]
    df["digits"] = np.array(digits, dtype=float)
    validate_paper_results(df, where=str(path))
    return df


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def validate_paper_results(df: pd.DataFrame, *, where: str = "paper results") -> pd.DataFrame:
    """Check a paper table (rows as loaded): results shape, vocabularies, bounds and ranges."""

    # closed: a paper row must join one of ours, so a name the analyses never report is a typo
    validate_results(df, where=where, statistics=STATISTICS)

    def fail(mask, what, fix, col):
        idx = np.flatnonzero(np.asarray(mask))
        if len(idx):
            i = idx[0]
            key = "/".join(str(df[c].iloc[i]) for c in KEY)
            raise InputError(f"{what} (row {key!r}, {len(idx)} such rows)", where=f"{where}: line {i + 2}, column {col}", fix=fix)

    fail(~df["study"].isin(STUDIES), "unknown study", f"use one of {STUDIES}", "study")
    fail(
        ~df["condition"].isin(set(conditions()["condition"])),
        "condition not in the vocabulary",
        "add it with its meaning to fmat_replication/data/conditions.tsv and docs/results.md",
        "condition",
    )
    fail(
        df["model"].str.contains("/", regex=False),
        "model with '/'",
        "write the Hugging Face id with '/' -> '__' (fmat.results.model_slug)",
        "model",
    )
    for col, allowed in (("bound", P_BOUNDS), ("value_bound", VALUE_BOUNDS), ("stars", STARS)):
        fail(~df[col].isin(allowed), f"bad {col}", f"use one of {sorted(allowed)}", col)
    fail(df["source"].str.strip() == "", "empty source", "name the table and column, or the section", "source")
    has_range = df["value_low"].notna() | df["value_high"].notna()
    fail(
        has_range & (df["value_low"].isna() | df["value_high"].isna()),
        "range with one end",
        "fill both value_low and value_high",
        "value_low",
    )
    fail(has_range & df["value"].notna(), "range row with a value", "a range row leaves value empty", "value")
    fail(has_range & (df["value_low"] > df["value_high"]), "value_low > value_high", "swap them", "value_low")
    fail(df["value"].isna() & ~has_range & df["p"].isna(), "row with no number", "fill value, value_low/value_high or p", "value")
    fail((df["value_bound"] != "") & df["value"].isna(), "value_bound without a value", "put the bound in value", "value_bound")
    fail((df["bound"] != "") & df["p"].isna(), "bound without p", "put the printed p in p", "bound")
    fail(df["p"].notna() & ((df["p"] < 0) | (df["p"] > 1)), "p outside [0, 1]", "check the printed p", "p")
    ci = df["ci_low"].notna() & df["value"].notna()
    fail(
        ci & ((df["value"] < df["ci_low"]) | (df["value"] > df["ci_high"])),
        "value outside its CI",
        "check ci_low/ci_high",
        "ci_low",
    )
    summary = df["condition"].map(is_pattern) | df["model"].map(is_pattern)
    fail(
        summary & df["value"].notna() & (df["value_bound"] == ""),
        "pattern row with a plain value",
        "a row whose condition/model is a pattern is a range or a bound",
        "condition",
    )
    return df


def to_results(paper: pd.DataFrame) -> pd.DataFrame:
    """The results-shape part of a paper table (exactly :data:`fmat.results.RESULT_COLUMNS`)."""
    return results_frame(paper[RESULT_COLUMNS])


def matching_rows(paper_row: pd.Series, computed: pd.DataFrame) -> pd.DataFrame:
    """Computed results rows that a paper row speaks about: same study and statistic; condition
    and model equal, or matched by the glob pattern of a summary row (``fnmatch``)."""
    sub = computed[(computed["study"] == paper_row["study"]) & (computed["statistic"] == paper_row["statistic"])]
    keep = [
        fnmatch.fnmatchcase(str(c), str(paper_row["condition"])) and fnmatch.fnmatchcase(str(m), str(paper_row["model"]))
        for c, m in zip(sub["condition"], sub["model"])
    ]
    out = sub[np.array(keep, dtype=bool)] if len(sub) else sub
    itself = (out["condition"] == paper_row["condition"]) & (out["model"] == paper_row["model"])
    out = out[~itself] if is_pattern(paper_row["condition"]) or is_pattern(paper_row["model"]) else out
    if not is_pattern(paper_row["model"]):
        return out
    return out[out["model"] != "all"]  # "*" over models means the individual models


def within_rounding(printed: float, digits: float, value: float) -> bool:
    """True when ``value`` rounds (half away from zero) to the printed number at its printed decimals."""
    if any(isinstance(x, float) and math.isnan(x) for x in (printed, digits, value)):
        return False
    half = 0.5 * 10 ** (-int(digits))
    return abs(value - printed) <= half + 1e-12


__all__ = [
    "PAPER_FILE",
    "PAPER_COLUMNS",
    "P_BOUNDS",
    "VALUE_BOUNDS",
    "STARS",
    "STUDIES",
    "load_paper_results",
    "validate_paper_results",
    "to_results",
    "matching_rows",
    "is_pattern",
    "stars_for",
    "within_rounding",
]
