"""Calibration of the studies' analyses on worlds of known truth (docs/calibration.md).

A *world* here is one draw of :mod:`fmat.plant`'s planted probabilities for ``n_models``
models of a study's design.  Its models are **perfect learners**: a model's probability of an
option in a context is that option's share of its own sample of ``samples x options`` training
sentences of the context (+0.5 smoothing), so the only noise is sampling noise.  ``others`` is
the share of each context's probability outside the study's options (drawn as one more
category, not scored).

The **realised value** of a statistic is the same analysis on what the world's models hold
(:func:`realised_values`).  A 95% CI is judged by whether it covers it, and a test is a false
positive when it is 0 (:func:`null_plant`) and p < .05.  World ``seed`` fixes the planted
variation and the samples: the same seed gives the same world.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import beta, binom
from scipy.stats import t as student_t

from fmat import analyses
from fmat import plant as fplant
from fmat.analyses import attitude as att
from fmat.reliability import icc_models, icc_rows
from fmat.stages import lpr_table

#: the statistics whose CI and p are judged (rows with model "all" and a CI)
JUDGED = ("d", "b", "r")


@dataclass
class World:
    """One simulated world's inputs: the study, its plant, the models and the sampling."""

    study: object
    plant: fplant.Plant
    n_models: int = 12
    others: float = 0.0
    samples: int | None = None  # sentences per option of each context (default: the plant's)
    #: True: the sample grows by 1 / (1 - others), so the expected number of sentences that show
    #: an option stays ``samples x options``; False (bench_null.py's): the sample stays that size
    keep_option_counts: bool = True


def null_plant(plant: fplant.Plant) -> fplant.Plant:
    """The same study with nothing planted and no item or model-item variation: every
    statistic's realised value is exactly 0 (the option words' frequencies stay: they cancel in
    every LPR)."""
    variation = {**dict(plant.variation), "items": 0.0, "model_items": 0.0, "models": 0.0}
    return replace(plant, effects=[], variation=variation, expect=[])


def concept_null_plant(plant: fplant.Plant) -> fplant.Plant:
    """The same study with nothing planted at the concept level: every effect's size 0, while
    the world's item, model and model-item variation stay (each word's, template's and model's
    own value: what *these* words carry).  Every statistic's concept-level value is 0, but its
    realised value (what these models hold for these words) is not: a test of the concept that
    rejects 0 here is a false positive (docs/calibration.md, "Concept-level nulls and
    coverage"; benchmarks/bench_concept.py, ``fmat power --level concept``)."""
    effects = [replace(e, lpr=0.0, d=0.0) for e in plant.effects]
    return replace(plant, effects=effects, expect=[])


def with_seed(plant: fplant.Plant, seed: int) -> fplant.Plant:
    """The plant with its random parts drawn from ``seed``."""
    return replace(plant, seed=int(seed))


#: the last world's planted probabilities (:func:`_planted_scores`)
_LAST_PLANTED: dict = {}


def _planted_scores(study, p: fplant.Plant, names: list[str], criteria) -> pd.DataFrame:
    """:func:`fmat.plant.planted_scores`, kept for the next call with the same study, plant,
    models and criterion tables (the same objects): the settings of one world that differ only
    in ``others`` or ``keep_option_counts`` share them.  Callers read the frame, never write it."""
    key = (repr(p), tuple(names))
    last = _LAST_PLANTED
    if last and last["key"] == key and last["study"] is study and last["criteria"] is criteria:
        return last["frame"]
    frame = fplant.planted_scores(study, p, names, criteria)
    last.update(key=key, study=study, criteria=criteria, frame=frame)
    return frame


