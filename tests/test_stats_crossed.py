"""The crossed (models x items) test of a contrast, ``inference: crossed``, against stored R
lme4 + lmerTest (Satterthwaite) and pbkrtest (Kenward-Roger) output (tests/fixtures/r/crossed.R)."""

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fmat import analyses
from fmat.analyses import AnalysisInput
from fmat.errors import InputError
from fmat.stats.crossed import crossed_contrast

FIX = Path(__file__).parent / "fixtures" / "r"
COLS = ["estimate", "se", "df", "t", "p", "ci_low", "ci_high"]


@pytest.fixture(scope="module")
def ref():
    return pd.read_csv(FIX / "crossed_results.csv")


@pytest.fixture(scope="module")
def pairs():
    return pd.read_csv(FIX / "crossed_pairs_data.csv")


@pytest.fixture(scope="module")
def words():
    return pd.read_csv(FIX / "crossed_words_data.csv")


def _pairs_table(pairs):
    """Y[model, pair]: the male - female contrast, averaged over the two wordings."""
    s = pairs.assign(s=np.where(pairs["gender"] == "Male", 1.0, -1.0) * pairs["y"])
    return s.groupby(["model", "pair"])["s"].sum().unstack() / 2


def _words_tables(words):
    t = words.pivot_table(index="model", columns=["template", "item"], values="y")
    p, s = t["personal"], t["societal"]
    cat = np.where(p.columns.str.startswith("flower"), "Flowers", "Insects")
    return {"personal": p, "average": (p + s) / 2, "personal-societal": p - s}, cat


def _near(col: str, r: pd.Series) -> float:
    """The absolute tolerance of a column: a CI bound near 0 is held to 1e-6 of its SE (R's
    own bound carries the SE's error, and R's numbers vary in the 8th digit from one run of
    crossed.R to the next)."""
    return 1e-6 * r["se"] if col.startswith("ci_") else 1e-9


def _close(ours: dict, r: pd.Series, df_rtol: float = 1e-6):
    for col in COLS:
        tol = {"df": df_rtol, "p": 1e-6}.get(col, 1e-6)
        assert ours[col] == pytest.approx(r[col], rel=tol, abs=_near(col, r)), col


def test_the_fixtures_are_interior_and_r_agrees_with_itself(ref):
    """No variance component at the boundary (REML = expected mean squares only there), and
    for 3A the cells' maximal model (by-model and by-pair gender slopes) and the two-way model of
    the within-pair contrasts give the same test: R's two fits agree to its optimiser's digits."""
    assert not ref["singular"].any()
    a, b = ref[ref["design"] == "pairs"].iloc[0], ref[ref["design"] == "pairs"].iloc[1]
    for col in COLS:
        assert a[col] == pytest.approx(b[col], rel=1e-6), col
    # balanced and interior: Kenward-Roger's df are Satterthwaite's
    np.testing.assert_allclose(ref["df_kr"], ref["df"], rtol=1e-5)


def test_within_item_contrast_matches_lmertest(ref, pairs):
    ours = crossed_contrast(_pairs_table(pairs).to_numpy())
    assert ours["boundary"] == []
    for _, r in ref[ref["design"] == "pairs"].iterrows():
        _close(ours, r)
    assert ours["n"] == 8 * 9


@pytest.mark.parametrize("condition", ["personal", "average", "personal-societal"])
def test_between_item_contrast_matches_lmertest(ref, words, condition):
    tables, cat = _words_tables(words)
    ours = crossed_contrast(tables[condition].to_numpy(), cat, {"Flowers": 1, "Insects": -1})
    assert ours["boundary"] == []
    _close(ours, ref[(ref["design"] == "words") & (ref["condition"] == condition)].iloc[0])


