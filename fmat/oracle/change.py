"""The oracle of the change analysis (:mod:`fmat.analyses.change`).

``change_over_time`` (4A-4D): ``LPR(m, year, k) = lp(year | k, G1) - lp(year | k, G2)`` for
the paired TARGET (or ATTRIB) groups' j-th words ``G1_j, G2_j`` and template ``k``;
``d(m, year) = mean over the averaged level of LPR / sigma``; ``b`` = the OLS slope of d on
``year / year_scale`` over all models and years (with every model holding every year the
random-intercept LMM's slope equals it); ``beta = b * SD(year / year_scale) / SD(d)``
(ddof = 1 both); per model the OLS slope within m; century contrast ``[a, b]``: ``mean over
m of d(m, a) - d(m, b)``.
"""

from __future__ import annotations

from fmat.oracle import SLOTS, Planted, first_two, lmm_df, register, row
from fmat.results import model_slug


@register("change_over_time")
def change_over_time(p: Planted) -> list[dict]:
    sid, t, opts = p.sid, p.table, p.options
    scale = float(opts.get("year_scale", 100))
    pairing = dict(p.data.get("lpr") or {})
    slot = "TARGET" if "TARGET" in t.columns and pairing.get("target_pair", True) else "ATTRIB"
    pos = SLOTS[slot][0] + "_pos"
    g1, g2 = first_two(t, slot, None)  # the paired groups: the file's first minus its second
    keys = ["model", "query", "M_word", pos]
    lpr = t[t[slot] == g1].set_index(keys)["lp"] - t[t[slot] == g2].set_index(keys)["lp"]
    d = (lpr / p.sigma).groupby(level=["model", "M_word"], sort=False).mean().rename("d").reset_index()
    d["x"] = d["M_word"].astype(float) / scale

    def slope(g):
        x, y = g["x"].to_numpy(), g["d"].to_numpy()
        return float(((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum())

    b = slope(d)
    models = d["model"].nunique()
    rows = [
        row(sid, "b", "year", "all", b, lmm_df(len(d), models, 1)),
        row(sid, "beta", "year", "all", b * d["x"].std(ddof=1) / d["d"].std(ddof=1)),
    ]
    rows += [row(sid, "b", "year", model_slug(m), slope(g), len(g) - 2) for m, g in d.groupby("model", sort=False)]
    by_year = d.assign(year=d["M_word"].astype(int)).pivot(index="model", columns="year", values="d")
    for a, c in opts.get("century_contrasts") or []:
        rows.append(row(sid, "d", f"{int(a)}vs{int(c)}", "all", (by_year[int(a)] - by_year[int(c)]).mean(), models - 1))
    return rows
