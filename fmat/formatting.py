"""The one place numbers become text, for every page: the library's (:mod:`fmat.study_page`) and
the replication's (``fmat_replication.pages``). The templates get them as Jinja filters
(:func:`fmat.html.environment`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .results import p_text

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
    """None, NaN, ``pd.NA`` or the empty string.

    >>> missing(float("nan")), missing(""), missing(0)
    (True, True, False)
    """
    return x is None or x is pd.NA or (isinstance(x, (float, np.floating)) and math.isnan(x)) or (isinstance(x, str) and x == "")


def number(x, digits: float = math.nan) -> str:
    """A number as text: at ``digits`` decimals (the paper's printed precision) when given, else 3
    (2 from 10 on; a value below .001 in scientific notation). Missing: ``""``.

    >>> number(0.41234), number(0.41234, 2), number(12.3456), number(0.0004)
    ('0.412', '0.41', '12.35', '4.0e-04')
    """
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
    .001, 1 decimal from 1000 on. Missing: ``"NA"``.

    >>> short(0.31), short(0.00042), short(None)
    ('0.31', '0.00042', 'NA')
    """
    if missing(x):
        return "NA"
    if x != 0 and abs(x) < 0.001:
        return f"{x:.2g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 1000 else f"{x:.1f}"


def p_cell(p) -> str:
    """A p value in a table's p column: "< .001", else 3 decimals without the leading zero
    (:func:`fmat.results.p_text`; ``NA`` when missing).

    >>> p_cell(0.0441), p_cell(0.0001)
    ('.044', '< .001')
    """
    return p_text(p)


def p_sentence(p, bound: str = "") -> str:
    """A p value in a sentence, with the digits of :func:`p_cell`: "p < .001", "p = .044"
    (``""`` without p); ``bound`` ("<" or ">") makes it a printed bound, the paper's threshold as
    it prints it: "p < .01".

    >>> p_sentence(0.0441), p_sentence(0.0001), p_sentence(0.01, "<"), p_sentence(float("nan"))
    ('p = .044', 'p < .001', 'p < .01', '')
    """
    if missing(p):
        return ""
    rel = {"<": "<", ">": ">"}.get("" if missing(bound) else str(bound), "=")
    if rel == "=":
        text = p_text(p)
        return f"p {text}" if text.startswith("<") else f"p = {text}"
    return f"p {rel} {f'{float(p):.3f}'.rstrip('0').replace('0.', '.', 1)}"


def cell(col: str, x, na: str = "") -> str:
    """Any value in table column ``col``: ``na`` when missing, yes/no, whole numbers for counts,
    p (``p`` and ``p_<variant>``, e.g. the calibrated ``p_ours``) by :func:`p_cell`,
    ``share_replicated`` in percent, else 3 decimals (tiny values stay visible: 2 significant digits).

    >>> cell("p", 0.0441), cell("n", 12.0), cell("value", 0.5), cell("value", None, na="NA")
    ('.044', '12', '0.500', 'NA')
    """
    if missing(x) and not isinstance(x, str):
        return na
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