def perfect_learner_scores(
    world: World, seed: int, criteria: Mapping[str, pd.DataFrame] | None = None, sample_seed: int | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(exact, sampled) scores of one world: the planted probabilities of ``n_models`` models,
    and each model's empirical shares of its own sample (seeded by ``seed``, or by
    ``sample_seed`` where given: other samples of the same world)."""
    study, p = world.study, with_seed(world.plant, seed)
    names = [f"m{k + 1:02d}" for k in range(world.n_models)]
    exact = _planted_scores(study, p, names, criteria)
    samples = int(world.samples or p.samples)
    codes, _ = pd.factorize(fplant.context_of(study.queries).to_numpy())
    order = np.argsort(codes, kind="stable")
    blocks = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)
    rng = np.random.default_rng(seed if sample_seed is None else sample_seed)
    prob = exact["prob"].to_numpy(dtype=float)
    model = exact["model"].astype(str).to_numpy()
    logp = np.empty(len(exact))
    # runs of consecutive contexts with the same number of options are drawn in one call: the
    # generator draws a 2-D pvals row by row, the same numbers as one call a context
    # (tests/test_calibration.py::test_batched_samples_are_the_samples_of_one_call_a_context)
    lengths = np.array([len(j) for j in blocks])
    runs = np.split(np.arange(len(blocks)), np.flatnonzero(np.diff(lengths)) + 1)
    for m in names:
        rows = np.flatnonzero(model == m)
        for run in runs:
            size = int(lengths[run[0]])
            r = rows[np.stack([blocks[b] for b in run])]  # contexts x options
            n = samples * size
            if world.keep_option_counts and world.others > 0:
                n = int(round(n / (1.0 - world.others)))
            pv = np.concatenate([prob[r] * (1.0 - world.others), np.full((len(run), 1), world.others)], axis=1)
            counts = rng.multinomial(n, pv / pv.sum(axis=1, keepdims=True))[:, :size]
            logp[r] = np.log((counts + 0.5) / (n + 1.0))
    sampled = exact.assign(prob=np.exp(logp), logp=logp)
    # the exact probabilities on the same scale as the sampled ones (the options' share)
    logp = exact["logp"] + np.log1p(-world.others) if world.others < 1 else exact["logp"]
    return exact.assign(logp=logp, prob=np.exp(logp)), sampled


def expected_learner_logp(world: World, seed: int, exact: pd.DataFrame) -> np.ndarray:
    """What the world's perfect learners hold *in expectation* over their own training sample:
    per row of ``exact`` (:func:`perfect_learner_scores`'s first frame), ``E[log((C + 0.5) /
    (n + 1))]`` with ``C ~ Binomial(n, pi)``, the sample's ``n`` and ``pi`` (others included);
    exact sums, truncated where the mass left is below 1e-30.  With few sentences of an option
    the learners hold LPRs shrunk towards 0 (docs/calibration.md, "Why 2A and 4A missed")."""
    study, p = world.study, with_seed(world.plant, seed)
    samples = int(world.samples or p.samples)
    codes, _ = pd.factorize(fplant.context_of(study.queries).to_numpy())
    share = exact["prob"].to_numpy(dtype=float)  # the options' share already carries (1 - others)
    model_codes, models = pd.factorize(exact["model"].astype(str).to_numpy())
    nq = len(study.queries)
    sizes = np.bincount(model_codes, minlength=len(models))
    assert (sizes == nq).all(), "every model has one row per query"
    # each row's block (model x context): its size (options) and the block's total share; a
    # model's j-th row is query j (as the sample's loop reads them): its context code
    pos = pd.Series(model_codes).groupby(model_codes, sort=False).cumcount().to_numpy()
    block = model_codes.astype(np.int64) * (int(codes.max()) + 1) + codes[pos]
    _, inverse, counts = np.unique(block, return_inverse=True, return_counts=True)
    total = np.bincount(inverse, weights=share)[inverse] + world.others
    n_row = samples * counts[inverse]
    if world.keep_option_counts and world.others > 0:
        n_row = np.rint(n_row / (1.0 - world.others)).astype(np.int64)
    pi = share / total
    out = np.empty(len(exact))
    # rows of one n and a similar truncation point share their k grid: the sum is truncated
    # where the mass left is below 1e-30 (15 SDs and 30 counts past the mean), so terms
    # beyond a row's own point change no digit of a double
    mean = n_row * pi
    kmax_row = np.minimum(n_row, np.ceil(mean + 15 * np.sqrt(mean + 1) + 30)).astype(np.int64)
    bucket = np.ceil(np.log2(kmax_row + 1.0)).astype(np.int64)  # grids at most twice a row's own
    for n, b in sorted(set(zip(n_row.tolist(), bucket.tolist()))):
        rows = np.flatnonzero((n_row == n) & (bucket == b))
        kmax = int(kmax_row[rows].max())
        k = np.arange(kmax + 1)
        logs = np.log((k + 0.5) / (n + 1.0))
        step = max(1, 4_000_000 // (kmax + 1))  # at most ~32 MB of pmf at once
        for a in range(0, len(rows), step):
            r = rows[a : a + step]
            out[r] = binom.pmf(k[None, :], n, pi[r][:, None]) @ logs
    return out


def learner_scores(world: World, seed: int, exact: pd.DataFrame) -> pd.DataFrame:
    """``exact`` with each log probability replaced by the learners' expected one
    (:func:`expected_learner_logp`)."""
    logp = expected_learner_logp(world, seed, exact)
    return exact.assign(logp=logp, prob=np.exp(logp))


def analyse(study, scores: pd.DataFrame, criteria: Mapping[str, pd.DataFrame] | None = None, **override) -> pd.DataFrame:
    """The study file's analysis (its options, ``override`` on top) on ``scores``: its :func:`judged` rows."""
    return judged(_run(study, scores, criteria, override).stats)


