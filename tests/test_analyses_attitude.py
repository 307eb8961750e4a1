"""Studies 2A-2D analysis (fmat.analyses.attitude): d fixed by construction (with model random
intercepts), a hand check on a tiny input, t/df against an independent OLS with model dummies
(equal to the random-intercept LMM for within-model contrasts of a balanced design), the
reliability stage's alpha among the words of each category against pingouin, and the real study
files end to end."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import statsmodels.formula.api as smf

from fmat.analyses import AnalysisInput, run_analysis
from fmat.analyses.attitude import design_table, standardize_lpr
from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
Q_P, Q_S = "I [MASK] {TARGET}.", "Most people [MASK] {TARGET}."
OPTS = {
    "target_contrast": ["Flowers", "Insects"],
    "relations": {"like-dislike": ["like", "dislike"], "notice-ignore": ["notice", "ignore"]},
    "perceivers": {"personal": Q_P, "societal": Q_S},
}
REL = {"like-dislike": "like - dislike", "notice-ignore": "notice - ignore"}
PER = {"personal": Q_P, "societal": Q_S}


class FakeStudy:
    id = "2X"
    items = pd.DataFrame(columns=["slot", "word", "item"])


def make_lpr(cells: dict, models, n: int) -> pd.DataFrame:
    """cells[(model, perceiver, relation)] = (flower LPRs, insect LPRs) -> an LPR table as
    fmat.summary gives it (M_word "like - dislike", TARGET group, T_word)."""
    rows = []
    for m in models:
        for p in ["personal", "societal"]:
            for rel in ["like-dislike", "notice-ignore"]:
                fl, ins = cells[(m, p, rel)]
                for cat, vals in (("Flowers", fl), ("Insects", ins)):
                    for i, v in enumerate(vals):
                        rows.append(
                            {
                                "model": m,
                                "query": PER[p],
                                "MASK": "Positive - Negative",
                                "M_word": REL[rel],
                                "TARGET": cat,
                                "T_word": f"{cat[0].lower()}{i}",
                                "LPR": v,
                            }
                        )
    return pd.DataFrame(rows)


def exact_d_cells(deltas: dict, models, n: int, seed=0):
    """Flowers = u_m + c + delta/2 + e, Insects = u_m + c - delta/2 + e with e scaled so that
    the SD (ddof = 1) of all 2n values is exactly 1: WEAT d = delta exactly, in every model."""
    rng = np.random.default_rng(seed)
    cells = {}
    for m in models:
        u = rng.normal(scale=3)  # model random intercept
        for p in ["personal", "societal"]:
            for rel in ["like-dislike", "notice-ignore"]:
                delta = deltas[(p, rel)]
                e = rng.normal(size=n)
                e -= e.mean()
                target = ((2 * n - 1) - n * delta**2 / 2) / 2  # sum e^2 giving total SD 1
                e *= math.sqrt(target / (e @ e))
                c = rng.normal()  # model x cell offset
                cells[(m, p, rel)] = (u + c + delta / 2 + e, u + c - delta / 2 + e)
    return cells


def run(lpr, **opts):
    return run_analysis("attitude_weat", AnalysisInput(FakeStudy(), pd.DataFrame(), lpr, {}), {**OPTS, **opts})


def row(stats_, statistic, condition):
    sel = stats_[(stats_.statistic == statistic) & (stats_.condition == condition) & (stats_.model == "all")]
    assert len(sel) == 1, (statistic, condition)
    return sel.iloc[0]


DELTAS = {
    ("personal", "like-dislike"): 0.8,
    ("societal", "like-dislike"): 0.3,
    ("personal", "notice-ignore"): -0.2,
    ("societal", "notice-ignore"): 0.5,
}


def test_d_fixed_by_construction_with_model_random_intercepts():
    models = [f"m{k}" for k in range(5)]
    lpr = make_lpr(exact_d_cells(DELTAS, models, 10), models, 10)
    out = run(lpr).stats
    for (p, rel), delta in DELTAS.items():
        assert row(out, "d", f"{rel}:{p}")["value"] == pytest.approx(delta, abs=1e-9)
    for rel in ["like-dislike", "notice-ignore"]:
        dp, ds = DELTAS[("personal", rel)], DELTAS[("societal", rel)]
        assert row(out, "d", f"{rel}:average")["value"] == pytest.approx((dp + ds) / 2, abs=1e-9)
        assert row(out, "d", f"{rel}:personal-societal")["value"] == pytest.approx(dp - ds, abs=1e-9)
    # design: 5 models x 2 perceivers x 2 relations x 20 words = 400 rows; df = 400 - 5 - 7
    overall = out[out.model == "all"]
    assert set(overall.loc[overall.statistic.isin(["d", "t"]), "df"]) == {388.0}
    assert set(overall.loc[overall.statistic == "d", "n"]) == {400.0}


def test_the_effect_per_model_is_each_models_weat_d():
    """Issue 54: result.per_model was empty for attitude_weat. Each model's d is its own WEAT d:
    delta exactly by construction, in every model, per relation and part (no test)."""
    from fmat.results import per_model_effects

    models = [f"m{k}" for k in range(3)]
    lpr = make_lpr(exact_d_cells(DELTAS, models, 10), models, 10)
    out = run(lpr).stats
    mine = out[(out.statistic == "d") & (out.model != "all")]
    assert set(mine.model) == set(models) and mine["p"].isna().all() and (mine["n"] == 40).all()  # 2 perceivers x 20 words
    for rel in ["like-dislike", "notice-ignore"]:
        dp, ds = DELTAS[("personal", rel)], DELTAS[("societal", rel)]
        for part, want in (("personal", dp), ("societal", ds), ("average", (dp + ds) / 2), ("personal-societal", dp - ds)):
            got = mine[mine.condition == f"{rel}:{part}"]
            assert len(got) == 3 and np.allclose(got["value"], want, atol=1e-9), (rel, part, got)
    wide = per_model_effects(out)
    assert list(wide.columns) == ["statistic", "condition", *models] and len(wide) == 8


def test_t_df_p_equal_ols_with_model_dummies():
    # Balanced design, within-model contrasts: the random-intercept LMM's estimates, SEs and
    # df (N - G - 7) equal those of OLS with fixed model effects (independent: statsmodels OLS).
    models = [f"m{k}" for k in range(6)]
    rng = np.random.default_rng(11)
    cells = {}
    for m in models:
        u = rng.normal(scale=2)
        for p in ["personal", "societal"]:
            for rel in ["like-dislike", "notice-ignore"]:
                cells[(m, p, rel)] = (u + 0.5 + rng.normal(size=8), u + rng.normal(size=8))
    lpr = make_lpr(cells, models, 8)
    # uncentered, so the models' intercepts u are real (centered data has none: singular fit)
    out = run(lpr, center=False).stats
    d = design_table(lpr, **OPTS)
    ds = standardize_lpr(d, center=False)
    fit = smf.ols("y ~ C(model) + C(category) * C(relation) * C(perceiver)", data=ds).fit()
    names = list(fit.params.index)

    def L(cat, rel, per):  # cell mean weights under treatment coding, averaged over models
        v = np.zeros(len(names))
        v[names.index("Intercept")] = 1
        for mname in names:
            if mname.startswith("C(model)"):
                v[names.index(mname)] = 1 / len(models)
        terms = {
            "C(category)[T.Insects]": cat == "Insects",
            "C(relation)[T.notice-ignore]": rel == "notice-ignore",
            "C(perceiver)[T.societal]": per == "societal",
        }
        on = [k for k, t in terms.items() if t]
        for nm in names:
            parts = nm.split(":")
            if nm.startswith("C(model)") or nm == "Intercept":
                continue
            if all(pt in on for pt in parts):
                v[names.index(nm)] = 1
        return v

    for rel in ["like-dislike", "notice-ignore"]:
        per = {p: L("Flowers", rel, p) - L("Insects", rel, p) for p in ["personal", "societal"]}
        for cond, vec in (
            (f"{rel}:personal", per["personal"]),
            (f"{rel}:average", (per["personal"] + per["societal"]) / 2),
            (f"{rel}:personal-societal", per["personal"] - per["societal"]),
        ):
            ref = fit.t_test(vec)
            assert row(out, "d", cond)["value"] == pytest.approx(float(ref.effect[0]), abs=1e-8)
            assert row(out, "d", cond)["se"] == pytest.approx(float(ref.sd[0, 0]), rel=1e-5)
            assert row(out, "t", cond)["value"] == pytest.approx(float(ref.tvalue[0, 0]), rel=1e-5)
            assert row(out, "t", cond)["p"] == pytest.approx(float(ref.pvalue), rel=1e-4)
            assert row(out, "t", cond)["df"] == fit.df_resid == 6 * 2 * 2 * 16 - 6 - 7


def test_hand_check_tiny_input():
    # 2 models, 2 words per category; d = mean over models of (mean F - mean I) / SD of the 4 LPRs
    models = ["a", "b"]
    vals = {"a": ([1.0, 2.0], [0.0, 1.0]), "b": ([3.0, 5.0], [1.0, 2.0])}
    cells = {}
    for m in models:
        for p in ["personal", "societal"]:
            for rel in ["like-dislike", "notice-ignore"]:
                f, i = vals[m]
                sign = 1 if rel == "like-dislike" else -1
                cells[(m, p, rel)] = (np.array(f) * sign, np.array(i) * sign)
    out = run(make_lpr(cells, models, 2)).stats
    # model a: diff 1.0, SD of [1, 2, 0, 1] = sqrt(2/3); model b: diff 2.5, SD of [3, 5, 1, 2]
    sd_a = np.std([1, 2, 0, 1.0], ddof=1)
    sd_b = np.std([3, 5, 1, 2.0], ddof=1)
    hand = (1.0 / sd_a + 2.5 / sd_b) / 2
    assert sd_a == pytest.approx(math.sqrt(2 / 3))
    assert row(out, "d", "like-dislike:personal")["value"] == pytest.approx(hand, abs=1e-9)
    assert row(out, "d", "notice-ignore:average")["value"] == pytest.approx(-hand, abs=1e-9)
    assert row(out, "d", "like-dislike:personal-societal")["value"] == pytest.approx(0, abs=1e-9)


def test_sigma_effect_size_divides_by_sqrt2():
    models = [f"m{k}" for k in range(4)]
    cells = exact_d_cells(DELTAS, models, 6, seed=3)
    lpr = make_lpr(cells, models, 6)
    out = run(lpr, effect_size="sigma").stats
    raw = np.mean(
        [cells[(m, "personal", "like-dislike")][0].mean() - cells[(m, "personal", "like-dislike")][1].mean() for m in models]
    )
    assert row(out, "d", "like-dislike:personal")["value"] == pytest.approx(raw / math.sqrt(2), abs=1e-9)


def test_center_option_changes_t_not_d():
    models = [f"m{k}" for k in range(4)]
    lpr = make_lpr(exact_d_cells(DELTAS, models, 6, seed=4), models, 6)
    a, b = run(lpr, center=False).stats, run(lpr).stats  # default: centered
    assert row(a, "d", "like-dislike:societal")["value"] == pytest.approx(row(b, "d", "like-dislike:societal")["value"])
    assert row(b, "d", "like-dislike:societal")["value"] == pytest.approx(0.3, abs=1e-9)


def test_centering_removes_model_by_cell_offsets_from_the_error():
    """A verb-frequency offset per model x perceiver x relation (footnote 4) must not inflate SE(d)."""
    models = [f"m{k}" for k in range(6)]
    cells = exact_d_cells(DELTAS, models, 6, seed=5)
    rng = np.random.default_rng(9)
    shifted = {key: (x + off, y + off) for (key, (x, y)), off in zip(cells.items(), rng.normal(scale=20.0, size=len(cells)))}
    lpr0, lpr1 = make_lpr(cells, models, 6), make_lpr(shifted, models, 6)
    d0, d1 = (row(run(l).stats, "d", "like-dislike:societal") for l in (lpr0, lpr1))
    assert d1["value"] == pytest.approx(0.3, abs=1e-9)
    assert d1["se"] == pytest.approx(d0["se"], rel=1e-6)  # offsets gone from the residual
    unc = row(run(lpr1, center=False).stats, "d", "like-dislike:societal")
    assert unc["se"] > 10 * d1["se"]  # uncentered: they inflate it


def _study_2a_reliability():
    """Study 2A's reliability block, as config/studies/2A.yaml writes it."""
    import yaml

    raw = yaml.safe_load((REPO / "config" / "studies" / "2A.yaml").read_text(encoding="utf-8"))
    return raw["reliability"]


