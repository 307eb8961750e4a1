"""Issue 54 (part A): no unexpected error after scoring for a study file that passes --check, and
every check before any model loads: the design can feed its analysis (the LPR table's columns,
relations in the MASK groups' order, two different groups in every contrast), a world's
expectations name rows the analysis will produce, and a run whose analysis did not run exits 3."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from fmat import analyses, cli, plant
from fmat.errors import EXIT_NO_ANALYSIS, InputError
from fmat.stages import lpr_table, reliability_tables
from fmat.study import load_study, validate_study_file

REPO = Path(__file__).resolve().parents[1]

ATTITUDE = """id: V
title: Vegetarians and hunters
queries:
  - query: "I [MASK] {TARGET}."
    MASK: &mask {Positive: [adore, notice], Negative: [loathe, ignore]}
    TARGET: &target {Vegetarian: [vegetarians, vegans, herbivores], Hunter: [hunters, trappers, poachers]}
  - query: "Most people [MASK] {TARGET}."
    MASK: *mask
    TARGET: *target
lpr: {mask_pair: true, target_pair: false}
reliability: {item: T_word, by: [M_word, query, TARGET]}
analysis:
  name: attitude_weat
  options:
    target_contrast: [Vegetarian, Hunter]
    relations: {like-dislike: [adore, loathe], notice-ignore: [notice, ignore]}
    perceivers: {personal: "I [MASK] {TARGET}.", societal: "Most people [MASK] {TARGET}."}
