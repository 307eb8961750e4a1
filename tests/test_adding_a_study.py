"""docs/adding-a-study.md: the worked example X1 (config/studies/X1.yaml) and the example of a
new registered analysis (the page's ``d_by_query`` code block).

X1 is checked as a newcomer's study would be: it validates and loads, its query table has the
rows counted by hand (2 templates x 2 [MASK] words x 10 adjectives), and it runs end to end on
synthetic scores -- ``fmat.summary`` with its ``lpr:`` options, the reliability rows and its
registered analysis (``stereotype_pairs``) -- giving results-shaped rows whose d's equal plain
numpy means of the synthetic data (independent reference; balanced design, so the LMM's
estimated marginal means are the raw means). The page's example analysis is executed from the
page itself and checked against ``scipy.stats.ttest_1samp``.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as sps

import fmat
import fmat.analyses as analyses
from fmat.analyses import AnalysisInput, run_analysis
from fmat.results import RESULT_COLUMNS, validate_results
from fmat.study import load_study, validate_study_file

REPO = Path(__file__).resolve().parents[1]
X1 = REPO / "config" / "studies" / "X1.yaml"
DOC = REPO / "docs" / "adding-a-study.md"
SIGMA = 1.414

TEMPLATES = ["Most [MASK] are {ATTRIB}.", "Most [MASK] should be {ATTRIB}."]
AGENTIC = ["ambitious", "assertive", "competitive", "independent", "decisive"]
COMMUNAL = ["caring", "gentle", "cooperative", "emotional", "sensitive"]
#: the synthetic truth: men minus women, agentic minus communal, in LPR units per template
EFFECT = {TEMPLATES[0]: 1.2 * SIGMA, TEMPLATES[1]: 0.4 * SIGMA}
MODELS = [f"org/model{i}" for i in range(6)]


# ----------------------------------------------------------------------------- the file
def test_x1_validates_and_loads():
    assert validate_study_file(X1) == []
    study = load_study(X1)
    assert study.id == "X1" == X1.stem
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", study.id)  # the schema's id pattern
    assert study.type == "MA"
    assert study.analysis["name"] in analyses.available()
    assert study.lpr == {"mask_pair": False, "target_pair": True, "attrib_pair": True}
    assert "Prentice" in study.source and "Carranza" in study.source


def test_x1_query_table_has_the_counted_rows():
    q = load_study(X1).queries
    # 2 templates x 2 [MASK] words (men, women) x 10 adjectives (5 agentic + 5 communal)
    assert len(q) == 40
    assert list(q.columns) == ["qid", "query", "MASK", "M_pair", "M_word", "ATTRIB", "A_pair", "A_word"]
    assert all(isinstance(q[c].dtype, pd.CategoricalDtype) for c in q.columns)
    assert list(q["query"].cat.categories) == TEMPLATES
    assert list(q["MASK"].cat.categories) == ["Male", "Female"]
    assert list(q["M_word"].cat.categories) == ["men", "women"]
    assert list(q["ATTRIB"].cat.categories) == ["Agentic", "Communal"]
    assert list(q["A_word"].cat.categories) == AGENTIC + COMMUNAL
    assert q.groupby("query", observed=True).size().tolist() == [20, 20]
    assert q.groupby("ATTRIB", observed=True).size().tolist() == [20, 20]
    # word j of Agentic and word j of Communal share A_pair j
    pairs = q.drop_duplicates("A_word").groupby("A_pair", observed=True)["A_word"].apply(list)
    assert [tuple(v) for v in pairs] == list(zip(AGENTIC, COMMUNAL))


def test_doc_shows_the_file():
    """The page's YAML block of X1 has the file's design and options (source/notes abridged)."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    shown = yaml.safe_load(blocks[0])
    raw = yaml.safe_load(X1.read_text(encoding="utf-8"))
    for key in ("id", "title", "family", "queries", "lpr", "reliability", "score", "analysis"):
        assert shown[key] == raw[key], key