def test_alpha_among_words_is_the_reliability_stage_s_and_matches_pingouin():
    """Alpha among the words of each category, per relation x perceiver (rows = models): made by
    the reliability stage with Study 2A's reliability block, its conditions in the paper's words;
    the analysis makes none."""
    from types import SimpleNamespace

    from fmat.stages import reliability_tables

    rng = np.random.default_rng(2)
    models = [f"m{k}" for k in range(8)]
    cells = {}
    for m in models:
        lvl = rng.normal()
        for p in ["personal", "societal"]:
            for rel in ["like-dislike", "notice-ignore"]:
                cells[(m, p, rel)] = (lvl + rng.normal(scale=0.4, size=5), -lvl + rng.normal(scale=0.4, size=5))
    lpr = make_lpr(cells, models, 5)
    study = SimpleNamespace(
        id="2A", lpr={"mask_pair": True, "target_pair": False}, reliability=_study_2a_reliability(), items=None, score={}
    )
    _, rel = reliability_tables(study, None, lpr, icc=False)
    wide = pd.DataFrame([cells[(m, "societal", "notice-ignore")][1] for m in models])
    ref = pg.cronbach_alpha(wide)[0]
    assert row(rel, "alpha", "notice-ignore:societal:Insects")["value"] == pytest.approx(ref, abs=1e-10)
    assert row(rel, "alpha", "notice-ignore:societal:Insects")["n"] == 8
    assert len(rel[rel.statistic == "alpha"]) == 8
    assert not run(lpr).stats["statistic"].str.startswith("alpha").any()


