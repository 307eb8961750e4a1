"""fmat.oracle: the exact value each statistic takes in a planted world, computed
from the study file's raw words by plain arithmetic, against the workflow's own stages (query
design, LPR stage, analysis stage) run on the planted scores. Seconds, no training."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from oracle_check import DEMO_MODELS, MODELS, STUDIES, criteria_for, demo_plant, problems, workflow_vs_oracle

import fmat.oracle as O
from fmat import analyses
from fmat import plant as P
from fmat.oracle import oracle, raw_queries, read_study_file
from fmat.results import KEY
from fmat.study import load_study
from fmat_replication.recovery import recovery_stage, study_recovery

REPO = Path(__file__).resolve().parents[1]
ALL = sorted(p.stem for p in STUDIES.glob("*.yaml"))
NO_VARIATION = {"words": 0.0, "items": 0.0, "models": 0.0, "model_items": 0.0}
#: what ``import fmat.oracle`` must not load: the code it checks, and the scoring
CHECKED = (
    "fmat.analyses",
    "fmat_replication",
    "fmat.lpr",
    "fmat.stages",
    "fmat.design",
    "fmat.study",
    "fmat.lpbs",
    "fmat.scoring",
    "torch",
    "transformers",
)


def loaded_by(statement: str) -> list[str]:
    """The modules of :data:`CHECKED` in ``sys.modules`` after ``statement`` ran in a fresh
    interpreter (what is loaded, through any chain of imports, not the import lines)."""
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout.split()
    return [m for m in out if any(m == c or m.startswith(c + ".") for c in CHECKED)]


def test_the_oracle_loads_none_of_the_code_it_checks():
    """Importing the oracle, finding every family's file and computing a study's values loads no
    analysis, design, LPR, scoring or replication module."""
    bad = loaded_by(
        "import fmat.oracle\nfrom fmat.world import Plant\nassert fmat.oracle.available()\n"
        "assert len(fmat.oracle.oracle('config/studies/3A.yaml', Plant('3A'), ['m1']))"
    )
    assert not bad, f"import fmat.oracle loads {bad}: the oracle must compute without the code it checks"


def test_the_load_check_can_fail():
    assert "fmat.analyses" in loaded_by("import fmat.plant")


def test_every_study_file_has_an_oracle_unless_its_scores_are_not_planted():
    """Every study the repository carries gets exact values; only LPBS (X2: its priors are not
    part of a world) has none."""
    empty = [sid for sid in ALL if not len(oracle(STUDIES / f"{sid}.yaml", demo_plant(sid), ["m1", "m2"], criteria_for(sid)))]
    assert empty == ["X2"]


@pytest.mark.parametrize("sid", [s for s in ALL if s != "X2"])
def test_the_workflow_computes_exactly_what_the_world_implies(sid, tmp_path):
    """Planted scores (item and model variation included) -> the workflow's query design, LPR
    and analysis stages -> every d, b, beta, century contrast and r the oracle knows equals
    it to 1e-6, and every t has the sign of its d (or b)."""
    both, stats = workflow_vs_oracle(sid, tmp_path)
    assert len(both) >= 5, f"{sid}: the oracle knows only {len(both)} statistics"
    bad = problems(both, stats)
    assert not bad, f"study {sid}: " + "; ".join(bad[:8])


@pytest.mark.parametrize(
    "sid, slot, words",
    [
        ("3A", "MASK", {"fathers": "Female", "mothers": "Male"}),  # the wording pair swapped
        ("2A", "TARGET", {"rose": "Insects", "wasp": "Flowers"}),  # two targets in each other's group
        ("4A", "TARGET", {"men": "Female", "women": "Male"}),
        ("3B", "ATTRIB", {}),  # filled in below: one arts phrase labelled math
    ],
)
def test_a_mislabelled_group_in_the_query_design_is_caught(sid, slot, words, tmp_path):
    col = {"MASK": "M_word", "TARGET": "T_word", "ATTRIB": "A_word"}[slot]

    def mislabel(q: pd.DataFrame) -> pd.DataFrame:
        mapping = words or {q.loc[q["ATTRIB"] == "ArtsInterest", "A_word"].iloc[0]: "MathInterest"}
        labels = q[slot].astype(str)
        new = [mapping.get(str(w), g) for w, g in zip(q[col], labels)]
        q[slot] = pd.Categorical(new, categories=q[slot].cat.categories) if hasattr(q[slot], "cat") else new
        return q

    assert not problems(*workflow_vs_oracle(sid, tmp_path)), "the unmutated design must pass"
    both, stats = workflow_vs_oracle(sid, tmp_path, mutate_queries=mislabel)
    assert problems(both, stats), f"{sid}: a mislabelled {slot} group went unnoticed"


@pytest.mark.parametrize(
    "sid, statistic, condition, nominal",
    [
        ("3A", "d", "all", 1.0),
        ("3D", "d", "all", 0.4),
        ("3B", "d", "interest", 0.4),
        ("3B", "d", "talent", 0.35),
        ("N0", "d", "all", 0.0),
        ("4A", "b", "year", -0.6),
        ("4C", "b", "year", 0.3),
        ("4D", "d", "2000vs1900", 0.45),
        ("X1", "d", "pair3", 0.8),
    ],
)
def test_without_variation_the_realised_value_is_the_nominal_plant(sid, statistic, condition, nominal):
    """Where the world holds nothing but the plant (no word, item or model variation), the oracle
    gives the planted size exactly; with variation it does not (the next test)."""
    plant = demo_plant(sid, NO_VARIATION)
    t = oracle(STUDIES / f"{sid}.yaml", plant, ["m1", "m2"]).set_index(["statistic", "condition", "model"])["value"]
    assert t[(statistic, condition, "all")] == pytest.approx(nominal, abs=1e-9)
    varied = oracle(STUDIES / f"{sid}.yaml", demo_plant(sid, {**NO_VARIATION, "items": 0.3}), ["m1", "m2"])
    v = varied.set_index(["statistic", "condition", "model"])["value"][(statistic, condition, "all")]
    assert abs(v - nominal) > 1e-4, "item variation must move the realised value off the nominal one"


def test_a_criterion_plant_without_variation_correlates_perfectly():
    crit = criteria_for("1A")
    t = oracle(STUDIES / "1A.yaml", demo_plant("1A", NO_VARIATION), ["m1", "m2"], crit)
    r = t.set_index(["statistic", "condition", "model"])["value"]
    # 1A plants lpr * (pct_male - 50) / 50; z-scores within model x template keep r = 1
    assert r[("r", "fmat~pct_male", "all")] == pytest.approx(1.0, abs=1e-9)


def test_raw_rows_follow_the_study_file():
    data = read_study_file(STUDIES / "3A.yaml")
    q = raw_queries(data).queries
    assert len(q) == 4 * 18
    assert set(q.loc[q["M_word"] == "fathers", "MASK"]) == {"Male"}
    # pair j is the j-th phrase of each ATTRIB group, in the file's order
    first = q[q["A_pos"] == 0]
    assert set(first["A_word"]) == {"prioritize career goals", "prioritize family needs"}
    years = raw_queries(read_study_file(STUDIES / "4A.yaml")).queries
    assert sorted(set(years["M_word"].astype(int)))[:2] == [1800, 1801] and len(years) == 3 * 220 * 2


def test_the_oracle_states_each_formula_in_its_notes():
    """Each family's oracle file states the formulas of every analysis it registers."""
    assert {"stereotype_pairs", "stereotype_domains", "attitude_weat", "change_over_time", "factual_wefat"} <= set(O.available())
    for name in O.available():
        doc = sys.modules[O.family(name).__module__].__doc__
        assert f"``{name}``" in doc, f"the oracle's Notes do not state the formulas of {name}"


