"""Studies 2A-2D: attitudes and biases (flowers/insects, instruments/weapons, European/African
American names, young/old names) of Bao (2024); Table 6. Steps, options and figure tables:
docs/analyses-1-2.md.

Registered analysis ``attitude_weat``: the LPR of each target word (``M_word`` "like -
dislike", a *relation*; ``query``, a *perceiver*; ``TARGET``, the *category*) divided by the SD
(ddof = 1) of all target words of both categories within model x perceiver x relation, after
centering there (WEAT d, Caliskan et al., 2017; the paper's t values fit the centered model);
one LMM ``y ~ category * relation * perceiver``, random intercept per model
(:func:`fmat.stats.fit_lmm`); d and t = its contrast of category 1 - category 2 per
perceiver, averaged and personal - societal.  Cronbach's alpha is the reliability stage's.
"""

from __future__ import annotations

import warnings
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from fmat.analyses import AnalysisInput, AnalysisOutput, register
from fmat.analyses.stereotype import _rewhere
from fmat.errors import InputError
from fmat.results import model_slug, results_frame
from fmat.stats.crossed import crossed_contrast
from fmat.stats.effects import LPR_SIGMA
from fmat.stats.mixed import SingularFitWarning, fit_lmm

_OPT = "analysis.options"
#: the columns of a contrast's test (:func:`contrasts`, :func:`crossed_contrasts`)
_TEST = ("estimate", "se", "df", "t", "p", "ci_low", "ci_high")


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
    _check_names_in_lpr(lpr, rel, per, target_contrast)
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


def _check_names_in_lpr(lpr: pd.DataFrame, rel: Mapping, per: Mapping, target_contrast) -> None:
    """The relations' [MASK] word pairs, the perceivers' templates and the two TARGET groups are
    in the LPR table; a relation whose verbs are reversed says so."""
    m_words = set(lpr["M_word"].astype(str))
    queries = set(lpr["query"].astype(str))
    targets = set(lpr["TARGET"].astype(str))
    for label, name in rel.items():
        if label not in m_words:
            first, _, second = label.partition(" - ")
            swapped = f"{second} - {first}" in m_words
            raise InputError(
                f"relation {name!r} ({label!r}) is not an M_word of the LPR table ({sorted(m_words)})"
                + (f": its verbs are reversed (did you mean [{second}, {first}]?)" if swapped else ""),
                where=f"{_OPT}.relations.{name}",
                fix="list the verbs in the MASK groups' order (the first MASK group's word first: "
                "the LPR is ln P(first group's word) - ln P(second group's word))",
            )
    named = [
        (q, queries, f"perceiver {name!r}: query {q!r}", f"perceivers.{name}", "copy the query template from the study's queries")
        for q, name in per.items()
    ]
    named += [
        (str(t), targets, f"TARGET group {t!r}", "target_contrast", "name the study file's TARGET groups")
        for t in target_contrast
    ]
    for value, have, what, option, fix in named:
        if value not in have:
            raise InputError(f"{what} is not in the LPR table ({sorted(have)})", where=f"{_OPT}.{option}", fix=fix)


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
    out, within, pooled = d.copy(), list(within), effect_size == "pooled_sd"
    if not pooled and effect_size != "sigma":
        raise InputError(
            f"unknown effect_size {effect_size!r}",
            where=f"{_OPT}.effect_size",
            fix="use pooled_sd (WEAT d, the paper) or sigma (LPR / 1.414)",
        )
    bad = [c for c in within if c not in out.columns]
    if pooled and bad:
        raise InputError(
            f"cannot standardize within {bad}",
            where=f"{_OPT}.standardize_within",
            fix="use some of model, perceiver, relation",
        )
    g = out.groupby(within, sort=False)["LPR"] if pooled or center else None
    sd = g.transform(lambda s: s.std(ddof=1)) if pooled else float(sigma)
    out["y"] = (out["LPR"] - (g.transform("mean") if center else 0.0)) / sd
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
        for part, vec in _parts({p: L(c1, rel, p) - L(c2, rel, p) for p in perceivers}, perceivers):
            res = fit.contrast(vec, name=f"{rel}:{part}")
            rows.append({"relation": rel, "part": part, **{k: res[k] for k in _TEST}})
    return pd.DataFrame(rows)


