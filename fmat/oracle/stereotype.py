"""The oracle of the stereotype analyses (:mod:`fmat.analyses.stereotype`).

``stereotype_pairs`` (3A, 3D, X1, N0): with ``A_j``, ``B_j`` the j-th phrases of the two
``attrib_contrast`` groups, ``y(m, q, w, j) = (lp(w | q, A_j) - lp(w | q, B_j)) / sigma``;
``d = mean y over the first mask_contrast group's words - mean y over the second's``
(condition ``all``), the same within pair j (``pairj``) and within model m (model = slug).

``stereotype_domains`` (3B, 3C): ``y(m, w, g) = mean over the phrases p of ATTRIB group g of
lp(w | p) / sigma``; per form ``f = [focal, reference]``: ``x(m, w, f) = y(m, w, focal) -
y(m, w, reference)``; ``d(f) = mean x over the first [MASK] group's words - mean over the
second's``; ``d(all) = mean over the forms of d(f)``; per model the same within m.
"""

from __future__ import annotations

import numpy as np

from fmat.oracle import Planted, first_two, lmm_df, register, row
from fmat.results import model_slug


def _d(x, column: str, ga: str, gb: str) -> float:
    """Mean ``column`` over the rows of [MASK] group ``ga`` minus that over ``gb``'s."""
    return x.loc[x["MASK"] == ga, column].mean() - x.loc[x["MASK"] == gb, column].mean()


@register("stereotype_pairs")
def stereotype_pairs(p: Planted) -> list[dict]:
    sid, t, opts = p.sid, p.table, p.options
    ga, gb = first_two(t, "MASK", opts.get("mask_contrast"))
    aa, ab = first_two(t, "ATTRIB", opts.get("attrib_contrast"))
    keys = ["model", "query", "MASK", "M_word", "A_pos"]
    first = t[t["ATTRIB"] == aa].set_index(keys)["lp"]
    second = t[t["ATTRIB"] == ab].set_index(keys)["lp"]
    y = ((first - second.reindex(first.index)) / p.sigma).rename("y").reset_index()
    y = y[y["MASK"].isin([ga, gb])]
    cells = 2 * max(1, len(opts.get("mask_wordings") or [])) * y["A_pos"].nunique()
    df = lmm_df(len(y), y["model"].nunique(), cells - 1)
    rows = [row(sid, "d", "all", "all", _d(y, "y", ga, gb), df)]
    rows += [row(sid, "d", f"pair{j + 1}", "all", _d(g, "y", ga, gb), df) for j, g in y.groupby("A_pos", sort=True)]
    rows += [row(sid, "d", "all", model_slug(m), _d(g, "y", ga, gb)) for m, g in y.groupby("model", sort=False)]
    return rows


@register("stereotype_domains")
def stereotype_domains(p: Planted) -> list[dict]:
    sid, t, opts = p.sid, p.table, p.options
    ga, gb = first_two(t, "MASK", opts.get("mask_contrast"))
    y = t.assign(y=t["lp"] / p.sigma).groupby(["model", "MASK", "M_word", "ATTRIB"], sort=False)["y"].mean()
    forms = {
        str(form): (y.xs(str(focal), level="ATTRIB") - y.xs(str(ref), level="ATTRIB")).rename("x").reset_index()
        for form, (focal, ref) in opts["forms"].items()
    }
    n = sum(int(x["MASK"].isin([ga, gb]).sum()) for x in forms.values())
    cells = 2 * max(1, len(opts.get("mask_wordings") or [])) * len(forms)
    df = lmm_df(n, t["model"].nunique(), cells - 1)
    rows = [row(sid, "d", f, "all", _d(x, "x", ga, gb), df) for f, x in forms.items()]
    rows.append(row(sid, "d", "all", "all", np.mean([_d(x, "x", ga, gb) for x in forms.values()]), df))
    for m in dict.fromkeys(t["model"]):
        rows.append(row(sid, "d", "all", model_slug(m), np.mean([_d(x[x["model"] == m], "x", ga, gb) for x in forms.values()])))
    return rows
