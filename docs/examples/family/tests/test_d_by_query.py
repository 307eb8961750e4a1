"""tests/test_d_by_query.py: the example family (fmat/analyses/d_by_query.py) on its example
study (config/studies/X1b.yaml), against its oracle (fmat/oracle/d_by_query.py) and scipy.

A world plants men - women, agentic - communal in "are" (d = 1.2) and less in "should be"
(0.4), with word, item and model variation; the analysis run on the world's own probabilities
must give the oracle's d of each template and model to the last digit, and its t, p and CI
must be scipy's one-sample t test of the oracle's per-model d's."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as sps

from fmat import analyses, oracle, plant
from fmat.errors import InputError
from fmat.stages import lpr_table
from fmat.study import load_study

STUDY = Path(__file__).resolve().parents[1] / "config" / "studies" / "X1b.yaml"
MODELS = [f"org/model{i}" for i in range(5)]
TEMPLATES = {"Q1": "Most [MASK] are {ATTRIB}.", "Q2": "Most [MASK] should be {ATTRIB}."}


def world() -> plant.Plant:
    contrast = {"MASK": ("Male", "Female"), "ATTRIB": ("Agentic", "Communal")}
    effects = [
        plant.Effect(contrast=contrast, lpr=d * 1.414, where={"query": [TEMPLATES[q]]}) for q, d in (("Q1", 1.2), ("Q2", 0.4))
    ]
    return plant.Plant(study="X1b", effects=effects, seed=7)


def test_the_family_and_its_oracle_are_registered():
    assert "d_by_query" in analyses.available() and "d_by_query" in oracle.available()
    assert analyses.item_columns("d_by_query") == ["query", "M_word"]


def test_the_analysis_computes_what_the_world_implies():
    study, p = load_study(STUDY), world()
    scores = plant.planted_scores(study, p, MODELS)
    lpr = lpr_table(study, scores)
    out = analyses.run_analysis("d_by_query", analyses.AnalysisInput(study, scores, lpr), study.analysis["options"])
    ours = out.stats.set_index(["statistic", "condition", "model"])
    truth = oracle.oracle(STUDY, p, MODELS)
    assert len(truth) == 2 * (1 + len(MODELS))
    for r in truth.itertuples():
        assert ours.loc[(r.statistic, r.condition, r.model), "value"] == pytest.approx(r.value, abs=1e-12)
    for q in TEMPLATES:
        per_model = truth[(truth["condition"] == q) & (truth["model"] != "all")]["value"].to_numpy()
        ref = sps.ttest_1samp(per_model, 0.0)
        d = ours.loc[("d", q, "all")]
        assert d["df"] == len(MODELS) - 1 == truth.set_index(["condition", "model"]).loc[(q, "all"), "df"]
        assert d["p"] == pytest.approx(ref.pvalue, rel=1e-9)
        ci = ref.confidence_interval(0.95)
        assert (d["ci_low"], d["ci_high"]) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
        assert ours.loc[("t", q, "all"), "value"] == pytest.approx(ref.statistic, rel=1e-9)
    assert ours.loc[("d", "Q1", "all"), "value"] > ours.loc[("d", "Q2", "all"), "value"] > 0  # as planted


def test_a_group_the_study_does_not_have_is_named_before_any_model_loads(tmp_path):
    bad = tmp_path / "X1b.yaml"
    bad.write_text(STUDY.read_text(encoding="utf-8").replace("mask_contrast: [Male, Female]", "mask_contrast: [Men, Women]"))
    with pytest.raises(InputError, match="mask_contrast"):
        load_study(bad)