def test_every_oracle_is_the_oracle_of_a_registered_analysis():
    assert set(O.available()) <= set(analyses.available())


@pytest.mark.parametrize("sid", [s for s in ALL if s != "X2"])
def test_the_planted_scores_recover_every_expectation_of_the_demo_world(sid, tmp_path):
    """The demo world's expectations (config/world.yaml) judged by the recovery stage's rule
    against the realised values, on the planted scores themselves (no training): each one holds.
    So an expectation that this world does not imply (a wrong value, sign or absent) goes red
    here, in seconds, and not only after the demo's training."""
    plant = P.load_world(REPO / "config" / "world.yaml").plant(sid)
    if plant is None:
        pytest.skip(f"the demo world names no study {sid}")
    both, stats = workflow_vs_oracle(sid, tmp_path, plant=plant, models=DEMO_MODELS)
    crossed = None  # the concept-level rows (the analysis stage's figures/crossed.parquet) where an expectation needs them
    if any(P.expectation_level(e) == "concept" for e in plant.expect):
        study = load_study(STUDIES / f"{sid}.yaml", criteria_dir=tmp_path)
        crossed = P.design_rows(study, plant, DEMO_MODELS, criteria_for(sid), level="concept")
    world = REPO / "config" / "world.yaml"
    rec = study_recovery(world, stats, sid, STUDIES / f"{sid}.yaml", DEMO_MODELS, criteria_for(sid), crossed)
    bad = rec[~rec["verdict"].isin(P.PASSED)]
    assert not len(bad), bad[["statistic", "condition", "model", "planted", "realised", "value", "reason"]].to_string()
    # a concept-level control is never called recovered: nothing was planted for the concept
    control = (rec["level"] == "concept") & rec["planted"].str.startswith("0")
    assert (rec.loc[control, "verdict"] == P.NOTHING_FOUND).all() and (rec.loc[~control, "verdict"] == "recovered").all()
    judged = rec[rec["realised"].notna() & (rec["level"] == "words")]
    # every judged row with a closed form has the oracle's value as ours (the planted scores are exact)
    assert np.allclose(judged["value"][judged["statistic"] != "t"], judged["realised"][judged["statistic"] != "t"], atol=1e-6)