def test_satterthwaite_df_is_the_mean_squares_combination(ref, pairs):
    """The df is (sum a_k MS_k)^2 / sum (a_k MS_k)^2 / df_k of the components it reports, and
    lmerTest's: a df with one component's df off by one, or the squares' weights changed,
    is not (so the R comparison above catches a perturbed formula)."""
    ours = crossed_contrast(_pairs_table(pairs).to_numpy())
    comps = ours["components"]
    assert [c["term"] for c in comps] == ["model", "item", "model:item"]
    assert [c["df"] for c in comps] == [7, 8, 56]
    V = sum(c["coef"] * c["ms"] for c in comps)
    assert ours["se"] ** 2 == pytest.approx(V, rel=1e-12)
    r_df = float(ref[ref["design"] == "pairs"].iloc[0]["df"])
    assert V**2 / sum((c["coef"] * c["ms"]) ** 2 / c["df"] for c in comps) == pytest.approx(r_df, rel=1e-6)
    for k in range(3):
        off = V**2 / sum((c["coef"] * c["ms"]) ** 2 / (c["df"] + (j == k)) for j, c in enumerate(comps))
        assert abs(off / r_df - 1) > 1e-5  # 10x the tolerance of the R comparison
    assert abs(V**2 / sum((c["coef"] * c["ms"]) ** 2 / c["df"] ** 2 for c in comps) / r_df - 1) > 1e-3


def test_fixed_items_and_the_item_boundary_are_the_models_t_test():
    """Named items (``random_items=False``), or items with no variance of their own (REML's
    boundary): the one-sample t test of the models' own contrasts, df = models - 1."""
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, size=(10, 1))
    Y = 0.3 + a + rng.normal(0, 0.05, size=(10, 6))  # the items differ by noise only
    Y -= Y.mean(axis=0) - Y.mean()  # item means exactly equal: the item component is below 0
    D = Y.mean(axis=1)
    tt = stats.ttest_1samp(D, 0.0)
    for res in (crossed_contrast(Y, random_items=False), crossed_contrast(Y)):
        assert res["df"] == 9
        assert res["t"] == pytest.approx(float(tt.statistic), rel=1e-12)
        assert res["p"] == pytest.approx(float(tt.pvalue), rel=1e-10)
    assert crossed_contrast(Y)["boundary"] == ["item"]


def test_incomplete_or_too_small_tables_give_no_test():
    assert np.isnan(crossed_contrast(np.ones((1, 5)))["p"])
    Y = np.ones((4, 3))
    Y[0, 0] = np.nan
    assert np.isnan(crossed_contrast(Y)["se"])
    assert np.isnan(crossed_contrast(np.ones((4, 3)))["p"])  # no variance at all


# ------------------------------------------------------------------ through the analyses
def _quiet_run(name, data, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyses.run_analysis(name, data, options)


def test_stereotype_pairs_crossed_is_lmertest_end_to_end(ref, pairs):
    """3A's analysis with ``inference: crossed`` on the fixture's cells (as an LPR table, sigma
    1): its ``d`` row of ``all`` is R's crossed test; its per-pair rows test that pair over the
    models; the rows have the paper's variant's schema and point estimates."""
    words = {("Male", "men/women"): "men", ("Female", "men/women"): "women"}
    words.update({("Male", "fathers/mothers"): "fathers", ("Female", "fathers/mothers"): "mothers"})
    lpr = pd.DataFrame(
        {
            "model": pairs["model"],
            "MASK": pairs["gender"],
            "M_word": [words[(g, w)] for g, w in zip(pairs["gender"], pairs["wording"])],
            "ATTRIB": "Career - Family",
            "A_word": pairs["pair"].str.replace("pair", "c") + " - " + pairs["pair"].str.replace("pair", "f"),
            "LPR": pairs["y"],
        }
    )
    data = AnalysisInput(study=SimpleNamespace(id="3A", queries=None), scores=pd.DataFrame(), lpr=lpr)
    opts = {"sigma": 1.0, "mask_contrast": ["Male", "Female"], "mask_wordings": [["men", "women"], ["fathers", "mothers"]]}
    paper = _quiet_run("stereotype_pairs", data, {**opts, "inference": "paper"})
    ours = _quiet_run("stereotype_pairs", data, {**opts, "inference": "crossed"})
    assert list(ours.stats.columns) == list(paper.stats.columns)
    key = ["statistic", "condition", "model"]
    assert ours.stats[key].equals(paper.stats[key])
    d_p = paper.stats[paper.stats["statistic"] == "d"].set_index(["condition", "model"])["value"]
    d_o = ours.stats[ours.stats["statistic"] == "d"].set_index(["condition", "model"])["value"]
    np.testing.assert_allclose(d_o, d_p.loc[d_o.index], rtol=1e-10)
    row = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "all")].iloc[0]
    r = ref[ref["design"] == "pairs"].iloc[0]
    assert row["value"] == pytest.approx(r["estimate"], rel=1e-7)
    for col in ("se", "df", "p", "ci_low", "ci_high"):
        assert row[col] == pytest.approx(r[col], rel=1e-6, abs=_near(col, r)), col
    one = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "pair1")].iloc[0]
    Y = _pairs_table(pairs)["pair1"].to_numpy()
    assert one["df"] == 7
    assert one["p"] == pytest.approx(float(stats.ttest_1samp(Y, 0.0).pvalue), rel=1e-9)
    assert any("inference: crossed" in n for n in ours.notes)


