"""fmat/oracle/d_by_query.py: the closed form of the example family (fmat/analyses/d_by_query.py).

``d_by_query`` (a study whose LPR pairs the j-th phrases ``A_j``, ``B_j`` of its two ATTRIB
groups, ``lpr: {mask_pair: false, attrib_pair: true}``, as X1b):
``y(m, q, w, j) = (lp(w | q, A_j) - lp(w | q, B_j)) / sigma``; per template q and model m
``d(m, q) = mean y over the first mask_contrast group's words - mean y over the second's``;
``d(q) = mean over m of d(m, q)`` (condition: the q-th label, default ``Q<q>``), df = models - 1.
"""

from fmat.oracle import Planted, first_two, register, row
from fmat.results import model_slug


@register("d_by_query")
def d_by_query(p: Planted) -> list[dict]:
    t, opts = p.table, p.options
    ga, gb = first_two(t, "MASK", opts.get("mask_contrast"))
    aa, ab = first_two(t, "ATTRIB", None)  # the pairing's groups: the file's first minus its second
    keys = ["model", "query", "MASK", "M_word", "A_pos"]
    y = (t[t["ATTRIB"] == aa].set_index(keys)["lp"] - t[t["ATTRIB"] == ab].set_index(keys)["lp"]) / p.sigma
    mean = y.groupby(level=["query", "model", "MASK"], sort=False).mean().unstack("MASK")
    d_m = (mean[ga] - mean[gb]).rename("d").reset_index()
    templates = list(dict.fromkeys(d_m["query"]))
    labels = list(opts.get("labels") or [f"Q{k}" for k in range(1, len(templates) + 1)])
    rows = []
    for label, q in zip(labels, templates):
        d = d_m[d_m["query"] == q]
        rows.append(row(p.sid, "d", label, "all", d["d"].mean(), len(d) - 1))
        rows += [row(p.sid, "d", label, model_slug(m), v) for m, v in zip(d["model"], d["d"])]
    return rows