"""


def _write(tmp_path, text, name="V"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.replace("id: V\n", f"id: {name}\n"), encoding="utf-8")
    return path


def _stage(study, scores):
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid=study.id)
    return analyses.analysis_stage(study, scores, lpr, rel, {}, sid=study.id)


def test_words_a_model_cannot_score_drop_their_relation_with_a_note(tmp_path):
    """`adore` and `loathe` out of vocabulary (prob NaN, as fmat.run with na_out) left the
    like-dislike cells empty: IndexError in attitude.contrasts after every model was scored.
    Now that relation is left out with a note naming the words; the other one is reported."""
    study = load_study(_write(tmp_path, ATTITUDE))
    scores = plant.planted_scores(study, plant.Plant(study="V"), ["m1", "m2", "m3"])
    oov = scores["M_word"].astype(str).isin(["adore", "loathe"])
    scores.loc[oov, ["prob", "logp"]] = np.nan
    scores.loc[oov, "oov"] = True
    stats, _, status = _stage(study, scores)
    conds = set(stats.loc[stats["statistic"] == "d", "condition"])
    assert conds and all(c.startswith("notice-ignore:") for c in conds)
    note = " ".join(status["notes"])
    assert "'like-dislike' left out" in note and "adore, loathe" in note and "out of vocabulary" in note


def test_every_relation_out_of_vocabulary_is_an_input_error_naming_the_option(tmp_path):
    study = load_study(_write(tmp_path, ATTITUDE))
    scores = plant.planted_scores(study, plant.Plant(study="V"), ["m1", "m2", "m3"])
    scores.loc[:, ["prob", "logp"]] = np.nan
    data = analyses.AnalysisInput(study=study, scores=scores, lpr=lpr_table(study, scores))
    with pytest.raises(InputError) as err:
        analyses.run_analysis("attitude_weat", data, study.analysis["options"])
    assert err.value.where == "analysis.options.relations" and "one token" in err.value.fix


@pytest.mark.parametrize(
    "old, new, where",
    [
        (
            "target_contrast: [Vegetarian, Hunter]",
            "target_contrast: [Vegetarian, Vegetarian]",
            "analysis.options.target_contrast",
        ),
        (
            "like-dislike: [adore, loathe]",
            "like-dislike: [adore, adore]",
            "analysis.options.relations.like-dislike",
        ),
    ],
)
def test_a_contrast_of_a_group_with_itself_is_refused_at_check(tmp_path, old, new, where):
    """[Vegetarian, Vegetarian] passed --check, then ZeroDivisionError in LmmFit.contrast (SE 0)."""
    path = _write(tmp_path, ATTITUDE.replace(old, new))
    problems = validate_study_file(path)
    assert len(problems) == 1 and f"{path}: {where}" in problems[0]
    assert "itself" in problems[0] and "fix: name two different" in problems[0]


def test_a_stereotype_or_trend_contrast_of_one_thing_twice_is_refused(tmp_path):
    s = _write(
        tmp_path,
        'id: V\ntitle: t\nqueries:\n  - query: "The [MASK] is {ATTRIB}."\n'
        "    MASK: {Male: [man], Female: [woman]}\n    ATTRIB: {Warm: [kind, warm], Cold: [rude, cold]}\n"
        "lpr: {mask_pair: false, attrib_pair: true}\n"
        "analysis: {name: stereotype_pairs, options: {mask_contrast: [Male, Male]}}\n",
    )
    assert "analysis.options.mask_contrast" in validate_study_file(s)[0]
    four = (REPO / "config" / "studies" / "4A.yaml").read_text(encoding="utf-8")
    assert "century_contrasts" in four
    bad = re.sub(r"century_contrasts: \[\[(\d+), (\d+)\]", r"century_contrasts: [[\1, \1]", four, count=1)
    assert bad != four
    problems = validate_study_file(_write(tmp_path, bad, name="4A"))
    assert problems and "century_contrasts[0]" in problems[0] and "itself" in problems[0]


def test_a_reversed_relation_is_caught_before_scoring(tmp_path):
    """'dislike - like' is not an M_word of the LPR table: found only after scoring (exit 0)."""
    path = _write(tmp_path, ATTITUDE.replace("[adore, loathe]", "[loathe, adore]"))
    with pytest.raises(InputError) as err:
        load_study(path)
    assert err.value.where == f"{path}: analysis.options.relations.like-dislike"
    assert "reversed (did you mean [adore, loathe]?)" in err.value.message and "MASK groups' order" in err.value.fix


def test_a_wrong_family_names_the_families_that_fit(tmp_path):
    """stereotype_pairs on an attitude design: "the LPR table lacks columns ['ATTRIB', 'A_word']"
    after scoring, exit 0. Now at load time, naming the families that fit."""
    text = ATTITUDE.split("analysis:")[0] + "analysis: {name: stereotype_pairs, options: {mask_contrast: [Positive, Negative]}}\n"
    with pytest.raises(InputError) as err:
        load_study(_write(tmp_path, text))
    assert err.value.where.endswith("analysis.name") and "['ATTRIB', 'A_word']" in err.value.message
    assert "attitude_weat" in err.value.fix and "stereotype_pairs" not in err.value.fix


def test_the_design_lpr_table_is_the_real_one(tmp_path):
    """design_lpr's columns and labels are those of the LPR table of real scores."""
    study = load_study(_write(tmp_path, ATTITUDE))
    real = lpr_table(study, plant.planted_scores(study, plant.Plant(study="V"), ["m1"]))
    stand_in = analyses.design_lpr(study.queries, study.lpr)
    assert list(stand_in.columns) == list(real.columns)
    for c in ("query", "M_word", "TARGET", "T_word"):
        assert set(stand_in[c].astype(str)) == set(real[c].astype(str))


@pytest.mark.parametrize("sid", ["2A", "3A", "3B", "4A", "X1"])
def test_every_shipped_design_feeds_its_analysis(sid):
    assert validate_study_file(REPO / "config" / "studies" / f"{sid}.yaml") == []


