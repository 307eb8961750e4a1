"""Studies 2A-2D: attitudes and biases (flowers/insects, instruments/weapons, European/African
American names, young/old names) of Bao (2024); Table 6. See docs/analyses-1-2.md.

Registered analysis ``attitude_weat`` (study file ``analysis: {name: attitude_weat, options}``):

1. LPR per target word = ln P(positive verb) - ln P(negative verb) (the study's ``lpr``:
   ``mask_pair: true``): ``M_word`` "like - dislike" is the *relation* named in
   ``relations`` (attitudinal; "notice - ignore": nonattitudinal), the ``query`` is the
   *perceiver* named in ``perceivers`` ("I [MASK] {TARGET}." personal, "Most people [MASK]
   {TARGET}." societal), ``TARGET`` the *category* (``target_contrast``: first minus second).
2. WEAT-style standardization (``effect_size: pooled_sd``; Caliskan et al., 2017; Bao, 2024,
   Study 2A Method: "the effect size d estimated by standardizing the LPRs with pooled SD
   across all 50 flowers and insects"): every LPR is divided by the SD (ddof = 1) of the LPRs
   of all target words of both categories within its model x perceiver x relation
   (``standardize_within``), after subtracting that split's mean (``center: true``, the
   default). Centering leaves d unchanged (a difference of two category means) but removes the
   model x perceiver x relation offsets (e.g. *like* > *dislike* for every target: footnote 4)
   that the random intercept per model cannot absorb; uncentered they stay in the residual and
   inflate the SE. The paper's t values fit a residual SD of about sqrt(1 - d^2/4) (2A:
   t_personal 4.70 = 0.38 / (0.98 sqrt(2/300))), i.e. the centered model. With tiny demo models,
   whose LPRs hardly vary across words, ``center: false`` gives SEs in the hundreds.
   ``effect_size: sigma``
   divides by the population SD of an LPR instead (``sigma``, default sqrt(2)).
3. One linear mixed model, 2 (category) x 2 (relation) x 2 (perceiver) full factorial, random
   intercept per BERT model (:func:`fmat.stats.fit_lmm`, REML, nlme's df: 2A, 12 models:
   2400 rows - 12 - 7 = 2381).
4. d = the LMM contrast (estimated marginal means) of category 1 - category 2 within a relation:
   per perceiver (``relation:personal``), averaged over the perceivers (``relation:average``)
   and the personal - societal difference (``relation:personal-societal``, Table 6 in
   parentheses). On standardized LPRs a difference of means *is* the WEAT d; with a balanced
   design the LMM's cell means equal the raw means, so d = mean over models of the per-model
   WEAT-style differences. t, df, p (and the CI of d) are those of the same LMM contrast.
   Each contrast gives a ``d`` row and a ``t`` row (docs/results.md: "d and t").
5. Cronbach's alpha among the words of each category is the reliability stage's (the study
   file's ``reliability`` block, conditions ``relation:perceiver:category``): not computed here.
"""

from __future__ import annotations

import warnings
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from fmat.analyses import AnalysisInput, AnalysisOutput, register
from fmat.errors import InputError
from fmat.results import results_frame
from fmat.stats.effects import LPR_SIGMA
from fmat.stats.mixed import SingularFitWarning, fit_lmm

_OPT = "analysis.options"


def _as_pairs(relations: Mapping, where: str) -> dict[str, str]:
    """{relation name: [positive verb, negative verb]} -> {"like - dislike": name}."""
    if not isinstance(relations, Mapping) or not relations:
        raise InputError(
            "relations must map a name to [positive verb, negative verb]",
            where=where,
            fix="write relations: {like-dislike: [like, dislike], notice-ignore: [notice, ignore]}",
        )
    out = {}
    for name, words in relations.items():
        if not isinstance(words, Sequence) or isinstance(words, str) or len(words) != 2:
            raise InputError(
                f"relation {name!r} must list two verbs (got {words!r})",
                where=f"{where}.{name}",
                fix="write [positive, negative], e.g. [like, dislike]",
            )
        out[f"{words[0]} - {words[1]}"] = str(name)
    return out


