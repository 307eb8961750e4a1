"""Calibration on worlds of known truth (fmat.calibration, docs/calibration.md) and
the calibrated within-sentence variant of the stereotype analyses (``inference: sentence``).

The coverage and false-positive rates themselves are measured by benchmarks/bench_calibration.py
over hundreds of worlds; these tests check the parts and the mechanism on a fixed set of seeds:
the exact planted probabilities of a null world give LPRs of exactly 0, perfect learners of a
large sample converge to the planted probabilities, the two inferences share their point
estimates, and the calibrated SE exceeds the paper's by the factor the mirror images predict.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fmat import calibration as cal
from fmat import plant
from fmat.cli import main
from fmat.power import power_table
from fmat.stages import lpr_table
from fmat.study import load_study
from fmat_replication.pages.html import render
from fmat_replication.pages.study import calibrated_counts

REPO = Path(__file__).resolve().parents[1]
SEEDS = range(1, 7)  # a fixed seed set (no tuning: the bounds below come from theory)


def _world(sid: str, null: bool = True, **kw) -> cal.World:
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    p = plant.load_world(REPO / "config" / "world.yaml").plant(sid)
    return cal.World(study, cal.null_plant(p) if null else p, **kw)


def test_binomial_is_clopper_pearson():
    # closed forms at the edges: k = 0 -> upper 1 - (a/2)^(1/n); k = n -> lower (a/2)^(1/n)
    share, low, high = cal.binomial(0, 10)
    assert (share, low) == (0.0, 0.0) and high == pytest.approx(1 - 0.025 ** (1 / 10))
    share, low, high = cal.binomial(20, 20)
    assert (share, high) == (1.0, 1.0) and low == pytest.approx(0.025 ** (1 / 20))
    share, low, high = cal.binomial(5, 100)
    assert share == 0.05 and low < 0.05 < high and low == pytest.approx(0.01643, abs=1e-4)  # R binom.test
    assert all(math.isnan(x) for x in cal.binomial(0, 0))


R_FIXTURES = REPO / "tests" / "fixtures" / "r"


@pytest.mark.parametrize("case", ["a", "b", "c", "d"])
def test_binomial_clustered_is_korn_graubard_as_r_survey_computes_it(case):
    # tests/fixtures/r/clustered_share.R: survey::svyciprop(method = "beta") on clusters of rows.
    # Case b's design effect is below 1 (0.93): R's n* exceeds the rows, ours stays at the
    # rows (Korn and Graubard's advice), so ours is wider there and equal elsewhere
    data = pd.read_csv(R_FIXTURES / "clustered_share_data.csv")
    want = pd.read_csv(R_FIXTURES / "clustered_share_results.csv").set_index("case").loc[case]
    g = data[data["case"] == case].groupby("cluster")["y"]
    k, n = g.sum().to_numpy(), g.size().to_numpy()
    share, low, high = cal.binomial_clustered(k, n)
    assert share == pytest.approx(want["share"], rel=1e-12)
    if case == "b":
        assert low < want["low"] - 1e-4 and high > want["high"] + 1e-4
        return
    assert (low, high) == (pytest.approx(want["low"], rel=1e-9), pytest.approx(want["high"], rel=1e-9))


def test_binomial_clustered_widens_with_the_correlation_and_never_narrows_below_the_rows():
    # the same 12 hits in 240 rows: spread evenly over 80 worlds of 3 rows (no correlation
    # beyond the binomial's: design effect below 1, taken as 1) and packed into 4 worlds
    even = cal.binomial_clustered([1] * 12 + [0] * 68, [3] * 80)
    packed = cal.binomial_clustered([3] * 4 + [0] * 76, [3] * 80)
    rows = cal.binomial(12, 240)
    assert even[0] == packed[0] == rows[0] == 0.05
    assert packed[1] < even[1] and packed[2] > even[2]
    # evenly spread: the rows' exact CI, but for the df factor (t quantiles on 239 and 79 df)
    assert rows[1] - 0.002 < even[1] <= rows[1] and rows[2] <= even[2] < rows[2] + 0.002
    assert cal.binomial_clustered([0] * 10, [3] * 10)[:2] == (0.0, 0.0)
    assert all(math.isnan(x) for x in cal.binomial_clustered([1], [3]))


def test_null_world_holds_no_association():
    w = _world("3A", n_models=3)
    assert cal.is_null(w.plant) and not cal.is_null(_world("3A", null=False).plant)
    exact, sampled = cal.perfect_learner_scores(w, seed=3)
    lpr = lpr_table(w.study, exact)
    assert np.abs(lpr["LPR"].to_numpy(float)).max() < 1e-9  # realised value 0 by construction
    assert np.abs(lpr_table(w.study, sampled)["LPR"].to_numpy(float)).max() > 0.01  # sampling noise


@pytest.mark.parametrize("others", [0.0, 0.5])
def test_perfect_learners_of_a_large_sample_hold_the_planted_probabilities(others):
    w = _world("3D", null=False, n_models=2, others=others, samples=20000)
    exact, sampled = cal.perfect_learner_scores(w, seed=1)
    err = np.abs(sampled["logp"].to_numpy() - exact["logp"].to_numpy())
    assert err.max() < 0.05  # exact logp is on the options' share scale (log(1 - others) added)
    same = cal.perfect_learner_scores(w, seed=1)[1]
    assert np.array_equal(same["logp"].to_numpy(), sampled["logp"].to_numpy())  # seeded


def test_keep_option_counts_scales_the_sample():
    # others = 0.9 with a fixed total: about 10% of the sentences show an option
    lo = cal.perfect_learner_scores(_world("N0", n_models=1, others=0.9, keep_option_counts=False), seed=1)[1]
    hi = cal.perfect_learner_scores(_world("N0", n_models=1, others=0.9, keep_option_counts=True), seed=1)[1]
    # smoothed shares: a count of 0 -> 0.5 / (n + 1); more observations, fewer such floors
    floor_lo = np.isclose(lo["prob"], 0.5 / (20 * 2 + 1)).sum()
    floor_hi = np.isclose(hi["prob"], 0.5 / (400 + 1)).sum()
    assert floor_lo >= floor_hi


def test_expected_learner_is_the_mean_of_the_sampled_learners():
    """The learners' expected log probability (the realised value's scale) is the mean of the
    sampled learners' log probabilities over many samples of one world (``sample_seed``)."""
    w = _world("N0", n_models=1, samples=3, others=0.5)  # 12 sentences a context, 6 of them an option
    exact = cal.perfect_learner_scores(w, seed=1)[0]
    expected = cal.expected_learner_logp(w, 1, exact)
    draws = np.array([cal.perfect_learner_scores(w, 1, sample_seed=s)[1]["logp"].to_numpy() for s in range(1, 401)])
    assert np.array_equal(cal.perfect_learner_scores(w, 1, sample_seed=2)[0]["logp"], exact["logp"])  # the same world
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 4 * se)
    # and it is not the planted log probability: a smoothed log of a small count is biased
    sparse = _world("N0", null=False, n_models=1, samples=1, others=0.9)  # about 1 sentence an option
    ex = cal.perfect_learner_scores(sparse, seed=1)[0]
    held = lpr_table(sparse.study, cal.learner_scores(sparse, 1, ex))["LPR"].to_numpy(float)
    planted = lpr_table(sparse.study, ex)["LPR"].to_numpy(float)
    big = np.abs(planted) > 0.1
    assert big.any() and (np.abs(held[big]) < 0.8 * np.abs(planted[big])).all()  # LPRs shrunk towards 0
    big = _world("N0", n_models=1, samples=5000)
    ex = cal.perfect_learner_scores(big, seed=1)[0]
    assert np.abs(cal.expected_learner_logp(big, 1, ex) - ex["logp"].to_numpy()).max() < 1e-3


