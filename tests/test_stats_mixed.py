"""Random-intercept mixed models against stored R nlme::lme output (tests/fixtures/r/*.R)."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmat.stats import SingularFitWarning, fit_lmm, nlme_col_df

FIX = Path(__file__).parent / "fixtures" / "r"
COLS = ["b", "se", "df", "t", "p", "ci_low", "ci_high"]


@pytest.fixture(scope="module")
def factorial():
    return pd.read_csv(FIX / "lme_factorial_data.csv")


@pytest.fixture(scope="module")
def fit_treat(factorial):
    return fit_lmm(factorial, "y ~ category * relation * perceiver", group="model")


def _check_coefs(fit, ref):
    assert list(fit.coefs["df"]) == list(ref["df"])
    for col in [c for c in COLS if c in ref.columns]:
        np.testing.assert_allclose(fit.coefs[col], ref[col], rtol=2e-6, atol=1e-9, err_msg=col)


def test_factorial_treatment_coefficients(fit_treat):
    ref = pd.read_csv(FIX / "lme_factorial_treatment_coefs.csv")
    _check_coefs(fit_treat, ref)
    assert set(ref["df"]) == {2381}  # N - G - (p - 1) = 2400 - 12 - 7, as Study 2A


def test_factorial_variance_r2_loglik(fit_treat):
    ref = pd.read_csv(FIX / "lme_factorial_treatment_fit.csv").iloc[0]
    assert fit_treat.var_group == pytest.approx(ref["tau2"], rel=1e-6)
    assert fit_treat.var_resid == pytest.approx(ref["sigma2"], rel=1e-7)
    assert fit_treat.llf == pytest.approx(ref["logLik"], abs=1e-6)
    assert fit_treat.r2m == pytest.approx(ref["r2m"], rel=1e-6)
    assert fit_treat.r2c == pytest.approx(ref["r2c"], rel=1e-6)
    assert fit_treat.n == ref["n"] and fit_treat.n_groups == 12 and not fit_treat.singular


@pytest.mark.parametrize("kind", ["sequential", "marginal"])
def test_factorial_anova(fit_treat, kind):
    ref = pd.read_csv(FIX / f"lme_factorial_treatment_anova_{kind}.csv")
    got = fit_treat.anova(kind)
    np.testing.assert_allclose(got["F"], ref["F"], rtol=1e-6)
    np.testing.assert_allclose(got["den_df"], ref["den_df"])
    np.testing.assert_allclose(got["num_df"], ref["num_df"])
    np.testing.assert_allclose(got["p"], ref["p"], rtol=1e-5, atol=1e-12)


def test_factorial_sum_coding(factorial):
    fit = fit_lmm(factorial, "y ~ C(category, Sum) * C(relation, Sum) * C(perceiver, Sum)")
    _check_coefs(fit, pd.read_csv(FIX / "lme_factorial_sum_coefs.csv"))
    for kind in ("sequential", "marginal"):
        ref = pd.read_csv(FIX / f"lme_factorial_sum_anova_{kind}.csv")
        np.testing.assert_allclose(fit.anova(kind)["F"], ref["F"], rtol=1e-6)
    # sequential F does not depend on the coding (treatment fit gives the same numbers)
    ref_t = pd.read_csv(FIX / "lme_factorial_treatment_anova_sequential.csv")
    np.testing.assert_allclose(fit.anova()["F"], ref_t["F"], rtol=1e-6)


def test_cell_mean_contrasts(fit_treat):
    ref = pd.read_csv(FIX / "lme_factorial_contrasts.csv").set_index("contrast")
    specs = ["category", "relation", "perceiver"]

    def cell(c, r, p):
        return {"category": c, "relation": r, "perceiver": p}

    got = {
        "d_personal_like": fit_treat.compare(
            specs, cell("flower", "like-dislike", "personal"), cell("insect", "like-dislike", "personal")
        ),
        "d_societal_like": fit_treat.compare(
            specs, cell("flower", "like-dislike", "societal"), cell("insect", "like-dislike", "societal")
        ),
        "d_average_like": fit_treat.compare(
            ["category", "relation"],
            {"category": "flower", "relation": "like-dislike"},
            {"category": "insect", "relation": "like-dislike"},
        ),
        "d_personal_notice": fit_treat.compare(
            specs, cell("flower", "notice-ignore", "personal"), cell("insect", "notice-ignore", "personal")
        ),
    }
    cm = fit_treat.cell_means(specs).set_index(specs)
    L = (
        cm.loc[("flower", "like-dislike", "personal"), "L"]
        - cm.loc[("insect", "like-dislike", "personal"), "L"]
        - cm.loc[("flower", "like-dislike", "societal"), "L"]
        + cm.loc[("insect", "like-dislike", "societal"), "L"]
    )
    got["diff_like"] = fit_treat.contrast(L)
    for name, res in got.items():
        r = ref.loc[name]
        assert res["estimate"] == pytest.approx(r["estimate"], rel=1e-6), name
        assert res["se"] == pytest.approx(r["se"], rel=2e-6), name
        assert res["t"] ** 2 == pytest.approx(r["F"], rel=5e-6), name
        assert res["df"] == r["df"] == 2381
        assert res["p"] == pytest.approx(r["p"], rel=1e-4), name


def test_continuous_predictor_study4_like():
    d = pd.read_csv(FIX / "lme_continuous_data.csv")
    d["x"] = d["year"] / 100
    fit = fit_lmm(d, "y ~ x")
    ref = pd.read_csv(FIX / "lme_continuous_coefs.csv")
    _check_coefs(fit, ref)
    assert fit.coefs.loc[1, "beta"] == pytest.approx(ref.loc[1, "beta"], rel=1e-6)  # refit on z-scores in R
    rf = pd.read_csv(FIX / "lme_continuous_fit.csv").iloc[0]
    assert fit.n == rf["n"] == 2520  # 2640 rows - 120 missing
    assert fit.r2m == pytest.approx(rf["r2m"], rel=1e-6)
    assert fit.r2c == pytest.approx(rf["r2c"], rel=1e-6)
    assert fit.llf == pytest.approx(rf["logLik"], abs=1e-6)


def test_between_group_covariate_df():
    d = pd.read_csv(FIX / "lme_continuous_data.csv")
    d["x"] = d["year"] / 100
    fit = fit_lmm(d, "y ~ x + size")
    ref = pd.read_csv(FIX / "lme_between_coefs.csv")
    _check_coefs(fit, ref)
    assert list(ref["df"]) == [2507, 2507, 10]
    an = pd.read_csv(FIX / "lme_between_anova_sequential.csv")
    np.testing.assert_allclose(fit.anova()["F"], an["F"], rtol=1e-5)  # nlme stops ~1e-6 short of the optimum
    np.testing.assert_allclose(fit.anova()["den_df"], an["den_df"])


@pytest.mark.parametrize(
    "study,n,p,expected",
    [
        ("2A", 2 * 2 * 50 * 12, 8, 2381),
        ("2C", 2 * 2 * 64 * 12, 8, 3053),
        ("2D", 2 * 2 * 16 * 12, 8, 749),
        ("3A", 4 * 9 * 12, 36, 385),
        ("3B", 4 * 2 * 12, 8, 77),
        ("3D", 2 * 5 * 12, 10, 99),
    ],
)
def test_paper_denominator_df(study, n, p, expected):
    """The paper's t/F df follow from N - G - (p - 1) with the designs of Studies 2-3."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(12), n // 12)
    X = np.column_stack([np.ones(n)] + [rng.normal(size=n) for _ in range(p - 1)])
    assert set(nlme_col_df(X, groups, True)) == {expected}


