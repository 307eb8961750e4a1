"""The criterion analyses' calibrated variant (``inference: disattenuated``, ours;
docs/calibration.md): Spearman's correction for attenuation of the r of the models' averaged
FMAT score, with the reliability of that average the ICC(C,k) among the models; and regression
calibration of 1C's mixed-model b, whose predictor is one model's z-score (reliability ICC(C,1)).

Checked against an independent reference (Cronbach's alpha with the models as items, written
out from its definition, and the Fisher CI from scipy), and on worlds of known truth: the
paper's r of noisy models is attenuated (its CI misses what the models hold), the corrected one
is not.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fmat import analyses, plant
from fmat import calibration as cal
from fmat.analyses import factual as fa
from fmat.errors import InputError
from fmat.stages import lpr_table
from fmat.study import load_study
from fmat_replication.pages.html import render
from fmat_replication.pages.study import calibrated_counts

REPO = Path(__file__).resolve().parents[1]


def _alpha(mat: np.ndarray) -> float:
    """Cronbach's alpha of the columns (here: models) of an items x models matrix, from its
    definition: k / (k - 1) * (1 - sum of the columns' variances / variance of the row sums)."""
    k = mat.shape[1]
    return k / (k - 1) * (1 - mat.var(axis=0, ddof=1).sum() / mat.sum(axis=1).var(ddof=1))


def _fisher(r: float, n: int) -> tuple[float, float]:
    h = stats.norm.ppf(0.975) / np.sqrt(n - 3)
    return float(np.tanh(np.arctanh(r) - h)), float(np.tanh(np.arctanh(r) + h))


def _z_table(seed: int = 0, n_items: int = 40, n_models: int = 5, queries=("Q1", "Q2"), noise: float = 1.0):
    """z-scores of items with a true score tau (correlated with a criterion) plus each model's
    noise, per query; and the criterion table."""
    rng = np.random.default_rng(seed)
    pct = rng.uniform(0, 100, n_items)
    tau = (pct - 50) / 30 + rng.normal(0, 0.5, n_items)
    rows = []
    for m in range(n_models):
        for q in queries:
            x = tau + rng.normal(0, noise, n_items)
            z = (x - x.mean()) / x.std(ddof=1)
            rows += [{"model": f"m{m}", "q": q, "item": f"i{i:02d}", "z": z[i]} for i in range(n_items)]
    crit = pd.DataFrame({"item": [f"i{i:02d}" for i in range(n_items)], "pct_male": pct})
    return pd.DataFrame(rows), crit


def test_the_reliability_is_cronbachs_alpha_among_the_models():
    z, _ = _z_table()
    mat = z.groupby(["item", "model"])["z"].mean().unstack("model").to_numpy()
    assert fa.model_reliability(z) == pytest.approx(_alpha(mat), rel=1e-10)
    assert 0.5 < fa.model_reliability(z) < 0.99  # the test's noise leaves it well inside (0, 1)
    one = z[z["model"] == "m0"]
    assert np.isnan(fa.model_reliability(one))  # one model: no reliability


def test_each_r_is_divided_by_the_root_of_its_reliability_and_keeps_its_p():
    z, crit = _z_table(seed=3)
    rows = fa.correlation_rows("1A", z, crit, wefat=False)
    out = {r["condition"]: r for r in fa.disattenuated_rows(rows, z)}
    assert set(out) == {"fmat~pct_male", "fmat~pct_male:Q1", "fmat~pct_male:Q2"}  # model "all" only
    for cond, sub in (("fmat~pct_male", z), ("fmat~pct_male:Q1", z[z["q"] == "Q1"]), ("fmat~pct_male:Q2", z[z["q"] == "Q2"])):
        score = sub.groupby("item")["z"].mean()
        r = stats.pearsonr(score.to_numpy(), crit.set_index("item").loc[score.index, "pct_male"].to_numpy())
        rel = _alpha(sub.groupby(["item", "model"])["z"].mean().unstack("model").to_numpy())
        lo, hi = _fisher(r.statistic, len(score))
        got = out[cond]
        assert got["reliability"] == pytest.approx(rel, rel=1e-10)
        assert got["value"] == pytest.approx(r.statistic / np.sqrt(rel), rel=1e-9)
        assert (got["ci_low"], got["ci_high"]) == pytest.approx((lo / np.sqrt(rel), min(1.0, hi / np.sqrt(rel))), rel=1e-6)
        assert got["p"] == pytest.approx(r.pvalue, rel=1e-6)  # the same test of r = 0


def test_models_that_share_nothing_leave_the_corrected_r_undefined():
    z, crit = _z_table(seed=1, noise=50.0, n_models=3)  # almost pure noise: alpha near or below 0
    z = z.copy()
    rng = np.random.default_rng(7)
    z["z"] = rng.normal(size=len(z))  # no shared item variance at all
    rows = fa.correlation_rows("1A", z, crit, wefat=False)
    out = fa.disattenuated_rows(rows, z)
    for r in out:
        if r["reliability"] <= 0:
            assert np.isnan(r["value"]) and np.isnan(r["ci_low"]) and np.isfinite(r["p"])
    assert any(r["reliability"] <= 0 for r in out)  # seed 7 gives one, so the branch above ran


def _world(sid: str, null: bool = False) -> cal.World:
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    p = plant.load_world(REPO / "config" / "world.yaml").plant(sid)
    return cal.World(study, cal.null_plant(p) if null else p, others=0.5)


def _criteria(study) -> dict:
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_calibration as bc

    return bc.stand_in_criteria(study, plant.load_world(REPO / "config" / "world.yaml").plant(study.id))


def test_the_analysis_option_replaces_the_rows_and_writes_the_calibrated_table():
    w = _world("1A")
    crit = _criteria(w.study)
    _, sampled = cal.perfect_learner_scores(w, seed=2, criteria=crit)
    data = analyses.AnalysisInput(study=w.study, scores=sampled, lpr=lpr_table(w.study, sampled), criteria=crit)
    opts = dict(w.study.analysis["options"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = analyses.run_analysis("factual_wefat", data, opts)
        ours = analyses.run_analysis("factual_wefat", data, {**opts, "inference": "disattenuated"})
    tab = paper.figures["calibrated"].set_index("condition")
    pd.testing.assert_frame_equal(tab.reset_index(), ours.figures["calibrated"])  # there whatever inference
    assert set(tab["statistic"]) == {"r"}  # 1A has no mixed model
    s_p, s_o = (o.stats.set_index(["statistic", "condition", "model"]) for o in (paper, ours))
    for cond, row in tab.iterrows():
        key = ("r", cond, "all")
        assert s_o.loc[key, "value"] == pytest.approx(row["value_ours"]) and s_p.loc[key, "value"] == pytest.approx(row["value"])
        assert row["value_ours"] > row["value"] > 0 and 0 < row["reliability"] < 1
        assert s_o.loc[key, "p"] == s_p.loc[key, "p"]
    per_model = [k for k in s_p.index if k[0] == "r" and k[2] != "all"]
    assert per_model and s_o.loc[per_model, "value"].equals(s_p.loc[per_model, "value"])  # untouched
    assert any("disattenuated" in n for n in ours.notes)
    assert "r's significant" in render("calibrated_text.html.j2", c=calibrated_counts(ours.figures["calibrated"]))


def test_an_unknown_inference_names_the_field_and_the_fix():
    w = _world("1A")
    crit = _criteria(w.study)
    _, sampled = cal.perfect_learner_scores(w, seed=1, criteria=crit)
    data = analyses.AnalysisInput(study=w.study, scores=sampled, lpr=lpr_table(w.study, sampled), criteria=crit)
    with pytest.raises(InputError) as e:
        analyses.run_analysis("factual_wefat", data, {**w.study.analysis["options"], "inference": "sentence"})
    assert "analysis.options.inference" in str(e.value) and "disattenuated" in str(e.value)


def test_the_corrected_r_holds_what_the_models_hold_where_the_papers_is_attenuated():
    """Ten planted worlds of 1A (seeds 1-10, fixed): the paper's r lies below the r the models
    hold in every world (attenuation: the models' own noise), the corrected r does not lie
    systematically on either side, and its CI holds the held r more often."""
    w = _world("1A")
    crit = _criteria(w.study)
    runs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(1, 11):
            runs.append(cal.run_world(w, seed, crit, variants={"paper": {}, "disattenuated": {"inference": "disattenuated"}}))
    runs = pd.concat(runs)
    overall = runs[runs["condition"] == "fmat~pct_male"].set_index(["variant", "seed"])
    err_p = overall.loc["paper", "value"] - overall.loc["paper", "realised"]
    err_o = overall.loc["disattenuated", "value"] - overall.loc["disattenuated", "realised"]
    assert (err_p < 0).all()  # attenuated in every world
    assert abs(err_o.mean()) < abs(err_p.mean()) / 3
    assert overall.loc["disattenuated", "covered"].mean() > overall.loc["paper", "covered"].mean()


def test_one_run_gives_the_corrected_r_as_two_runs_do():
    """The calibration's shortcut (one analysis run, the figure table ``calibrated``) gives the
    same rows as running ``inference: disattenuated`` itself: value, p and CI."""
    w = _world("1A")
    crit = _criteria(w.study)
    v = {"paper": {}, "disattenuated": {"inference": "disattenuated"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = cal.run_world(w, 4, crit, variants=v)
        one = cal.run_world(w, 4, crit, variants=v, one_run=True)
    cols = ["variant", "statistic", "condition", "value", "p", "ci_low", "ci_high", "realised", "covered"]
    key = ["variant", "statistic", "condition"]
    pd.testing.assert_frame_equal(
        one[cols].sort_values(key).reset_index(drop=True), two[cols].sort_values(key).reset_index(drop=True), rtol=1e-12
    )
    ours = two[two["variant"] == "disattenuated"]
    assert len(ours) == 5 and (ours["value"].to_numpy() > two[two["variant"] == "paper"]["value"].to_numpy()[: len(ours)]).all()


def _icc_c1(mat: np.ndarray) -> float:
    """ICC(C,1) of a targets x raters matrix from its definition (McGraw & Wong 1996, case
    3A): (MS_rows - MS_error) / (MS_rows + (k - 1) MS_error), the mean squares of the two-way
    ANOVA written out."""
    n, k = mat.shape
    grand = mat.mean()
    ms_r = k * ((mat.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    resid = mat - mat.mean(axis=1, keepdims=True) - mat.mean(axis=0, keepdims=True) + grand
    ms_e = (resid**2).sum() / ((n - 1) * (k - 1))
    return (ms_r - ms_e) / (ms_r + (k - 1) * ms_e)


def _names_table(seed: int = 0, n_items: int = 300, n_models: int = 6, noise: float = 0.6, slope: float = 2.0):
    """A 1C-like design: the logit of % male is ``slope`` x the items' shared score tau
    (standardized) plus a little misfit; each model x query z-score is tau plus a model's own
    noise; the criterion table has % male and its logit."""
    rng = np.random.default_rng(seed)
    tau = rng.normal(size=n_items)
    tau = (tau - tau.mean()) / tau.std(ddof=1)
    logit = slope * tau + rng.normal(0, 0.2, n_items)
    rows = []
    for m in range(n_models):
        for q in ("Q1", "Q2"):
            x = tau + rng.normal(0, noise, n_items)
            z = (x - x.mean()) / x.std(ddof=1)
            rows += [{"model": f"m{m}", "q": q, "item": f"i{i:03d}", "z": z[i]} for i in range(n_items)]
    crit = pd.DataFrame({"item": [f"i{i:03d}" for i in range(n_items)], "logit_male": logit})
    crit["pct_male"] = 100 / (1 + np.exp(-logit))
    return pd.DataFrame(rows), crit


def test_the_single_reliability_is_the_icc_c1_of_one_models_z_among_the_models():
    z, _ = _names_table()
    mat = z.groupby(["q", "item", "model"])["z"].mean().unstack("model").to_numpy()
    assert fa.single_reliability(z) == pytest.approx(_icc_c1(mat), rel=1e-10)
    # noise SD 0.6 around a unit-variance score: 1 / (1 + 0.36) up to the draws
    assert fa.single_reliability(z) == pytest.approx(1 / 1.36, abs=0.03)
    assert np.isnan(fa.single_reliability(z[z["model"] == "m0"]))


def test_the_mixed_models_b_is_regression_calibrated():
    """The corrected b is the paper's LMM refitted with the predictor sqrt(reliability) x z
    (regression calibration): b, SE and CI divided by sqrt(ICC(C,1)), t and p unchanged; and
    on this known truth it finds the slope on the shared score (2), where the paper's b is
    diluted to about 2 x sqrt(reliability) and its CI misses 2."""
    from fmat.stats.mixed import fit_lmm

    z, crit = _names_table(seed=5)
    zc = z.merge(crit, on="item")
    rows, _ = fa.lmm_rows("1C", zc, "logit_male", "logit_male")
    out = fa.disattenuated_rows(rows, z)
    assert [r["condition"] for r in out] == ["lmm:logit_male~fmat:fmat"]  # the b only (not beta, R2)
    got, paper = out[0], rows[0]
    rel = _icc_c1(z.groupby(["q", "item", "model"])["z"].mean().unstack("model").to_numpy())
    d = zc[["model", "z", "logit_male"]].rename(columns={"z": "fmat"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # z centered within model: a singular (OLS) fit, as in 1C
        refit = fit_lmm(d.assign(fmat=d["fmat"] * np.sqrt(rel)), "logit_male ~ fmat", group="model")
    refit = refit.coefs.set_index("term").loc["fmat"]
    for c in ("b", "se", "ci_low", "ci_high"):
        assert got["value" if c == "b" else c] == pytest.approx(refit[c], rel=1e-6)
    assert got["p"] == paper["p"] and got["reliability"] == pytest.approx(rel, rel=1e-10)
    assert paper["ci_high"] < 2.0  # the paper's CI misses the slope on the shared score
    assert paper["value"] == pytest.approx(2.0 * np.sqrt(rel), abs=0.05)  # 1.72: diluted by sqrt(0.74)
    assert got["ci_low"] <= 2.0 <= got["ci_high"]  # 2.00 [1.96, 2.04]


def test_the_names_analysis_writes_the_corrected_b_beside_the_papers():
    z, crit = _names_table(seed=2, n_items=120)
    rows, _ = fa.lmm_rows("1C", z.merge(crit, on="item"), "logit_male", "logit_male")
    tab = fa.calibrated_table(rows + fa.correlation_rows("1C", z, crit, wefat=False), fa.disattenuated_rows(rows, z))
    assert list(tab["statistic"]) == ["b"] and tab["value_ours"].iloc[0] > tab["value"].iloc[0] > 0
    assert bool(tab["holds"].iloc[0])


def test_a_variants_realised_value_is_its_own_analysis_on_the_noise_free_probabilities():
    """The disattenuated r is judged against the disattenuated r of the models' expected
    probabilities (what that estimator finds with no sampling noise), not the paper's r
    there; the paper's rows keep theirs."""
    w = _world("1A")
    crit = _criteria(w.study)
    v = {"paper": {}, "disattenuated": {"inference": "disattenuated"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = cal.run_world(w, 6, crit, variants=v, one_run=True)
        exact, _ = cal.perfect_learner_scores(w, 6, crit)
        learner = cal.learner_scores(w, 6, exact)
        own = cal.analyse(w.study, learner, crit, inference="disattenuated").set_index("condition")["value"]
        paper = cal.analyse(w.study, learner, crit).set_index("condition")["value"]
    ours = runs[runs["variant"] == "disattenuated"].set_index("condition")["realised"]
    assert len(ours) == 5
    np.testing.assert_allclose(ours.to_numpy(), own.loc[ours.index].to_numpy(), rtol=1e-12)
    assert (ours > paper.loc[ours.index]).all()  # the expected probabilities' own models disagree a little
    mine = runs[runs["variant"] == "paper"].set_index("condition")["realised"]
    np.testing.assert_allclose(mine.to_numpy(), paper.loc[mine.index].to_numpy(), rtol=1e-12)
