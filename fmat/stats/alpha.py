"""Cronbach's alpha of a wide table (rows = observations, columns = items), raw and standardized,
as R ``psych::alpha`` (``raw_alpha``, ``std.alpha``): C from pairwise-complete observations and
R = cov2cor(C) (``use = "pairwise"``); docs/statistics.md has the formulas.
Source: Revelle, psych::alpha; Cronbach (1951) Psychometrika 16, 297-334.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError


def _as_frame(items) -> pd.DataFrame:
    return pd.DataFrame(items).apply(pd.to_numeric, errors="raise").astype(float).replace([np.inf, -np.inf], np.nan)


def cronbach_alpha(items) -> dict:
    """Raw and standardized Cronbach's alpha (pairwise-complete covariances, as psych::alpha).

    ``items``: rows = observations, columns = items (k >= 2). Returns ``{"alpha", "alpha_std",
    "k_items", "n_obs"}`` (n_obs = rows with any value).

    Examples
    --------
    Reproduces ``psych::alpha()`` (``raw_alpha``, ``std.alpha``):

    >>> items = [[1, 2, 2], [2, 3, 3], [3, 3, 4], [4, 5, 4], [5, 4, 6]]
    >>> res = cronbach_alpha(items)
    >>> round(res["alpha"], 3), round(res["alpha_std"], 3), res["k_items"], res["n_obs"]
    (0.927, 0.929, 3, 5)
    """
    df = _as_frame(items)
    k = df.shape[1]
    if k < 2:
        raise InputError(
            f"alpha needs at least 2 items (have {k})",
            where="cronbach_alpha(items)",
            fix="spread more items (queries or words) into columns",
        )
    cov = df.cov(min_periods=2).to_numpy()
    sd = np.sqrt(np.diag(cov))
    cor = cov / np.outer(sd, sd)  # psych: R = cov2cor(C), not pairwise correlations
    if not np.isfinite(cov).all():
        raise InputError(
            "some pair of items has fewer than 2 common observations",
            where="cronbach_alpha(items)",
            fix="drop sparse items or rows first",
        )
    alpha = k / (k - 1) * (1 - np.trace(cov) / cov.sum())
    alpha_std = k / (k - 1) * (1 - k / cor.sum()) if np.isfinite(cor).all() else np.nan
    n_obs = int(df.notna().any(axis=1).sum())
    return {"alpha": float(alpha), "alpha_std": float(alpha_std), "k_items": int(k), "n_obs": n_obs}


def alpha_if_dropped(items) -> pd.DataFrame:
    """Raw and standardized alpha with each item left out (psych::alpha ``alpha.drop``): columns
    ``item, alpha, alpha_std`` (needs k >= 3).

    Examples
    --------
    Reproduces ``psych::alpha()$alpha.drop``:

    >>> items = [[1, 2, 2], [2, 3, 3], [3, 3, 4], [4, 5, 4], [5, 4, 6]]
    >>> alpha_if_dropped(items).round(3)
      item  alpha  alpha_std
    0    0  0.772      0.788
    1    1  0.978      0.979
    2    2  0.882      0.908
    """
    df = _as_frame(items)
    if df.shape[1] < 3:
        raise InputError("alpha-if-item-dropped needs at least 3 items", where="alpha_if_dropped(items)")
    res = [(str(col), cronbach_alpha(df.drop(columns=[col]))) for col in df.columns]
    return pd.DataFrame([{"item": c, "alpha": r["alpha"], "alpha_std": r["alpha_std"]} for c, r in res])