def test_the_recovery_stage_judges_against_the_realised_values(tmp_path):
    """Rule recovery_study's call (scripts/recovery.py): stats, world, study file, the models'
    names and the criterion tables in -> rows with the realised value, our CI and verdicts."""
    both, stats = workflow_vs_oracle(
        "1A", tmp_path, plant=P.load_world(REPO / "config" / "world.yaml").plant("1A"), models=DEMO_MODELS
    )
    stats.to_parquet(tmp_path / "stats.parquet")
    crit = sorted(str(p) for p in tmp_path.glob("*.parquet") if p.name != "stats.parquet")
    assert crit, "workflow_vs_oracle writes the criterion tables it made"
    recovery_stage(
        REPO / "config" / "world.yaml",
        tmp_path / "stats.parquet",
        sid="1A",
        out=tmp_path / "rec.parquet",
        study_path=STUDIES / "1A.yaml",
        models=DEMO_MODELS,
        criteria_paths=crit,
    )
    rec = pd.read_parquet(tmp_path / "rec.parquet")
    r = rec[(rec["statistic"] == "r") & (rec["condition"] == "fmat~pct_male")].iloc[0]
    truth = both.set_index(["statistic", "condition", "model"])["value"][("r", "fmat~pct_male", "all")]
    assert r["realised"] == pytest.approx(truth, abs=1e-9) and r["ci_low"] < r["realised"] < r["ci_high"]
    assert set(rec["verdict"]) == {"recovered"}


def test_the_recovery_stage_judges_the_concept_level_by_the_analysis_figure_table(tmp_path):
    """Issue 52, rule recovery_study: 2A's expectations at level: concept are judged by the
    analysis stage's figures/crossed.parquet (the concept-level test) against the planted
    effect; the concept-null control (notice-ignore) is "nothing found for the concept"."""
    plant = P.load_world(REPO / "config" / "world.yaml").plant("2A")
    _, stats = workflow_vs_oracle("2A", tmp_path, plant=plant, models=DEMO_MODELS)
    stats.to_parquet(tmp_path / "stats.parquet")
    figures = tmp_path / "figures"
    figures.mkdir()
    crossed = P.design_rows(load_study(STUDIES / "2A.yaml"), plant, DEMO_MODELS, level="concept")
    crossed.to_parquet(figures / "crossed.parquet")
    args = dict(sid="2A", study_path=STUDIES / "2A.yaml", models=DEMO_MODELS)
    recovery_stage(
        REPO / "config" / "world.yaml", tmp_path / "stats.parquet", out=tmp_path / "r.parquet", figures=figures, **args
    )
    rec = pd.read_parquet(tmp_path / "r.parquet")
    concept = rec[rec["level"] == "concept"].set_index("condition")
    assert (
        concept.loc["notice-ignore:average", "verdict"] == P.NOTHING_FOUND
        and concept.loc["notice-ignore:average", "realised"] == 0
    )
    assert concept.loc["like-dislike:average", "verdict"] == "recovered"
    assert (concept["target"] == P.TARGETS["concept"]).all() and (
        rec.loc[rec["level"] == "words", "verdict"] == "recovered"
    ).all()
    # without the figure table (an analysis without inference: crossed) the concept is not judged as found
    recovery_stage(REPO / "config" / "world.yaml", tmp_path / "stats.parquet", out=tmp_path / "n.parquet", **args)
    none = pd.read_parquet(tmp_path / "n.parquet")
    assert (none.loc[none["level"] == "concept", "verdict"] == "not recovered").all()


