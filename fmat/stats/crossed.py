"""Crossed random-effects inference of a contrast: models *and* items (words, attribute pairs)
as random factors (``inference: crossed``; docs/calibration.md, "The concept-level test").

The data of one contrast are a complete models x items table ``Y[m, i]`` (each cell the mean
over the design's fixed factors), items nested in the contrast's groups, under the maximal
crossed model of Judd, Westfall & Kenny (2012) and Barr et al. (2013)::

    Y[m, i] = mu_g(i) + a[m, g(i)] + u_i + e[m, i]

For balanced, fully crossed data the REML variance components are the expected-mean-squares
(ANOVA) estimates, so the variance ``V`` of the estimate and its Satterthwaite (1946) df (Clark
1973's quasi-F) are closed forms of the mean squares; docs/calibration.md ("The concept-level
test", "Few items: no item boundary") has the formulas and the boundaries.
tests/test_stats_crossed.py holds these numbers to R's lme4 + lmerTest
(tests/fixtures/r/crossed.R).  :func:`crossed_slope` is the same test of a slope on an
item-level predictor (the criterion family, 1A-1C), the models' own slopes random.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .mixed import _t_test


def _nan_result(reason: str, n: float) -> dict:
    nan = float("nan")
    return {"estimate": nan, "se": nan, "df": nan, "t": nan, "p": nan, "ci_low": nan, "ci_high": nan, "n": n, "note": reason}


def crossed_contrast(
    Y,
    groups: Sequence | None = None,
    weights: Mapping | None = None,
    *,
    random_items: bool = True,
    conf_level: float = 0.95,
    truncate_items: bool = True,
) -> dict:
    """The contrast ``sum_g c_g mean(Y[:, items of g])`` of a complete models x items table
    ``Y`` with models and items as crossed random factors (module docstring).

    ``groups``: each item's group (default: one group); ``weights``: ``{group: c_g}``
    (default ``{the group: 1}``: the grand mean, for a contrast taken within each item).
    ``random_items=False``: the items are fixed (the models' one-sample t, df M - 1), for a
    contrast of named items (one attribute pair).  ``truncate_items=False``: no item boundary
    (module docstring).  Returns ``estimate, se, df, t, p, ci_low, ci_high, n`` (n: the cells), plus ``components``
    (the mean squares, their df and coefficients: what the df came from) and ``boundary`` (the
    variance components set to 0).

    Examples
    --------
    >>> Y = np.array([[1.0, 2.0, 0.5], [1.5, 2.5, 0.0], [0.5, 2.5, 1.0], [1.0, 1.5, 0.0]])
    >>> r = crossed_contrast(Y)  # 4 models x 3 items: the items differ, the models hardly
    >>> round(r["estimate"], 4), round(r["se"], 4), r["df"], r["boundary"]
    (1.1667, 0.512, 2.0, ['model'])
    >>> round(crossed_contrast(Y, random_items=False)["se"], 4)  # these 3 items only
    0.1179
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2:
        raise ValueError("Y must be a models x items table")
    M, n_items = Y.shape
    g = np.zeros(n_items, dtype=object) if groups is None else np.asarray(list(groups), dtype=object)
    labels = list(dict.fromkeys(g.tolist()))
    c = {lab: 1.0 for lab in labels} if weights is None else {k: float(v) for k, v in dict(weights).items()}
    keep = np.array([c.get(x, 0.0) != 0.0 for x in g])
    Y, g = Y[:, keep], g[keep]
    labels = [lab for lab in labels if c.get(lab, 0.0) != 0.0]
    n_items, G = Y.shape[1], len(labels)
    if M < 2 or n_items == 0 or not np.isfinite(Y).all():
        return _nan_result("needs at least 2 models and a complete models x items table", float(Y.size))
    size = {lab: int((g == lab).sum()) for lab in labels}
    w = np.array([c[x] / size[x] for x in g])
    D = Y @ w  # each model's own contrast
    est = float(D.mean())
    S_D = float(D.var(ddof=1))
    W = float(w @ w)
    if random_items and n_items - G >= 1:
        item_mean = Y.mean(axis=0)
        resid = Y - item_mean[None, :]
        group_item = np.empty_like(item_mean)
        for lab in labels:
            sel = g == lab
            group_item[sel] = item_mean[sel].mean()
            resid[:, sel] -= resid[:, sel].mean(axis=1, keepdims=True)
        df_i, df_e = n_items - G, (M - 1) * (n_items - G)
        s_I = float(((item_mean - group_item) ** 2).sum() / df_i)
        ms_e = float((resid**2).sum() / df_e)
        return _crossed_test(est, S_D, W, M, (s_I, df_i), (ms_e, df_e), conf_level, float(Y.size), truncate_items)
    return _crossed_test(est, S_D, W, M, None, None, conf_level, float(Y.size))


def _crossed_test(
    est: float, S_D: float, W: float, M: int, item, resid, conf_level: float, n: float, truncate_items: bool = True
) -> dict:
    """The test of ``est`` from the mean squares of a balanced models x items table (module
    docstring): ``S_D`` (df M - 1), ``item = (s_I, df_i)``, ``resid = (MS_e, df_e)``, ``W`` the
    sum of the squared item weights; ``item`` None: the items fixed (the models' one-sample t)."""
    comps = [{"term": "model", "ms": S_D, "df": M - 1, "coef": 1.0 / M}]
    boundary: list[str] = []
    if item is not None:
        (s_I, df_i), (ms_e, df_e) = item, resid
        # each mean square on the scale of the residual variance when its component is 0
        slope_pos = S_D > W * ms_e
        item_pos = M * s_I > ms_e or not truncate_items
        if slope_pos and item_pos:
            comps += [
                {"term": "item", "ms": s_I, "df": df_i, "coef": W},
                {"term": "model:item", "ms": ms_e, "df": df_e, "coef": -W / M},
            ]
        elif slope_pos:  # the item variance at 0: V = S_D^2 / M
            boundary = ["item"]
        elif item_pos:  # the models' contrast variance at 0: V = W s_I^2
            comps = [{"term": "item", "ms": s_I, "df": df_i, "coef": W}]
            boundary = ["model"]
        else:  # both at 0: the pooled residual
            dfs = (M - 1, df_i, df_e)
            pooled = ((M - 1) * S_D / W + df_i * M * s_I + df_e * ms_e) / sum(dfs)
            comps = [{"term": "pooled", "ms": pooled, "df": sum(dfs), "coef": W / M}]
            boundary = ["model", "item"]
    V = sum(k["coef"] * k["ms"] for k in comps)
    denom = sum((k["coef"] * k["ms"]) ** 2 / k["df"] for k in comps)
    if not V > 0:
        return _nan_result("no variance to test against (every cell the same)", n)
    return {**_t_test(est, float(np.sqrt(V)), V**2 / denom, conf_level), "n": n, "components": comps, "boundary": boundary}


def crossed_slope(Y, x, covariates=None, *, conf_level: float = 0.95) -> dict:
    """The slope of a complete models x items table ``Y`` on an item-level predictor ``x`` (a
    criterion: an occupation's % male, a name's logit % male) with the models and the items as
    crossed random factors, the models' own slopes random (Barr et al.'s maximal structure)::

        Y[m, i] = b0 + b1 x_i + (u_m + v_m x_i) + w_i + e[m, i]

    ``lmer(Y ~ x + (1 + x | model) + (1 | item))``; with ``covariates`` (items x k, e.g. the
    WEFAT score) ``Y ~ x + z + (1 + x + z | model) + (1 | item)`` and ``b1`` the partial slope.
    The items have no slope of ``x`` (each has one value of it).  In a complete table GLS is
    OLS: ``b1`` is the mean over models of each model's OLS slope ``B_m = c' Y[m]`` (``c`` the
    row of ``(X'X)^-1 X'`` of x, ``X = [1, x, z]``), also the OLS slope of the item means, and::

        V  = S_B^2 / M + W (s_I^2 - MS_e / M),     W = c'c  (= 1 / Sxx without covariates)

    with the mean squares of docs/calibration.md ("Exact for the complete table"; df I - p - 1
    for p predictors): REML's estimates and lmerTest's Satterthwaite df whenever no component is
    at 0 (tests/test_stats_crossed.py); boundaries as :func:`crossed_contrast`.

    Besides :func:`crossed_contrast`'s keys: ``se_items`` and ``df_items``, the test with the
    models fixed (their average taken as the measure: the OLS slope of the item means, whose t
    is the t of their Pearson r with x), and ``items`` (I).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = np.linspace(0, 100, 30)
    >>> Y = 0.01 * x + rng.normal(0, 0.3, (4, 1)) * x / 100 + rng.normal(0, 0.5, 30) + rng.normal(0, 0.2, (4, 30))
    >>> r = crossed_slope(Y, x)
    >>> r["df"] > 3, r["se"] > r["se_items"]  # the models' own slopes widen the test
    (True, True)
    """
    Y = np.asarray(Y, dtype=float)
    x = np.asarray(x, dtype=float).ravel()
    if Y.ndim != 2 or Y.shape[1] != len(x):
        raise ValueError("Y must be a models x items table and x one value per item")
    M, n_items = Y.shape
    Z = np.zeros((n_items, 0)) if covariates is None else np.asarray(covariates, dtype=float).reshape(n_items, -1)
    X = np.column_stack([np.ones(n_items), x, Z])
    p = X.shape[1] - 1
    df_i = n_items - p - 1
    if M < 2 or df_i < 1 or not (np.isfinite(Y).all() and np.isfinite(X).all()):
        return _nan_result(f"needs at least 2 models, {p + 2} items and a complete models x items table", float(Y.size))
    if np.linalg.matrix_rank(X) < X.shape[1]:
        return _nan_result("the predictor is constant over the items (or a covariate's copy)", float(Y.size))
    P = np.linalg.pinv(X)  # (X'X)^-1 X'
    c = P[1]
    B = Y @ P.T  # each model's OLS coefficients (M x (p+1))
    est = float(B[:, 1].mean())
    S_B = float(B[:, 1].var(ddof=1))
    W = float(c @ c)
    item_mean = Y.mean(axis=0)
    r_I = item_mean - X @ (P @ item_mean)
    s_I = float(r_I @ r_I / df_i)
    fitted = B @ X.T  # each model's own regression on X
    resid = (Y - fitted) - r_I[None, :]
    df_e = (M - 1) * df_i
    ms_e = float((resid**2).sum() / df_e)
    # the models' own intercepts (their mean at the items' mean predictors): below the residual
    # (z-scores centred within each model: exactly 0) their variance is at 0, and REML pools
    # their mean square into the residual's
    ms_a = float(n_items * Y.mean(axis=1).var(ddof=1))
    pooled = ms_a < ms_e
    if pooled:
        ms_e, df_e = (df_e * ms_e + (M - 1) * ms_a) / (df_e + M - 1), df_e + M - 1
    out = _crossed_test(est, S_B, W, M, (s_I, df_i), (ms_e, df_e), conf_level, float(Y.size))
    if pooled and "boundary" in out:
        out["boundary"] = ["model intercept", *out["boundary"]]
    out.update({"se_items": float(np.sqrt(W * s_I)), "df_items": float(df_i), "items": n_items})
    return out
