"""fmat.plant: world files, the planted probabilities (checked by hand arithmetic through
fmat.lpr.summary), the training sentences, the recovery rule, and a tiny model that learns a
planted association (fmat.tiny.train_masked_lm)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import jsonschema
import numpy as np
import pandas as pd
import pytest

import fmat
from fmat import plant as P
from fmat.errors import InputError
from fmat.lpr import summary

NO_VARIATION = {"words": 0.0, "items": 0.0, "models": 0.0, "model_items": 0.0}


def study(q: pd.DataFrame, sid: str = "S1") -> SimpleNamespace:
    """A study as fmat.plant reads it: its query table and (no) item keys."""
    return SimpleNamespace(id=sid, queries=q, items=pd.DataFrame(columns=["slot", "word", "item"]))


def world(plants: dict, **top) -> P.World:
    return P.world_from_mapping({"studies": plants, "variation": NO_VARIATION, **top})


def test_one_slot_contrast_plants_exactly_its_lpr():
    q = fmat.query(
        "The [MASK] works as a {TARGET}.",
        MASK={"Male": ["man"], "Female": ["woman"]},
        TARGET={"Occ": ["nurse", "engineer", "baker"]},
    )
    w = world({"S1": {"effects": [{"contrast": {"MASK": ["Male", "Female"]}, "lpr": 0.8}]}})
    scores = P.planted_scores(study(q), w.plant("S1"), ["m1"])
    lpr = summary(scores, target_pair=False)
    assert np.allclose(lpr["LPR"], 0.8, atol=1e-12)
    # two options: P(man) = 1 / (1 + e^-0.8)
    assert np.allclose(scores.loc[scores["M_word"] == "man", "prob"], 1 / (1 + math.exp(-0.8)))


def test_d_is_lpr_over_sigma_and_two_slots_plant_the_double_difference():
    q = fmat.query(
        "Most [MASK] {ATTRIB}.",
        MASK={"Male": ["men"], "Female": ["women"]},
        ATTRIB={"Career": ["lead teams", "plan work"], "Family": ["raise children", "cook meals"]},
    )
    w = world(
        {"S1": {"effects": [{"contrast": {"MASK": ["Male", "Female"], "ATTRIB": ["Career", "Family"]}, "d": 1.0}]}}, sigma=1.414
    )
    lpr = summary(P.planted_scores(study(q), w.plant("S1"), ["m1"]), mask_pair=False, attrib_pair=True)
    by = lpr.groupby("MASK", observed=True)["LPR"].mean()
    assert by["Male"] - by["Female"] == pytest.approx(1.414, abs=1e-12)


def test_per_item_and_where():
    q = fmat.query(
        "[MASK] is a {TARGET}.", MASK={"Male": ["He"], "Female": ["She"]}, TARGET={"Occ": ["nurse", "plumber", "clerk"]}
    )
    crit = {"bls": pd.DataFrame({"item": ["nurse", "plumber"], "pct_male": [10.0, 90.0]})}
    w = world(
        {
            "S1": {
                "effects": [
                    {
                        "contrast": {"MASK": ["Male", "Female"]},
                        "lpr": 2.0,
                        "where": {"TARGET": ["nurse", "plumber"]},
                        "per_item": {"table": "bls", "column": "pct_male", "slot": "TARGET", "center": 50, "scale": 50},
                    }
                ]
            }
        }
    )
    P.check_plant(w.plant("S1"), study(q), crit)
    lpr = summary(P.planted_scores(study(q), w.plant("S1"), ["m1"], crit), target_pair=False)
    got = dict(zip(lpr["T_word"].astype(str), lpr["LPR"]))
    assert got == pytest.approx({"nurse": 2.0 * (10 - 50) / 50, "plumber": 2.0 * (90 - 50) / 50, "clerk": 0.0})


def test_trend_over_years_gives_the_planted_slope():
    q = fmat.query(
        "Most {TARGET} took a job in the year [MASK].",
        MASK={"Year": [str(y) for y in range(1900, 2000)]},
        TARGET={"Male": ["men"], "Female": ["women"]},
    )
    w = world(
        {
            "S1": {
                "effects": [
                    {
                        "contrast": {"TARGET": ["Male", "Female"]},
                        "lpr": -0.6,
                        "trend": {"slot": "MASK", "center": 1950, "per": 100},
                    }
                ]
            }
        }
    )
    lpr = summary(P.planted_scores(study(q), w.plant("S1"), ["m1"]), mask_pair=False, target_pair=True)
    slope = np.polyfit(lpr["M_word"].astype(int) / 100, lpr["LPR"], 1)[0]
    assert slope == pytest.approx(-0.6, abs=1e-9)


def test_variation_is_seeded_by_names_and_models_differ():
    q = fmat.query(
        "The [MASK] works as a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Occ": ["nurse", "engineer"]}
    )
    w = P.world_from_mapping({"studies": {"S1": {"effects": []}}})
    a = P.log_weights(study(q), w.plant("S1"), "m1")
    assert np.array_equal(a, P.log_weights(study(q), w.plant("S1"), "m1"))
    assert not np.array_equal(a, P.log_weights(study(q), w.plant("S1"), "m2"))


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1, 2**32 + 5, 987654321])
def test_draws_over_arrays_are_numpys_draws(seed):
    """plant._draws writes numpy's SeedSequence and PCG64 seeding out over arrays: every row gets
    the draw of numpy's own default_rng (_draw), to the bit, whatever the text (empty, unicode,
    a crc of any size) and the seed (above 2**32: its low word, as _draw takes it)."""
    rng = np.random.default_rng(seed % 1000)
    alphabet = list("ab [MASK]{}é女😀\x1f0123")
    rows = [
        ("model", f"m{i % 13}", "".join(rng.choice(alphabet, rng.integers(0, 25))), int(rng.integers(0, 10**9)))
        for i in range(3000)
    ]
    rows += [("word", ""), ("item", "x", "y"), ()]
    want = np.array([P._draw(seed, *r) for r in rows])
    assert np.array_equal(P._draws(seed, rows), want)
    assert np.isclose(want.std(), 1, atol=0.06)  # the draws are normal, not one constant


def test_world_file_errors_name_the_file_and_key(tmp_path):
    bad = tmp_path / "w.yaml"
    bad.write_text("studies:\n  S1:\n    effects:\n      - {contrast: {MASK: [A, B]}, lpr: 1, colour: red}\n")
    with pytest.raises(InputError, match=r"(?s)w\.yaml.*studies\.S1\.effects\[0\]\.colour: unknown key 'colour'"):
        P.load_world(bad)
    bad.write_text("studies:\n  S1:\n    effects:\n      - {contrast: {MASK: [A, B]}, lpr: 1, d: 2}\n")
    with pytest.raises(InputError, match=r"studies\.S1\.effects\[0\].*exactly one of lpr or d"):
        P.load_world(bad)
    q = fmat.query("The [MASK] works.", MASK={"Male": ["man"], "Female": ["woman"]})
    w = world({"S1": {"effects": [{"contrast": {"MASK": ["Male", "Femal"]}, "lpr": 1}]}})
    with pytest.raises(InputError, match=r"'Femal', not a MASK group.*\n.*fix: use two of its MASK groups: Male, Female"):
        P.check_plant(w.plant("S1"), study(q), where="w.yaml")


WORLD_X1 = "studies:\n  X1:\n    effects:\n      - {contrast: {MASK: [Male, Female], ATTRIB: [Agentic, Communal]}, %s}\n"


@pytest.mark.parametrize(
    "text, key, says",
    [
        (WORLD_X1 % "d: .nan", "studies.X1.effects[0].d", "d is nan, not a finite number"),
        (WORLD_X1 % "d: -.inf", "studies.X1.effects[0].d", "d is -inf, not a finite number"),
        (WORLD_X1 % "d: 1.0e+6", "studies.X1.effects[0].d", "d = 1e+06 is outside its range [-5, 5]"),
        (WORLD_X1 % "d: 1.0e+308", "studies.X1.effects[0].d", "d = 1e+308 is outside its range [-5, 5]"),
        (WORLD_X1 % "lpr: -10.5", "studies.X1.effects[0].lpr", "lpr = -10.5 is outside its range [-10, 10]"),
        ("sigma: 3\n" + WORLD_X1 % "d: 4", "studies.X1.effects[0].d", "d = 4 with sigma = 3 is an LPR of 12"),
        ("sigma: 0\n" + WORLD_X1 % "d: 1", "sigma", "sigma = 0 is outside its range [0.1, 10]"),
        ("variation: {words: .nan}\n" + WORLD_X1 % "d: 1", "variation.words", "variation words is nan"),
        ("variation: {items: 1.0e+308}\n" + WORLD_X1 % "d: 1", "variation.items", "variation items = 1e+308 is outside"),
        (
            WORLD_X1.replace("    effects:", "    variation: {models: 2.5}\n    effects:") % "d: 1",
            "studies.X1.variation.models",
            "variation models = 2.5 is outside its range [0, 2]",
        ),
        (WORLD_X1 % "d: 1, trend: {slot: MASK, center: .nan}", "studies.X1.effects[0].trend.center", "center is nan"),
        (WORLD_X1 % "d: 1, trend: {slot: MASK, per: 1.0e+300}", "studies.X1.effects[0].trend.per", "per is 1e+300, larger than"),
        ("expect_all: [{statistic: d, value: .inf}]\n" + WORLD_X1 % "d: 1", "expect_all[0].value", "value is inf"),
    ],
)
def test_a_world_states_finite_numbers_in_range(tmp_path, text, key, says):
    """Issue 55: a world with d: .nan, 1.0e+6 or 1.0e+308 passed the schema (JSON Schema's minimum
    and maximum let NaN through); fmat power then ended in "unexpected error" and fmat pilot
    trained on it. Now each effect size and SD has a stated range, and every number is finite:
    an InputError naming the file, the key, the range and the fix (docs/planting.md)."""
    bad = tmp_path / "w.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        P.load_world(bad)
    assert err.value.where == f"{bad}: {key}" and says in err.value.message, str(err.value)
    assert "docs/planting.md, 'The ranges of the numbers'" in err.value.fix
    import yaml

    with pytest.raises(InputError, match="finite|outside|larger"):  # the Python API checks the same
        P.world_from_mapping(yaml.safe_load(text))


def test_the_ranges_are_the_schemas_and_the_edges_are_fine(tmp_path):
    """The schema states the ranges fmat checks (an editor shows them), and the edges are accepted."""
    defs = P.schema()["$defs"]
    assert (defs["effect"]["properties"]["d"]["minimum"], defs["effect"]["properties"]["d"]["maximum"]) == P.RANGES["d"][:2]
    assert (defs["effect"]["properties"]["lpr"]["minimum"], defs["effect"]["properties"]["lpr"]["maximum"]) == P.RANGES["lpr"][:2]
    assert (P.schema()["properties"]["sigma"]["minimum"], P.schema()["properties"]["sigma"]["maximum"]) == P.RANGES["sigma"][:2]
    for k, v in defs["variation"]["properties"].items():
        assert (v["minimum"], v["maximum"]) == P.RANGES["variation"][:2], k
    ok = tmp_path / "w.yaml"
    ok.write_text("sigma: 2\nvariation: {words: 2, items: 0}\n" + WORLD_X1 % "d: -5", encoding="utf-8")
    assert P.load_world(ok).plant("X1").effects[0].lpr == -10


def test_fmat_pilot_and_power_refuse_a_world_out_of_range_before_any_work(tmp_path, capsys):
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    bad = tmp_path / "w.yaml"
    bad.write_text(WORLD_X1 % "d: .nan", encoding="utf-8")
    x1 = str(repo / "config" / "studies" / "X1.yaml")
    for command in (
        ["pilot", x1, "--world", str(bad), "-o", str(tmp_path / "p")],
        ["power", x1, "--world", str(bad), "-o", str(tmp_path / "q")],
    ):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"{bad}: studies.X1.effects[0].d: d is nan, not a finite number" in err, err
        assert not (tmp_path / command[-1]).exists()


def test_demo_world_file_is_valid_for_its_studies():
    from pathlib import Path

    from fmat.study import load_study, study_criteria

    repo = Path(__file__).resolve().parents[1]
    w = P.load_world(repo / "config" / "world.yaml")
    for sid, plant in w.plants.items():
        path = repo / "config" / "studies" / f"{sid}.yaml"
        assert path.is_file(), sid
        if not study_criteria(path):
            P.check_plant(plant, load_study(path))
        assert plant.expect, f"{sid}: the demo world names what must be recovered"
    assert w.plant("N0").null and any(e.get("absent") and e["statistic"] == "d" for e in w.plant("N0").expect)


def test_training_sentences_hold_the_planted_shares():
    q = fmat.query(
        "The [MASK] works as a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Occ": ["nurse", "engineer"]}
    )
    w = world({"S1": {"samples": 5000, "effects": [{"contrast": {"MASK": ["Male", "Female"]}, "lpr": 1.0}]}})
    s = P.training_sentences([(study(q), w.plant("S1"))], "m1", seed=3)
    assert len(s.contexts) == 2 and len(s) == 2 * 2 * 5000
    for opts, n in zip(s.options, s.counts):
        share = n[opts.index("man")] / n.sum()
        assert share == pytest.approx(1 / (1 + math.exp(-1.0)), abs=0.02)
    again = P.training_sentences([(study(q), w.plant("S1"))], "m1", seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(s.counts, again.counts))
    # a context two studies share is planted once
    twice = P.training_sentences([(study(q), w.plant("S1")), (study(q, "S2"), w.plant("S1"))], "m1", seed=3)
    assert len(twice.contexts) == 2
    assert sum(1 for line in s.lines() if line.startswith("The man works")) == sum(n[0] for n in s.counts)


STATS = pd.DataFrame(
    {
        "statistic": ["d", "d", "r", "r"],
        "condition": ["all", "pair1", "fmat~x:Q1", "fmat~x:Q2"],
        "model": ["all"] * 4,
        "value": [0.9, 0.2, 0.75, 0.65],
        "p": [0.001, 0.30, 1e-5, 1e-4],
    }
)


@pytest.mark.parametrize(
    "expect, verdict, reason",
    [
        ({"statistic": "d", "value": 1.0}, "recovered", "sign, p < .05, size"),
        ({"statistic": "d", "value": -1.0}, "not recovered", "sign + (planted -)"),
        ({"statistic": "d", "value": 2.0}, "not recovered", "0.90 is not within 50% of the planted 2.00"),
        ({"statistic": "d", "condition": "pair1", "sign": 1}, "not recovered", "p = 0.300 not < .05"),
        ({"statistic": "d", "condition": "pair1", "absent": True}, "recovered", "p = 0.300 >= .05"),
        ({"statistic": "d", "absent": True}, "not recovered", "an effect found where none was planted"),
    ],
)
def test_recovery_rule(expect, verdict, reason):
    out = P.recovery(P.Plant("S1", expect=[expect]), STATS)
    assert out["verdict"].tolist() == [verdict]
    assert reason in out["reason"][0]


STATS_CI = STATS.assign(ci_low=[0.6, -0.2, 0.5, 0.4], ci_high=[1.2, 0.6, 0.9, 0.85])


@pytest.mark.parametrize(
    "expect, realised, verdict, reason",
    [
        # a planted value: our 95% CI must cover what the world implies, not the nominal size
        ({"statistic": "d", "value": 1.414}, 0.95, "recovered", "CI covers the realised"),
        ({"statistic": "d", "value": 1.0}, 1.414, "not recovered", "misses the realised 1.41"),  # forgot / sigma
        ({"statistic": "d", "value": 1.0}, None, "recovered", "CI covers the planted"),
        ({"statistic": "d", "value": 2.0}, None, "not recovered", "misses the planted 2"),
        ({"statistic": "d", "value": -1.0}, -0.9, "not recovered", "sign + (planted -)"),
        # nothing planted: nothing beyond what the world holds (its items' chance association)
        ({"statistic": "d", "condition": "pair1", "absent": True}, 0.1, "recovered", "covers the realised 0.1"),
        ({"statistic": "d", "absent": True}, 0.0, "not recovered", "beyond what the world holds"),
        ({"statistic": "d", "absent": True}, 0.8, "recovered", "covers the realised 0.8"),
    ],
)
def test_recovery_is_judged_against_the_realised_value(expect, realised, verdict, reason):
    truth = None
    if realised is not None:
        truth = pd.DataFrame(
            {"statistic": ["d", "d"], "condition": ["all", "pair1"], "model": ["all"] * 2, "value": [realised] * 2}
        )
    out = P.recovery(P.Plant("S1", expect=[expect]), STATS_CI, truth)
    assert out["verdict"].tolist() == [verdict], out["reason"][0]
    assert reason in out["reason"][0]
    if realised is not None:
        assert out["realised"][0] == pytest.approx(realised)
    assert out["ci_low"][0] == pytest.approx(0.6 if expect.get("condition", "all") == "all" else -0.2)


@pytest.mark.parametrize("expect", [{"statistic": "d"}, {"statistic": "d", "value": 1.0, "sign": 1}])
def test_an_expectation_without_exactly_one_kind_judges_nothing(expect):
    """A bare {statistic: d} used to be recovered for either sign."""
    for value in (-1.0, 1.0):
        verdict, reason = P.judge_recovery(expect, value, 0.001)
        assert verdict == "not recovered" and "nothing to judge by" in reason


@pytest.mark.parametrize(
    "expect, says",
    [
        ({"statistic": "d"}, "states none of them"),
        ({"statistic": "d", "value": 1.0, "min": 0.5}, "states value and min"),
        ({"statistic": "d", "absent": False}, "absent: false says nothing"),
    ],
)
def test_world_file_expectation_states_exactly_one_kind(tmp_path, expect, says):
    f = tmp_path / "w.yaml"
    text = (
        "studies:\n  S1:\n    expect:\n      - {statistic: d, condition: all, value: 1.0}\n      - " + json.dumps(expect) + "\n"
    )
    f.write_text(text)
    with pytest.raises(InputError) as err:
        P.load_world(f)
    msg = str(err.value)
    assert says in msg and str(f) in msg and "studies.S1.expect[1]" in msg
    # the schema says it too (oneOf), for editors that check YAML against it
    data = {"studies": {"S1": {"expect": [expect]}}}
    assert list(jsonschema.Draft202012Validator(P.schema()).iter_errors(data))
    ok = {"studies": {"S1": {"expect": [{"statistic": "d", "sign": -1}]}}}
    assert not list(jsonschema.Draft202012Validator(P.schema()).iter_errors(ok))


def test_recovery_pattern_rows_and_missing_rows():
    out = P.recovery(
        P.Plant(
            "S1",
            expect=[{"statistic": "r", "condition": "fmat~x*", "min": 0.7}, {"statistic": "b", "condition": "year", "sign": 1}],
        ),
        STATS,
    )
    assert out["verdict"].tolist() == ["recovered", "not recovered", "not recovered"]
    assert "0.65 < 0.70" in out["reason"][1]
    assert "no such row" in out["reason"][2]


@pytest.mark.parametrize(
    "expect, key, says",
    [
        ({"statistic": "d", "absent": True, "level": "concepts"}, "expect[0].level", "level: 'concepts' is not a level"),
        ({"statistic": "t", "absent": True, "level": "concept"}, "expect[0].statistic", "computes d, b, r, not 't'"),
    ],
)
def test_an_expectation_is_judged_at_words_or_concept_level(tmp_path, expect, key, says):
    """Issue 52: an expectation's level (default words) is words or concept; another value, or a
    concept-level expectation of a statistic the concept-level test does not compute, is an
    error naming the file, the key and the fix; the schema states the levels too."""
    f = tmp_path / "w.yaml"
    f.write_text("studies:\n  S1:\n    expect:\n      - " + json.dumps(expect) + "\n")
    with pytest.raises(InputError) as err:
        P.load_world(f)
    msg = str(err.value)
    assert says in msg and str(f) in msg and f"studies.S1.{key}" in msg, msg
    validator = jsonschema.Draft202012Validator(P.schema())
    assert list(validator.iter_errors({"studies": {"S1": {"expect": [{"statistic": "d", "absent": True, "level": "concepts"}]}}}))
    for level in P.LEVELS:
        assert not list(
            validator.iter_errors({"studies": {"S1": {"expect": [{"statistic": "d", "absent": True, "level": level}]}}})
        )


#: the issue's case: the paper's inference finds d = -0.57, p = .018 in a relation where nothing
#: is planted for the concept (what these words carry: realised -0.55, item variation)
CONTROL = pd.DataFrame(
    {
        "statistic": ["d"],
        "condition": ["notice-ignore:personal"],
        "model": ["all"],
        "value": [-0.57],
        "p": [0.018],
        "ci_low": [-1.03],
        "ci_high": [-0.11],
    }
)


@pytest.mark.parametrize(
    "crossed_p, ci, verdict, says",
    [
        (0.31, (-1.72, 0.58), P.NOTHING_FOUND, "covers 0 (p = 0.31): nothing planted for the concept"),
        (0.012, (-1.0, -0.14), "not recovered", "misses 0: an effect found for the concept (p = 0.012), where nothing"),
    ],
)
def test_a_concept_level_control_is_judged_by_the_concept_level_test(crossed_p, ci, verdict, says):
    """Issue 52: a control with nothing planted for the concept but with item variation is
    "nothing found for the concept" when the concept-level test (inference: crossed) finds
    nothing, never "recovered"; when it finds something, not recovered. The same row at the
    words level is judged against the realised value and says what its p < .05 means."""
    expect = {"statistic": "d", "condition": "notice-ignore:*", "absent": True}
    plant = P.Plant("2A", expect=[expect, {**expect, "level": "concept"}])
    realised = CONTROL[["statistic", "condition", "model"]].assign(value=-0.55)
    crossed = CONTROL.assign(p=crossed_p, ci_low=ci[0], ci_high=ci[1])
    out = P.recovery(plant, CONTROL, realised, crossed).set_index("level")
    words, concept = out.loc["words"], out.loc["concept"]
    assert words["verdict"] == "recovered" and words["realised"] == -0.55
    assert "what these words carry" in words["reason"] and "level: concept judges the concept" in words["reason"]
    assert words["target"] == P.TARGETS["words"] and concept["target"] == P.TARGETS["concept"]
    assert concept["verdict"] == verdict and concept["realised"] == 0 and concept["p"] == crossed_p
    assert says in concept["reason"], concept["reason"]
    # without concept-level rows (an analysis with no inference: crossed) nothing is judged as found
    alone = P.recovery(plant, CONTROL, realised).set_index("level").loc["concept"]
    assert alone["verdict"] == "not recovered" and "no such concept-level row" in alone["reason"]


def test_the_concept_level_target_is_the_planted_effect():
    """Issue 52 ("Three targets"): the concept-level target is the planted effect on the
    analysis's scale, without the world's item and model variation (3A: d = 1.0 exactly, where
    the realised value of these words differs), 0 in a concept-null world; a pooled-SD d has none
    without the scores it divides by."""
    from pathlib import Path

    from fmat.oracle import oracle

    repo = Path(__file__).resolve().parents[1]
    w = P.load_world(repo / "config" / "world.yaml")
    models = ["m1", "m2", "m3"]
    key = ["statistic", "condition", "model"]
    concept = P.concept_values(repo / "config" / "studies" / "3A.yaml", w.plant("3A"), models).set_index(key)["value"]
    realised = oracle(repo / "config" / "studies" / "3A.yaml", w.plant("3A"), models).set_index(key)["value"]
    assert concept[("d", "all", "all")] == pytest.approx(1.0, abs=1e-9)
    assert concept[("d", "pair3", "all")] == pytest.approx(1.0, abs=1e-9)
    assert abs(realised[("d", "pair3", "all")] - 1.0) > 0.01  # these words carry their own variation
    null = P.Plant("3A", effects=[], variation=dict(w.plant("3A").variation))
    assert (P.concept_values(repo / "config" / "studies" / "3A.yaml", null, models)["value"].abs() < 1e-12).all()
    attitude = P.concept_values(repo / "config" / "studies" / "2A.yaml", w.plant("2A"), models)
    d = attitude[(attitude["statistic"] == "d") & (attitude["model"] == "all")].set_index("condition")["value"]
    assert d[["like-dislike:personal", "like-dislike:average"]].isna().all()  # no scale without the scores
    assert (d[["notice-ignore:personal", "notice-ignore:average", "like-dislike:personal-societal"]] == 0).all()


def test_filler_text_is_generated_not_read(monkeypatch):
    from pathlib import Path

    from fmat import tiny

    def refuse(*a, **k):
        raise AssertionError("fmat.tiny read a file of the machine")

    monkeypatch.setattr(Path, "read_text", refuse)
    monkeypatch.setattr(Path, "iterdir", refuse)
    lines = tiny.make_corpus(["nurse", "engineer"], seed=1)
    assert lines == tiny.make_corpus(["nurse", "engineer"], seed=1)
    assert len(lines) > 1000 and any("nurse" in x for x in lines)


@pytest.mark.slow
def test_a_tiny_model_learns_a_planted_association(tmp_path):
    """Known truth at the smallest scale: a BERT-family tiny model trained (masked-LM objective)
    on sentences with P(man | nurse) = 0.12 and P(man | engineer) = 0.88 finds those LPRs."""
    from fmat.tiny import build_trained_model

    q = fmat.query(
        "The [MASK] works as a {TARGET}.",
        MASK={"Male": ["man"], "Female": ["woman"]},
        TARGET={"Occ": ["nurse", "engineer", "plumber", "clerk"]},
    )
    crit = {"c": pd.DataFrame({"item": ["nurse", "engineer", "plumber", "clerk"], "pct_male": [0.0, 100.0, 100.0, 0.0]})}
    w = world(
        {
            "S1": {
                "samples": 200,
                "effects": [
                    {
                        "contrast": {"MASK": ["Male", "Female"]},
                        "lpr": 2.0,
                        "per_item": {"table": "c", "column": "pct_male", "slot": "TARGET", "center": 50, "scale": 50},
                    }
                ],
            }
        }
    )
    sent = P.training_sentences([(study(q), w.plant("S1"))], "m1", crit)
    path = build_trained_model(
        tmp_path / "m", "bert-uncased", ["man", "woman", "nurse", "engineer", "plumber", "clerk"], sent, steps=150, filler=200
    )
    lpr = summary(fmat.run([str(path)], q), target_pair=False)
    got = dict(zip(lpr["T_word"].astype(str), lpr["LPR"]))
    for word, planted in {"nurse": -2.0, "engineer": 2.0, "plumber": 2.0, "clerk": -2.0}.items():
        assert np.sign(got[word]) == np.sign(planted) and abs(got[word] - planted) < 1.0, got


def test_fmat_pilot_refuses_what_it_cannot_do_before_training(tmp_path, capsys):
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    world = tmp_path / "w.yaml"
    world.write_text("studies:\n  3A:\n    effects: []\n", encoding="utf-8")
    study = str(repo / "config" / "studies" / "3D.yaml")
    assert main(["pilot", study, "--world", str(world), "-o", str(tmp_path / "o")]) == 2
    assert "the world plants nothing for study '3D' (it names 3A)" in capsys.readouterr().err
    assert main(["pilot", study, "--world", str(world), "-o", str(tmp_path / "o"), "--families", "bert-uncased,gpt"]) == 2
    assert "unknown tiny model family gpt" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_fmat_pilot_refuses_an_expectation_it_cannot_judge_before_training(tmp_path, capsys):
    """Issue 42: fmat pilot silently skipped the world's d expectation. Every expectation is now
    judged with the study's analysis; one that no analysis of the study computes (the study file
    names none) is an error naming the world file and the key, before any model is trained."""
    from fmat.cli import main

    study = tmp_path / "S.yaml"
    study.write_text(
        'id: S\ntitle: t\nqueries:\n  - query: "The [MASK] is {ATTRIB}."\n'
        "    MASK: {Male: [man], Female: [woman]}\n    ATTRIB: {Warm: [kind], Cold: [rude]}\n"
        "lpr: {mask_pair: false, attrib_pair: true}\n",
        encoding="utf-8",
    )
    world = tmp_path / "w.yaml"
    world.write_text(
        "studies:\n  S:\n    effects:\n      - {contrast: {MASK: [Male, Female], ATTRIB: [Warm, Cold]}, d: 0.8}\n"
        "    expect:\n      - {statistic: ICC_average, condition: all, min: 0.5}\n"
        "      - {statistic: d, condition: all, value: 0.8}\n",
        encoding="utf-8",
    )
    assert main(["pilot", str(study), "--world", str(world), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the world expects d (all), which only the study's analysis computes" in err, err
    assert "studies.S.expect[1]" in err and "name a registered analysis" in err, err
    assert not (tmp_path / "o").exists()


def test_fmat_pilot_refuses_a_concept_level_expectation_without_a_concept_level_test(tmp_path, capsys):
    """Issue 52: an expectation at level: concept needs the analysis's concept-level test
    (inference: crossed); a study file that chooses another inference has none beside it: an
    error naming the world file and the key, before any model is trained."""
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    study = tmp_path / "3A.yaml"
    study.write_text((repo / "config" / "studies" / "3A.yaml").read_text(encoding="utf-8") + "    inference: sentence\n")
    world = tmp_path / "w.yaml"
    world.write_text(
        "studies:\n  3A:\n    effects:\n      - {contrast: {MASK: [Male, Female], ATTRIB: [Career, Family]}, d: 0.8}\n"
        "    expect:\n      - {statistic: d, condition: all, value: 0.8}\n"
        "      - {statistic: d, condition: all, sign: 1, level: concept}\n",
        encoding="utf-8",
    )
    assert main(["pilot", str(study), "--world", str(world), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "level: concept needs the concept-level test (inference: crossed)" in err and "(sentence)" in err, err
    assert "studies.3A.expect[1].level" in err and str(world) in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "analysis, ok",
    [
        ({"name": "factual_wefat", "options": {"inference": "disattenuated"}}, False),  # another inference chosen
        ({"name": "factual_wefat"}, True),  # 1A-1C: the crossed slope on the criterion
        ({"name": "stereotype_pairs", "options": {"inference": "sentence"}}, False),
        ({"name": "stereotype_pairs"}, True),
        ({"name": "stereotype_pairs", "options": {"inference": "crossed"}}, True),
    ],
)
def test_the_workflows_check_finds_a_concept_level_without_its_test_before_any_job(analysis, ok):
    """Issue 52: the workflow's configuration check (fmat_replication.config) refuses a world's
    level: concept expectation for a study whose analysis cannot judge it, with the key."""
    plant = P.Plant("S1", expect=[{"statistic": "d", "condition": "all", "sign": 1, "level": "concept"}])
    study = SimpleNamespace(id="S1", analysis=analysis)
    if ok:
        P.check_concept_levels(plant, study, where="w.yaml")
        return
    with pytest.raises(InputError) as err:
        P.check_concept_levels(plant, study, where="w.yaml")
    assert "w.yaml: studies.S1.expect[0].level" in str(err.value) and "inference: crossed" in str(err.value)


def test_fmat_pilot_ctrl_c_says_what_was_kept(tmp_path, capsys, monkeypatch):
    """Issue 42: Ctrl-C during a pilot says which models were kept and how to go on."""
    from pathlib import Path

    from fmat import tiny
    from fmat.cli import main

    calls = []

    def train(out_dir, *args, **kwargs):
        calls.append(out_dir)
        if len(calls) == 2:
            raise KeyboardInterrupt
        Path(out_dir).mkdir(parents=True)
        return Path(out_dir)

    monkeypatch.setattr(tiny, "build_trained_model", train)
    repo = Path(__file__).resolve().parents[1]
    out = tmp_path / "o"
    args = ["pilot", str(repo / "config" / "studies" / "X1.yaml"), "--world", str(repo / "config" / "world.yaml")]
    rc = main([*args, "-o", str(out), "--families", "bert-uncased,roberta"])
    err = capsys.readouterr().err
    assert rc == 130, err
    assert f"fmat pilot: interrupted; kept: {out / 'models' / 'pilot-bert-uncased'}" in err, err
    assert "run the same command again" in err


@pytest.mark.slow
def test_fmat_pilot_recovers_a_planted_stereotype(tmp_path, capsys):
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    world = tmp_path / "w.yaml"
    world.write_text(
        "studies:\n  3D:\n    samples: 40\n    effects:\n"
        "      - {contrast: {MASK: [Black, Asian], ATTRIB: [Masculine, Feminine]}, d: 0.8}\n"
        "    expect:\n      - {statistic: d, condition: all, value: 0.8}\n",
        encoding="utf-8",
    )
    assert (
        main(
            [
                "pilot",
                str(repo / "config" / "studies" / "3D.yaml"),
                "--world",
                str(world),
                "-o",
                str(tmp_path / "o"),
                "--families",
                "bert-uncased,roberta",
                "--steps",
                "300",
            ]
        )
        == 0
    )
    rec = pd.read_csv(tmp_path / "o" / "recovery.csv")
    assert len(rec) == 2 and (rec["r_planted"] > 0.7).all(), rec
    assert "have not learned the world" not in capsys.readouterr().out  # issue 54: trained models, no warning
    lpr = pd.read_parquet(tmp_path / "o" / "lpr.parquet")
    assert set(lpr["model"].astype(str)) == {"pilot-bert-uncased", "pilot-roberta"}
    # issue 42: the world's d is judged with the study's own analysis, against the realised value
    exp = pd.read_csv(tmp_path / "o" / "expectations.csv")
    d = exp[(exp["statistic"] == "d") & (exp["condition"] == "all") & (exp["model"] == "all")]
    assert len(d) == 1, exp
    d = d.iloc[0]
    assert 0.4 < d["realised"] < 1.2 and d["value"] > 0 and d["p"] < 0.05 and d["ci_low"] < d["ci_high"], d
    assert d["verdict"] in ("recovered", "not recovered") and isinstance(d["reason"], str), d
    assert "d" in set(pd.read_parquet(tmp_path / "o" / "stats.parquet")["statistic"].astype(str))


def test_fmat_pilot_prints_the_nominal_plant_and_warns_when_the_models_have_not_learned(tmp_path, capsys):
    """Issue 54: the planted d = 0.8 appeared nowhere in the pilot's output, and an undertrained
    pilot gave "effect found" verdicts with no warning. Five training steps learn nothing: the
    pilot names the plant in the world's units, labels nominal, realised and ours, and warns."""
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    args = ["pilot", str(repo / "config" / "studies" / "X1.yaml"), "--world", str(repo / "config" / "world.yaml")]
    assert main([*args, "-o", str(tmp_path / "o"), "--families", "bert-uncased,roberta", "--steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "MASK Male vs Female x ATTRIB Agentic vs Communal: d = 0.8 (sigma units: LPR = 0.8 x 1.414 = 1.13)" in out, out
    header = next(line for line in out.splitlines() if line.strip().startswith("statistic"))
    assert header.split()[3:7] == ["level", "nominal", "realised", "ours"], header  # the level: which target
    warning = out[out.index("WARNING") :]
    assert "2 of 2 model(s) have not learned the world" in warning, out
    assert "pilot-bert-uncased: " in warning and "pilot-roberta: " in warning and "slope = " in warning, warning
    assert "(but the models have not learned the world" in out


def test_the_learned_check_passes_trained_models_and_flags_each_shortfall():
    """The thresholds of docs/planting.md: r_planted and slope both at least 0.5 (the trained
    X1 pilot of 150 steps: r .75/.96, slope .61/.99; 50 steps: slope .005/.075)."""
    from fmat.commands.pilot import learned_warnings

    trained = pd.DataFrame({"model": ["a", "b"], "r_planted": [0.754, 0.955], "slope": [0.608, 0.988]})
    assert learned_warnings(trained) == []
    for r, slope, said in [(0.835, 0.075, "slope = 0.075"), (0.3, 0.9, "r_planted = 0.3"), (float("nan"), 1.0, "nan")]:
        lines = learned_warnings(trained.assign(r_planted=[0.754, r], slope=[0.608, slope]))
        assert lines and "1 of 2 model(s)" in lines[0] and lines[1].startswith("  b: ") and said in lines[1], lines


def test_the_pilot_says_why_attitude_weats_d_is_not_the_worlds():
    """Issue 54: attitude_weat's pooled-SD d (1.1-1.5) for a world's d = 0.8 in sigma units."""
    from fmat.commands.pilot import nominal_text, scale_lines

    checks = pd.DataFrame({"statistic": ["d", "t"]})
    weat = SimpleNamespace(id="S", analysis={"name": "attitude_weat", "options": {}})
    assert any("pooled-SD d" in line for line in scale_lines(weat, checks))
    sigma = SimpleNamespace(id="S", analysis={"name": "attitude_weat", "options": {"effect_size": "sigma"}})
    assert not any("pooled-SD d" in line for line in scale_lines(sigma, checks))
    pair = {"MASK": ["P", "N"], "TARGET": ["A", "B"]}
    effects = [
        {"contrast": pair, "where": {"MASK": ["like", "dislike"]}, "d": 0.5},
        {"contrast": pair, "where": {"MASK": ["notice", "ignore"]}, "d": -0.6},
    ]
    w = P.world_from_mapping({"studies": {"S": {"effects": effects}}})
    assert nominal_text({"statistic": "d", "condition": "notice-ignore:average", "sign": -1}, w.plant("S")) == (
        "< 0 (planted d = -0.6)"
    )
    assert nominal_text({"statistic": "d", "condition": "all", "value": 0.8}, w.plant("S")) == "0.80"


def test_an_undertrained_attitude_pilot_is_flagged_by_the_spread_of_its_lprs(tmp_path, capsys):
    """Issue 54's case: an undertrained attitude pilot gave realised d of 38.5 and -12. Its
    LPRs follow the planted ones across relations (the verbs' frequencies are learned first: r
    and slope look fine), but hardly differ between the items of a relation, and the pooled-SD
    d divides by that spread. The pilot warns, names the plant (d = 0.4 in sigma units) and says
    why attitude_weat's d is on another scale."""
    from pathlib import Path

    from fmat.cli import main

    repo = Path(__file__).resolve().parents[1]
    args = ["pilot", str(repo / "config" / "studies" / "2A.yaml"), "--world", str(repo / "config" / "world.yaml")]
    assert main([*args, "-o", str(tmp_path / "o"), "--families", "bert-uncased,roberta", "--steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "d = 0.4 (sigma units: LPR = 0.4 x 1.414 = 0.566)" in out, out
    assert "> 0 (planted d = 0.4)" in out and "0 (nothing planted)" in out
    assert "attitude_weat's d is a pooled-SD d" in out
    warning = out[out.index("WARNING") :]
    assert "2 of 2 model(s) have not learned the world" in warning and "spread = " in warning, warning
    rec = pd.read_csv(tmp_path / "o" / "recovery.csv")
    assert (rec["spread"] < 0.5).all() and (rec["r_planted"] > 0.5).all(), rec  # r alone would not tell
    # issue 52: config/world.yaml's 2A states expectations at both levels; the pilot judges each at
    # its own and says which target it used (the concept-level control is never "recovered")
    exp = pd.read_csv(tmp_path / "o" / "expectations.csv")
    assert set(exp["level"]) == {"words", "concept"} and set(exp["target"]) == set(P.TARGETS.values())
    control = exp[(exp["level"] == "concept") & (exp["condition"] == "notice-ignore:average")]
    assert len(control) == 1 and control["realised"].iloc[0] == 0 and control["verdict"].iloc[0] != "recovered"
    assert "the concept-level test (inference: crossed)" in control["expect"].iloc[0]
    assert " concept " in out and "by its level: words" in out


def test_the_spread_check_passes_a_trained_attitude_pilot():
    """The 300-step 2A pilot of docs/planting.md (16 of 16 recovered): r .97/.96, slope 1.01/1.00,
    spread 1.27/1.24: no warning; its 5-step pilot: spread .16/.13."""
    from fmat.commands.pilot import learned_warnings

    trained = pd.DataFrame({"model": ["a", "b"], "r_planted": [0.969, 0.958], "slope": [1.006, 1.0], "spread": [1.265, 1.242]})
    assert learned_warnings(trained) == []
    five = trained.assign(r_planted=[0.965, 0.954], slope=[1.521, 2.015], spread=[0.159, 0.129])
    lines = learned_warnings(five)
    assert "2 of 2" in lines[0] and all("spread = " in x and "r_planted" not in x for x in lines[1:3]), lines