def design_table(
    lpr: pd.DataFrame,
    *,
    target_contrast: Sequence[str],
    relations: Mapping,
    perceivers: Mapping,
    items: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """LPR table -> ``model, perceiver, relation, category, item, LPR`` (the two contrasted
    categories only; other TARGET groups are left out). Raises InputError naming the option
    when a relation, perceiver or category is not in the LPR table."""
    need = ["model", "query", "M_word", "TARGET", "T_word", "LPR"]
    missing = [c for c in need if c not in lpr.columns]
    if missing:
        raise InputError(
            f"the LPR table lacks column(s) {missing}",
            where="lpr",
            fix="give fmat.summary output with mask_pair: true, target_pair: false",
        )
    if not isinstance(target_contrast, Sequence) or isinstance(target_contrast, str) or len(target_contrast) != 2:
        raise InputError(
            f"target_contrast must name two TARGET groups (got {target_contrast!r})",
            where=f"{_OPT}.target_contrast",
            fix="write [Flowers, Insects] (first minus second)",
        )
    rel = _as_pairs(relations, f"{_OPT}.relations")
    if not isinstance(perceivers, Mapping) or not perceivers:
        raise InputError(
            "perceivers must map a name to its query template",
            where=f"{_OPT}.perceivers",
            fix='write perceivers: {personal: "I [MASK] {TARGET}.", societal: "Most people [MASK] {TARGET}."}',
        )
    per = {str(q): str(name) for name, q in perceivers.items()}
    m_words = set(lpr["M_word"].astype(str))
    queries = set(lpr["query"].astype(str))
    targets = set(lpr["TARGET"].astype(str))
    for label, name in rel.items():
        if label not in m_words:
            raise InputError(
                f"relation {name!r} ({label!r}) is not an M_word of the LPR table ({sorted(m_words)})",
                where=f"{_OPT}.relations.{name}",
                fix="list the verbs in the MASK groups' order (positive group first)",
            )
    for q, name in per.items():
        if q not in queries:
            raise InputError(
                f"perceiver {name!r}: query {q!r} is not in the LPR table ({sorted(queries)})",
                where=f"{_OPT}.perceivers.{name}",
                fix="copy the query template from the study's queries",
            )
    for t in target_contrast:
        if str(t) not in targets:
            raise InputError(
                f"TARGET group {t!r} is not in the LPR table ({sorted(targets)})",
                where=f"{_OPT}.target_contrast",
                fix="name the study file's TARGET groups",
            )
    mapping = {}
    if items is not None and len(items):
        sub = items[items["slot"].astype(str) == "TARGET"]
        mapping = dict(zip(sub["word"].astype(str), sub["item"].astype(str)))
    d = pd.DataFrame(
        {
            "model": lpr["model"].astype(str).to_numpy(),
            "perceiver": lpr["query"].astype(str).map(per).to_numpy(),
            "relation": lpr["M_word"].astype(str).map(rel).to_numpy(),
            "category": lpr["TARGET"].astype(str).to_numpy(),
            "item": lpr["T_word"].astype(str).map(lambda w: mapping.get(w, w)).to_numpy(),
            "LPR": pd.to_numeric(lpr["LPR"], errors="coerce").to_numpy(dtype=float),
        }
    )
    d = d[d["perceiver"].notna() & d["relation"].notna() & d["category"].isin([str(t) for t in target_contrast])]
    d["LPR"] = d["LPR"].where(np.isfinite(d["LPR"]))
    return d.reset_index(drop=True)


def standardize_lpr(
    d: pd.DataFrame,
    *,
    effect_size: Literal["pooled_sd", "sigma"] = "pooled_sd",
    sigma: float = LPR_SIGMA,
    within: Sequence[str] = ("model", "perceiver", "relation"),
    center: bool = True,
) -> pd.DataFrame:
    """Add ``y``: the LPR divided by the SD (ddof = 1) of all items of both categories within
    ``within`` (``pooled_sd``, WEAT d; centered first when ``center``) or by ``sigma``."""
    out = d.copy()
    if effect_size == "pooled_sd":
        within = list(within)
        bad = [c for c in within if c not in out.columns]
        if bad:
            raise InputError(
                f"cannot standardize within {bad}",
                where=f"{_OPT}.standardize_within",
                fix="use some of model, perceiver, relation",
            )
        g = out.groupby(within, sort=False)["LPR"]
        sd = g.transform(lambda s: s.std(ddof=1))
        mean = g.transform("mean") if center else 0.0
        out["y"] = (out["LPR"] - mean) / sd
    elif effect_size == "sigma":
        mean = out.groupby(list(within), sort=False)["LPR"].transform("mean") if center else 0.0
        out["y"] = (out["LPR"] - mean) / float(sigma)
    else:
        raise InputError(
            f"unknown effect_size {effect_size!r}",
            where=f"{_OPT}.effect_size",
            fix="use pooled_sd (WEAT d, the paper) or sigma (LPR / 1.414)",
        )
    return out


def fit_factorial(d: pd.DataFrame):
    """The 2 x 2 x 2 full-factorial LMM ``y ~ category * relation * perceiver`` with a random
    intercept per model (sum-to-zero coding; the contrasts below do not depend on it)."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)  # reported through fit.singular
        return fit_lmm(d, "y ~ C(category, Sum) * C(relation, Sum) * C(perceiver, Sum)", group="model")


def contrasts(fit, categories: Sequence[str], relations: Sequence[str], perceivers: Sequence[str]) -> pd.DataFrame:
    """Category 1 - category 2 per relation: per perceiver, averaged over perceivers, and the
    difference perceiver 1 - perceiver 2. Returns ``relation, part, estimate, se, df, t, p,
    ci_low, ci_high`` (part: a perceiver, ``average`` or ``p1-p2``)."""
    cm = fit.cell_means(["category", "relation", "perceiver"])

    def L(cat, rel, per):
        m = (cm["category"].astype(str) == str(cat)) & (cm["relation"].astype(str) == rel) & (cm["perceiver"].astype(str) == per)
        return cm.loc[m, "L"].iloc[0]

    c1, c2 = (str(c) for c in categories)
    rows = []
    for rel in relations:
        per_L = {p: L(c1, rel, p) - L(c2, rel, p) for p in perceivers}
        parts = [(p, per_L[p]) for p in perceivers]
        parts.append(("average", sum(per_L.values()) / len(per_L)))
        if len(perceivers) == 2:
            p1, p2 = perceivers
            parts.append((f"{p1}-{p2}", per_L[p1] - per_L[p2]))
        for part, vec in parts:
            res = fit.contrast(vec, name=f"{rel}:{part}")
            rows.append(
                {"relation": rel, "part": part, **{k: res[k] for k in ("estimate", "se", "df", "t", "p", "ci_low", "ci_high")}}
            )
    return pd.DataFrame(rows)


@register("attitude_weat", items=("query", "M_word", "T_word"))
def attitude_weat(
    data: AnalysisInput,
    *,
    target_contrast: Sequence[str],
    relations: Mapping,
    perceivers: Mapping,
    effect_size: Literal["pooled_sd", "sigma"] = "pooled_sd",
    sigma: float = LPR_SIGMA,
    standardize_within: Sequence[str] = ("model", "perceiver", "relation"),
    center: bool = True,
) -> AnalysisOutput:
    """Studies 2A-2D (Table 6); see the module docstring for every step and option."""
    study = str(getattr(data.study, "id", "") or "")
    d = design_table(
        data.lpr,
        target_contrast=target_contrast,
        relations=relations,
        perceivers=perceivers,
        items=getattr(data.study, "items", None),
    )
    notes = []
    n_nan = int(d["LPR"].isna().sum())
    if n_nan:
        notes.append(f"{n_nan} LPRs missing (out-of-vocabulary words) left out")
    ds = standardize_lpr(d, effect_size=effect_size, sigma=sigma, within=standardize_within, center=center)
    fit = fit_factorial(ds.dropna(subset=["y"]))
    if fit.singular:
        notes.append("the random-intercept variance of the models is ~0 (singular fit)")
    rel_names = list(dict.fromkeys(_as_pairs(relations, f"{_OPT}.relations").values()))
    per_names = [str(p) for p in perceivers]
    con = contrasts(fit, target_contrast, rel_names, per_names)
    rows = []
    for r in con.to_dict("records"):
        cond = f"{r['relation']}:{r['part']}"
        base = {"study": study, "condition": cond, "model": "all", "df": r["df"], "p": r["p"], "n": float(fit.n)}
        rows.append(
            {**base, "statistic": "d", "value": r["estimate"], "se": r["se"], "ci_low": r["ci_low"], "ci_high": r["ci_high"]}
        )
        rows.append({**base, "statistic": "t", "value": r["t"]})
    effects = con.rename(columns={"part": "perceiver", "estimate": "d"})
    effects = effects.assign(
        x=effects["perceiver"],
        y=effects["d"],
        group=effects["relation"],
        ymin=effects["ci_low"],
        ymax=effects["ci_high"],
        kind="bar",
        xlabel="perceiver",
        ylabel=f"d ({target_contrast[0]} - {target_contrast[1]})",
    )
    words = ds.groupby(["relation", "perceiver", "category", "item"], sort=False)["y"].mean().rename("lpr_std").reset_index()
    return AnalysisOutput(stats=results_frame(rows), figures={"effects": effects, "words": words}, notes=notes)