def _parts(per: dict, perceivers: Sequence[str]) -> list[tuple]:
    """``(part, value)`` of :func:`contrasts` and :func:`crossed_contrasts`: each perceiver's value
    ``per[p]``, their mean (``average``) and, for two perceivers, perceiver 1 minus 2 (``p1-p2``)."""
    parts = [(p, per[p]) for p in perceivers]
    parts.append(("average", sum(per.values()) / len(per)))
    if len(perceivers) == 2:
        p1, p2 = perceivers
        parts.append((f"{p1}-{p2}", per[p1] - per[p2]))
    return parts


def crossed_contrasts(
    ds: pd.DataFrame, categories: Sequence[str], relations: Sequence[str], perceivers: Sequence[str]
) -> pd.DataFrame:
    """The concept-level variant of :func:`contrasts` (``inference: crossed``, ours, not the
    paper's): the models *and* the target words crossed random factors
    (:func:`fmat.stats.crossed.crossed_contrast`).

    ``Y[model, word]``: the word's y in a part (as :func:`_parts`), the words nested in their
    category: ``Y ~ category + (1 + category | model) + (1 | word)``, Satterthwaite's df.  Words
    without a y in every model and perceiver are left out.  Columns as :func:`contrasts`, plus ``n``."""
    c1, c2 = (str(c) for c in categories)
    rows = []
    for rel in relations:
        sub = ds[ds["relation"].astype(str) == str(rel)]
        tab = sub.pivot_table(index="model", columns=["perceiver", "item"], values="y", aggfunc="mean", observed=True)
        tab = tab.dropna(axis=1)
        words = [w for w in dict.fromkeys(tab.columns.get_level_values("item")) if all((p, w) in tab.columns for p in perceivers)]
        cat = sub.drop_duplicates("item").set_index("item")["category"].astype(str)
        for part, Y in _parts({p: tab[p][words] for p in perceivers}, perceivers):
            res = crossed_contrast(Y.to_numpy(dtype=float), cat.loc[words].to_numpy(), {c1: 1.0, c2: -1.0})
            rows.append({"relation": rel, "part": part, **{k: res[k] for k in (*_TEST, "n")}})
    return pd.DataFrame(rows)


def per_model_d(ds: pd.DataFrame, categories: Sequence[str], relations: Sequence[str], perceivers: Sequence[str]) -> list[dict]:
    """d within each model, per relation and part (as :func:`_parts`): the mean ``y`` of category
    1's words minus category 2's, the LMM's cell-mean contrast without a test. Rows ``model,
    relation, part, d, n``."""
    c1, c2 = (str(c) for c in categories)
    rows = []
    for model, g in ds.groupby("model", observed=True, sort=False):
        cells = g.groupby([g["category"].astype(str), g["relation"].astype(str), g["perceiver"].astype(str)])["y"].mean()
        for rel in relations:
            per = {}
            for p in perceivers:
                a, b = cells.get((c1, str(rel), str(p))), cells.get((c2, str(rel), str(p)))
                if a is not None and b is not None and np.isfinite(a) and np.isfinite(b):
                    per[str(p)] = float(a - b)
            parts = list(per.items())
            if len(per) == len(perceivers):
                parts.append(("average", float(np.mean(list(per.values())))))
                if len(perceivers) == 2:
                    p1, p2 = (str(p) for p in perceivers)
                    parts.append((f"{p1}-{p2}", per[p1] - per[p2]))
            n = float(g.loc[g["relation"].astype(str) == str(rel), "y"].notna().sum())
            rows += [{"model": model_slug(str(model)), "relation": str(rel), "part": part, "d": d, "n": n} for part, d in parts]
    return rows


def check_options(options: Mapping, queries: pd.DataFrame, where: str, *, lpr: pd.DataFrame | None = None) -> None:
    """``attitude_weat``'s options against the LPR table the design will have
    (:func:`fmat.analyses.design_lpr`), before any model loads: enough target words for a
    pooled SD, and :func:`design_table`'s checks (a reversed verb pair names the order it needs)."""
    tc = options.get("target_contrast")
    if options.get("effect_size", "pooled_sd") == "pooled_sd" and isinstance(tc, list) and "T_word" in queries.columns:
        words = queries.loc[queries["TARGET"].astype(str).isin([str(t) for t in tc]), "T_word"].astype(str).nunique()
        if words < 3:
            raise InputError(
                f"target_contrast {tc} compares {words} target words; standardized by their pooled SD (effect_size: "
                "pooled_sd) two words are always -0.71 and +0.71, which leaves no variation to test",
                where=f"{where}.target_contrast",
                fix="give the two TARGET groups three or more words together (WEAT: 8 or more each), or use effect_size: sigma",
            )
    if lpr is None:
        return
    try:
        design_table(
            lpr,
            target_contrast=options.get("target_contrast"),
            relations=options.get("relations"),
            perceivers=options.get("perceivers"),
        )
    except InputError as err:
        raise _rewhere(err, where) from None


