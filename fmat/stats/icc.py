"""Intraclass correlation (two-way model) of an items (rows) x raters (columns) matrix: in FMAT
the sentences x the models (Bao, 2024, footnote 1).

McGraw & Wong (1996), as R ``irr::icc(model = "twoway")`` (Gamer et al., 2019), which the paper
used: ICC(A,1), ICC(A,k), ICC(C,1) and ICC(C,k) from the two-way ANOVA mean squares
(:func:`mean_squares`), the F test of ICC = 0 and the CIs of their Table 7.  ``method`` differs
for agreement ICCs only: ``"irr"`` (irr 0.84.1) or ``"mcgraw-wong"`` (= pingouin,
irrNA::icc_corr); docs/statistics.md has the formulas and how the two differ.
"""

from __future__ import annotations

import numpy as np

from fmat.lazy_scipy import stats

from ..errors import InputError

TYPES = ("agreement", "consistency")
UNITS = ("single", "average")
METHODS = ("irr", "mcgraw-wong")


def mean_squares(x: np.ndarray) -> tuple[float, float, float]:
    """Two-way ANOVA mean squares (MSr, MSc, MSe) of a complete n x k matrix (as irr::icc).

    Examples
    --------
    The mean squares of ``irr::icc(model = "twoway")``:

    >>> import numpy as np
    >>> msr, msc, mse = mean_squares(np.array([[1, 2], [2, 2], [3, 5], [4, 4]]))
    >>> round(msr, 3), round(msc, 3), round(mse, 3)
    (3.458, 1.125, 0.458)
    """
    n, k = x.shape
    ss_total = np.var(x, ddof=1) * (n * k - 1)
    msr = np.var(x.mean(axis=1), ddof=1) * k
    msc = np.var(x.mean(axis=0), ddof=1) * n
    mse = (ss_total - msr * (n - 1) - msc * (k - 1)) / ((n - 1) * (k - 1))
    return float(msr), float(msc), float(mse)


def icc(ratings, type: str = "agreement", unit: str = "average", conf_level: float = 0.95, method: str = "irr") -> dict:
    """Two-way random-effects ICC of an items x raters matrix (R ``irr::icc(model="twoway")``).

    Rows with any missing (or non-finite) value are dropped first (irr's ``na.omit``).
    ``method``: "irr" (default, as the paper) or "mcgraw-wong" (module docstring).  Returns
    ``type, unit, ICC, F, df1, df2, p, ci_low, ci_high, n_items, n_raters, n_dropped``.
    Source: McGraw & Wong (1996) Psychological Methods 1(1), 30-46, Tables 4 and 7;
    Shrout & Fleiss (1979) Psychological Bulletin 86(2), 420-428.

    Examples
    --------
    Reproduces ``irr::icc(ratings, model = "twoway", type = "agreement", unit = "average")``:

    >>> ratings = [[1, 2, 1], [2, 2, 3], [3, 5, 4], [4, 4, 5], [5, 6, 6]]
    >>> res = icc(ratings)
    >>> round(res["ICC"], 3), round(res["F"], 2), res["n_items"], res["n_raters"]
    (0.948, 27.68, 5, 3)
    >>> round(icc(ratings, type="consistency", unit="single")["ICC"], 3)
    0.899
    """
    for name, given, choices in (("type", type, TYPES), ("unit", unit, UNITS), ("method", method, METHODS)):
        if given not in choices:
            raise InputError(f"unknown ICC {name} {given!r}", where=f"icc({name}=...)", fix=f"use one of {choices}")
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise InputError("ratings must be a 2-D items x raters matrix", where="icc(ratings)")
    keep = np.isfinite(x).all(axis=1)
    n_dropped = int((~keep).sum())
    x = x[keep]
    n, k = x.shape
    if n < 2 or k < 2:
        raise InputError(
            f"ICC needs at least 2 complete items and 2 raters (have {n} x {k} "
            f"after dropping {n_dropped} rows with missing values)",
            where="icc(ratings)",
            fix="score more items/models, or check for missing values",
        )
    msr, msc, mse = mean_squares(x)
    if not mse > 1e-14 * max(msr, msc, 1e-300):  # 0 up to rounding
        raise InputError(
            f"ICC is undefined: the {k} raters' values leave no residual variance (identical raters, "
            "or raters that differ by a constant only)",
            where="icc(ratings)",
            fix="check that no model is given twice under two names (the same weights in two folders)",
        )
    alpha, df1, fval = 1 - conf_level, n - 1, msr / mse
    if type == "consistency":
        coeff, lo, hi, df2 = _consistency(msr, mse, n, k, unit, alpha)
    else:
        coeff, lo, hi, df2 = _agreement(msr, msc, mse, n, k, unit, alpha, method)
    return {
        "type": type,
        "unit": unit,
        "ICC": float(coeff),
        "F": float(fval),
        "df1": float(df1),
        "df2": float(df2),
        "p": float(stats.f.sf(fval, df1, df2)),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "n_items": int(n),
        "n_raters": int(k),
        "n_dropped": n_dropped,
    }


def _consistency(msr: float, mse: float, n: int, k: int, unit: str, alpha: float) -> tuple:
    """``(ICC, ci_low, ci_high, df2)`` of consistency (McGraw & Wong 1996, Table 7: ICC(C,1), ICC(C,k))."""
    df1, fval, df2 = n - 1, msr / mse, (n - 1) * (k - 1)
    fl = fval / stats.f.ppf(1 - alpha / 2, df1, df2)
    fu = fval * stats.f.ppf(1 - alpha / 2, df2, df1)
    if unit == "single":
        coeff = (msr - mse) / (msr + (k - 1) * mse)
        lo, hi = (fl - 1) / (fl + (k - 1)), (fu - 1) / (fu + (k - 1))
    else:
        coeff = (msr - mse) / msr
        lo, hi = 1 - 1 / fl, 1 - 1 / fu
    return coeff, lo, hi, df2


def _agreement(msr: float, msc: float, mse: float, n: int, k: int, unit: str, alpha: float, method: str) -> tuple:
    """``(ICC, ci_low, ci_high, df2)`` of absolute agreement (McGraw & Wong 1996, Table 7:
    ICC(A,1), ICC(A,k)); the df of its F test Satterthwaite's ``v`` with ``method="irr"``."""
    c1 = (msr - mse) / (msr + (k - 1) * mse + (k / n) * (msc - mse))
    ck = (msr - mse) / (msr + (msc - mse) / n)
    # rho in a, b: ICC(A,1) (McGraw & Wong), or the reported ICC (irr 0.84.1's code)
    rho = ck if (method == "irr" and unit == "average") else c1
    a = (k * rho) / (n * (1 - rho))
    b = 1 + (k * rho * (n - 1)) / (n * (1 - rho))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    df2 = v if method == "irr" else (n - 1) * (k - 1)
    fl = stats.f.ppf(1 - alpha / 2, n - 1, v)
    fu = stats.f.ppf(1 - alpha / 2, v, n - 1)
    if unit == "single":
        coeff = c1
        lo = (n * (msr - fl * mse)) / (fl * (k * msc + (k * n - k - n) * mse) + n * msr)
        hi = (n * (fu * msr - mse)) / (k * msc + (k * n - k - n) * mse + n * fu * msr)
    else:
        coeff = ck
        lo = (n * (msr - fl * mse)) / (fl * (msc - mse) + n * msr)
        hi = (n * (fu * msr - mse)) / (msc - mse + n * fu * msr)
    return coeff, lo, hi, df2