def _run(study, scores: pd.DataFrame, criteria, override: Mapping):
    """The study file's analysis (its options, ``override`` on top) on ``scores``: its output."""
    spec = dict(getattr(study, "analysis", None) or {})
    options = {**dict(spec.get("options") or {}), **override}
    inp = analyses.AnalysisInput(study=study, scores=scores, lpr=lpr_table(study, scores), criteria=dict(criteria or {}))
    return analyses.run_analysis(str(spec["name"]), inp, options)


def judged(stats: pd.DataFrame) -> pd.DataFrame:
    """The rows of an analysis's ``stats`` whose CI and p are judged (:data:`JUDGED`, model
    ``all``, with a CI), with the columns the calibration keeps."""
    s = stats
    keep = s["statistic"].isin(JUDGED) & (s["model"].astype(str) == "all") & s["ci_low"].notna() & s["ci_high"].notna()
    return s.loc[keep, ["statistic", "condition", "value", "se", "p", "ci_low", "ci_high"]].reset_index(drop=True)


def calibrated_rows(
    paper: pd.DataFrame, calibrated: pd.DataFrame, statistic: str | Sequence[str] = "d", value: str | None = None
) -> pd.DataFrame:
    """The judged rows ``paper`` (:func:`judged`) of ``statistic`` (one, or several) whose
    condition the analysis's figure table ``calibrated`` holds, with that table's calibrated p
    and CI (``p_ours``, ``ci_low_ours``, ``ci_high_ours``: the stereotype analyses'
    within-sentence variant, the criterion analyses' disattenuated one), the value of its
    column ``value`` where given (``value_ours``: the disattenuated r or b; else the paper's
    point estimate) and no SE (NaN)."""
    tab = calibrated.set_index("condition")
    stats = [statistic] if isinstance(statistic, str) else list(statistic)
    ours = paper[paper["statistic"].isin(stats) & paper["condition"].isin(tab.index)].copy()
    columns = {"value": value} if value is not None else {}
    for col, src in {**columns, "p": "p_ours", "ci_low": "ci_low_ours", "ci_high": "ci_high_ours"}.items():
        ours[col] = tab.loc[ours["condition"], src].to_numpy(dtype=float)
    ours["se"] = np.nan
    return ours.reset_index(drop=True)


#: the analyses' calibrated variants that every run computes beside the paper's (figure table
#: ``calibrated``): the stereotype analyses' ``sentence`` (same d, other p and CI) and the
#: criterion analyses' ``disattenuated`` (another r or b and CI, the same p)
ONE_RUN = ("sentence", "disattenuated")
#: the values of ``inference`` whose point estimates are the paper's (so are their realised
#: values); any other variant's realised value is that variant's own analysis on the models'
#: noise-free probabilities (:func:`run_world`)
SAME_ESTIMATE = ("paper", "sentence")