def covered_relations(
    ds: pd.DataFrame, categories: Sequence[str], relations: Sequence[str], perceivers: Sequence[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """The relations whose LPRs fill every category x perceiver cell of ``ds``, and for each
    other relation (e.g. a verb out of vocabulary) its empty cells (``category/perceiver``)."""
    have = set(zip(ds["category"].astype(str), ds["relation"].astype(str), ds["perceiver"].astype(str)))
    empty = {
        str(r): [f"{c}/{p}" for p in perceivers for c in categories if (str(c), str(r), str(p)) not in have] for r in relations
    }
    return [r for r, cells in empty.items() if not cells], {r: cells for r, cells in empty.items() if cells}


def _oov_words(scores) -> set[str]:
    """The [MASK] words some model scored as out of vocabulary (``oov`` True or no probability)."""
    if not isinstance(scores, pd.DataFrame) or "M_word" not in scores.columns:
        return set()
    bad = scores["oov"].fillna(False).astype(bool) if "oov" in scores.columns else pd.Series(False, index=scores.index)
    if "prob" in scores.columns:
        bad = bad | pd.to_numeric(scores["prob"], errors="coerce").isna()
    return set(scores.loc[bad, "M_word"].astype(str))


@register(
    "attitude_weat",
    check=check_options,
    items=("query", "M_word", "T_word"),
    needs=("query", "M_word", "TARGET", "T_word"),
    pooled_sd={"effect_size": "pooled_sd"},
)
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
    inference: Literal["paper", "crossed"] = "paper",
) -> AnalysisOutput:
    """Studies 2A-2D (Table 6); steps and options: docs/analyses-1-2.md. ``inference:
    crossed`` (ours): :func:`crossed_contrasts`, the same d."""
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
    ds = ds.dropna(subset=["y"])
    rel_names = list(dict.fromkeys(_as_pairs(relations, f"{_OPT}.relations").values()))
    per_names = [str(p) for p in perceivers]
    rel_names, gaps = covered_relations(ds, [str(t) for t in target_contrast], rel_names, per_names)
    if gaps:
        oov = _oov_words(data.scores)
        for rel, cells in gaps.items():
            words = [str(w) for w in relations.get(rel, ()) if str(w) in oov]  # relations: checked by _as_pairs
            why = f"out of vocabulary ({', '.join(words)}: a model cannot score them as one token)" if words else "missing"
            notes.append(
                f"relation {rel!r} left out (its d and t are not reported): its LPRs are {why} in "
                f"{len(cells)} of its category x perceiver cells ({'; '.join(cells[:3])})"
            )
        if not rel_names:
            raise InputError(
                "no relation has LPRs in every category and perceiver: " + " ".join(notes[-len(gaps) :]),
                where=f"{_OPT}.relations",
                fix="use [MASK] words every model scores as one token (fmat query --study FILE shows them; "
                "or score: {add_tokens: true})",
            )
        ds = ds[ds["relation"].isin(rel_names)]
    fit = fit_factorial(ds)
    if fit.singular:
        notes.append("the random-intercept variance of the models is ~0 (singular fit)")
    con = contrasts(fit, target_contrast, rel_names, per_names)
    if inference == "crossed":
        con = crossed_contrasts(ds, target_contrast, rel_names, per_names)
        notes.append(
            "inference: crossed (ours, not the paper's): d, t, p and CI with the models and the target words as "
            "crossed random factors (the concept-level test: fmat.stats.crossed, docs/calibration.md)"
        )
    rows = []
    for r in con.to_dict("records"):
        cond = f"{r['relation']}:{r['part']}"
        base = {"study": study, "condition": cond, "model": "all", "df": r["df"], "p": r["p"], "n": float(r.get("n", fit.n))}
        rows.append(
            {**base, "statistic": "d", "value": r["estimate"], "se": r["se"], "ci_low": r["ci_low"], "ci_high": r["ci_high"]}
        )
        rows.append({**base, "statistic": "t", "value": r["t"]})
    for r in per_model_d(ds, target_contrast, rel_names, per_names):  # the effect in each model (no test)
        cond = f"{r['relation']}:{r['part']}"
        rows.append({"study": study, "statistic": "d", "condition": cond, "model": r["model"], "value": r["d"], "n": r["n"]})
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