# ----------------------------------------------------------------------------- synthetic scores
def synthetic_scores(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """X1's query table x MODELS with known log probabilities, and the hand-made paired LPRs.

    ln P(w | template, adjective) = -6 + u_model + item effect + noise, plus EFFECT[template] / 2
    for men with an agentic adjective and minus that for women (so the agentic - communal LPR
    of men minus that of women is EFFECT[template] on average).
    """
    rng = np.random.default_rng(seed)
    q = load_study(X1).queries
    item = dict(zip(AGENTIC + COMMUNAL, rng.normal(0, 0.5, 10)))
    tables, hand = [], {}
    for model in MODELS:
        u = rng.normal(0, 0.7)
        logp = []
        for r in q.itertuples():
            sign = 0.5 if r.MASK == "Male" else -0.5
            shift = sign * EFFECT[r.query] if r.ATTRIB == "Agentic" else 0.0
            logp.append(-6 + u + item[r.A_word] + shift + rng.normal(0, 0.2))
        t = q.copy()
        t.insert(0, "model", pd.Categorical([model] * len(t), categories=MODELS))
        t["output"] = t["M_word"].astype(str)
        t["token"] = t["M_word"].astype(str)
        t["prob"] = np.exp(logp)
        tables.append(t)
        lp = {(r.query, r.M_word, r.A_word): v for r, v in zip(q.itertuples(), logp)}
        for tmpl in TEMPLATES:
            for w, grp in (("men", "Male"), ("women", "Female")):
                for a, c in zip(AGENTIC, COMMUNAL):
                    hand[(model, tmpl, grp, f"{a} - {c}")] = lp[(tmpl, w, a)] - lp[(tmpl, w, c)]
    scores = pd.concat(tables, ignore_index=True)
    scores["model"] = pd.Categorical(scores["model"].astype(str), categories=MODELS)
    hand = pd.Series(hand, name="LPR").rename_axis(["model", "query", "MASK", "A_word"]).reset_index()
    return scores, hand


@pytest.fixture(scope="module")
def x1_run():
    study = load_study(X1)
    scores, hand = synthetic_scores()
    lpr = fmat.summary(scores, **study.lpr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run_analysis(study.analysis["name"], AnalysisInput(study=study, scores=scores, lpr=lpr), study.analysis["options"])
    return study, scores, hand, lpr, out


def _row(stats, statistic, condition, model="all"):
    r = stats[(stats.statistic == statistic) & (stats.condition == condition) & (stats.model == model)]
    assert len(r) == 1, (statistic, condition, model)
    return r.iloc[0]


def test_x1_lpr_has_its_options_shape(x1_run):
    _, _, hand, lpr, _ = x1_run
    assert len(lpr) == 20 * len(MODELS)  # 2 templates x 2 words x 5 pairs per model
    assert set(lpr["ATTRIB"].astype(str)) == {"Agentic - Communal"}
    assert list(dict.fromkeys(lpr["A_word"].astype(str))) == [f"{a} - {c}" for a, c in zip(AGENTIC, COMMUNAL)]
    assert lpr.columns[-1] == "LPR"
    got = lpr.assign(**{c: lpr[c].astype(str) for c in ("model", "query", "MASK", "A_word")})
    merged = got.merge(hand, on=["model", "query", "MASK", "A_word"], suffixes=("", "_hand"))
    assert len(merged) == len(hand)
    np.testing.assert_allclose(merged["LPR"], merged["LPR_hand"], rtol=0, atol=1e-10)


def test_x1_analysis_gives_results_rows_with_the_known_d(x1_run):
    study, _, hand, _, out = x1_run
    s = out.stats
    assert list(s.columns) == RESULT_COLUMNS
    validate_results(s)
    assert set(s["study"]) == {"X1"}
    y = hand["LPR"] / SIGMA
    male = hand["MASK"] == "Male"
    # balanced design: the LMM's d is the plain mean difference (numpy), near the truth 0.8
    d = _row(s, "d", "all")
    assert d["value"] == pytest.approx(y[male].mean() - y[~male].mean(), abs=1e-9)
    assert d["value"] == pytest.approx(np.mean([v / SIGMA for v in EFFECT.values()]), abs=0.1)
    assert d["p"] < 1e-6 and _row(s, "t", "all")["value"] > 0
    for j, (a, c) in enumerate(zip(AGENTIC, COMMUNAL), start=1):
        sel = hand["A_word"] == f"{a} - {c}"
        r = _row(s, "d", f"pair{j}")
        assert r["value"] == pytest.approx(y[sel & male].mean() - y[sel & ~male].mean(), abs=1e-9)
    # N = 6 models x 2 genders x 5 pairs x 2 templates; level-1 df = 120 - 6 - 9 (nlme)
    f = _row(s, "F", "gender")
    assert (f["n"], f["df"], f["df2"]) == (120, 1, 105)
    assert _row(s, "F", "gender_x_pair")["df"] == 4
    assert {"R2m", "R2c"} <= set(s["statistic"])
    assert set(s.loc[(s.statistic == "d") & (s.model != "all"), "model"]) == {m.replace("/", "__") for m in MODELS}


def test_x1_reliability_and_analysis_stage(x1_run):
    """What the workflow's reliability and analysis rules compute for X1 (no Snakemake)."""
    from fmat.stages import reliability_tables
    from fmat_replication.analysis import analysis_stage

    study, scores, _, lpr, _ = x1_run
    details, rel = reliability_tables(study, scores, lpr, sid="X1")
    validate_results(rel)
    assert set(rel.loc[rel.statistic == "alpha", "condition"]) == {"Agentic", "Communal"}
    assert {"ICC_average", "ICC_single"} <= set(rel["statistic"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats, figures, status = analysis_stage(study, scores, lpr, rel, {}, sid="X1")
    assert status["implemented"] and status["analysis"] == "stereotype_pairs"
    assert {"alpha", "ICC_average", "F", "d", "t", "R2m"} <= set(stats["statistic"])
    assert {"effects", "anova", "cells"} <= set(figures)


# ----------------------------------------------------------------------------- a new analysis
def _doc_analysis_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    code = [b for b in blocks if '@register("d_by_query"' in b]
    assert len(code) == 1, "the page shows one complete d_by_query example"
    return code[0]


@pytest.fixture
def doc_analysis(monkeypatch):
    """Register the page's example under its name in a throw-away copy of the registry."""
    analyses.available()  # import the shipped analyses first
    monkeypatch.setattr(analyses, "_REGISTRY", dict(analyses._REGISTRY))
    analyses._REGISTRY.pop("d_by_query", None)
    namespace: dict = {"__name__": "doc_example_d_by_query"}
    exec(compile(_doc_analysis_code(), str(DOC), "exec"), namespace)
    assert "d_by_query" in analyses.available()
    return namespace["d_by_query"]


def test_doc_example_analysis_runs_on_x1(doc_analysis, x1_run):
    study, scores, hand, lpr, _ = x1_run
    out = run_analysis(
        "d_by_query",
        AnalysisInput(study=study, scores=scores, lpr=lpr),
        {"sigma": SIGMA, "mask_contrast": ["Male", "Female"], "labels": ["Q1", "Q2"]},
    )
    s = out.stats
    assert list(s.columns) == RESULT_COLUMNS
    for label, tmpl in zip(["Q1", "Q2"], TEMPLATES):
        h = hand[hand["query"] == tmpl]
        cell = h.assign(y=h["LPR"] / SIGMA).groupby(["model", "MASK"])["y"].mean().unstack("MASK")
        d_m = (cell["Male"] - cell["Female"]).reindex(MODELS)
        ref = sps.ttest_1samp(d_m.to_numpy(), 0.0)
        ci = ref.confidence_interval(0.95)
        d = _row(s, "d", label)
        assert d["value"] == pytest.approx(d_m.mean(), abs=1e-9)
        assert d["value"] == pytest.approx(EFFECT[tmpl] / SIGMA, abs=0.15)  # 1.2 and 0.4
        assert (d["df"], d["n"]) == (len(MODELS) - 1, len(MODELS))
        assert d["p"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert (d["ci_low"], d["ci_high"]) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
        assert _row(s, "t", label)["value"] == pytest.approx(ref.statistic, rel=1e-9)
        for m in MODELS:
            assert _row(s, "d", label, m.replace("/", "__"))["value"] == pytest.approx(d_m[m], abs=1e-9)
    assert _row(s, "d", "Q1")["value"] > _row(s, "d", "Q2")["value"]  # descriptive > prescriptive


def test_doc_example_analysis_rejects_unknown_groups(doc_analysis, x1_run):
    from fmat.errors import InputError

    study, scores, _, lpr, _ = x1_run
    with pytest.raises(InputError, match="mask_contrast"):
        run_analysis("d_by_query", AnalysisInput(study=study, scores=scores, lpr=lpr), {"mask_contrast": ["Men", "Women"]})
