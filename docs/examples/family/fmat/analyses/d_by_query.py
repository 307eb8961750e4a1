"""fmat/analyses/d_by_query.py: the [MASK] contrast d in each query template."""

import numpy as np
from scipy import stats

from fmat.analyses import AnalysisInput, AnalysisOutput, register
from fmat.errors import InputError
from fmat.results import model_slug, results_frame
from fmat.stats.effects import LPR_SIGMA


@register("d_by_query", items=("query", "M_word"))
def d_by_query(data: AnalysisInput, *, sigma: float = LPR_SIGMA, mask_contrast=("Male", "Female"), labels=None) -> AnalysisOutput:
    """d = (mean LPR of the first MASK group - mean LPR of the second) / sigma, per query template.

    Per model and template, d_m = the difference of the two groups' mean LPR / sigma; the
    template's d is the mean of d_m over the models, tested against 0 with a one-sample t
    test (t = mean / (sd / sqrt(k)), df = k - 1, k models; 95% CI mean +- t_.975 * se).
    Options: sigma, mask_contrast [first, second], labels (conditions in template order;
    default Q1, Q2, ...). Rows: d and t per template, d per model and template.
    """
    lpr = data.lpr
    first, second = (str(g) for g in mask_contrast)
    found = set(lpr["MASK"].astype(str))
    if not {first, second} <= found:
        raise InputError(
            f"MASK groups {[first, second]} are not in the LPR table ({sorted(found)})",
            where=f"{data.study.path}: analysis.options.mask_contrast",
            fix="name two MASK groups of the study; make the LPR with mask_pair: false",
        )
    y = lpr.assign(y=lpr["LPR"].to_numpy(dtype=float) / sigma, MASK=lpr["MASK"].astype(str))
    cell = y.groupby(["query", "model", "MASK"], observed=True, sort=False)["y"].mean().unstack("MASK")
    d_m = (cell[first] - cell[second]).rename("d").reset_index()
    templates = list(dict.fromkeys(d_m["query"].astype(str)))
    labels = list(labels or [f"Q{i}" for i in range(1, len(templates) + 1)])
    rows = []
    for label, template in zip(labels, templates):
        d = d_m.loc[d_m["query"].astype(str) == template, ["model", "d"]].dropna()
        k = len(d)
        mean, se = d["d"].mean(), d["d"].std(ddof=1) / np.sqrt(k)
        t = mean / se
        p = 2 * stats.t.sf(abs(t), k - 1)
        half = stats.t.ppf(0.975, k - 1) * se
        test = {"study": data.study.id, "condition": label, "model": "all", "df": k - 1, "p": p, "n": k}
        rows.append({**test, "statistic": "d", "value": mean, "se": se, "ci_low": mean - half, "ci_high": mean + half})
        rows.append({**test, "statistic": "t", "value": t})
        rows += [
            {"study": data.study.id, "statistic": "d", "condition": label, "model": model_slug(str(m)), "value": v}
            for m, v in zip(d["model"], d["d"])
        ]
    figure = d_m.astype({"query": str, "model": str})  # drawn by the report
    return AnalysisOutput(
        stats=results_frame(rows), figures={"per_model": figure}, notes=[f"d per template over {d_m['model'].nunique()} models"]
    )
