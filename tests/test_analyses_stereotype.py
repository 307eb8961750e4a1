"""Studies 3A-3D analyses (fmat.analyses.stereotype) on synthetic data with known answers.

Independent references: plain numpy means (balanced designs: the LMM's estimated marginal
means are the raw means), a fixed-effects OLS with model dummies (statsmodels; in a balanced
design with a positive random-intercept variance, REML gives the same residual variance, so
the gender contrast's t and the F tests equal the OLS ones), the ANOVA variance-component
estimator for R2m, and statsmodels' own MixedLM for an unbalanced design.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from fmat.analyses import AnalysisInput, run_analysis
from fmat.analyses.stereotype import domain_cells, factor_name
from fmat.errors import InputError
from fmat.lpr import summary
from fmat.study import load_study
from fmat_replication.paper import load_paper_results, matching_rows

REPO = Path(__file__).resolve().parents[1]
SIGMA = 1.414
WORDINGS = [["men", "women"], ["fathers", "mothers"]]
OPTS_3A = {
    "sigma": SIGMA,
    "mask_contrast": ["Male", "Female"],
    "mask_wordings": WORDINGS,
    "attrib_contrast": ["Career", "Family"],
}


def _pairs_lpr(
    n_models=12,
    n_pairs=9,
    d_pairs=None,
    noise=0.3,
    tau=0.8,
    seed=0,
    words=(("men", "women"), ("fathers", "mothers")),
    groups=("Male", "Female"),
):
    """Attribute-paired LPR table like fmat.summary(mask_pair=False, attrib_pair=True) of 3A:
    LPR / sigma = u_model + pair effect + wording effect + (+-) d_pair / 2 + noise."""
    rng = np.random.default_rng(seed)
    d_pairs = np.ones(n_pairs) if d_pairs is None else np.asarray(d_pairs, float)
    pair_eff = rng.normal(0, 0.5, n_pairs)
    rows = []
    for m in range(n_models):
        u = rng.normal(0, tau)
        for j in range(n_pairs):
            for k, pair in enumerate(words):
                for g, (grp, w) in enumerate(zip(groups, pair)):
                    sign = 0.5 if g == 0 else -0.5
                    y = u + pair_eff[j] + 0.2 * k + sign * d_pairs[j] + rng.normal(0, noise)
                    rows.append(
                        {
                            "model": f"org/model{m}",
                            "query": "Most [MASK] {ATTRIB}.",
                            "MASK": grp,
                            "M_word": w,
                            "ATTRIB": "Career - Family",
                            "A_word": f"c{j + 1} - f{j + 1}",
                            "LPR": y * SIGMA,
                        }
                    )
    return pd.DataFrame(rows)


def _stub(study_id="T"):
    return SimpleNamespace(id=study_id, queries=None, path=None)


def _run(name, lpr, opts, study=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_analysis(name, AnalysisInput(study=study or _stub(), scores=None, lpr=lpr), opts)


def _row(stats, statistic, condition, model="all"):
    r = stats[(stats.statistic == statistic) & (stats.condition == condition) & (stats.model == model)]
    assert len(r) == 1, (statistic, condition, model)
    return r.iloc[0]


# ------------------------------------------------------------------ 3A / 3D: stereotype_pairs
@pytest.fixture(scope="module")
def out_3a():
    d_pairs = 1.0 + 0.1 * (np.arange(9) - 4)  # 0.6 ... 1.4, mean 1.0
    lpr = _pairs_lpr(d_pairs=d_pairs, seed=1)
    return lpr, d_pairs, _run("stereotype_pairs", lpr, OPTS_3A)


def test_pairs_recovers_known_d(out_3a):
    lpr, d_pairs, out = out_3a
    s = out.stats
    d = _row(s, "d", "all")
    assert d["value"] == pytest.approx(1.0, abs=3 * d["se"])
    assert d["se"] < 0.05
    for j, true in enumerate(d_pairs, start=1):
        r = _row(s, "d", f"pair{j}")
        assert r["value"] == pytest.approx(true, abs=3.5 * r["se"])
        assert r["df"] == 385
    # the paper's design: 12 models x 36 cells -> level-1 df 432 - 12 - 35 = 385
    f = _row(s, "F", "gender")
    assert (f["df"], f["df2"]) == (1, 385)
    assert _row(s, "F", "gender_x_pair")["df"] == 8
    assert _row(s, "F", "gender_x_pair")["p"] < 0.001  # the d's differ across pairs
    assert _row(s, "F", "gender_x_wording")["p"] > 0.001  # no wording x gender effect built in
    assert set(s.loc[s.statistic == "F", "condition"]) == {
        "gender",
        "gender_x_wording",
        "gender_x_pair",
        "gender_x_wording_x_pair",
    }


def test_pairs_d_equals_raw_mean_difference_when_balanced(out_3a):
    lpr, _, out = out_3a
    y = lpr["LPR"] / SIGMA
    male = lpr["MASK"] == "Male"
    assert _row(out.stats, "d", "all")["value"] == pytest.approx(y[male].mean() - y[~male].mean(), abs=1e-9)
    for j in range(1, 10):
        sel = lpr["A_word"] == f"c{j} - f{j}"
        hand = y[sel & male].mean() - y[sel & ~male].mean()
        assert _row(out.stats, "d", f"pair{j}")["value"] == pytest.approx(hand, abs=1e-9)
    # per-model d: the same contrast within each model (no test), model slugs
    for m, g in lpr.groupby("model"):
        gy = g["LPR"] / SIGMA
        hand = gy[g["MASK"] == "Male"].mean() - gy[g["MASK"] == "Female"].mean()
        r = _row(out.stats, "d", "all", m.replace("/", "__"))
        assert r["value"] == pytest.approx(hand, abs=1e-9)
        assert np.isnan(r["p"])


def test_pairs_t_and_F_equal_fixed_effects_ols(out_3a):
    """Balanced design, tau^2 > 0: REML sigma^2 = OLS MSE with model dummies, so the LMM's
    contrast t and its F tests equal the OLS ones (independent implementation)."""
    lpr, _, out = out_3a
    df = pd.DataFrame(
        {
            "y": lpr["LPR"] / SIGMA,
            "model": lpr["model"],
            "gender": lpr["MASK"],
            "wording": np.where(lpr["M_word"].isin(["men", "women"]), "a", "b"),
            "pair": lpr["A_word"],
        }
    )
    ols = smf.ols("y ~ C(model) + C(gender, Sum) * C(wording, Sum) * C(pair, Sum)", df).fit()
    assert ols.df_resid == 385
    coef = "C(gender, Sum)[S.Female]"  # Female is first alphabetically: coef = (F - M) / 2
    d_ols, se_ols = -2 * ols.params[coef], 2 * ols.bse[coef]
    r = _row(out.stats, "d", "all")
    assert r["value"] == pytest.approx(d_ols, rel=1e-8)
    assert r["se"] == pytest.approx(se_ols, rel=1e-6)
    assert _row(out.stats, "t", "all")["value"] == pytest.approx(d_ols / se_ols, rel=1e-6)
    assert _row(out.stats, "t", "all")["p"] == pytest.approx(ols.pvalues[coef], rel=1e-4, abs=1e-300)
    aov = sm.stats.anova_lm(ols, typ=1)
    names = {
        "gender": "C(gender, Sum)",
        "gender_x_wording": "C(gender, Sum):C(wording, Sum)",
        "gender_x_pair": "C(gender, Sum):C(pair, Sum)",
        "gender_x_wording_x_pair": "C(gender, Sum):C(wording, Sum):C(pair, Sum)",
    }
    for cond, term in names.items():
        f = _row(out.stats, "F", cond)
        assert f["value"] == pytest.approx(aov.loc[term, "F"], rel=1e-6), cond
        assert f["p"] == pytest.approx(aov.loc[term, "PR(>F)"], rel=1e-5, abs=1e-300), cond
    # F(gender) = t(all)^2 in a balanced design
    assert _row(out.stats, "F", "gender")["value"] == pytest.approx(_row(out.stats, "t", "all")["value"] ** 2, rel=1e-8)
    # per-pair SE = sqrt(9) x overall SE (balanced): 2 sigma / sqrt(N/9 / 2 ...) pattern of the paper
    assert _row(out.stats, "d", "pair1")["se"] == pytest.approx(3 * r["se"], rel=1e-8)


def test_pairs_r2m_equals_anova_variance_components(out_3a):
    """R2m (Nakagawa & Schielzeth) with the balanced-design ANOVA estimators: var_f = variance of
    the cell means over rows, tau^2 = (MS_model - MSE) / k, sigma^2 = MSE."""
    lpr, _, out = out_3a
    y = lpr["LPR"] / SIGMA
    cell = lpr["MASK"] + "|" + lpr["M_word"] + "|" + lpr["A_word"]
    cell_mean = y.groupby(cell).transform("mean")
    var_f = cell_mean.var(ddof=1)
    df = pd.DataFrame({"y": y, "model": lpr["model"], "cell": cell})
    ols = smf.ols("y ~ C(model) + C(cell)", df).fit()
    aov = sm.stats.anova_lm(ols, typ=1)
    mse = aov.loc["Residual", "mean_sq"]
    tau2 = (aov.loc["C(model)", "mean_sq"] - mse) / 36
    assert tau2 > 0
    assert _row(out.stats, "R2m", "all")["value"] == pytest.approx(var_f / (var_f + tau2 + mse), rel=1e-6)
    assert _row(out.stats, "R2c", "all")["value"] == pytest.approx((var_f + tau2) / (var_f + tau2 + mse), rel=1e-6)


def test_pairs_unbalanced_matches_statsmodels_mixedlm():
    """Rows missing (out-of-vocabulary words): d is the equal-weight contrast of the estimated
    marginal means = 2 x the sum-coded gender coefficient of the same model (statsmodels MixedLM)."""
    lpr = _pairs_lpr(n_models=6, n_pairs=3, seed=5, tau=1.0)
    lpr.loc[[0, 1, 2, 7, 20, 33], "LPR"] = np.nan
    out = _run("stereotype_pairs", lpr, OPTS_3A)
    df = pd.DataFrame(
        {
            "y": lpr["LPR"] / SIGMA,
            "model": lpr["model"].astype(object),
            "gender": pd.Categorical(lpr["MASK"], ["Male", "Female"]),
            "wording": np.where(lpr["M_word"].isin(["men", "women"]), "a", "b"),
            "pair": lpr["A_word"].astype(object),
        }
    ).dropna()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = smf.mixedlm("y ~ C(gender, Sum) * C(wording, Sum) * C(pair, Sum)", df, groups=df["model"]).fit(reml=True)
    b = ref.params["C(gender, Sum)[S.Male]"]
    r = _row(out.stats, "d", "all")
    assert r["value"] == pytest.approx(2 * b, abs=1e-4)
    assert r["se"] == pytest.approx(2 * ref.bse["C(gender, Sum)[S.Male]"], rel=1e-3)
    assert r["df"] == len(df) - 6 - 11
    assert r["n"] == len(df) == 72 - 6
    assert any("6 row(s) with a missing LPR dropped" in n for n in out.notes)


def test_pairs_3d_race_pair_order_from_study_file():
    study = load_study(REPO / "config/studies/3D.yaml")
    opts = study.analysis["options"]
    q = study.queries
    masc = list(dict.fromkeys(q.loc[q.ATTRIB == "Masculine", "A_word"].astype(str)))
    fem = list(dict.fromkeys(q.loc[q.ATTRIB == "Feminine", "A_word"].astype(str)))
    d_pairs = [0.9, 0.1, 0.3, 0.5, 0.7]
    lpr = _pairs_lpr(
        n_models=12, n_pairs=5, d_pairs=d_pairs, noise=0.05, seed=3, words=(("Black", "Asian"),), groups=("Black", "Asian")
    )
    labels = {f"c{j + 1} - f{j + 1}": f"{m} - {f}" for j, (m, f) in enumerate(zip(masc, fem))}
    # shuffle the rows and relabel: the pair order must come from the study file, not the rows
    lpr = lpr.sample(frac=1, random_state=0).assign(
        A_word=lambda d: d["A_word"].map(labels), ATTRIB="Masculine - Feminine", query="Most [MASK] people {ATTRIB}."
    )
    out = _run("stereotype_pairs", lpr, opts, study=study)
    s = out.stats
    assert set(s.loc[s.statistic == "F", "condition"]) == {"race", "race_x_pair"}
    assert _row(s, "F", "race")["df2"] == 99  # 12 x 10 - 12 - 9
    for j, true in enumerate(d_pairs, start=1):
        assert _row(s, "d", f"pair{j}")["value"] == pytest.approx(true, abs=0.05)
    assert _row(s, "d", "all")["value"] == pytest.approx(np.mean(d_pairs), abs=0.02)


def test_pairs_errors():
    lpr = _pairs_lpr(n_models=3, n_pairs=2)
    with pytest.raises(InputError, match="mask_contrast|not in the LPR"):
        _run("stereotype_pairs", lpr, {**OPTS_3A, "mask_contrast": ["Male", "Other"]})
    with pytest.raises(InputError, match="no wording"):
        _run("stereotype_pairs", lpr, {**OPTS_3A, "mask_wordings": [["men", "women"]]})
    unpaired = lpr.assign(ATTRIB="Career")
    with pytest.raises(InputError, match="attrib_pair: true"):
        _run("stereotype_pairs", unpaired, OPTS_3A)
    with pytest.raises(InputError, match="lacks columns"):
        _run("stereotype_pairs", lpr.drop(columns="A_word"), OPTS_3A)
    assert factor_name(["Male", "Female"], None) == "gender"
    assert factor_name(["Black", "Asian"], None) == "race"
    with pytest.raises(InputError):
        factor_name(["a", "b"], "pair")


# --------------------------------------------------------------- 3B / 3C: stereotype_domains
FORMS = {"interest": ["MathInterest", "ArtsInterest"], "talent": ["MathTalent", "ArtsTalent"]}
OPTS_3B = {
    "sigma": SIGMA,
    "mask_contrast": ["Male", "Female"],
    "mask_wordings": [["men", "women"], ["boys", "girls"]],
    "forms": FORMS,
}


def _domains_lpr(n_models=12, d_form=None, noise=0.3, seed=0, n_items=6):
    """log P table (attrib_pair: false) of a 3B-like design where the mean over the items of
    (focal - reference) / sigma = u + ... + (+-) d_form / 2."""
    rng = np.random.default_rng(seed)
    d_form = d_form or {"interest": 0.5, "talent": 0.3}
    rows = []
    for m in range(n_models):
        u = rng.normal(0, 1.0)
        for form, (focal, ref) in FORMS.items():
            for k, pair in enumerate((("men", "women"), ("boys", "girls"))):
                for g, (grp, w) in enumerate(zip(("Male", "Female"), pair)):
                    target = u + 0.1 * k + (0.5 if g == 0 else -0.5) * d_form[form] + rng.normal(0, noise)
                    base = rng.normal(-8, 1)
                    for attrib, shift in ((focal, target), (ref, 0.0)):
                        item_noise = rng.normal(0, 0.4, n_items)
                        item_noise -= item_noise.mean()  # items average exactly to the shift
                        for i in range(n_items):
                            rows.append(
                                {
                                    "model": f"m{m}",
                                    "query": "Most [MASK] {ATTRIB}.",
                                    "MASK": grp,
                                    "M_word": w,
                                    "ATTRIB": attrib,
                                    "A_word": f"{attrib}{i}",
                                    "LPR": (base + shift + item_noise[i]) * SIGMA,
                                }
                            )
    return pd.DataFrame(rows)


def test_domain_cells_hand_computed():
    lpr = pd.DataFrame(
        {
            "model": ["m"] * 8,
            "MASK": ["Male"] * 8,
            "M_word": ["men"] * 8,
            "ATTRIB": ["MathInterest"] * 2 + ["ArtsInterest"] * 2 + ["MathTalent"] * 2 + ["ArtsTalent"] * 2,
            "LPR": [-1.0, -3.0, -4.0, np.nan, -2.0, -2.0, -6.0, -8.0],
        }
    )
    cells = domain_cells(lpr, FORMS, 2.0, "test")
    got = dict(zip(cells["form"], cells["y"]))
    assert got["interest"] == pytest.approx(((-1 - 3) / 2 - (-4)) / 2.0)  # NaN item left out of the mean
    assert got["talent"] == pytest.approx(((-2 - 2) / 2 - (-7)) / 2.0)


@pytest.fixture(scope="module")
def out_3b():
    lpr = _domains_lpr(seed=2)
    return lpr, _run("stereotype_domains", lpr, OPTS_3B)


def test_domains_recovers_known_d(out_3b):
    _, out = out_3b
    s = out.stats
    for cond, true in (("interest", 0.5), ("talent", 0.3), ("all", 0.4)):
        r = _row(s, "d", cond)
        assert r["value"] == pytest.approx(true, abs=3 * r["se"]), cond
        assert r["df"] == 77  # 96 - 12 - 7, the paper's df
        assert _row(s, "t", cond)["value"] == pytest.approx(r["value"] / r["se"], rel=1e-9)
    assert set(s.loc[s.statistic == "F", "condition"]) == {
        "gender",
        "gender_x_wording",
        "gender_x_form",
        "gender_x_wording_x_form",
    }
    assert _row(s, "F", "gender")["df2"] == 77
    # balanced: the overall d is the mean of the two forms' d, and the form d's SE is sqrt(2) x
    assert _row(s, "d", "all")["value"] == pytest.approx(
        (_row(s, "d", "interest")["value"] + _row(s, "d", "talent")["value"]) / 2, abs=1e-9
    )
    assert _row(s, "d", "interest")["se"] == pytest.approx(np.sqrt(2) * _row(s, "d", "all")["se"], rel=1e-8)


def test_domains_d_is_raw_double_difference(out_3b):
    lpr, out = out_3b
    y = lpr.assign(y=lpr["LPR"] / SIGMA)
    means = y.groupby(["model", "MASK", "M_word", "ATTRIB"])["y"].mean()
    for form, (focal, ref) in FORMS.items():
        diff = means.xs(focal, level="ATTRIB") - means.xs(ref, level="ATTRIB")
        hand = diff.xs("Male", level="MASK").mean() - diff.xs("Female", level="MASK").mean()
        assert _row(out.stats, "d", form)["value"] == pytest.approx(hand, abs=1e-9)
    assert set(out.figures) == {"effects", "anova", "cells", "calibrated"}
    assert len(out.figures["cells"]) == 96


def test_domains_errors():
    lpr = _domains_lpr(n_models=2, n_items=2)
    with pytest.raises(InputError, match="forms"):
        _run("stereotype_domains", lpr, {**OPTS_3B, "forms": None})
    with pytest.raises(InputError, match="two ATTRIB groups"):
        _run("stereotype_domains", lpr, {**OPTS_3B, "forms": {"interest": ["Math", "Arts"]}})


# ----------------------------------------------------- end to end on the real study files
def _synthetic_scores(study, n_models, seed=0):
    q = study.queries
    rng = np.random.default_rng(seed)
    sc = pd.concat([q.assign(model=f"org/model-{i}") for i in range(n_models)], ignore_index=True)
    sc = sc[["model", *q.columns]]
    sc["prob"] = np.exp(rng.normal(-9, 1.5, len(sc)))
    return sc


@pytest.mark.parametrize("sid,df2", [("3A", 385), ("3B", 77), ("3C", 77), ("3D", 99)])
def test_study_end_to_end_joins_paper_rows(sid, df2):
    study = load_study(REPO / f"config/studies/{sid}.yaml")
    scores = _synthetic_scores(study, 12, seed=int(sid[0]) + ord(sid[1]))
    lpr = summary(scores, **study.lpr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run_analysis(study.analysis["name"], AnalysisInput(study=study, scores=scores, lpr=lpr), study.analysis["options"])
    ours = out.stats
    assert set(ours["study"]) == {sid}
    paper = load_paper_results()
    paper = paper[
        (paper.study == sid) & ~paper.statistic.str.startswith(("ICC", "alpha")) & ~paper.condition.str.startswith("ref:")
    ]
    assert len(paper) > 5
    for _, row in paper.iterrows():
        assert len(matching_rows(row, ours)), f"no computed row for paper row {tuple(row[['statistic', 'condition', 'model']])}"
        if not np.isnan(row["df2"]):
            assert matching_rows(row, ours)["df2"].tolist() == [row["df2"]]
        if not np.isnan(row["df"]) and row["statistic"] != "F":
            assert set(matching_rows(row, ours)["df"]) == {row["df"]}


# ------------------------------------------------------ the calibrated variant (inference: sentence)
def test_sentence_inference_keeps_the_papers_d_and_F(out_3a):
    lpr, _, paper = out_3a
    ours = _run("stereotype_pairs", lpr, {**OPTS_3A, "inference": "sentence"})
    for cond in ["all"] + [f"pair{j}" for j in range(1, 10)]:
        a, b = _row(paper.stats, "d", cond), _row(ours.stats, "d", cond)
        assert b["value"] == pytest.approx(a["value"], abs=1e-10)
        assert b["se"] != pytest.approx(a["se"], rel=1e-3)
    F = lambda s: s[s.statistic == "F"].set_index("condition")["value"]
    assert F(ours.stats).equals(F(paper.stats))
    assert any("inference: sentence" in n for n in ours.notes)


def test_sentence_inference_is_the_mixed_model_of_within_sentence_differences(out_3a):
    """Reference: statsmodels MixedLM (REML) of z = y(men word) - y(women word) per model x
    wording x pair, z ~ wording * pair (sum coding), random intercept per model: d is its
    intercept (the grand mean), with the intercept's SE."""
    lpr, _, _ = out_3a
    ours = _run("stereotype_pairs", lpr, {**OPTS_3A, "inference": "sentence"})
    y = lpr.assign(y=lpr["LPR"] / SIGMA, wording=lpr["M_word"].map({"men": 0, "women": 0, "fathers": 1, "mothers": 1}))
    wide = y.pivot_table(index=["model", "wording", "A_word"], columns="MASK", values="y").reset_index()
    wide["z"] = wide["Male"] - wide["Female"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("z ~ C(wording, Sum) * C(A_word, Sum)", wide, groups=wide["model"]).fit(reml=True)
    row = _row(ours.stats, "d", "all")
    assert row["value"] == pytest.approx(wide["z"].mean(), abs=1e-10)
    assert row["value"] == pytest.approx(fit.params["Intercept"], abs=1e-6)
    assert row["se"] == pytest.approx(fit.bse["Intercept"], rel=1e-3)


def test_sentence_inference_domains_same_d(out_3b):
    lpr, paper = out_3b
    ours = _run("stereotype_domains", lpr, {**OPTS_3B, "inference": "sentence"})
    for cond in ("all", "interest", "talent"):
        assert _row(ours.stats, "d", cond)["value"] == pytest.approx(_row(paper.stats, "d", cond)["value"], abs=1e-10)


def test_sentence_inference_unknown_value():
    with pytest.raises(InputError, match="unknown inference"):
        _run("stereotype_pairs", _pairs_lpr(n_pairs=2), {**OPTS_3A, "inference": "robust"})


def test_calibrated_figure_table_sets_the_two_inferences_side_by_side(out_3a):
    lpr, _, paper = out_3a
    ours = _run("stereotype_pairs", lpr, {**OPTS_3A, "inference": "sentence"})
    tab = paper.figures["calibrated"].set_index("condition")
    assert list(tab.index) == ["all"] + [f"pair{j}" for j in range(1, 10)]  # no wording rows: figure only
    for cond in tab.index:
        assert tab.loc[cond, "d"] == pytest.approx(_row(paper.stats, "d", cond)["value"])
        assert tab.loc[cond, "p"] == pytest.approx(_row(paper.stats, "d", cond)["p"])
        assert tab.loc[cond, "p_ours"] == pytest.approx(_row(ours.stats, "d", cond)["p"])
        assert tab.loc[cond, "ci_low_ours"] == pytest.approx(_row(ours.stats, "d", cond)["ci_low"])
    assert (tab["holds"] == (tab["significant"] == tab["significant_ours"])).all()
    assert (tab["significant"] == (tab["p"] < 0.05)).all()
