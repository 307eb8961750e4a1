"""Crossed random-effects inference of a contrast: models *and* items (words, attribute pairs)
as random factors (``inference: crossed``; docs/calibration.md, "The concept-level test").

The data of one contrast are a complete models x items table ``Y[m, i]`` (each cell the mean
over the design's fixed factors: wordings, templates), items nested in the contrast's fixed
groups (2A: the target words of Flowers and of Insects; 3A: one group, the attribute pairs, the
contrast then taken within each item).  The estimate is ``d = sum_i w_i mean_m Y[m, i]`` with
``w_i = c_g / n_g`` (``c_g`` the group's contrast weight, ``n_g`` its items).  Its model,
the crossed random-effects model of Judd, Westfall & Kenny (2012) and Barr et al. (2013) with
the maximal random structure the design allows::

    Y[m, i] = mu_g(i) + a[m, g(i)] + u_i + e[m, i]

a model's own effect of every group (random intercept *and* slope of the contrast per model,
correlated), an item's own value (random intercept per item: items are nested in a group, so
they have no slope of it; a within-item contrast's item intercept *is* its by-item slope) and
the model x item residual.  For such balanced, fully crossed data the REML fit's variance
components are the expected-mean-squares (ANOVA) estimates, and the variance of ``d`` is::

    V = S_D^2 / M + W (s_I^2 - MS_e / M),     W = sum_i w_i^2

with ``S_D^2`` the variance over models of the models' own contrasts ``D_m = sum_i w_i Y[m, i]``
(df M - 1), ``s_I^2`` the pooled within-group variance of the item means over models
(df I - G) and ``MS_e`` the model x item(group) interaction mean square (df (M - 1)(I - G)):
``E[V] = Var(d)``.  t = d / sqrt(V) with Satterthwaite's df (Satterthwaite 1946; the quasi-F
of Clark 1973, whose denominator is this linear combination of mean squares)::

    df = V^2 / sum_k (a_k MS_k)^2 / df_k

A variance component estimated below 0 is set to 0 as REML does (the boundary): then ``V``
is ``S_D^2 / M`` (df M - 1: no item variance) or ``W s_I^2`` (df I - G: no model variance),
or the pooled residual (both).  tests/test_stats_crossed.py holds these numbers to R's
lme4 + lmerTest (Satterthwaite) on designs shaped like 2A and 3A (tests/fixtures/r/crossed.R).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from scipy import stats


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
) -> dict:
    """The contrast ``sum_g c_g mean(Y[:, items of g])`` of a complete models x items table
    ``Y`` with models and items as crossed random factors (module docstring).

    ``groups``: each item's group (default: one group); ``weights``: ``{group: c_g}``
    (default ``{the group: 1}``: the grand mean, for a contrast taken within each item).
    ``random_items=False``: the items are fixed (only the models random: a one-sample t test of
    the models' own contrasts, df M - 1), for a contrast of named items (one attribute pair).
    Returns ``estimate, se, df, t, p, ci_low, ci_high, n`` (n: the cells), plus ``components``
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
    comps = [{"term": "model", "ms": S_D, "df": M - 1, "coef": 1.0 / M}]
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
        # each mean square on the scale of the residual variance when its component is 0
        slope_pos = S_D > W * ms_e
        item_pos = M * s_I > ms_e
        if slope_pos and item_pos:
            comps += [
                {"term": "item", "ms": s_I, "df": df_i, "coef": W},
                {"term": "model:item", "ms": ms_e, "df": df_e, "coef": -W / M},
            ]
            boundary = []
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
    else:
        boundary = []
    V = sum(k["coef"] * k["ms"] for k in comps)
    denom = sum((k["coef"] * k["ms"]) ** 2 / k["df"] for k in comps)
    if not V > 0:
        return _nan_result("no variance to test against (every cell the same)", float(Y.size))
    df = V**2 / denom
    se = float(np.sqrt(V))
    t = est / se
    q = float(stats.t.ppf(0.5 + conf_level / 2, df))
    return {
        "estimate": est,
        "se": se,
        "df": float(df),
        "t": float(t),
        "p": float(2 * stats.t.sf(abs(t), df)),
        "ci_low": est - q * se,
        "ci_high": est + q * se,
        "n": float(Y.size),
        "components": comps,
        "boundary": boundary,
    }
