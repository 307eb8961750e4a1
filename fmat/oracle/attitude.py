"""The oracle of the attitude analysis (:mod:`fmat.analyses.attitude`).

``attitude_weat`` (2A-2D): ``LPR(m, q, r, t) = lp(pos_r | q, t) - lp(neg_r | q, t)`` for
relation ``r = [pos, neg]``; within (m, q, r) ``z = LPR / SD`` (SD with ddof = 1 over the
words of both ``target_contrast`` categories: of the planted LPRs, or, given the ``scores``
the analysis is run on, of those scores' LPRs, the scale a pooled-SD d is measured on);
``d(r, q) = mean over m of (mean z of category
1 - mean z of category 2)``; ``d(r, average) = (d(r, q1) + d(r, q2)) / 2``;
``d(r, q1-q2) = d(r, q1) - d(r, q2)``. With ``effect_size: sigma`` the SD is the option
``sigma`` (default sqrt(2), the population SD of an LPR), not the words' spread.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from fmat.oracle import Planted, lmm_df, register, row

_KEYS = ["model", "query", "TARGET", "T_word", "M_word"]


def _lprs(lp: pd.Series, relations: Mapping):
    """``(relation, table of lpr)`` per relation ``[pos, neg]`` of the log probabilities ``lp``."""
    for rel, (pos, neg) in relations.items():
        yield rel, (lp.xs(str(pos), level="M_word") - lp.xs(str(neg), level="M_word")).rename("lpr").reset_index()


def _sample_sd(scores: pd.DataFrame | None, opts: Mapping) -> dict | None:
    """The SD (ddof 1) of the observed LPRs per (model, template, relation) over the items of
    both contrasted categories: the scale a pooled-SD d divides by (``None`` without scores, or
    for ``effect_size`` other than ``pooled_sd``)."""
    if scores is None or str(opts.get("effect_size", "pooled_sd")) != "pooled_sd":
        return None
    s = scores[scores["TARGET"].astype(str).isin([str(c) for c in opts["target_contrast"]])].assign(
        lp=np.log(pd.to_numeric(scores["prob"], errors="coerce")), **{c: scores[c].astype(str) for c in _KEYS}
    )
    out = {}
    for rel, lpr in _lprs(s.set_index(_KEYS)["lp"], opts["relations"]):
        for (m, q), g in lpr.groupby(["model", "query"], sort=False):
            out[(str(m), str(q), str(rel))] = float(g["lpr"].std(ddof=1))
    return out


@register("attitude_weat")
def attitude_weat(p: Planted) -> list[dict]:
    sid, opts = p.sid, p.options
    c1, c2 = (str(c) for c in opts["target_contrast"])
    t = p.table[p.table["TARGET"].isin([c1, c2])]
    sample_sd = _sample_sd(p.scores, opts)
    sigma = p.sigma if str(opts.get("effect_size", "pooled_sd")) == "sigma" else None  # the LPRs in units of sigma
    rows = []
    perceivers = {str(name): str(q) for name, q in opts["perceivers"].items()}
    n_items = t.drop_duplicates(["TARGET", "T_word"]).shape[0]
    n = t["model"].nunique() * len(perceivers) * len(opts["relations"]) * n_items
    df = lmm_df(n, t["model"].nunique(), 2 * len(perceivers) * len(opts["relations"]) - 1)
    for rel, lpr in _lprs(t.set_index(_KEYS)["lp"], opts["relations"]):
        ds = {}
        for name, q in perceivers.items():
            per_model = []
            for m, g in lpr[lpr["query"] == q].groupby("model", sort=False):
                # pooled-SD d: the planted LPRs in units of the SD of the LPRs the analysis sees
                # (the observed scores' SD when given: docs/calibration.md, "Why 2A and 4A missed")
                sd = g["lpr"].std(ddof=1) if sample_sd is None else sample_sd[(str(m), str(q), str(rel))]
                sd = sd if sigma is None else sigma
                z = g["lpr"] / sd
                per_model.append(z[g["TARGET"] == c1].mean() - z[g["TARGET"] == c2].mean())
            ds[name] = float(np.mean(per_model))
            rows.append(row(sid, "d", f"{rel}:{name}", "all", ds[name], df))
        names = list(perceivers)
        if len(names) == 2:
            rows.append(row(sid, "d", f"{rel}:average", "all", (ds[names[0]] + ds[names[1]]) / 2, df))
            rows.append(row(sid, "d", f"{rel}:{names[0]}-{names[1]}", "all", ds[names[0]] - ds[names[1]], df))
    return rows
