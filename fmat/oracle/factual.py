"""The oracle of the factual analyses (:mod:`fmat.analyses.factual`).

``factual_wefat`` / ``factual_names`` (1A-1C): ``LPR(m, q, i) = lp(male word | q, i) - lp(female
word | q, i)``; ``z`` = LPR standardized (mean 0, SD 1 with ddof = 1) over the items within
(m, q); FMAT score of item i = mean z over m and q; ``r`` = Pearson r of the FMAT score with
% male (``fmat~pct_male``) and with WEFAT (``fmat~wefat``) over the items both criterion
tables hold; per template q (``fmat~pct_male:Q<k>``, k in the file's template order) the z
averaged over the models; per model (model = slug) the z averaged over the templates, and
per model and template the z itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fmat.oracle import Planted, register, row
from fmat.results import model_slug


@register("factual_wefat", "factual_names")
def factual(p: Planted) -> list[dict]:
    sid, t, opts, criteria = p.sid, p.table, p.options, p.criteria
    columns = {}  # criterion name in the conditions -> {item: value}
    for key, var in (("criterion", "pct_male"), ("wefat", "wefat")):
        spec = opts.get(key)
        table = (criteria or {}).get(str(spec["table"])) if spec else None
        if table is not None:
            item = str(spec.get("item", "item"))
            columns[var] = dict(zip(table[item].astype(str), pd.to_numeric(table[str(spec["column"])])))
    if "pct_male" not in columns:
        return []
    male, female = list(dict.fromkeys(t["MASK"]))[:2]
    keys = ["model", "query", "T_item"]
    lpr = (t[t["MASK"] == male].set_index(keys)["lp"] - t[t["MASK"] == female].set_index(keys)["lp"]).rename("lpr")
    lpr = lpr.reset_index()
    g = lpr.groupby(["model", "query"], sort=False)["lpr"]
    lpr["z"] = (lpr["lpr"] - g.transform("mean")) / g.transform(lambda s: s.std(ddof=1))
    for crit in columns.values():
        lpr = lpr[lpr["T_item"].isin(crit)]
    qnum = {q: f"Q{k + 1}" for k, q in enumerate(dict.fromkeys(t["query"]))}

    def r(sub, var):
        s = sub.groupby("T_item", sort=False)["z"].mean()
        c = s.index.map(columns[var]).to_numpy(dtype=float)
        return float(np.corrcoef(s.to_numpy(dtype=float), c)[0, 1]), len(s) - 2

    rows = []
    for var in columns:
        rows.append(row(sid, "r", f"fmat~{var}", "all", *r(lpr, var)))
        rows += [row(sid, "r", f"fmat~{var}:{qnum[q]}", "all", *r(g, var)) for q, g in lpr.groupby("query", sort=False)]
        for m, g in lpr.groupby("model", sort=False):
            rows.append(row(sid, "r", f"fmat~{var}", model_slug(m), *r(g, var)))
            rows += [row(sid, "r", f"fmat~{var}:{qnum[q]}", model_slug(m), *r(h, var)) for q, h in g.groupby("query", sort=False)]
    return rows