def test_singular_fit_warns_and_reports():
    rng = np.random.default_rng(5)
    d = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(12)], 30), "x": rng.normal(size=360)})
    d["y"] = 0.5 * d["x"] + rng.normal(size=360)
    d["y"] = d["y"] - d.groupby("model")["y"].transform("mean") + 0.0  # no between-model variance
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fit = fit_lmm(d, "y ~ x")
    assert any(issubclass(x.category, SingularFitWarning) for x in w)
    assert fit.singular and fit.var_group == pytest.approx(0, abs=1e-8)
    assert np.isfinite(fit.llf) and np.isfinite(fit.coefs["se"]).all()


def test_statsmodels_engine_agrees_with_nlme():
    """engine="statsmodels": statsmodels MixedLM (default optimizer) + polish; same numbers."""
    d = pd.read_csv(FIX / "lme_continuous_data.csv")
    d["x"] = d["year"] / 100
    fit = fit_lmm(d, "y ~ x", engine="statsmodels")
    assert fit.result is not None and np.isfinite(fit.result.llf)
    # statsmodels on its own is close to nlme; the polished fit is exact
    ref = pd.read_csv(FIX / "lme_continuous_coefs.csv")
    np.testing.assert_allclose(fit.result.fe_params, ref["b"], rtol=1e-3)
    _check_coefs(fit, ref)


def test_categorical_columns_with_unused_levels(factorial):
    d = factorial.copy()
    d["category"] = pd.Categorical(d["category"], categories=["flower", "insect", "unused"])
    d["relation"] = d["relation"].astype("string")
    fit = fit_lmm(d, "y ~ category * relation * perceiver")
    ref = pd.read_csv(FIX / "lme_factorial_treatment_coefs.csv")
    np.testing.assert_allclose(fit.coefs["b"], ref["b"], rtol=1e-6)