def test_attitude_weat_crossed_is_lmertest_end_to_end(ref, words):
    """2A's analysis with ``inference: crossed`` (d on the sigma scale, sigma 1, so that d is the
    fixture's y) gives R's crossed tests of every part of the contrast."""
    lpr = pd.DataFrame(
        {
            "model": words["model"],
            "query": np.where(words["template"] == "personal", "I [MASK] {TARGET}.", "Most people [MASK] {TARGET}."),
            "M_word": "like - dislike",
            "TARGET": words["category"],
            "T_word": words["item"],
            "LPR": words["y"],
        }
    )
    opts = {
        "target_contrast": ["Flowers", "Insects"],
        "relations": {"like-dislike": ["like", "dislike"]},
        "perceivers": {"personal": "I [MASK] {TARGET}.", "societal": "Most people [MASK] {TARGET}."},
        "effect_size": "sigma",
        "sigma": 1.0,
    }
    data = AnalysisInput(study=SimpleNamespace(id="2A"), scores=pd.DataFrame(), lpr=lpr)
    paper = _quiet_run("attitude_weat", data, opts)
    ours = _quiet_run("attitude_weat", data, {**opts, "inference": "crossed"})
    assert list(ours.stats.columns) == list(paper.stats.columns)
    assert ours.stats[["statistic", "condition"]].equals(paper.stats[["statistic", "condition"]])
    np.testing.assert_allclose(
        ours.stats["value"][ours.stats["statistic"] == "d"], paper.stats["value"][paper.stats["statistic"] == "d"]
    )
    for cond in ("personal", "average", "personal-societal"):
        row = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == f"like-dislike:{cond}")].iloc[0]
        r = ref[(ref["design"] == "words") & (ref["condition"] == cond)].iloc[0]
        assert row["value"] == pytest.approx(r["estimate"], rel=1e-7)
        for col in ("se", "df", "p", "ci_low", "ci_high"):
            assert row[col] == pytest.approx(r[col], rel=1e-6, abs=_near(col, r)), (cond, col)


@pytest.mark.parametrize("name", ["stereotype_pairs", "stereotype_domains", "attitude_weat", "change_over_time"])
def test_crossed_is_an_option_value_checked_before_any_model_loads(name):
    assert "crossed" in analyses.option_values(name, "inference")
    with pytest.raises(InputError, match="did you mean 'crossed'"):
        analyses.check(name, {"inference": "crosed", **_required(name)})
    analyses.check(name, {"inference": "crossed", **_required(name)})


def _domains(seed=4, n_models=6, k=6):
    """A 3B-shaped LPR table (attrib_pair: false): models x 2 genders x 2 wordings x 4 groups of
    k phrases; each domain word has its own gender contrast in both forms (the j-th phrase of
    MathInterest and of MathTalent share it), each phrase and model x phrase its own too."""
    rng = np.random.default_rng(seed)
    forms = {"interest": ["MathInterest", "ArtsInterest"], "talent": ["MathTalent", "ArtsTalent"]}
    word = {dom: rng.normal(0, 0.3, k) for dom in ("Math", "Arts")}
    rows = []
    for m in range(n_models):
        own = rng.normal(0, 0.2)
        for focal, ref in forms.values():
            for attrib in (focal, ref):
                dom = attrib.removesuffix("Interest").removesuffix("Talent")
                for j in range(k):
                    phrase = rng.normal(0, 0.1) + word[dom][j] + (own if attrib == focal else 0.0)
                    for men, women in (("men", "women"), ("boys", "girls")):
                        for grp, w, sign in (("Male", men, 0.5), ("Female", women, -0.5)):
                            rows.append((f"m{m}", grp, w, attrib, f"{attrib}-{j}", -8 + sign * phrase + rng.normal(0, 0.2)))
    lpr = pd.DataFrame(rows, columns=["model", "MASK", "M_word", "ATTRIB", "A_word", "LPR"])
    opts = {"sigma": 1.0, "mask_contrast": ["Male", "Female"], "mask_wordings": [["men", "women"], ["boys", "girls"]]}
    return lpr, {**opts, "forms": forms}