def test_sparse_years_shrink_what_the_learners_hold_not_the_analysis():
    """4A (220 years, 5 sentences each): the learners hold a slope shrunk from the planted one
    (smoothed logs of sparse counts); the analysis's estimate sits on what they hold."""
    w = _world("4A", null=False, n_models=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cal.run_world(w, 1)
    b = r[(r["statistic"] == "b") & (r["condition"] == "year")].iloc[0]
    assert abs(b["realised"]) < 0.95 * abs(b["planted"])  # learning bias, > 5%
    assert abs(b["value"] - b["realised"]) < abs(b["value"] - b["planted"])


def test_a_pooled_sd_d_is_realised_on_the_sample_scale():
    """2A's WEAT d divides by the SD of the observed LPRs, which holds the models' noise: its
    realised value is the learners' LPRs in the sample's SD units (attenuated from the planted
    d), while the sigma-scale d (effect_size: sigma) has the planted scale."""
    w = _world("2A", null=False, n_models=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cal.run_world(w, 1, variants={"paper": {}, "sigma": {"effect_size": "sigma"}})
    pooled = r[r["variant"] == "paper"].set_index("condition")
    sigma = r[r["variant"] == "sigma"].set_index("condition")
    top = "like-dislike:personal"
    assert pooled.loc[top, "realised"] < 0.85 * pooled.loc[top, "planted"]  # attenuated
    est = pooled.loc[top, "value"]
    assert abs(est - pooled.loc[top, "realised"]) < abs(est - pooled.loc[top, "planted"])
    assert sigma.loc[top, "realised"] == pytest.approx(sigma.loc[top, "planted"], rel=0.1)  # no standardizer to inflate
    # the attenuation is the ratio of the SDs: sample-scale realised x SD(sampled) = planted x SD(planted)
    exact, sampled = cal.perfect_learner_scores(w, 1)
    learner = cal.learner_scores(w, 1, exact)
    scaled = cal.on_the_sample_scale(w.study, learner, sampled).set_index("condition")["value"]
    assert scaled.loc[top] == pytest.approx(pooled.loc[top, "realised"])
    assert cal.on_the_sample_scale(w.study, learner, sampled, effect_size="sigma") is None


def _se_ratios(sid: str, others: float) -> list[float]:
    w = _world(sid, n_models=12, others=others)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in SEEDS:
            r = cal.run_world(w, seed, variants={"paper": {}, "sentence": {"inference": "sentence"}})
            a = r[(r.variant == "paper")].set_index("condition")
            b = r[(r.variant == "sentence")].set_index("condition")
            assert list(a.index) == list(b.index)
            np.testing.assert_allclose(a["value"], b["value"], atol=1e-10)  # the same d, pair by pair
            assert (b["realised"] == 0).all() and (a["realised"] == 0).all()
            out.append(float(b.loc["all", "se"] / a.loc["all", "se"]))
    return out


def test_mirror_images_make_the_papers_se_too_small():
    """N0: two options hold all the probability, so a sentence's men and women rows are mirror
    images (correlation -1; at p = .5 the SE of their contrast is sqrt(2) too small when they
    enter as independent rows).  3A: four options, correlation about -1/3 between men and
    women (sqrt(4/3) = 1.15).  With 90% of the probability elsewhere the rows are nearly
    independent and the two SEs close."""
    n0, n0_far = np.mean(_se_ratios("N0", 0.0)), np.mean(_se_ratios("N0", 0.9))
    a3, a3_far = np.mean(_se_ratios("3A", 0.0)), np.mean(_se_ratios("3A", 0.9))
    assert n0 > 1.3  # at least the mirror images' factor for 0.3 <= p <= 0.7
    assert 1.05 < a3 < 1.4  # about sqrt(4/3)
    assert n0 > a3
    assert n0_far < n0 and a3_far < a3


def test_fmat_power_writes_the_table_and_plot(tmp_path, capsys):
    world = tmp_path / "w.yaml"
    world.write_text(
        "studies:\n  3D:\n    effects:\n      - {contrast: {MASK: [Black, Asian], ATTRIB: [Masculine, Feminine]}, d: 1.0}\n",
        encoding="utf-8",
    )
    study = str(REPO / "config" / "studies" / "3D.yaml")
    out = tmp_path / "o"
    assert main(["power", study, "--world", str(world), "-o", str(out), "--models", "3,6", "--worlds", "3", "--jobs", "1"]) == 0
    tab = pd.read_csv(out / "power.csv")
    assert (out / "power.png").stat().st_size > 0
    overall = tab[tab["condition"] == "all"].set_index(["models", "variant"])
    assert set(overall.index) == {(3, "paper"), (3, "sentence"), (6, "paper"), (6, "sentence")}
    assert (tab["worlds"] == 3).all()
    for col in ("power", "fpr"):
        assert ((tab[f"{col}_low"] <= tab[col]) & (tab[col] <= tab[f"{col}_high"])).all()
    # d = 1 with 6 models: the SE of d is about 0.1 (3D: 5 pairs), so every world finds it
    assert overall.loc[(6, "paper"), "power"] == 1.0 and overall.loc[(6, "sentence"), "power"] == 1.0
    assert overall.loc[(6, "paper"), "realised"] == pytest.approx(1.0, abs=0.3)
    assert "power" in capsys.readouterr().out


def test_fmat_power_refuses_a_world_without_the_study(tmp_path, capsys):
    world = tmp_path / "w.yaml"
    world.write_text("studies:\n  3A:\n    effects: []\n", encoding="utf-8")
    study = str(REPO / "config" / "studies" / "3D.yaml")
    assert main(["power", study, "--world", str(world), "-o", str(tmp_path / "o")]) == 2
    assert "plants nothing for study '3D'" in capsys.readouterr().err
    assert main(["power", study, "--world", str(world), "-o", str(tmp_path / "o"), "--models", "1,3"]) == 2
    assert not (tmp_path / "o").exists()
    planted = tmp_path / "p.yaml"
    planted.write_text(
        "studies:\n  3D:\n    effects:\n      - {contrast: {MASK: [Black, Asian], ATTRIB: [Masculine, Feminine]}, d: 1.0}\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    for bad, says in (("1", "--items '1'"), ("three", "--items 'three'"), ("6", "has only 5 words")):
        argv = ["power", study, "--world", str(planted), "-o", str(tmp_path / "o"), "--items", bad, "--jobs", "1"]
        assert main(argv) == 2, bad
        assert says in capsys.readouterr().err, bad


def test_the_page_says_which_significant_ds_hold_under_calibration():
    tab = pd.DataFrame({"significant": [True, True, False, False], "significant_ours": [True, False, True, False]})
    text = render("calibrated_text.html.j2", c=calibrated_counts(tab))  # the sentences are the template's (issue 53)
    assert "Of the 2 d's significant at .05 under the paper's model, 1 stay significant" in text
    assert "1 become significant only under it" in text


def test_power_does_not_depend_on_the_number_of_processes():
    w = _world("3D", null=False)
    one = power_table(w.study, w.plant, models=[3], worlds=2, jobs=1)
    two = power_table(w.study, w.plant, models=[3], worlds=2, jobs=2)
    pd.testing.assert_frame_equal(one, two)
    assert set(one["variant"]) == {"paper", "sentence"} and (one["worlds"] == 2).all()


def test_power_over_numbers_of_items(tmp_path):
    """--items: the first N phrases of each ATTRIB group (3A: 9 career and 9 family phrases),
    one row set per number of items; more items than the file holds is refused."""
    from fmat.errors import InputError
    from fmat.power import item_slot, study_with_items

    w = _world("3A", null=False)
    assert item_slot(w.study) == "ATTRIB"
    three = study_with_items(w.study, 3, folder=tmp_path)
    assert three.queries["A_word"].nunique() == 6 and w.study.queries["A_word"].nunique() == 18
    assert three.queries["M_word"].nunique() == w.study.queries["M_word"].nunique()  # the [MASK] words stay
    with pytest.raises(InputError, match="has only 9 words"):
        study_with_items(w.study, 10, folder=tmp_path)
    tab = power_table(w.study, w.plant, models=[3], items=[3, 9], worlds=2, jobs=1)
    assert set(tab["items"]) == {3, 9} and (tab["worlds"] == 2).all()
    pairs = tab[(tab["variant"] == "paper") & (tab["condition"].str.startswith("pair"))]
    assert set(pairs[pairs["items"] == 3]["condition"]) == {"pair1", "pair2", "pair3"}
    assert len(pairs[pairs["items"] == 9]) == 9


@pytest.mark.parametrize("sid", ["3A", "3B"])
def test_one_run_gives_both_inferences_as_two_runs_do(sid):
    """fmat power's shortcut (one analysis run for the paper's and the calibrated inference)
    gives the same d, p and CI as running each variant."""
    w = _world(sid, null=False, n_models=4)
    v = {"paper": {}, "sentence": {"inference": "sentence"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = cal.run_world(w, 2, variants=v, realised=False)
        one = cal.run_world(w, 2, variants=v, realised=False, one_run=True)
    cols = ["variant", "statistic", "condition", "value", "p", "ci_low", "ci_high"]
    key = ["variant", "statistic", "condition"]
    pd.testing.assert_frame_equal(
        one[cols].sort_values(key).reset_index(drop=True), two[cols].sort_values(key).reset_index(drop=True), rtol=1e-12
    )
    assert (two.groupby("variant")["p"].apply(list).apply(len) > 1).all()
    assert not np.allclose(two[two.variant == "paper"]["p"].head(3), two[two.variant == "sentence"]["p"].head(3))


def _samples_one_call_a_context(world: cal.World, seed: int) -> np.ndarray:
    """The perfect learners' log shares drawn one multinomial call a model x context, in the
    order the contexts first appear (the reference the batched draw must reproduce)."""
    p = cal.with_seed(world.plant, seed)
    names = [f"m{k + 1:02d}" for k in range(world.n_models)]
    exact = plant.planted_scores(world.study, p, names)
    codes, _ = pd.factorize(plant.context_of(world.study.queries).to_numpy())
    rng = np.random.default_rng(seed)
    prob, model = exact["prob"].to_numpy(float), exact["model"].astype(str).to_numpy()
    out = np.empty(len(exact))
    for m in names:
        rows = np.flatnonzero(model == m)
        for c in range(codes.max() + 1):
            r = rows[codes == c]
            n = p.samples * len(r)
            if world.others > 0:
                n = int(round(n / (1.0 - world.others)))
            pv = np.append(prob[r] * (1.0 - world.others), world.others)
            out[r] = np.log((rng.multinomial(n, pv / pv.sum())[: len(r)] + 0.5) / (n + 1.0))
    return out


@pytest.mark.parametrize("sid,others", [("3A", 0.0), ("2A", 0.5), ("4A", 0.9)])
def test_batched_samples_are_the_samples_of_one_call_a_context(sid, others):
    w = _world(sid, null=False, n_models=3, others=others)
    _, sampled = cal.perfect_learner_scores(w, seed=5)
    np.testing.assert_array_equal(sampled["logp"].to_numpy(float), _samples_one_call_a_context(w, 5))


@pytest.mark.parametrize("sid,others", [("3A", 0.0), ("2A", 0.5), ("4A", 0.9)])
def test_the_expected_learner_is_the_full_binomial_sum(sid, others):
    """The vectorised, truncated sum against E[log((C + 0.5)/(n + 1))] summed over every count
    0..n of each row, one row at a time."""
    w = _world(sid, null=False, n_models=2, others=others)
    exact, _ = cal.perfect_learner_scores(w, seed=2)
    got = cal.expected_learner_logp(w, 2, exact)
    codes, _ = pd.factorize(plant.context_of(w.study.queries).to_numpy())
    share, model = exact["prob"].to_numpy(float), exact["model"].astype(str).to_numpy()
    samples = cal.with_seed(w.plant, 2).samples
    for m in pd.unique(model):
        rows = np.flatnonzero(model == m)
        for i in rows[:: max(1, len(rows) // 40)]:  # 40 rows a model
            block = rows[codes == codes[i - rows[0]]]
            n = int(round(samples * len(block) / (1.0 - others)))
            pi = share[i] / (share[block].sum() + others)
            k = np.arange(n + 1)
            want = float(np.sum(stats.binom.pmf(k, n, pi) * np.log((k + 0.5) / (n + 1.0))))
            assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_contexts_with_different_numbers_of_options_are_drawn_in_their_order(tmp_path):
    """A design whose contexts hold 4, 4, 2, 2, 4 and 4 options (three runs of equal sizes):
    the batched draw is still the draw of one call a context, in the contexts' order."""
    path = tmp_path / "V1.yaml"
    path.write_text(
        """id: V1
title: varying options
family: stereotype
queries:
  - query: "Some [MASK] {ATTRIB} today."
    MASK: {Male: [men, boys], Female: [women, girls]}
    ATTRIB:
      Indoor: [read books]
      Outdoor: [go hiking]
  - query: "A [MASK] {ATTRIB} today."
    MASK: {Male: [man], Female: [woman]}
    ATTRIB:
      Indoor: [cook dinner]
      Outdoor: [ride bikes]
  - query: "The [MASK] {ATTRIB} now."
    MASK: {Male: [men, boys], Female: [women, girls]}
    ATTRIB:
      Indoor: [play chess]
      Outdoor: [go fishing]
lpr: {mask_pair: false, attrib_pair: true}
score: {method: fmat, add_tokens: false, na_out: true}
analysis: {name: stereotype_pairs, options: {sigma: 1.414, mask_contrast: [Male, Female], attrib_contrast: [Indoor, Outdoor]}}
""",
        encoding="utf-8",
    )
    study = load_study(path)
    sizes = plant.context_of(study.queries).value_counts(sort=False).tolist()
    assert sizes == [4, 4, 2, 2, 4, 4]  # the shape the test is about
    variation = {"words": 0.3, "items": 0.2, "models": 0.0, "model_items": 0.2}
    p = plant.Plant("V1", effects=[], variation=variation, samples=7, seed=0)
    w = cal.World(study, p, n_models=2, others=0.5)
    _, sampled = cal.perfect_learner_scores(w, seed=11)
    np.testing.assert_array_equal(sampled["logp"].to_numpy(float), _samples_one_call_a_context(w, 11))


# --------------------------------------------------------------------------- the ICC
def test_the_judged_icc_rows_are_the_reliability_stages():
    """``icc_judged``: the ICC rows the reliability stage writes (agreement, average and
    single, on the raw log probabilities and on the LPRs), value, p and CI unchanged."""
    from fmat.stages import reliability_tables

    w = _world("3A", null=False)
    _, sampled = cal.perfect_learner_scores(w, seed=2)
    got = cal.icc_judged(w.study, sampled).set_index(["statistic", "condition"])
    _, stage = reliability_tables(w.study, sampled, lpr_table(w.study, sampled), sid="3A")
    stage = stage[stage["statistic"].isin(cal.ICC_JUDGED)].set_index(["statistic", "condition"])
    assert sorted(got.index) == sorted(stage.index) and len(got) == 4
    for c in ("value", "p", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[c].to_numpy(), stage.loc[got.index, c].to_numpy(dtype=float), rtol=1e-12)


def test_the_population_icc_is_the_icc_of_more_models_of_the_world():
    """The realised ICC: ICC(A,1) of ``population`` more perfect learners of the same world (its
    models ``n_models + 1`` on), and ICC(A,k) its Spearman-Brown value for the world's k models;
    with many models it is what a fresh draw of as many gives (the target is not one draw's
    noise: 400 models against 400 others agree to .01 where the CI of 12 is .1-.2 wide)."""
    from dataclasses import replace

    from fmat.reliability import icc_models

    w = _world("3A", null=False, others=0.5)
    pop = cal.population_icc(w, 1, population=30).set_index(["statistic", "condition"])["value"]
    _, big = cal.perfect_learner_scores(replace(w, n_models=42), 1)
    names = list(dict.fromkeys(big["model"]))[12:]
    rho = float(icc_models(big[big["model"].isin(names)], type="agreement", unit="single")["ICC"].iloc[0])
    assert pop["ICC_single", "all"] == pytest.approx(rho, rel=1e-12)
    for cond in ("all", "LPR"):
        r = pop["ICC_single", cond]
        assert pop["ICC_average", cond] == pytest.approx(12 * r / (1 + 11 * r), rel=1e-12)
    a = cal.population_icc(w, 1, population=400).set_index(["statistic", "condition"])["value"]
    _, other = cal.perfect_learner_scores(replace(w, n_models=812), 1)
    names = list(dict.fromkeys(other["model"]))[412:]
    rho_b = float(icc_models(other[other["model"].isin(names)], type="agreement", unit="single")["ICC"].iloc[0])
    assert abs(a["ICC_single", "all"] - rho_b) < 0.01


def test_the_iccs_null_world_holds_no_item_variance_and_is_judged_against_0():
    """``icc_null_plant``: nothing planted and no item, model-item or word variation, so every
    row's expected log probability is the same (the ICC's null, ICC = 0); ``icc_world`` judges
    the ICC rows against 0 there (p < .05 a false positive) and against the population ICC in
    a planted world, where the CI of 12 models holds it."""
    w = _world("3A", null=False)
    null = cal.World(w.study, cal.icc_null_plant(w.plant), others=0.5)
    assert cal.is_icc_null(null.plant) and not cal.is_icc_null(cal.null_plant(w.plant)) and cal.is_null(null.plant)
    exact, _ = cal.perfect_learner_scores(null, 3)
    held = cal.expected_learner_logp(null, 3, exact)
    assert np.ptp(held) < 1e-12  # every row the same: no item variance to share
    runs = cal.icc_world(null, 3)
    assert len(runs) == 4 and (runs["realised"] == 0).all() and runs["null"].all()
    assert (runs["rejected"] == (runs["p"] < 0.05)).all()
    planted = cal.icc_world(w, 3, population=60)
    assert not planted["null"].any() and planted["covered"].all()
    assert (planted["planted"] > planted["realised"]).all()  # the population's noise lowers its ICC


def test_a_worlds_planted_probabilities_are_computed_once_for_its_settings(monkeypatch):
    """Two settings of one world (others 0 and 0.5) share its planted probabilities: computed
    once, and the samples are those of a fresh computation."""
    from dataclasses import replace

    calls = []
    real = plant.planted_scores

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(cal.fplant, "planted_scores", counting)
    monkeypatch.setattr(cal, "_LAST_PLANTED", {})
    w = _world("3A", null=False)
    _, s0 = cal.perfect_learner_scores(w, 4)
    _, s5 = cal.perfect_learner_scores(replace(w, others=0.5), 4)
    assert len(calls) == 1
    cal.perfect_learner_scores(w, 5)  # another world: computed again
    assert len(calls) == 2
    monkeypatch.setattr(cal, "_LAST_PLANTED", {})
    _, fresh = cal.perfect_learner_scores(replace(w, others=0.5), 4)
    pd.testing.assert_frame_equal(s5, fresh)
    assert not s0["logp"].equals(s5["logp"])
