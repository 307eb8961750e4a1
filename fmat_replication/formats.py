"""The one place numbers become text, for every page and CSV of the replication.

- :func:`missing`: None, NaN, ``pd.NA`` or ``""``;
- :func:`number`: a number at the paper's printed precision (or 3 decimals; tiny values in
  scientific notation);
- :func:`short`: a number inside a sentence (a verdict's reason: "ours 0.31 vs paper 0.45");
- :func:`p_text`: a p value in a sentence ("p < .001", "p = .44", "p > .33");
- :func:`p_cell`: a p value in a table's p column ("< .001", ".044");
- :func:`cell`: any value in a table column (counts as whole numbers, shares as percent);
- :func:`paper_cell`, :func:`ours_cell`: one replication row's paper number and ours, as a cell
  of the paper's tables prints them (with stars);
- :func:`replication_text`: the replication table as text (the pages' CSV downloads).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from fmat.results import p_text as fmat_p_text
from fmat_replication.paper import stars_for

#: a printed value bound as text
BOUND_TEXT = {"abs<": "|x| < ", ">": "> ", "<": "< "}
#: columns shown as whole numbers when every value is whole
COUNT_COLUMNS = (
    "n",
    "df",
    "df2",
    "num_df",
    "den_df",
    "rows",
    "oov_rows",
    "nan_prob_rows",
    "n_matched",
    "total",
    "replicated",
    "not replicated",
    "not computable",
    "pairs scored",
    "pairs skipped",
)


def missing(x) -> bool:
    """None, NaN, ``pd.NA`` or the empty string."""
    return x is None or x is pd.NA or (isinstance(x, (float, np.floating)) and math.isnan(x)) or (isinstance(x, str) and x == "")


def number(x, digits: float = math.nan) -> str:
    """A number as text: at ``digits`` decimals (the paper's printed precision) when given, else 3
    (2 from 10 on; a value below .001 in scientific notation). Missing: ``""``."""
    if missing(x):
        return ""
    x = float(x)
    if not missing(digits):
        return f"{x:.{int(digits)}f}"
    if x != 0 and abs(x) < 0.001:
        return f"{x:.1e}"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}"


def short(x) -> str:
    """A number inside a sentence: 3 decimals without trailing zeros, 2 significant digits below
    .001, 1 decimal from 1000 on. Missing: ``"NA"``."""
    if missing(x):
        return "NA"
    if x != 0 and abs(x) < 0.001:
        return f"{x:.2g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 1000 else f"{x:.1f}"


def p_text(p, bound: str = "") -> str:
    """ "p < .001", "p = .44", "p > .33" (``""`` without p); ``bound`` is the paper's "<" or ">"."""
    if missing(p):
        return ""
    rel = {"<": "<", ">": ">"}.get("" if missing(bound) else str(bound), "=")
    if rel == "=" and p < 0.001:
        return "p < .001"
    text = f"{p:.3f}".rstrip("0") if p < 0.01 else f"{p:.2f}"
    return f"p {rel} {text.lstrip('0') or '0'}"


def p_cell(p: float) -> str:
    """A p value in a table's p column: "< .001", else 3 decimals without the leading zero
    (:func:`fmat.results.p_text`: the library's pages and summaries write p the same way)."""
    return fmat_p_text(p)


def cell(col: str, x) -> str:
    """Any value in table column ``col``: "" when missing, yes/no, whole numbers for counts,
    p (``p`` and ``p_<variant>``, e.g. the calibrated ``p_ours``) by :func:`p_cell`,
    ``share_replicated`` in percent, else 3 decimals (tiny values stay
    visible: 2 significant digits)."""
    if missing(x) and not isinstance(x, str):
        return ""
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        if col == "p" or col.startswith("p_"):
            return p_cell(x)
        if col in COUNT_COLUMNS and float(x).is_integer():
            return str(int(x))
        if col == "share_replicated":
            return f"{100 * x:.0f}%"
        if x != 0 and abs(x) < 0.001:
            return f"{x:.2g}"
        return f"{x:.3f}"
    return str(x)


def paper_value(r: Mapping) -> str:
    """The paper's number of a replication row: its value, range or bound, at its precision."""
    dg = r.get("paper_digits", math.nan)
    if not missing(r.get("paper_value_low")):
        return f"{number(r['paper_value_low'], dg)} to {number(r['paper_value_high'], dg)}"
    if not missing(r.get("paper_value_bound")):
        return BOUND_TEXT[r["paper_value_bound"]] + number(r["paper_value"], dg)
    return number(r.get("paper_value"), dg)


def _ours_range(r: Mapping) -> bool:
    n = r.get("n_matched", 0) or 0
    return n > 1 or (missing(r.get("ours_value")) and not missing(r.get("ours_min")))


def paper_cell(r: Mapping) -> str:
    """The paper's number as a cell of its tables prints it: value (or range / bound) with its
    stars, else with its p."""
    text = paper_value(r)
    stars = "" if missing(r.get("paper_stars")) else str(r["paper_stars"])
    if stars and stars != "ns":
        return text + stars
    p = p_text(r.get("paper_p", math.nan), r.get("paper_bound"))
    return f"{text} ({p})" if p and text else (text or p or stars)


def ours_cell(r: Mapping) -> str:
    """Our number as a cell prints it: value at the paper's precision with the stars of our p
    (the range over matched rows for a pattern row, its ends at the paper's precision too), '—'
    when there is none."""
    dg = r.get("paper_digits", math.nan)
    if _ours_range(r):
        return f"{number(r['ours_min'], dg)} to {number(r['ours_max'], dg)}"
    if missing(r.get("ours_value")):
        return "—"
    stars = stars_for(r.get("ours_p", math.nan))
    return number(r["ours_value"], dg) + (stars if stars not in ("", "ns") else "")


def replication_text(replication: pd.DataFrame) -> pd.DataFrame:
    """The replication table as text: paper (value, range or bound; p; stars), ours (value or
    min-max; p; 95% CI), verdict, "as printed", reason."""
    rows = []
    for r in replication.to_dict("records"):
        paper = paper_value(r)
        extra = [t for t in (p_text(r["paper_p"], r["paper_bound"]), r["paper_stars"]) if t]
        if extra:
            paper = f"{paper} ({', '.join(extra)})" if paper else ", ".join(extra)
        if _ours_range(r):
            n = r["n_matched"]
            ours = f"{number(r['ours_min'])} to {number(r['ours_max'])} ({n} row{'s' if n != 1 else ''})"
        else:
            ours = number(r["ours_value"])
            bits = [p_text(r["ours_p"])] if not missing(r["ours_p"]) else []
            if not missing(r["ours_ci_low"]):
                bits.append(f"95% CI [{number(r['ours_ci_low'])}, {number(r['ours_ci_high'])}]")
            if bits and ours:
                ours = f"{ours} ({', '.join(bits)})"
        rows.append(
            {
                "study": r["study"],
                "statistic": r["statistic"],
                "condition": r["condition"],
                "model": r["model"],
                "paper": paper,
                "ours": ours,
                "verdict": r["verdict"],
                "as printed": "" if pd.isna(r["exact"]) else ("yes" if r["exact"] else "no"),
                "reason": r["reason"],
            }
        )
    return pd.DataFrame(
        rows, columns=["study", "statistic", "condition", "model", "paper", "ours", "verdict", "as printed", "reason"]
    )
