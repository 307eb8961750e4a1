"""The paper's numbers as text, for the replication's pages and CSVs; every other number is
written by :mod:`fmat.formatting`, re-exported here (``p_text`` = :func:`fmat.formatting.p_sentence`).
"""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from fmat.formatting import COUNT_COLUMNS, cell, missing, number, p_cell, short
from fmat.formatting import p_sentence as p_text
from fmat_replication.paper import stars_for

__all__ = [
    "COUNT_COLUMNS",
    "cell",
    "missing",
    "number",
    "p_cell",
    "p_text",
    "short",
    "paper_value",
    "paper_cell",
    "ours_cell",
    "replication_text",
]

#: a printed value bound as text
BOUND_TEXT = {"abs<": "|x| < ", ">": "> ", "<": "< "}


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
        exact = "" if pd.isna(r["exact"]) else ("yes" if r["exact"] else "no")
        rows.append([r["study"], r["statistic"], r["condition"], r["model"], paper, ours, r["verdict"], exact, r["reason"]])
    columns = ["study", "statistic", "condition", "model", "paper", "ours", "verdict", "as printed", "reason"]
    return pd.DataFrame(rows, columns=columns)