def calibrated_variant(paper: pd.DataFrame, calibrated: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """``(name, rows)`` of the calibrated variant an analysis's figure table ``calibrated``
    holds (:data:`ONE_RUN`): ``disattenuated`` where it has the corrected r and b (column
    ``value_ours``), else ``sentence`` (the stereotype analyses' d); :func:`calibrated_rows` of
    ``paper``, rows without a CI left out (as :func:`analyse`: a null world's undefined r is
    not judged)."""
    if "value_ours" in calibrated.columns:
        name, rows = "disattenuated", calibrated_rows(paper, calibrated, ("r", "b"), "value_ours")
    else:
        name, rows = "sentence", calibrated_rows(paper, calibrated)
    return name, rows[rows["ci_low"].notna() & rows["ci_high"].notna()].reset_index(drop=True)


def analyse_both(study, scores: pd.DataFrame, criteria: Mapping[str, pd.DataFrame] | None = None) -> dict[str, pd.DataFrame]:
    """The paper's inference and the analysis's calibrated variant (:data:`ONE_RUN`) from one
    analysis run: ``{"paper": judged rows, name: the variant's rows}``
    (:func:`calibrated_variant`; the analysis computes both every time).  The variant's rows
    have no SE (NaN): for ``fmat power``, which needs only p, and the calibration bench."""
    out = _run(study, scores, criteria, {"inference": "paper"})
    paper = judged(out.stats)
    name, ours = calibrated_variant(paper, out.figures["calibrated"])
    return {"paper": paper, name: ours}


def judge(estimated: pd.DataFrame, realised: pd.DataFrame, alpha: float = 0.05, tol: float = 1e-9) -> pd.DataFrame:
    """Join each judged row with its realised value: ``covered`` (the CI holds it), ``null``
    (the realised value is 0) and ``rejected`` (p < alpha).  A ``planted`` column of
    ``realised`` (the same statistic on the planted probabilities themselves) is kept."""
    cols = ["statistic", "condition", "value"] + (["planted"] if "planted" in realised.columns else [])
    real = realised[cols].rename(columns={"value": "realised"})
    out = estimated.merge(real, on=["statistic", "condition"], how="inner")
    out["covered"] = (out["ci_low"] <= out["realised"]) & (out["realised"] <= out["ci_high"])
    out["null"] = out["realised"].abs() <= tol
    out["rejected"] = out["p"] < alpha
    return out


def is_null(plant: fplant.Plant) -> bool:
    """Whether a plant holds no association at all: no effect, no item or model-item variation
    (:func:`null_plant`)."""
    v = dict(plant.variation)
    return not plant.effects and float(v.get("items", 0)) == 0 and float(v.get("model_items", 0)) == 0


def _options(study, override: Mapping) -> tuple[str, dict]:
    spec = dict(getattr(study, "analysis", None) or {})
    return str(spec.get("name") or ""), {**dict(spec.get("options") or {}), **dict(override)}


def on_the_sample_scale(study, learner: pd.DataFrame, sampled: pd.DataFrame, **override) -> pd.DataFrame | None:
    """The realised value of a statistic standardized by a *sample* SD, on the scale the
    analysis measures it: for a pooled-SD d (:func:`fmat.analyses.pooled_sd`), the learners'
    expected LPRs divided by the SD of the sampled LPRs of the same (model, perceiver, relation),
    then the analysis's own model and contrasts (:mod:`fmat.analyses.attitude`); ``None`` for
    every other analysis.  The sampled SD holds the models' noise, so the noisy d is the planted
    one attenuated (docs/calibration.md, "Why 2A and 4A missed")."""
    name, opts = _options(study, override)
    if not analyses.pooled_sd(name, opts):
        return None
    keys = {k: opts[k] for k in ("target_contrast", "relations", "perceivers")}
    items = getattr(study, "items", None)
    d_e = att.design_table(lpr_table(study, learner), **keys, items=items)
    d_s = att.design_table(lpr_table(study, sampled), **keys, items=items)
    within = list(opts.get("standardize_within", ("model", "perceiver", "relation")))
    sd = d_s.groupby(within, sort=False)["LPR"].std(ddof=1).rename("sd_sample")
    d_e = d_e.join(sd, on=within)
    mean = d_e.groupby(within, sort=False)["LPR"].transform("mean") if bool(opts.get("center", True)) else 0.0
    d_e["y"] = (d_e["LPR"] - mean) / d_e["sd_sample"]
    fit = att.fit_factorial(d_e.dropna(subset=["y"]))
    con = att.contrasts(fit, keys["target_contrast"], [str(r) for r in keys["relations"]], [str(p) for p in keys["perceivers"]])
    return pd.DataFrame(
        {"statistic": "d", "condition": con["relation"].astype(str) + ":" + con["part"].astype(str), "value": con["estimate"]}
    )


def realised_values(
    world: World,
    exact: pd.DataFrame,
    estimated: pd.DataFrame,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    *,
    learner: pd.DataFrame | None = None,
    sampled: pd.DataFrame | None = None,
    **override,
) -> pd.DataFrame:
    """The judged rows' realised values (column ``value``) and their planted values (column
    ``planted``: the analysis on the world's planted probabilities themselves).

    The realised value is the analysis on the learners' *expected* log probabilities
    (``learner``, :func:`learner_scores`; the planted ones when not given), a sample-standardized
    d on the sample's scale (:func:`on_the_sample_scale`); 0 in a null world (:func:`is_null`)."""
    if is_null(world.plant):
        return estimated[["statistic", "condition"]].assign(value=0.0, planted=0.0)
    planted = analyse(world.study, exact, criteria, **override)[["statistic", "condition", "value"]]
    held = planted if learner is None else analyse(world.study, learner, criteria, **override)
    scaled = None if (learner is None or sampled is None) else on_the_sample_scale(world.study, learner, sampled, **override)
    out = held[["statistic", "condition", "value"]].copy()
    if scaled is not None:
        out = out.drop(columns="value").merge(scaled, on=["statistic", "condition"], how="left")
        out["value"] = out["value"].fillna(held["value"])
    return out.merge(planted.rename(columns={"value": "planted"}), on=["statistic", "condition"], how="left")


def realised_both(
    world: World, exact: pd.DataFrame, learner: pd.DataFrame | None, criteria: Mapping[str, pd.DataFrame] | None = None
) -> dict[str, pd.DataFrame]:
    """:func:`realised_values` of a planted world for the paper's inference and the analysis's
    calibrated variant at once (:func:`analyse_both` on the learners' expected and on the
    planted probabilities): ``{name: statistic, condition, value, planted}``, each variant's
    realised value its own analysis on the noise-free probabilities.  For the analyses of
    :data:`ONE_RUN` (no sample-scale d)."""
    planted = analyse_both(world.study, exact, criteria)
    held = planted if learner is None else analyse_both(world.study, learner, criteria)
    key = ["statistic", "condition"]
    mine = {name: planted[name][key + ["value"]].rename(columns={"value": "planted"}) for name in held}
    return {name: held[name][key + ["value"]].merge(mine[name], on=key, how="left") for name in held}


def run_world(
    world: World,
    seed: int,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    variants: Mapping[str, Mapping] | None = None,
    realised: bool = True,
    one_run: bool = False,
) -> pd.DataFrame:
    """One world: the judged rows of each analysis variant (``{name: option overrides}``,
    default the paper's analysis only), with columns ``variant`` and ``seed``, ``realised``
    (:func:`realised_values`) and ``planted``.  Variants that differ only in an ``inference`` of
    :data:`SAME_ESTIMATE` share their realised values; any other gets its own.
    ``realised=False`` skips the realised values of a planted world (NaN, ``covered`` False).
    ``one_run=True`` with the variants ``{"paper": {}, v: {"inference": v}}`` (``v`` of
    :data:`ONE_RUN`) runs the analysis once for both (:func:`analyse_both`; no SE)."""
    variants = dict(variants or {"paper": {}})
    exact, sampled = perfect_learner_scores(world, seed, criteria)
    null = is_null(world.plant)
    learner = None if (null or not realised) else learner_scores(world, seed, exact)
    frames, cache = [], {}
    both = held_both = None
    plain = {k: dict(v) for k, v in variants.items()}
    other = [k for k in plain if k != "paper"]
    if one_run and len(other) == 1 and other[0] in ONE_RUN and plain == {"paper": {}, other[0]: {"inference": other[0]}}:
        both = analyse_both(world.study, sampled, criteria)
        if realised and not null:
            held_both = realised_both(world, exact, learner, criteria)
    for name, opts in variants.items():
        est = both[name] if both is not None else analyse(world.study, sampled, criteria, **opts)
        key = repr(sorted((k, repr(v)) for k, v in dict(opts).items() if k != "inference" or v not in SAME_ESTIMATE))
        if key not in cache and held_both is not None:
            cache[key] = held_both[name]
        if key not in cache and not (realised or null):
            cache[key] = est[["statistic", "condition"]].assign(value=np.nan, planted=np.nan)
        if key not in cache:
            cache[key] = realised_values(world, exact, est, criteria, learner=learner, sampled=sampled, **opts)
        frames.append(judge(est, cache[key]).assign(variant=name, seed=int(seed)))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- the ICC
#: the reliability stage's statistics with a test (F test of ICC = 0, McGraw & Wong's 95% CI),
#: on the raw log probabilities (condition ``all``: the paper's) and on the LPRs (``LPR``)
ICC_JUDGED = ("ICC_average", "ICC_single")
#: models drawn for a world's population ICC (:func:`population_icc`)
POPULATION = 200


def icc_null_plant(plant: fplant.Plant) -> fplant.Plant:
    """:func:`null_plant` without the option words' own frequencies either: every row of the
    scores (every word in every sentence) then has the same expected log probability, and the
    models share no item variance: the ICC's realised value is 0 (the null of its F test)."""
    p = null_plant(plant)
    return replace(p, variation={**dict(p.variation), "words": 0.0})


def is_icc_null(plant: fplant.Plant) -> bool:
    """Whether a plant is :func:`icc_null_plant`'s: no association and no item, model-item or
    word variation."""
    return is_null(plant) and float(dict(plant.variation).get("words", 0)) == 0


def icc_judged(study, scores: pd.DataFrame) -> pd.DataFrame:
    """The reliability stage's ICC rows of ``scores`` (:data:`ICC_JUDGED`; agreement, average
    and single; conditions ``all`` = raw log probabilities and ``LPR``, as
    :func:`fmat.stages.reliability_tables`), with the columns :func:`judged` keeps."""
    sid = str(getattr(study, "id", "") or "")
    frames = [
        icc_rows(sid, icc_models(data, type="agreement", unit="both"), condition=cond)
        for cond, data in (("all", scores), ("LPR", lpr_table(study, scores)))
    ]
    out = pd.concat(frames, ignore_index=True)
    out = out[out["statistic"].isin(ICC_JUDGED)]
    return out[["statistic", "condition", "value", "se", "p", "ci_low", "ci_high"]].reset_index(drop=True)


def population_icc(
    world: World, seed: int, criteria: Mapping[str, pd.DataFrame] | None = None, population: int = POPULATION
) -> pd.DataFrame:
    """The realised value of the ICC rows in a world: the ICC of the **population** of models
    the world draws its models from, for the study's items.  ``population`` more perfect
    learners of the same world give ICC(A,1); ICC_average is its Spearman-Brown value for the
    world's ``n_models`` models, ``k rho / (1 + (k - 1) rho)`` (McGraw & Wong 1996: ICC(A,k)).
    Columns ``statistic, condition, value``."""
    big = replace(world, n_models=world.n_models + population)
    _, sampled = perfect_learner_scores(big, seed, criteria)
    names = list(dict.fromkeys(sampled["model"].astype(str)))[world.n_models :]
    pop = sampled[sampled["model"].astype(str).isin(names)]
    k = world.n_models
    rows = []
    for cond, data in (("all", pop), ("LPR", lpr_table(world.study, pop))):
        rho = float(icc_models(data, type="agreement", unit="single")["ICC"].iloc[0])
        rows += [
            {"statistic": "ICC_single", "condition": cond, "value": rho},
            {"statistic": "ICC_average", "condition": cond, "value": k * rho / (1 + (k - 1) * rho)},
        ]
    return pd.DataFrame(rows)


def icc_world(
    world: World, seed: int, criteria: Mapping[str, pd.DataFrame] | None = None, population: int = POPULATION
) -> pd.DataFrame:
    """One world's judged ICC rows (:func:`icc_judged` of the models' sampled scores) against
    the realised value: 0 in a world of :func:`icc_null_plant` (where p < .05 is a false
    positive), else the population ICC (:func:`population_icc`); ``planted``: the ICC of the
    world's 12 models' planted probabilities (no sampling noise: the models' own item variation
    only).  Columns of :func:`run_world` (variant ``paper``)."""
    exact, sampled = perfect_learner_scores(world, seed, criteria)
    est = icc_judged(world.study, sampled)
    if is_icc_null(world.plant):
        real = est[["statistic", "condition"]].assign(value=0.0, planted=0.0)
    else:
        key = ["statistic", "condition"]
        planted = icc_judged(world.study, exact)[key + ["value"]].rename(columns={"value": "planted"})
        real = population_icc(world, seed, criteria, population).merge(planted, on=key, how="left")
    return judge(est, real).assign(variant="paper", seed=int(seed))


def summarise(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Coverage (of the realised value) and false-positive rate (rows whose realised value is
    0) per ``by`` group, each with its exact (Clopper-Pearson) 95% binomial CI, and the share
    of CIs that hold the planted value (``coverage_planted``; NaN without a planted column)."""
    rows = []
    for key, g in runs.groupby(list(by), sort=False, observed=True):
        nulls = g[g["null"]]
        cov, fp = binomial(int(g["covered"].sum()), len(g)), binomial(int(nulls["rejected"].sum()), len(nulls))
        rows.append(
            {
                **dict(zip(by, key)),
                "worlds": int(g["seed"].nunique()),
                "rows": len(g),
                **dict(zip(("coverage", "coverage_low", "coverage_high"), cov)),
                "null_rows": len(nulls),
                **dict(zip(("fpr", "fpr_low", "fpr_high"), fp)),
                "coverage_planted": float(((g["ci_low"] <= g["planted"]) & (g["planted"] <= g["ci_high"])).mean())
                if "planted" in g.columns
                else np.nan,
            }
        )
    return pd.DataFrame(rows)


def binomial(k: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """Share k / n with its exact (Clopper-Pearson) CI; NaNs when n = 0."""
    if n == 0:
        return (np.nan, np.nan, np.nan)
    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return (k / n, low, high)


def binomial_clustered(k, n, level: float = 0.95) -> tuple[float, float, float]:
    """Share ``sum(k) / sum(n)`` of rows that fall in clusters (the judged rows of one world
    are correlated: 2A's eight d, 4C's slope and its century contrasts), with Korn and Graubard's
    (1998) CI: Clopper-Pearson on the effective number of rows ``n* = p(1 - p) / V`` (``V`` the
    clusters' linearization variance of the share), times ``(t_{N-1} / t_{C-1})^2`` for the
    ``C - 1`` df of ``V`` (N rows, C clusters) -- R's ``survey::svyciprop(method = "beta")``
    with the clusters as ``ids`` (tests/test_calibration.py holds it to R's numbers).  ``n*`` is
    at most N (a design effect below 1 is taken as 1, as Korn and Graubard advise); with no
    rows rejected (or all) ``V`` is 0 and ``n*`` is N times the df factor.

    ``k``, ``n``: each cluster's count of hits and of rows.  NaNs when there are no rows or
    fewer than 2 clusters.

    Examples
    --------
    >>> share, low, high = binomial_clustered([1, 0, 2, 0, 0], [3, 3, 3, 3, 3])
    >>> round(share, 3), round(low, 3), round(high, 3)
    (0.2, 0.006, 0.699)
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    N, C = float(n.sum()), len(n)
    if N == 0 or C < 2:
        return (np.nan, np.nan, np.nan)
    p = float(k.sum()) / N
    a = (1 - level) / 2
    z = k - p * n  # each cluster's linearized contribution
    V = C / (C - 1) * float((z**2).sum()) / N**2
    n_eff = N if V <= 0 else min(N, p * (1 - p) / V)
    n_eff *= (float(student_t.ppf(a, N - 1)) / float(student_t.ppf(a, C - 1))) ** 2
    low = 0.0 if p == 0 else float(beta.ppf(a, n_eff * p, n_eff * (1 - p) + 1))
    high = 1.0 if p == 1 else float(beta.ppf(1 - a, n_eff * p + 1, n_eff * (1 - p)))
    return (p, low, high)