def _phrase_table(lpr):
    """Z[model, phrase]: the male - female contrast of each phrase, averaged over the wordings."""
    s = lpr.assign(s=np.where(lpr["MASK"] == "Male", 1.0, -1.0) * lpr["LPR"])
    return s.groupby(["model", "A_word"], sort=False)["s"].sum().unstack() / 2


def test_stereotype_domains_crossed_takes_the_phrases_as_items():
    """3B's crossed d of a form is the between-phrase contrast of focal and reference domain
    (phrases nested in the domain, as 2A's words in their category); ``all`` pairs the j-th
    phrase of each form (the same domain word), one item; the d are the paper's, the rows its
    schema, and the phrases' variation widens the CI."""
    lpr, opts = _domains()
    data = AnalysisInput(study=SimpleNamespace(id="3B", queries=None), scores=pd.DataFrame(), lpr=lpr)
    paper = _quiet_run("stereotype_domains", data, opts)
    ours = _quiet_run("stereotype_domains", data, {**opts, "inference": "crossed"})
    key = ["statistic", "condition", "model"]
    assert ours.stats[key].equals(paper.stats[key])
    np.testing.assert_allclose(
        ours.stats["value"][ours.stats["statistic"] != "t"], paper.stats["value"][paper.stats["statistic"] != "t"], rtol=1e-9
    )
    Z = _phrase_table(lpr)
    d = ours.stats[ours.stats["statistic"] == "d"].set_index(["condition", "model"])
    for form, (focal, ref) in opts["forms"].items():
        cols = [c for c in Z.columns if c.startswith((focal + "-", ref + "-"))]
        want = crossed_contrast(Z[cols].to_numpy(), [c.split("-")[0] for c in cols], {focal: 1, ref: -1})
        for col, w in (("value", "estimate"), ("se", "se"), ("df", "df"), ("p", "p"), ("ci_low", "ci_low")):
            assert d.loc[(form, "all"), col] == pytest.approx(want[w], rel=1e-10), (form, col)
    pooled = pd.DataFrame(
        {
            f"{side}{j}": (Z[f"{a}Interest-{j}"] + Z[f"{a}Talent-{j}"]) / 2
            for side, a in (("f", "Math"), ("r", "Arts"))
            for j in range(6)
        }
    )
    want = crossed_contrast(pooled.to_numpy(), ["f"] * 6 + ["r"] * 6, {"f": 1, "r": -1})
    # the same word's phrases are not independent items: taken as 24 items the SE is too small
    apart = crossed_contrast(
        Z.to_numpy(),
        [c.split("-")[0] for c in Z.columns],
        {g: 0.5 if "Math" in g else -0.5 for g in Z.columns.str.split("-").str[0]},
    )
    assert apart["estimate"] == pytest.approx(want["estimate"], rel=1e-12) and apart["se"] < 0.9 * want["se"]
    for col, w in (("value", "estimate"), ("se", "se"), ("df", "df"), ("p", "p")):
        assert d.loc[("all", "all"), col] == pytest.approx(want[w], rel=1e-10), col
    assert d.loc[("all", "all"), "se"] > paper.stats.set_index(key).loc[("d", "all", "all"), "se"]
    assert any("phrases of each domain" in n for n in ours.notes)


def test_stereotype_domains_crossed_is_lmertest_end_to_end(ref):
    """3B's analysis with ``inference: crossed`` on the fixture's LPRs (sigma 1): each form's d
    is R's test of the phrases' contrast between the domains (phrases random), the overall d
    R's test of the words' mean over the forms (words random)."""
    lpr = pd.read_csv(FIX / "crossed_domains_data.csv")
    forms = {"interest": ["MathInterest", "ArtsInterest"], "talent": ["MathTalent", "ArtsTalent"]}
    opts = {"sigma": 1.0, "mask_contrast": ["Male", "Female"], "mask_wordings": [["men", "women"], ["boys", "girls"]]}
    data = AnalysisInput(study=SimpleNamespace(id="3B", queries=None), scores=pd.DataFrame(), lpr=lpr)
    ours = _quiet_run("stereotype_domains", data, {**opts, "forms": forms, "inference": "crossed"})
    for cond in ("interest", "talent", "all"):
        row = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == cond)].iloc[0]
        r = ref[(ref["design"] == "domains") & (ref["condition"] == cond)].iloc[0]
        assert not r["singular"]
        assert row["value"] == pytest.approx(r["estimate"], rel=1e-7), cond
        for col in ("se", "df", "p", "ci_low", "ci_high"):
            assert row[col] == pytest.approx(r[col], rel=1e-6, abs=_near(col, r)), (cond, col)