def test_bad_options_name_the_option():
    models = ["a", "b", "c"]
    lpr = make_lpr(exact_d_cells(DELTAS, models, 3), models, 3)
    with pytest.raises(InputError, match=r"analysis.options.relations.like-dislike"):
        run(lpr, relations={"like-dislike": ["dislike", "like"]})
    with pytest.raises(InputError, match=r"analysis.options.perceivers.personal"):
        run(lpr, perceivers={"personal": "You [MASK] {TARGET}.", "societal": Q_S})
    with pytest.raises(InputError, match=r"analysis.options.target_contrast"):
        run(lpr, target_contrast=["Flowers", "Weeds"])
    with pytest.raises(InputError, match=r"analysis.options.effect_size"):
        run(lpr, effect_size="cohen")


# ------------------------------------------------------------------ the real study files
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


@pytest.mark.parametrize("sid, df", [("2A", 2381), ("2B", 2381), ("2C", 3053), ("2D", 749)])
def test_real_study_files_yield_every_paper_row(sid, df):
    from fmat.lpr import summary
    from fmat.study import load_study
    from fmat_replication.paper import load_paper_results, matching_rows

    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    rng = np.random.default_rng(0)
    parts = []
    for m in MODELS:
        s = study.queries.copy()
        s.insert(0, "model", m)
        s["prob"] = rng.uniform(1e-5, 1e-2, len(s))
        parts.append(s)
    scores = pd.concat(parts, ignore_index=True)
    lpr = summary(scores, **study.lpr)
    out = run_analysis(study.analysis["name"], AnalysisInput(study, scores, lpr, {}), study.analysis["options"])
    paper = load_paper_results()
    paper = paper[(paper.study == sid) & ~paper.statistic.str.startswith("ICC") & ~paper.condition.str.startswith("ref:")]
    assert len(paper) == 15  # 20 rows - 2 ICC (reliability stage) - 3 cited criteria
    from fmat.stages import reliability_tables

    _, rel = reliability_tables(study, scores, lpr, sid=sid, icc=False)
    ours = pd.concat([rel, out.stats], ignore_index=True)
    missing = [(r.statistic, r.condition) for _, r in paper.iterrows() if len(matching_rows(r, ours)) == 0]
    assert missing == []
    # the paper's denominator df: rows - 12 models - 7 fixed effects
    assert set(out.stats.loc[out.stats.statistic == "t", "df"]) == {float(df)}
    assert {"effects", "words"} <= set(out.figures)
    # alpha among words: the reliability stage's rows carry the conditions the analysis options
    # name (the study file's reliability.names agree with its perceivers and relations)
    from fmat.reliability import lpr_reliability

    ref = lpr_reliability(lpr, item="T_word", by=["query", "M_word", "TARGET"])
    per = {q: p for p, q in study.analysis["options"]["perceivers"].items()}
    words = {f"{a} - {b}": name for name, (a, b) in study.analysis["options"]["relations"].items()}
    for r in ref.itertuples():
        got = row(rel, "alpha", f"{words[r.M_word]}:{per[r.query]}:{r.TARGET}")
        assert got["value"] == pytest.approx(r.alpha, abs=1e-10)
    assert len(rel[rel.statistic == "alpha"]) == len(ref)
