"""Studies 1A-1C analyses (fmat.analyses.factual): known answers on synthetic data, hand checks
on tiny inputs, independent references (pingouin, numpy least squares, statsmodels), and the
real study files end to end (every paper row but ICC has a computed row)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from fmat.analyses import AnalysisInput, criteria_needed, run_analysis
from fmat.analyses.factual import figure_criterion, item_lpr, logit_pct, williams_row, zscore
from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
MODELS = [
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-large-cased",
    "distilbert-base-uncased",
    "distilbert-base-cased",
    "albert-base-v1",
    "albert-base-v2",
    "roberta-base",
    "distilroberta-base",
    "vinai/bertweet-base",
    "vinai/bertweet-large",
]
OPTS = {
    "criterion": {"table": "crit", "item": "item", "column": "pct_male"},
    "wefat": {"table": "wef", "item": "item", "column": "wefat_male"},
}


class FakeStudy:
    def __init__(self, sid="1A", items=None):
        self.id = sid
        self.items = items if items is not None else pd.DataFrame(columns=["slot", "word", "item"])


def _unit(v):
    v = np.asarray(v, float) - np.mean(v)
    return v / np.linalg.norm(v)


def lpr_table(values: dict, words=None) -> pd.DataFrame:
    """values[(model, query)] = array of LPRs per item (items named w0, w1, ...)."""
    rows = []
    queries = list(dict.fromkeys(q for _, q in values))
    for (m, q), v in values.items():
        for i, x in enumerate(v):
            rows.append({"model": m, "query": q, "T_word": (words or {}).get((q, i), f"w{i}"), "LPR": x})
    df = pd.DataFrame(rows)
    df["query"] = pd.Categorical(df["query"], categories=queries)
    return df


def known_r_data(rho: float, n: int = 40, models=("m1", "m2", "m3"), queries=("Q a", "Q b"), seed=0):
    """Every model x query LPR vector = offset + scale * s, s = rho * pct_std + sqrt(1-rho^2) e_std
    (e orthogonal to pct): all z-scores equal s, so every r(FMAT, pct) is exactly rho."""
    rng = np.random.default_rng(seed)
    pct = rng.uniform(2, 98, n)
    u = _unit(pct)
    e = rng.normal(size=n)
    e = _unit(e - (e @ u) * u)
    s = rho * u + math.sqrt(1 - rho**2) * e
    values = {(m, q): 3.0 * k + (1 + k + j) * s for k, m in enumerate(models) for j, q in enumerate(queries)}
    lpr = lpr_table(values)
    items = [f"w{i}" for i in range(n)]
    crit = pd.DataFrame({"item": items, "pct_male": pct})
    return lpr, crit, s, u, e


def run(lpr, criteria, study=None, name="factual_wefat", **opts):
    return run_analysis(name, AnalysisInput(study or FakeStudy(), pd.DataFrame(), lpr, criteria), {**OPTS, **opts})


def row(stats_, statistic, condition, model="all"):
    sel = stats_[(stats_.statistic == statistic) & (stats_.condition == condition) & (stats_.model == model)]
    assert len(sel) == 1, (statistic, condition, model, len(sel))
    return sel.iloc[0]


# ------------------------------------------------------------------ pieces, hand checks
def test_item_lpr_maps_phrases_to_item_keys_and_numbers_queries():
    lpr = lpr_table(
        {("m", "The [MASK] works as {TARGET}."): [1.0, 2.0], ("m", "[MASK] occupation is {TARGET}."): [3.0, 4.0]},
        words={
            ("The [MASK] works as {TARGET}.", 0): "a nurse",
            ("The [MASK] works as {TARGET}.", 1): "an engineer",
            ("[MASK] occupation is {TARGET}.", 0): "nurse",
            ("[MASK] occupation is {TARGET}.", 1): "engineer",
        },
    )
    items = pd.DataFrame({"slot": ["TARGET"] * 2, "word": ["a nurse", "an engineer"], "item": ["nurse", "engineer"]})
    out = item_lpr(lpr, items)
    assert list(out["item"]) == ["nurse", "engineer", "nurse", "engineer"]
    assert list(out["q"]) == ["Q1", "Q1", "Q2", "Q2"]
    assert list(out["LPR"]) == [1.0, 2.0, 3.0, 4.0]
    # the study's query order wins over the LPR table's order of first appearance
    out = item_lpr(lpr, items, query_order=["[MASK] occupation is {TARGET}.", "The [MASK] works as {TARGET}."])
    assert list(out["q"]) == ["Q2", "Q2", "Q1", "Q1"]


def test_zscore_is_scale_with_ddof1_within_groups():
    df = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "query": ["q"] * 6, "LPR": [1, 2, 3, 10, 30, 20.0]})
    z = zscore(df)
    np.testing.assert_allclose(z["z"], [-1, 0, 1, -1, 1, 0])
    np.testing.assert_allclose(z["z"].iloc[3:], stats.zscore([10, 30, 20.0], ddof=1))


def test_reliability_stage_alpha_among_templates_matches_pingouin_per_model_and_pooled():
    """Tables 3-4's alpha among the query templates (per model and "Overall", models pooled) is
    made by the reliability stage alone (fmat.stages.reliability_tables with the study file's
    reliability: {item: query, by: [model]}); pingouin computes it from the same LPRs."""
    from types import SimpleNamespace

    from fmat.stages import reliability_tables

    rng = np.random.default_rng(3)
    t = rng.normal(size=30)
    rows = []
    for m in ["m1", "m2"]:
        for q in ["Q1", "Q2", "Q3"]:
            for i in range(30):
                rows.append({"model": m, "query": q, "T_word": f"w{i}", "LPR": t[i] + rng.normal(scale=0.7) + (m == "m2")})
    lpr = pd.DataFrame(rows)
    study = SimpleNamespace(id="1A", lpr={}, reliability={"item": "query", "by": ["model"]}, items=None, score={})
    _, stats_ = reliability_tables(study, None, lpr, icc=False)
    for m in ["m1", "m2"]:
        wide = lpr[lpr.model == m].pivot(index="T_word", columns="query", values="LPR")
        assert row(stats_, "alpha", "all", m)["value"] == pytest.approx(pg.cronbach_alpha(wide)[0], abs=1e-10)
    pooled = lpr.pivot(index=["model", "T_word"], columns="query", values="LPR")
    assert row(stats_, "alpha", "all", "all")["value"] == pytest.approx(pg.cronbach_alpha(pooled)[0], abs=1e-10)
    assert row(stats_, "alpha", "all", "all")["n"] == 60


def test_williams_row_sign_and_paper_numbers_1a():
    # Published: r(FMAT, %male) = .74, r(WEFAT, %male) = .89, r(FMAT, WEFAT) = .86, n = 50 ->
    # t(47) = -3.92 (Bao, 2024, Study 1A). Build data with exactly these correlations.
    rng = np.random.default_rng(0)
    C = np.array([[1, 0.74, 0.89], [0.74, 1, 0.86], [0.89, 0.86, 1]])
    X = rng.normal(size=(50, 3))
    X = (X - X.mean(0)) @ np.linalg.inv(np.linalg.cholesky(np.cov(X.T)).T)  # exactly white
    X = X @ np.linalg.cholesky(C).T
    r = williams_row("1A", X[:, 1], X[:, 2], X[:, 0])
    assert r["df"] == 47 and r["value"] < 0
    # the printed r's are rounded: t from them is -4.25; the paper's -3.92 is within that rounding
    assert r["value"] == pytest.approx(-4.2532, abs=1e-3)
    assert r["p"] < 0.001
    # override n (option williams_n)
    assert williams_row("1C", X[:, 1], X[:, 2], X[:, 0], n=100)["df"] == 97


def test_logit_pct_and_figure_fits_are_exact_on_exact_data():
    pct = np.array([5.0, 20, 50, 70, 95])
    assert logit_pct(pct)[2] == 0 and logit_pct([80])[0] == pytest.approx(math.log(4))
    assert np.isfinite(logit_pct([0.0, 100.0])).all()
    lin = pd.DataFrame({"item": list("abcde"), "fmat": 0.5 + 0.02 * pct, "pct_male": pct})
    fig = figure_criterion(lin)
    np.testing.assert_allclose(fig["fit_linear"], fig["fmat"], atol=1e-12)
    lo = pd.DataFrame({"item": list("abcde"), "fmat": -0.1 + 0.8 * np.log(pct / (100 - pct)), "pct_male": pct})
    fig = figure_criterion(lo)
    np.testing.assert_allclose(fig["fit_logit"], fig["fmat"], atol=1e-12)
    assert {"item", "fmat", "pct_male", "wefat_male", "fit_linear", "fit_logit", "x", "y"} <= set(fig.columns)


# ------------------------------------------------------------------ known answers
def test_known_correlations_and_ci_against_pingouin():
    lpr, crit, s, u, e = known_r_data(0.6)
    wef = pd.DataFrame({"item": crit["item"], "wefat_male": 2 * u + 5})  # r(WEFAT, pct) = 1
    out = run(lpr, {"crit": crit, "wef": wef}).stats
    r = row(out, "r", "fmat~pct_male")
    assert r["value"] == pytest.approx(0.6, abs=1e-12) and r["n"] == 40 and r["df"] == 38
    ref = pg.corr(s, crit["pct_male"])
    assert r["ci_low"] == pytest.approx(ref["CI95"].iloc[0][0], abs=0.006)
    assert r["ci_high"] == pytest.approx(ref["CI95"].iloc[0][1], abs=0.006)
    assert r["p"] == pytest.approx(ref["p_val"].iloc[0], rel=1e-6)
    # every per-query and per-model x query r is rho too (all z-scores equal s)
    qs = out[(out.statistic == "r") & out.condition.str.startswith("fmat~pct_male:")]
    assert len(qs) == 2 * (3 + 1)  # (3 models + all) x 2 queries
    np.testing.assert_allclose(qs["value"], 0.6, atol=1e-12)
    assert set(qs["condition"]) == {"fmat~pct_male:Q1", "fmat~pct_male:Q2"}
    assert row(out, "r", "wefat~pct_male")["value"] == pytest.approx(1.0)
    assert row(out, "r", "fmat~wefat:Q2", "m3")["value"] == pytest.approx(0.6, abs=1e-12)


def test_fmat_score_is_mean_of_zscores_over_models_and_queries():
    rng = np.random.default_rng(7)
    n = 25
    values = {(m, q): rng.normal(size=n) * (1 + k) + k for k, m in enumerate(["a", "b/c"]) for q in ["q1", "q2", "q3"]}
    lpr = lpr_table(values)
    pct = rng.uniform(0, 100, n)
    wefat = rng.normal(size=n)
    crit = pd.DataFrame({"item": [f"w{i}" for i in range(n)], "pct_male": pct})
    wef = pd.DataFrame({"item": crit["item"], "wefat_male": wefat})
    res = run(lpr, {"crit": crit, "wef": wef})
    out = res.stats
    z = {k: (v - v.mean()) / v.std(ddof=1) for k, v in values.items()}
    score = np.mean(list(z.values()), axis=0)
    assert row(out, "r", "fmat~pct_male")["value"] == pytest.approx(np.corrcoef(score, pct)[0, 1], abs=1e-12)
    assert row(out, "r", "fmat~wefat")["value"] == pytest.approx(np.corrcoef(score, wefat)[0, 1], abs=1e-12)
    q2 = (z[("a", "q2")] + z[("b/c", "q2")]) / 2
    assert row(out, "r", "fmat~pct_male:Q2")["value"] == pytest.approx(np.corrcoef(q2, pct)[0, 1], abs=1e-12)
    # model slug: "/" -> "__"; per model x query r
    assert row(out, "r", "fmat~wefat:Q3", "b__c")["value"] == pytest.approx(
        np.corrcoef(values[("b/c", "q3")], wefat)[0, 1], abs=1e-12
    )
    # Williams' t from the three r's (Steiger 1980, eq. 7, written out here)
    r12, r13, r23 = (np.corrcoef(a, b)[0, 1] for a, b in ((pct, score), (pct, wefat), (score, wefat)))
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3))
    assert row(out, "t_williams", "fmat-vs-wefat~pct_male")["value"] == pytest.approx(t, abs=1e-10)
    # no alpha here: the reliability stage is its one producer
    assert not out["statistic"].str.startswith("alpha").any()
    # figure table: one row per item, fmat = the score
    fig = res.figures["criterion"].set_index("item")
    assert fig.loc["w3", "fmat"] == pytest.approx(score[3])


def test_missing_criterion_items_use_the_common_items_and_say_so():
    lpr, crit, s, u, e = known_r_data(0.5)
    wef = pd.DataFrame({"item": crit["item"].iloc[5:], "wefat_male": u[5:]})
    res = run(lpr, {"crit": crit.iloc[:-2], "wef": wef})
    r = row(res.stats, "r", "fmat~pct_male")
    assert r["n"] == 33
    assert r["value"] == pytest.approx(np.corrcoef(s[5:-2], crit["pct_male"].iloc[5:-2])[0, 1], abs=1e-12)
    assert any("33 with every criterion" in n and "5 without WEFAT" in n and "2 not in" in n for n in res.notes)


def test_without_wefat_table_the_wefat_rows_are_skipped_with_a_note():
    lpr, crit, *_ = known_r_data(0.5)
    res = run(lpr, {"crit": crit})
    assert not res.stats.condition.str.contains("wefat").any()
    assert any("WEFAT table 'wef' not available" in n for n in res.notes)


def test_bad_input_errors_name_the_option():
    lpr, crit, *_ = known_r_data(0.5)
    with pytest.raises(InputError, match="analysis.options.criterion"):
        run(lpr, {})
    with pytest.raises(InputError, match="no column"):
        run(lpr, {"crit": crit.rename(columns={"pct_male": "pm"})})
    with pytest.raises(InputError, match="only 0 items"):
        run(lpr, {"crit": crit.assign(item="x" + crit["item"])})
    with pytest.raises(InputError, match="standardize_within"):
        run(lpr, {"crit": crit}, standardize_within=["model", "TARGET"])


def test_criteria_needed():
    assert criteria_needed("factual_wefat", OPTS) == ["crit", "wef"]
    assert criteria_needed("factual_names", {"criterion": {"table": "c"}}) == ["c"]


# ------------------------------------------------------------------ Study 1C models
def names_data(seed=5, n=120, models=("m1", "m2", "m3", "m4")):
    rng = np.random.default_rng(seed)
    t = rng.normal(size=n)
    wefat = 0.6 * t + rng.normal(scale=0.8, size=n)
    logit = 0.3 + 2.0 * t + rng.normal(scale=1.0, size=n)
    pct = 100 / (1 + np.exp(-logit))
    values = {(m, q): 1.5 * t + rng.normal(scale=0.5, size=n) + k for k, m in enumerate(models) for q in ["q1", "q2"]}
    lpr = lpr_table(values)
    items = [f"w{i}" for i in range(n)]
    crit = pd.DataFrame({"item": items, "pct_male": pct, "logit_pct_male": logit})
    wef = pd.DataFrame({"item": items, "wefat_male": wefat})
    return lpr, crit, wef, values


NAMES_OPTS = {"criterion": {"table": "crit", "item": "item", "column": "pct_male", "logit_column": "logit_pct_male"}}


@pytest.fixture(scope="module")
def names_run():
    lpr, crit, wef, values = names_data()
    res = run(lpr, {"crit": crit, "wef": wef}, name="factual_names", **NAMES_OPTS)
    return res, lpr, crit, wef, values


def test_table5_ols_against_least_squares(names_run):
    res, lpr, crit, wef, values = names_run
    out = res.stats
    z = np.array([(v - v.mean()) / v.std(ddof=1) for v in values.values()])
    fm = z.mean(axis=0)
    y, w = crit["logit_pct_male"].to_numpy(), wef["wefat_male"].to_numpy()
    n = len(y)

    def ols(*xs):
        X = np.column_stack([np.ones(n), *xs])
        b, *_ = np.linalg.lstsq(X, y, rcond=None)
        res = y - X @ b
        s2 = res @ res / (n - X.shape[1])
        se = np.sqrt(np.diag(s2 * np.linalg.inv(X.T @ X)))
        r2 = 1 - res @ res / ((y - y.mean()) @ (y - y.mean()))
        return b, se, r2, res @ res

    b1, se1, r2_1, _ = ols(w)
    b2, se2, r2_2, _ = ols(fm)
    b3, se3, r2_3, ssr3 = ols(w, fm)
    assert row(out, "b", "logit_male~wefat:intercept")["value"] == pytest.approx(b1[0], abs=1e-10)
    assert row(out, "b", "logit_male~wefat:wefat")["se"] == pytest.approx(se1[1], abs=1e-10)
    assert row(out, "b", "logit_male~fmat:fmat")["value"] == pytest.approx(b2[1], abs=1e-10)
    assert row(out, "b", "logit_male~wefat+fmat:fmat")["value"] == pytest.approx(b3[2], abs=1e-10)
    assert row(out, "b", "logit_male~wefat+fmat:wefat")["se"] == pytest.approx(se3[1], abs=1e-10)
    assert row(out, "b", "logit_male~wefat+fmat:wefat")["df"] == n - 3
    assert row(out, "R2", "logit_male~wefat")["value"] == pytest.approx(r2_1, abs=1e-12)
    assert row(out, "R2", "logit_male~wefat+fmat")["value"] == pytest.approx(r2_3, abs=1e-12)
    assert row(out, "R2_delta", "logit_male~wefat+fmat:fmat")["value"] == pytest.approx(r2_3 - r2_1, abs=1e-12)
    assert row(out, "R2_delta", "logit_male~wefat+fmat:wefat")["value"] == pytest.approx(r2_3 - r2_2, abs=1e-12)
    # F test of b_fmat = b_wefat: restricted model with one predictor (fmat + wefat)
    _, _, _, ssr_r = ols(w + fm)
    F = (ssr_r - ssr3) / (ssr3 / (n - 3))
    f = row(out, "F", "logit_male~wefat+fmat:fmat=wefat")
    assert f["value"] == pytest.approx(F, rel=1e-9) and (f["df"], f["df2"]) == (1, n - 3)
    assert f["p"] == pytest.approx(stats.f.sf(F, 1, n - 3), rel=1e-6)


def test_1c_mixed_models_equal_pooled_ols_when_centered_within_model(names_run):
    # z-scores are centered within model x query, so the models' random intercepts are 0 and
    # the LMM equals OLS over all model x query x item rows (independent: numpy least squares).
    res, lpr, crit, wef, values = names_run
    out = res.stats
    z = np.concatenate([(v - v.mean()) / v.std(ddof=1) for v in values.values()])
    y = np.tile(crit["logit_pct_male"].to_numpy(), len(values))
    X = np.column_stack([np.ones_like(z), z])
    b, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ b
    N = len(y)
    s2 = resid @ resid / (N - 2)
    se = math.sqrt(s2 * np.linalg.inv(X.T @ X)[1, 1])
    r = row(out, "b", "lmm:logit_male~fmat:fmat")
    assert r["value"] == pytest.approx(b[1], rel=1e-6)
    assert r["se"] == pytest.approx(se, rel=1e-4)
    var_f = np.var(X @ b, ddof=1)
    assert row(out, "R2m", "lmm:logit_male~fmat")["value"] == pytest.approx(var_f / (var_f + s2), rel=1e-4)
    assert row(out, "b", "lmm:wefat~fmat:fmat")["n"] == N
    assert any("singular" in n for n in res.notes)


def test_1c_logit_computed_from_percentages_when_no_logit_column(names_run):
    res, lpr, crit, wef, _ = names_run
    a = res.stats
    b = run(lpr, {"crit": crit.drop(columns="logit_pct_male"), "wef": wef}, name="factual_names", mixed_models=False)
    assert not b.stats.condition.str.startswith("lmm:").any()
    b = b.stats
    np.testing.assert_allclose(row(a, "R2", "logit_male~fmat")["value"], row(b, "R2", "logit_male~fmat")["value"], rtol=1e-6)


# ------------------------------------------------------------------ the real study files
def _scores_for(study, seed=0, models=MODELS):
    rng = np.random.default_rng(seed)
    parts = []
    for m in models:
        s = study.queries.copy()
        s.insert(0, "model", m)
        s["prob"] = rng.uniform(1e-5, 1e-2, len(s))
        parts.append(s)
    return pd.concat(parts, ignore_index=True)


def _paper_rows_without_match(sid, stats_):
    from fmat_replication.paper import load_paper_results, matching_rows

    paper = load_paper_results()
    paper = paper[
        (paper.study == sid) & ~paper.statistic.str.startswith("ICC") & ~paper.condition.str.startswith("ref:")
    ]  # ICC: the demo's test; cited criteria
    assert len(paper) > 0
    return [(r.statistic, r.condition, r.model) for _, r in paper.iterrows() if len(matching_rows(r, stats_)) == 0]


@pytest.mark.parametrize("sid", ["1A", "1B", "1C"])
def test_real_study_files_yield_every_paper_row(sid, tmp_path):
    from fmat.lpr import summary
    from fmat.study import load_study

    rng = np.random.default_rng(1)
    if sid == "1C":
        names = [f"Name{i}" for i in range(40)]
        pct = rng.uniform(1, 99, 40)
        pd.DataFrame(
            {"item": names, "n_female": 100, "n_male": 100, "pct_male": pct, "logit_pct_male": np.log(pct / (100 - pct))}
        ).to_parquet(tmp_path / "ssa_names_1c.parquet")
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml", criteria_dir=tmp_path)
    scores = _scores_for(study)
    lpr = summary(scores, **study.lpr)
    opts = study.analysis["options"]
    keys = sorted(set(study.items.loc[study.items.slot == "TARGET", "item"]))
    criteria = {}
    if sid != "1C":
        criteria[opts["criterion"]["table"]] = pd.DataFrame({"item": keys, "pct_male": rng.uniform(1, 99, len(keys))})
    else:
        criteria["ssa_names_1c"] = pd.read_parquet(tmp_path / "ssa_names_1c.parquet")
    criteria[opts["wefat"]["table"]] = pd.DataFrame({"item": keys, "wefat_male": rng.normal(size=len(keys))})
    assert sorted(criteria) == sorted(criteria_needed(study.analysis["name"], opts))
    out = run_analysis(study.analysis["name"], AnalysisInput(study, scores, lpr, criteria), opts)
    from fmat.stages import reliability_tables

    _, rel = reliability_tables(study, scores, lpr, sid=sid, icc=False)
    assert _paper_rows_without_match(sid, pd.concat([rel, out.stats], ignore_index=True)) == []
    n_items = len(keys)
    assert row(out.stats, "r", "fmat~pct_male")["n"] == n_items
    # the reliability stage's alpha (Tables 3-4): all four queries line up by item key (1A: "a
    # nurse" and "nurse"), so alpha is over every item per model, and pooled over the 12 models
    assert row(rel, "alpha", "all", "roberta-base")["n"] == n_items
    assert row(rel, "alpha", "all", "all")["n"] == 12 * n_items
    assert not out.stats["statistic"].str.startswith("alpha").any()
    assert len(out.figures["criterion"]) == n_items
    if sid == "1A":  # row order of the scores does not matter (queries numbered by the study)
        shuffled = scores.sample(frac=1, random_state=3).reset_index(drop=True)
        again = run_analysis(
            study.analysis["name"], AnalysisInput(study, shuffled, summary(shuffled, **study.lpr), criteria), opts
        )
        key = ["statistic", "condition", "model"]
        a = out.stats.sort_values(key).reset_index(drop=True)
        b = again.stats.sort_values(key).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)
    if sid != "1A":  # 1B/1C: same words in every query: alpha is lpr_reliability's, per model and pooled
        from fmat.reliability import lpr_reliability

        ref = lpr_reliability(lpr, item="query", by=["model"])
        for r in ref.itertuples():
            ours = row(rel, "alpha", "all", r.model.replace("/", "__"))
            assert ours["value"] == pytest.approx(r.alpha, abs=1e-10)
        pooled = lpr_reliability(lpr, item="query")
        assert row(rel, "alpha", "all")["value"] == pytest.approx(pooled["alpha"].iloc[0], abs=1e-10)