def test_stereotype_domains_crossed_leaves_out_a_missing_phrase_and_unequal_forms():
    lpr, opts = _domains()
    cut = lpr[~((lpr["A_word"] == "ArtsTalent-5") & (lpr["model"] == "m1"))]
    data = AnalysisInput(study=SimpleNamespace(id="3B", queries=None), scores=pd.DataFrame(), lpr=cut)
    ours = _quiet_run("stereotype_domains", data, {**opts, "inference": "crossed"})
    assert any("left out 1 phrase(s)" in n and "ArtsTalent-5" in n for n in ours.notes)
    talent = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "talent")].iloc[0]
    assert talent["n"] == 6 * 11
    overall = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "all")].iloc[0]
    assert overall["n"] == 6 * 11  # the pair of the 6th Arts word left out
    # forms of unequal size: every phrase its own item
    fewer = lpr[lpr["A_word"] != "MathTalent-5"]
    data = AnalysisInput(study=SimpleNamespace(id="3B", queries=None), scores=pd.DataFrame(), lpr=fewer)
    ours = _quiet_run("stereotype_domains", data, {**opts, "inference": "crossed"})
    assert any("differ in size" in n for n in ours.notes)
    overall = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "all")].iloc[0]
    assert overall["n"] == 6 * 23


def _required(name):
    if name == "attitude_weat":
        return {"target_contrast": ["A", "B"], "relations": {"r": ["x", "y"]}, "perceivers": {"p": "q"}}
    if name == "stereotype_domains":
        return {"forms": {"interest": ["A", "B"]}}
    return {}


