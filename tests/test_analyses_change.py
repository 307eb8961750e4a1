"""Studies 4A-4D analysis (fmat.analyses.change) on synthetic data with known answers.

Independent references: hand arithmetic on tiny tables, numpy means, statsmodels MixedLM on
an independently averaged table, scipy's paired t test (a balanced two-year random-intercept
model with positive intercept variance is the paired t test, df = models - 1).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps

from fmat.analyses import AnalysisInput, run_analysis
from fmat.analyses.change import _ranges, trend_table, yearly_effects
from fmat.errors import InputError
from fmat.lpr import summary
from fmat.study import load_study
from fmat_replication.paper import load_paper_results, matching_rows

REPO = Path(__file__).resolve().parents[1]
SIGMA = 1.414
OPTS = {
    "sigma": SIGMA,
    "year_scale": 100,
    "average_over": ["query"],
    "century_contrasts": [[2000, 1900], [1900, 1800]],
    "smoothing": {"window": 10},
}
QUERIES = ["q1 [MASK].", "q2 [MASK].", "q3 [MASK]."]


def _lpr(n_models=12, years=range(1800, 2020), slope=-0.6, tau=0.3, noise=0.4, seed=0, query_noise=0.3):
    """A 4A-like paired LPR table: d(model, year) = u_model + slope * (year/100 - 19) + e; each
    query's LPR = sigma * (d + query noise that sums to 0 over the 3 queries)."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for m in range(n_models):
        u = rng.normal(0, tau)
        for y in years:
            d = u + slope * (y / 100 - 19) + rng.normal(0, noise)
            qn = rng.normal(0, query_noise, 3)
            qn -= qn.mean()
            truth.append({"model": f"org/m{m}", "year": y, "d": d})
            for q, e in zip(QUERIES, qn):
                rows.append(
                    {
                        "model": f"org/m{m}",
                        "query": q,
                        "MASK": "Year",
                        "M_word": str(y),
                        "TARGET": "Male - Female",
                        "T_word": "men - women",
                        "LPR": (d + e) * SIGMA,
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(truth)


def _run(lpr, opts=OPTS, study=None):
    study = study or SimpleNamespace(id="T", queries=None, path=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_analysis("change_over_time", AnalysisInput(study=study, scores=None, lpr=lpr), opts)


def _row(stats, statistic, condition, model="all"):
    r = stats[(stats.statistic == statistic) & (stats.condition == condition) & (stats.model == model)]
    assert len(r) == 1, (statistic, condition, model)
    return r.iloc[0]


@pytest.fixture(scope="module")
def known():
    lpr, truth = _lpr(seed=1)
    return lpr, truth, _run(lpr)


def test_recovers_known_slope(known):
    _, _, out = known
    b = _row(out.stats, "b", "year")
    assert b["value"] == pytest.approx(-0.6, abs=3 * b["se"])
    assert b["ci_low"] < -0.6 < b["ci_high"]
    assert b["df"] == 12 * 220 - 12 - 1
    assert b["p"] < 1e-10
    assert _row(out.stats, "t", "year")["value"] == pytest.approx(b["value"] / b["se"], rel=1e-9)
    assert 0 < _row(out.stats, "R2m", "year")["value"] < _row(out.stats, "R2c", "year")["value"] < 1
    assert -1 < _row(out.stats, "beta", "year")["value"] < -0.5
    per_model = out.stats[(out.stats.statistic == "b") & (out.stats.model != "all")]
    assert len(per_model) == 12 and set(per_model.model) == {f"org__m{i}" for i in range(12)}


def test_yearly_mean_and_lmm_match_statsmodels(known):
    lpr, truth, out = known
    yearly = out.figures["yearly"]
    merged = yearly.merge(truth.assign(model=truth.model.str.replace("/", "__")), on=["model", "year"])
    assert len(merged) == 12 * 220
    np.testing.assert_allclose(merged["d_x"], merged["d_y"], atol=1e-9)  # query noise averages out
    ref_data = truth.assign(time=truth.year / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = smf.mixedlm("d ~ time", ref_data, groups=ref_data["model"]).fit(reml=True)
    b = _row(out.stats, "b", "year")
    assert b["value"] == pytest.approx(ref.params["time"], abs=1e-5)
    assert b["se"] == pytest.approx(ref.bse["time"], rel=1e-3)
    # standardized beta = b * sd(x) / sd(y)
    assert _row(out.stats, "beta", "year")["value"] == pytest.approx(
        ref.params["time"] * ref_data.time.std() / ref_data.d.std(), rel=1e-4
    )
    # R2m, R2c (Nakagawa & Schielzeth) from statsmodels' variance components
    var_f = np.var(ref.params["time"] * ref_data.time, ddof=1)
    tau2, s2 = float(ref.cov_re.iloc[0, 0]), float(ref.scale)
    assert _row(out.stats, "R2m", "year")["value"] == pytest.approx(var_f / (var_f + tau2 + s2), rel=1e-3)
    assert _row(out.stats, "R2c", "year")["value"] == pytest.approx((var_f + tau2) / (var_f + tau2 + s2), rel=1e-3)
    # per-model OLS slope
    g = ref_data[ref_data.model == "org/m3"]
    r = sps.linregress(g.time, g.d)
    assert _row(out.stats, "b", "year", "org__m3")["value"] == pytest.approx(r.slope, rel=1e-9)


def test_century_contrast_is_the_paired_t_test(known):
    _, truth, out = known
    piv = truth.pivot(index="model", columns="year", values="d")
    for a, b in ((2000, 1900), (1900, 1800)):
        diff = piv[a] - piv[b]
        ref = sps.ttest_rel(piv[a], piv[b])
        d = _row(out.stats, "d", f"{a}vs{b}")
        t = _row(out.stats, "t", f"{a}vs{b}")
        assert d["value"] == pytest.approx(diff.mean(), abs=1e-9)
        assert t["df"] == d["df"] == 11 and d["n"] == 24  # 24 model-years - 12 - 1
        assert t["value"] == pytest.approx(ref.statistic, rel=1e-5)
        assert t["p"] == pytest.approx(ref.pvalue, rel=1e-4)
        assert d["se"] == pytest.approx(diff.std(ddof=1) / np.sqrt(12), rel=1e-5)


def test_century_contrast_paired_exact():
    """Two years, 6 models, strong intercepts: the LMM contrast equals the paired t test."""
    rng = np.random.default_rng(7)
    u = rng.normal(0, 2, 6)
    d1900 = u + rng.normal(0, 0.3, 6)
    d2000 = u - 0.5 + rng.normal(0, 0.3, 6)
    rows = []
    for m in range(6):
        for y, d in ((1900, d1900[m]), (2000, d2000[m]), (1950, u[m] + 0.1 * m)):
            rows.append({"model": f"m{m}", "query": "q", "M_word": str(y), "LPR": d * SIGMA})
    out = _run(pd.DataFrame(rows), {**OPTS, "century_contrasts": [[2000, 1900]]})
    ref = sps.ttest_rel(d2000, d1900)
    r, t = _row(out.stats, "d", "2000vs1900"), _row(out.stats, "t", "2000vs1900")
    assert r["value"] == pytest.approx(np.mean(d2000 - d1900), abs=1e-10)
    assert (t["value"], t["df"], t["n"]) == (pytest.approx(ref.statistic, rel=1e-6), 5, 12)
    assert t["p"] == pytest.approx(ref.pvalue, rel=1e-5)
    # the missing 1800 is reported, not fatal
    out2 = _run(pd.DataFrame(rows), OPTS)
    assert not ((out2.stats.condition == "1900vs1800").any())
    assert any("1900 vs 1800 not computed" in n for n in out2.notes)


def test_century_joint_model_option(known):
    lpr, truth, out = known
    joint = _run(lpr, {**OPTS, "century_model": "joint"})
    piv = truth.pivot(index="model", columns="year", values="d")
    for a, b in ((2000, 1900), (1900, 1800)):
        r = _row(joint.stats, "d", f"{a}vs{b}")
        assert r["value"] == pytest.approx((piv[a] - piv[b]).mean(), abs=1e-9)  # balanced
        assert r["df"] == 36 - 12 - 2 and r["n"] == 36
    with pytest.raises(InputError, match="century_model"):
        _run(lpr, {**OPTS, "century_model": "both"})


def test_tiny_hand_computed_averaging_missing_and_trend():
    # 2 models x years 1800..1805 x 2 queries; model b lacks 1801 (OOV: NaN in both queries)
    # and has one query missing in 1803
    vals = {
        "a": {1800: (1, 3), 1801: (2, 2), 1802: (0, 4), 1803: (5, 7), 1804: (1, 1), 1805: (0, 2)},
        "b": {1800: (2, 2), 1801: (np.nan, np.nan), 1802: (3, 5), 1803: (np.nan, 6), 1804: (0, 0), 1805: (4, 4)},
    }
    rows = [
        {"model": m, "query": q, "MASK": "Year", "M_word": str(y), "LPR": v[i] * 2.0}
        for m, ys in vals.items()
        for y, v in ys.items()
        for i, q in enumerate(("q1", "q2"))
    ]
    lpr = pd.DataFrame(rows)
    yearly = yearly_effects(lpr, ["query"], 2.0, "test")
    got = {(r.model, r.year): (r.d, r.n_items) for r in yearly.itertuples()}
    assert got[("a", 1800)] == (2.0, 2) and got[("a", 1803)] == (6.0, 2)
    assert got[("b", 1803)] == (6.0, 1)  # the missing query is left out of the mean
    assert ("b", 1801) not in got  # year missing for b: dropped
    out = _run(
        lpr,
        {**OPTS, "sigma": 2.0, "century_contrasts": [], "smoothing": {"window": 3}},
        study=SimpleNamespace(id="T", queries=pd.DataFrame({"M_word": [str(y) for y in range(1800, 1807)]}), path=None),
    )
    miss = out.figures["missing_years"]
    assert sorted(map(tuple, miss[["model", "year"]].to_numpy().tolist())) == [("a", 1806), ("b", 1801), ("b", 1806)]
    assert any(n.startswith("b: 2 year(s) missing (dropped): 1801, 1806") for n in out.notes)
    tr = out.figures["trend"]
    assert list(tr.columns) == ["model", "year", "d", "d_interpolated", "d_smooth"]
    b = tr[tr.model == "b"].set_index("year")
    assert np.isnan(b.loc[1801, "d"]) and b.loc[1801, "d_interpolated"] == pytest.approx((2 + 4) / 2)
    # window 3 (t-1..t+1), partial at the ends: 1800 = mean(2, 3); 1802 = mean(3, 4, 6)
    assert b.loc[1800, "d_smooth"] == pytest.approx((2 + 3) / 2)
    assert b.loc[1802, "d_smooth"] == pytest.approx((3 + 4 + 6) / 3)
    assert np.isnan(b.loc[1806, "d_interpolated"]) and np.isnan(b.loc[1806, "d_smooth"])  # no extrapolation
    # 'all' = mean of the models' d per year (over the models that have it)
    al = tr[tr.model == "all"].set_index("year")
    assert al.loc[1801, "d"] == pytest.approx(2.0)  # only model a has 1801
    assert al.loc[1800, "d"] == pytest.approx((2 + 2) / 2)
    assert al.loc[1805, "d_smooth"] == pytest.approx(((1 + 0) / 2 + (1 + 4) / 2) / 2)


def test_trend_window_10_interior_is_t_minus_4_to_t_plus_5():
    yearly = pd.DataFrame(
        {"model": pd.Categorical(["m"] * 30), "year": np.arange(1800, 1830), "d": np.arange(30, dtype=float) ** 2}
    )
    tr = trend_table(yearly, list(range(1800, 1830)), window=10).query("model == 'm'").set_index("year")
    assert tr.loc[1810, "d_smooth"] == pytest.approx(np.mean(np.arange(6, 16) ** 2))
    assert tr.loc[1800, "d_smooth"] == pytest.approx(np.mean(np.arange(0, 6) ** 2))


def test_errors_and_helpers():
    lpr, _ = _lpr(n_models=2, years=range(1800, 1810))
    with pytest.raises(InputError, match="average_over"):
        _run(lpr, {**OPTS, "average_over": []})  # query varies within model-year
    with pytest.raises(InputError, match="not years"):
        _run(lpr.assign(M_word="abc"))
    with pytest.raises(InputError, match="smoothing"):
        _run(lpr, {**OPTS, "smoothing": {"width": 5}})
    with pytest.raises(InputError, match="2 or more models"):
        _run(lpr[lpr.model == "org/m0"])
    assert _ranges([1800, 1801, 1802, 1805, 1807, 1808]) == "1800-1802, 1805, 1807-1808"


# ----------------------------------------------------- end to end on the real study files
@pytest.mark.parametrize("sid", ["4A", "4B", "4C", "4D"])
def test_study_end_to_end_joins_paper_rows(sid):
    study = load_study(REPO / f"config/studies/{sid}.yaml")
    q = study.queries
    rng = np.random.default_rng(ord(sid[1]))
    scores = pd.concat([q.assign(model=f"org/model-{i}") for i in range(4)], ignore_index=True)
    scores = scores[["model", *q.columns]]
    scores["prob"] = np.exp(rng.normal(-9, 1.0, len(scores)))
    oov = (scores.model == "org/model-1") & scores.M_word.astype(str).isin(["1801", "1802", "1803"])
    scores.loc[oov, "prob"] = np.nan  # years missing from one model's vocabulary
    lpr = summary(scores, **study.lpr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run_analysis(study.analysis["name"], AnalysisInput(study=study, scores=scores, lpr=lpr), study.analysis["options"])
    paper = load_paper_results()
    paper = paper[(paper.study == sid) & ~paper.statistic.str.startswith(("ICC", "alpha"))]
    assert len(paper) == 5
    for _, row in paper.iterrows():
        assert len(matching_rows(row, out.stats)) == 1, tuple(row[["statistic", "condition"]])
    miss = out.figures["missing_years"]
    assert miss.to_dict("records") == [{"model": "org__model-1", "year": y} for y in (1801, 1802, 1803)]
    tr = out.figures["trend"]
    assert len(tr) == 5 * 220 and set(tr.model) == {"all", *(f"org__model-{i}" for i in range(4))}
    assert tr[["d_interpolated", "d_smooth"]].notna().all().all()
    assert _row(out.stats, "b", "year")["n"] == 4 * 220 - 3