def test_a_null_holds_exactly_zero_where_items_and_model_items_do_not_vary():
    """N0 plants nothing: with word and model variation but no item or model-item variation its
    realised d is 0 exactly (word frequencies cancel in the attribute-paired LPR); with item
    variation the world holds a chance association, which the null's CI must cover instead."""
    nothing = {"words": 0.5, "items": 0.0, "models": 0.1, "model_items": 0.0}
    t = oracle(STUDIES / "N0.yaml", demo_plant("N0", nothing), DEMO_MODELS)
    assert np.abs(t.loc[t["statistic"] == "d", "value"]).max() < 1e-12
    chance = oracle(STUDIES / "N0.yaml", demo_plant("N0", {**nothing, "items": 0.3}), DEMO_MODELS)
    assert np.abs(chance.loc[chance["statistic"] == "d", "value"]).max() > 1e-3


@pytest.mark.parametrize("sid", ["N0", "3B", "4C"])
def test_a_study_file_that_leaves_contrasts_and_sigma_to_their_defaults(sid, tmp_path):
    """Any valid study file: without sigma (the analyses' default, sqrt 2) and without the
    contrasts (the first two groups), the oracle still gives what the workflow computes."""
    data = yaml.safe_load((STUDIES / f"{sid}.yaml").read_text(encoding="utf-8"))
    for key in ("sigma", "mask_contrast", "attrib_contrast"):
        data["analysis"]["options"].pop(key, None)
    folder = tmp_path / "studies"
    folder.mkdir()
    path = folder / f"{sid}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    both, stats = workflow_vs_oracle(sid, tmp_path, path=path)
    assert not problems(both, stats)
    # sqrt 2, not the 1.414 the repository's study files state: the oracle follows the file
    with_sigma = oracle(STUDIES / f"{sid}.yaml", demo_plant(sid), MODELS, criteria_for(sid))
    assert not np.allclose(both["value"].to_numpy(), with_sigma.set_index(KEY).loc[both.set_index(KEY).index, "value"].to_numpy())


def test_a_pooled_sd_d_is_realised_on_the_scale_of_the_scores_it_is_run_on():
    """fmat pilot judges 2A's pooled-SD d against the oracle: with the scores given, the oracle's
    realised value is the planted LPRs in units of the SD of those scores' LPRs, the definition
    of ``fmat.calibration.on_the_sample_scale`` (docs/calibration.md, "Why 2A and 4A
    missed"), computed without the analysis' code; without scores (or on the planted scores
    themselves) it is the planted-SD d."""
    import warnings

    from fmat import calibration as cal
    from fmat.study import load_study

    path = REPO / "config" / "studies" / "2A.yaml"
    study = load_study(path)
    w = cal.World(study, P.load_world(REPO / "config" / "world.yaml").plant("2A"), n_models=4)
    exact, sampled = cal.perfect_learner_scores(w, 1)
    seeded = cal.with_seed(w.plant, 1)
    names = list(dict.fromkeys(exact["model"].astype(str)))
    planted_sd = oracle(path, seeded, names).set_index("condition")["value"]
    on_exact = oracle(path, seeded, names, scores=exact).set_index("condition")["value"]
    realised = oracle(path, seeded, names, scores=sampled).set_index("condition")["value"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        definition = cal.on_the_sample_scale(study, exact, sampled).set_index("condition")["value"]
    assert len(definition) and set(definition.index) <= set(realised.index)
    assert np.allclose(realised[definition.index], definition, rtol=1e-6, atol=1e-9), (realised, definition)
    assert np.allclose(on_exact, planted_sd)
    top = "like-dislike:personal"
    assert abs(realised[top]) < 0.9 * abs(planted_sd[top])  # the sample's SD is larger: attenuated
    # no scores: the planted SD, as before
    assert oracle(path, seeded, names, scores=None).equals(oracle(path, seeded, names))