def test_bench_concept_world_judges_both_inferences_against_the_concept():
    """benchmarks/bench_concept.py's world (a concept null of 3A with item variation, 4
    models): both inferences' overall d (the same value), judged against 0."""
    import importlib.util  # here: loading a benchmark script by path

    path = Path(__file__).parents[1] / "benchmarks" / "bench_concept.py"
    spec = importlib.util.spec_from_file_location("bench_concept", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.one_world(("3A", "concept-null", 0.2, 1, 4))
    assert sorted(out["variant"]) == ["crossed", "paper"]
    assert set(out["condition"]) == {"all"} and (out["concept"] == 0).all()
    assert out["value"].iloc[0] == pytest.approx(out["value"].iloc[1], rel=1e-10)
    assert out["rejected"].tolist() == (out["p"] < 0.05).tolist()
    assert out.loc[out["variant"] == "crossed", "se"].iloc[0] > out.loc[out["variant"] == "paper", "se"].iloc[0]
    tab = bench.summary(out)
    assert set(tab["measure"]) == {"fpr"} and (tab["worlds"] == 1).all()
    # 4A: the year slope and the century contrasts, judged against the planted trend per century
    rows = bench.one_world(("4A", "planted", 0.1, 1, 4))
    assert set(zip(rows["statistic"], rows["condition"])) == {("b", "year"), ("d", "2000vs1900"), ("d", "1900vs1800")}
    assert rows["concept"].to_numpy() == pytest.approx(-0.6, rel=1e-3)
    trend = rows[rows["condition"] == "year"]
    assert sorted(trend["variant"]) == ["crossed", "paper"]
    assert trend["concept"].iloc[0] == pytest.approx(-0.6, rel=1e-3)
    assert trend["value"].iloc[0] == pytest.approx(trend["value"].iloc[1], rel=1e-10)


# ------------------------------------------------------------------ the trend family (4A-4D)
@pytest.fixture(scope="module")
def trend():
    return pd.read_csv(FIX / "crossed_trend_data.csv")


def _slopes(t):
    """S[model, item]: each cell's OLS slope of d on year / 100."""
    return t.groupby(["model", "item"]).apply(lambda g: np.polyfit(g["year"] / 100, g["d"], 1)[0]).unstack()


@pytest.mark.parametrize("design", ["trend", "trend-pairs"])
def test_trend_slope_of_cell_slopes_matches_lmertest_random_slopes(ref, trend, design):
    """The crossed test of the cells' year slopes is R's lmer with correlated random intercepts
    and slopes of year by model, by item and by model x item (4A-shaped: 3 templates; 4C-shaped:
    10 phrase pairs), Satterthwaite df."""
    ours = crossed_contrast(_slopes(trend[trend["design"] == design]).to_numpy())
    assert ours["boundary"] == []
    _close(ours, ref[ref["design"] == design].iloc[0])


def _trend_run(t, **options):
    lpr = pd.DataFrame({"model": t["model"], "query": t["item"], "M_word": t["year"].astype(str), "LPR": t["d"]})
    data = AnalysisInput(study=SimpleNamespace(id="4A", queries=None), scores=pd.DataFrame(), lpr=lpr)
    opts = {"sigma": 1.0, "average_over": ["query"], "century_contrasts": [[2000, 1900], [1900, 1800]], **options}
    return _quiet_run("change_over_time", data, opts)


def test_change_over_time_crossed_is_lmertest_end_to_end(ref, trend):
    """4A's analysis with ``inference: crossed`` on the fixture (LPR = d, sigma 1): the year
    slope's b and t rows are R's random-slopes test (95% CI); beta, R2m, R2c and every point
    estimate are the paper's; a model's own slope is tested over the templates (df 2); a
    century contrast is each cell's difference, crossed over models and templates."""
    t = trend[trend["design"] == "trend"]
    paper, ours = _trend_run(t), _trend_run(t, inference="crossed")
    key = ["statistic", "condition", "model"]
    assert ours.stats[key].equals(paper.stats[key])
    np.testing.assert_allclose(
        ours.stats["value"][ours.stats["statistic"] != "t"], paper.stats["value"][paper.stats["statistic"] != "t"], rtol=1e-9
    )
    b = ours.stats[(ours.stats["statistic"] == "b") & (ours.stats["model"] == "all")].iloc[0]
    r = ref[ref["design"] == "trend"].iloc[0]
    assert b["value"] == pytest.approx(r["estimate"], rel=1e-9)
    for col in ("se", "df", "p", "ci_low", "ci_high"):
        assert b[col] == pytest.approx(r[col], rel=1e-6, abs=_near(col, r)), col
    tt = ours.stats[(ours.stats["statistic"] == "t") & (ours.stats["condition"] == "year")].iloc[0]
    assert tt["value"] == pytest.approx(r["t"], rel=1e-6)
    S = _slopes(t)
    one = ours.stats[(ours.stats["statistic"] == "b") & (ours.stats["model"] == "m03")].iloc[0]
    check = stats.ttest_1samp(S.loc["m03"].to_numpy(), 0.0)
    assert (one["df"], one["n"]) == (2, 3)
    assert one["p"] == pytest.approx(float(check.pvalue), rel=1e-9)
    assert (one["ci_low"], one["ci_high"]) == pytest.approx(tuple(check.confidence_interval(0.95)), rel=1e-9)
    c = t[t["year"].isin([2000, 1900])].pivot_table(index=["model", "item"], columns="year", values="d")
    # a trend's items are few: no item boundary (fmat.stats.crossed, "Few items"; this contrast's
    # item mean square is below the residual's share, so the boundary would change the test)
    C = (c[2000] - c[1900]).unstack("item").to_numpy()
    want = crossed_contrast(C, truncate_items=False)
    assert want["se"] != pytest.approx(crossed_contrast(C)["se"], rel=1e-3)
    got = ours.stats[(ours.stats["statistic"] == "d") & (ours.stats["condition"] == "2000vs1900")].iloc[0]
    for col, w in (("value", "estimate"), ("se", "se"), ("df", "df"), ("p", "p")):
        assert got[col] == pytest.approx(want[w], rel=1e-12), col
    assert any(n.startswith("inference: crossed") for n in ours.notes)


def test_change_over_time_crossed_leaves_out_a_model_lacking_an_item(trend):
    """A model with no year of one template has no slope there: the crossed test is of the
    complete models (named in a note), the per-model rows of the others unchanged."""
    t = trend[trend["design"] == "trend-pairs"]
    cut = t[~((t["model"] == "m02") & (t["item"] == "q4"))]
    whole, part = _trend_run(t, inference="crossed"), _trend_run(cut, inference="crossed")
    want = crossed_contrast(_slopes(t).drop(index="m02").to_numpy())
    b = part.stats[(part.stats["statistic"] == "b") & (part.stats["model"] == "all")].iloc[0]
    assert b["value"] == pytest.approx(want["estimate"], rel=1e-12) and b["df"] == pytest.approx(want["df"], rel=1e-12)
    assert any("left out 1 model(s)" in n and "m02" in n for n in part.notes)
    m02 = part.stats[(part.stats["statistic"] == "b") & (part.stats["model"] == "m02")].iloc[0]
    assert (m02["df"], m02["n"]) == (8, 9)
    m01 = [s[(s["statistic"] == "b") & (s["model"] == "m01")].iloc[0]["p"] for s in (whole.stats, part.stats)]
    assert m01[0] == m01[1]


def test_change_over_time_crossed_with_one_item_is_the_models_slopes_t_test(trend):
    """No average_over (one item): only the models are random: the one-sample t test of the
    models' own slopes, df models - 1."""
    t = trend[(trend["design"] == "trend") & (trend["item"] == "q1")]
    ours = _trend_run(t, inference="crossed", average_over=None)
    S = _slopes(t)["q1"].to_numpy()
    b = ours.stats[(ours.stats["statistic"] == "b") & (ours.stats["model"] == "all")].iloc[0]
    assert b["df"] == 7
    assert b["p"] == pytest.approx(float(stats.ttest_1samp(S, 0.0).pvalue), rel=1e-9)
    assert any("one item" in n for n in ours.notes)


# ------------------------------------------------------------------ few items: no item boundary
def test_trend_with_few_items_has_no_item_boundary_r_anova_and_lmer():
    """4A-shaped (12 models x 3 templates x 44 years, the templates differing only by their own
    value in each year, no trend) where the templates' slope mean square is below the
    residual's share (tests/fixtures/r/crossed_few_items.R): the crossed year slope is R's
    two-way ANOVA quasi-F of the cell slopes without the item boundary, whereas REML (lmerTest)
    sets the templates' slope variance to 0, takes the models' df and rejects the true 0, as
    the old rule (item variance 0, df M - 1) did."""
    t = pd.read_csv(FIX / "crossed_few_items_data.csv")
    ref = pd.read_csv(FIX / "crossed_few_items_results.csv").set_index("fit")
    anova, lmer = ref.loc["anova"], ref.loc["lmer"]
    assert bool(anova["ms_item_below_share"]) and anova["ms_model"] > anova["ms_res"]
    assert bool(lmer["singular"]) and lmer["item_slope_var"] == 0
    ours = _trend_run(t, century_contrasts=None, inference="crossed")
    b = ours.stats[(ours.stats["statistic"] == "b") & (ours.stats["model"] == "all")].iloc[0]
    assert b["value"] == pytest.approx(anova["estimate"], rel=1e-9)
    for col in ("se", "df", "p", "ci_low", "ci_high"):
        assert b[col] == pytest.approx(anova[col], rel=1e-6, abs=_near(col, anova)), col
    assert b["p"] > 0.05 > lmer["p"] and lmer["df"] > 11
    old = crossed_contrast(_slopes(t).to_numpy())  # REML's boundary rule: the items' variance at 0
    assert old["boundary"] == ["item"] and old["df"] == 11 and old["p"] < 0.05


def test_few_items_without_the_item_boundary_keep_the_false_positive_rate():
    """12 models x 3 items with a real item variance (4 x the residual's share, as 4A's worlds
    at item SD 0.1-0.2) and nothing to find: REML's boundary (a 2-df item mean square below the
    residual's share taken as no item variance at all, df M - 1) rejects the true 0 too often;
    without it the rate stays at or below 5% (benchmarks/bench_concept.py measures the worlds)."""
    rng = np.random.default_rng(52)
    n, hits = 2000, {True: 0, False: 0}
    for _ in range(n):
        S = rng.normal(0, np.sqrt(4 / 12), (1, 3)) + rng.normal(0, 1, (12, 3))
        for truncate in hits:
            hits[truncate] += crossed_contrast(S, truncate_items=truncate)["p"] < 0.05
    reml_low = stats.beta.ppf(0.025, hits[True], n - hits[True] + 1)
    ours_high = stats.beta.ppf(0.975, hits[False] + 1, n - hits[False])
    assert reml_low > 0.05, hits  # the boundary rule: anti-conservative
    assert 0.02 < hits[False] / n and ours_high > 0.05 and hits[False] / n < 0.055, hits