@pytest.mark.parametrize(
    "bad, where, hint",
    [
        ({"statistic": "cohens_d", "condition": "like-dislike:personal", "sign": 1}, "statistic", "did you mean 'd'?"),
        (
            {"statistic": "d", "condition": "like-dislike:persnal", "sign": 1},
            "condition",
            "did you mean 'like-dislike:personal'?",
        ),
        ({"statistic": "d", "condition": "like-dislike:personal", "model": "bert", "sign": 1}, "model", "use one of all"),
    ],
)
def test_a_worlds_expectations_are_checked_before_training(bad, where, hint):
    """A wrong statistic name or a condition typo showed as "no such row" after 261 s of training."""
    world = plant.load_world(REPO / "config" / "world.yaml")
    study = load_study(REPO / "config" / "studies" / "2A.yaml")
    good = world.plant("2A")
    plant.check_expected_rows(good, study, ["pilot-bert-uncased", "pilot-roberta"], where="w.yaml")  # the shipped ones hold
    with pytest.raises(InputError) as err:
        plant.check_expected_rows(dataclasses.replace(good, expect=[bad]), study, ["pilot-a", "pilot-b"], where="w.yaml")
    assert err.value.where == f"w.yaml: studies.2A.expect[0].{where}"
    assert hint in str(err.value)


def test_fmat_pilot_refuses_a_condition_typo_before_training(tmp_path, capsys):
    """The pilot checks the world's expectations before it trains (no models folder is made)."""
    world = (REPO / "config" / "world.yaml").read_text(encoding="utf-8")
    assert '"like-dislike:personal", sign: 1}' in world
    bad = tmp_path / "world.yaml"
    bad.write_text(world.replace('"like-dislike:personal", sign: 1}', '"like-dislike:persnal", sign: 1}', 1), encoding="utf-8")
    out = tmp_path / "pilot"
    code = cli.main(["pilot", str(REPO / "config" / "studies" / "2A.yaml"), "--world", str(bad), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "studies.2A.expect[0].condition" in err and "did you mean 'like-dislike:personal'?" in err
    assert not (out / "models").exists()


def test_fmat_study_exits_3_when_its_analysis_did_not_run(tmp_path, capsys):
    """A run whose analysis did not run (one model for a model-level analysis) exited 0 like a
    successful one; now 3, said on the last line."""
    from fmat import tiny

    study = tmp_path / "S.yaml"
    study.write_text(
        'id: S\ntitle: t\nqueries:\n  - query: "The [MASK] is {ATTRIB}."\n'
        "    MASK: {Male: [man], Female: [woman]}\n    ATTRIB: {Warm: [kind, warm], Cold: [rude, cold]}\n"
        "lpr: {mask_pair: false, attrib_pair: true}\n"
        "analysis: {name: stereotype_pairs, options: {mask_contrast: [Male, Female]}}\n",
        encoding="utf-8",
    )
    model = tiny.build_tiny_model(tmp_path / "m", "bert-uncased", ["man", "woman", "kind", "warm", "rude", "cold"])
    code = cli.main(["study", str(study), "-m", str(model), "-o", str(tmp_path / "o"), "--no-progress", "--threads", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_NO_ANALYSIS == 3
    assert err[-1].startswith("fmat study: the analysis stereotype_pairs did not run (exit 3)")
    assert (tmp_path / "o" / "stats.parquet").is_file()


_BLOCK_REPLICATION = """
import importlib.abc, sys

class NoReplication(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "fmat_replication" or name.startswith("fmat_replication."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: the library install has no replication)")
        return None

sys.meta_path.insert(0, NoReplication())
from fmat.cli import main
code = main(sys.argv[1:])
assert not [m for m in sys.modules if m.startswith("fmat_replication")]
sys.exit(code)
"""


def test_fmat_power_needs_nothing_of_the_replication(tmp_path):
    """After the README's library install (no fmat_replication), `fmat power` failed: "no analysis
    package is installed". Here it runs with fmat_replication unimportable."""
    import subprocess
    import sys

    world = tmp_path / "w.yaml"
    world.write_text(
        "studies:\n  3D:\n    effects:\n      - {contrast: {MASK: [Black, Asian], ATTRIB: [Masculine, Feminine]}, d: 1.0}\n",
        encoding="utf-8",
    )
    args = ["power", str(REPO / "config" / "studies" / "3D.yaml"), "--world", str(world), "-o", str(tmp_path / "o")]
    args += ["--models", "3", "--worlds", "1", "--jobs", "1"]
    run = subprocess.run(
        [sys.executable, "-c", _BLOCK_REPLICATION, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert (tmp_path / "o" / "power.csv").is_file()
