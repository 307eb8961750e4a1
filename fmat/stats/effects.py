"""Effect sizes d for FMAT contrasts (docs/statistics.md has the formulas): WEAT-style d
(Caliskan et al., 2017, Science 356, 183-186), the difference over the sample SD of ALL items
of both categories together (not a pooled within-group SD); and d with the population SD of an
LPR, sigma = sqrt(2) ~= 1.414 (Bao, 2024, Step 3), where the items are too few for a meaningful
sample SD (Studies 3, 4).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import InputError

#: population SD of an LPR (Bao, 2024): sqrt(2)
LPR_SIGMA = math.sqrt(2.0)


def _clean(x) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    return a[np.isfinite(a)]


def weat_d(x, y) -> float:
    """WEAT effect size: (mean(x) - mean(y)) / sd(x u y, ddof=1); NaNs are ignored.

    Examples
    --------
    The effect size of ``sweater::weat_es()`` (Caliskan et al., 2017):

    >>> round(weat_d([1.0, 2.0, 3.0], [0.0, 1.0, 1.0]), 3)
    1.291
    """
    x, y = _clean(x), _clean(y)
    if len(x) < 1 or len(y) < 1 or len(x) + len(y) < 3:
        raise InputError("weat_d needs values in both categories (3 or more in all)", where="weat_d(x, y)")
    return float((x.mean() - y.mean()) / np.concatenate([x, y]).std(ddof=1))


def sigma_d(x, y=None, sigma: float = LPR_SIGMA) -> float:
    """d with a known population SD: (mean(x) - mean(y)) / sigma, or mean(x)/sigma without y.

    Examples
    --------
    An LPR has population SD sqrt(2) (Bao, 2024), so a mean LPR of 0.707 is d = 0.5:

    >>> round(sigma_d([0.5, 0.707, 0.914]), 3)
    0.5
    >>> round(sigma_d([2.0, 3.0], [1.0, 1.0]), 3)
    1.061
    """
    return float((_clean(x).mean() - (_clean(y).mean() if y is not None else 0.0)) / sigma)


def effect_d(
    data: pd.DataFrame, value: str, group: str, x, y, *, sigma: float | None = None, by=None, pooling: str = "all"
) -> pd.DataFrame:
    """d for level ``x`` vs level ``y`` of column ``group`` in ``data[value]``.

    ``sigma=None``: WEAT d (sample SD of all x and y values); a number: d = difference / sigma.
    ``by``: columns to split by (one d per split).  ``pooling``: "all" (one d over all rows of
    the split, the paper's) or "per_model" (a d within each ``model``, then their mean; columns
    ``d_sd``, ``n_models`` too).  Returns by-columns, ``d``, ``n_x``, ``n_y``.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"group": ["male"] * 3 + ["female"] * 3, "lpr": [1.0, 2.0, 3.0, 0.0, 1.0, 1.0]})
    >>> effect_d(data, "lpr", "group", "male", "female").round(3)
           d  n_x  n_y
    0  1.291    3    3
    >>> effect_d(data, "lpr", "group", "male", "female", sigma=LPR_SIGMA).round(3)
           d  n_x  n_y
    0  0.943    3    3
    """
    if pooling not in ("all", "per_model"):
        raise InputError(f"unknown pooling {pooling!r}", where="effect_d(pooling=...)", fix="use 'all' or 'per_model'")
    by = [by] if isinstance(by, str) else list(by or [])
    for col in [value, group, *by] + (["model"] if pooling == "per_model" else []):
        if col not in data.columns:
            raise InputError(f"column {col!r} not in the table", where="effect_d", fix=f"columns are {list(data.columns)}")

    def one(d: pd.DataFrame) -> dict:
        xs = d.loc[d[group].astype(str) == str(x), value]
        ys = d.loc[d[group].astype(str) == str(y), value]
        dd = weat_d(xs, ys) if sigma is None else sigma_d(xs, ys, sigma)
        return {"d": dd, "n_x": int(xs.notna().sum()), "n_y": int(ys.notna().sum())}

    def split(d: pd.DataFrame) -> dict:
        if pooling == "all":
            return one(d)
        per = [one(g) for _, g in d.groupby("model", observed=True, sort=False)]
        ds = np.array([r["d"] for r in per])
        return {
            "d": float(ds.mean()),
            "d_sd": float(ds.std(ddof=1)) if len(ds) > 1 else np.nan,
            "n_models": len(ds),
            "n_x": sum(r["n_x"] for r in per),
            "n_y": sum(r["n_y"] for r in per),
        }

    if not by:
        return pd.DataFrame([split(data)])
    groups = data.groupby(by, observed=True, sort=False)
    return pd.DataFrame([{**dict(zip(by, k)), **split(g)} for k, g in groups])


def standardize(data: pd.DataFrame, value: str, *, by=None, sigma: float | None = None, out: str | None = None) -> pd.DataFrame:
    """Divide ``data[value]`` by an SD so that mean differences read as d (no centering).

    ``sigma=None``: the sample SD (ddof=1) within each ``by`` split (WEAT-style, Studies 2A-2D);
    a number (e.g. :data:`LPR_SIGMA`): that constant (Studies 3-4). Writes column ``out``
    (default: overwrite ``value``).

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"lpr": [1.0, 3.0, 5.0]})
    >>> standardize(data, "lpr", out="d")
       lpr    d
    0  1.0  0.5
    1  3.0  1.5
    2  5.0  2.5
    """
    df = data.copy()
    by = [by] if isinstance(by, str) else list(by or [])
    if sigma is None:
        sigma = (
            df.groupby(by, observed=True, sort=False)[value].transform(lambda s: s.std(ddof=1)) if by else df[value].std(ddof=1)
        )
    df[out or value] = df[value] / sigma
    return df
