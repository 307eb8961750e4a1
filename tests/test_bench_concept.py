"""benchmarks/bench_concept.py (issue 52, docs/calibration.md "Concept-level nulls and coverage"):
every paper study runs in concept-null and planted worlds with the paper's inference and
``inference: crossed``; the concept-level value of each judged row is the planted one (checked
against config/world.yaml's own numbers, and against the crossed estimate of a large-sample
world); a bad argument stops the script with exit 2 before any world is drawn."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_concept as bc  # noqa: E402

from fmat import calibration as cal  # noqa: E402
from fmat import plant  # noqa: E402

PAPER = [f"{n}{c}" for n, cs in (("1", "ABC"), ("2", "ABCD"), ("3", "ABCD"), ("4", "ABCD")) for c in cs]
#: the studies whose analysis is judged against a criterion: no concept-level value stated
CRITERION = {"1A", "1B", "1C"}


@pytest.fixture(scope="module")
def criteria_dir(tmp_path_factory) -> str:
    """A stand-in of 1C's criterion table (its names come from it): 40 names, % male uniform."""
    folder = tmp_path_factory.mktemp("criteria")
    rng = np.random.default_rng(1)
    pct = rng.uniform(1, 99, 40)
    pd.DataFrame(
        {"item": [f"Name{i}" for i in range(40)], "n_female": 100, "n_male": 100, "pct_male": pct},
    ).assign(logit_pct_male=np.log(pct / (100 - pct))).to_parquet(folder / "ssa_names_1c.parquet")
    return str(folder)


@pytest.mark.parametrize("sid", PAPER)
def test_every_paper_study_runs_in_both_kinds_of_world_with_both_variants(sid, criteria_dir):
    for kind in bc.KINDS:
        out = bc.one_world((sid, kind, 0.0, 1, 4, criteria_dir))
        assert set(out["variant"]) == set(bc.VARIANTS), (sid, kind)
        conds = {v: sorted(g["condition"]) for v, g in out.groupby("variant")}
        assert conds["paper"] and conds["paper"] == conds["crossed"], (sid, kind, conds)
        assert not out["condition"].str.fullmatch(bc.NAMED_ITEM).any()  # a named pair's row is not the concept's
        assert out["p"].notna().all() and out["ci_low"].notna().all()
        if kind == "concept-null":
            assert (out["concept"] == 0).all()
        elif sid in CRITERION:  # judged for false positives only
            assert out["concept"].isna().all() and out["covered"].isna().all()
        else:
            assert out["concept"].notna().all() and out["covered"].notna().all()


def _stated_by_the_world(sid: str) -> dict:
    """config/world.yaml's own statement of each planted value: its ``value`` expectations of d
    and b, or (2A-2D, whose expectations give signs only) each effect's d for the relation its
    ``where`` names, in both perceivers and their average, 0 elsewhere."""
    p = plant.load_world(bc.WORLD).plant(sid)
    rows = bc.planted_concept(sid)
    values = [e for e in p.expect if "value" in e and e["statistic"] in ("d", "b")]
    if values:
        return {
            key: next(float(e["value"]) for e in values if e["statistic"] == key[0] and fnmatch.fnmatch(key[1], e["condition"]))
            for key in rows
            if any(e["statistic"] == key[0] and fnmatch.fnmatch(key[1], e["condition"]) for e in values)
        }
    want = {key: 0.0 for key in rows}
    for e in p.effects:
        relation = "-".join(e.where["MASK"])
        for part in ("personal", "societal", "average"):
            want[("d", f"{relation}:{part}")] = float(e.d)
    return want


@pytest.mark.parametrize("sid", [s for s in PAPER if s not in CRITERION])
def test_the_concept_values_are_the_planted_values_the_world_states(sid):
    derived = bc.planted_concept(sid)
    stated = _stated_by_the_world(sid)
    assert stated and set(stated) <= set(derived)
    for key, value in stated.items():
        assert derived[key] == pytest.approx(value, abs=1e-3), (
            sid,
            key,
        )  # 2A-2D: the world's sigma 1.414, the analysis's sqrt(2)


def test_a_criterion_study_states_no_concept_value():
    assert bc.planted_concept("1A") == {}
    assert bc.planted_concept("3A")[("d", "all")] == pytest.approx(1.0)


@pytest.mark.parametrize("sid", ["2C", "3A", "3C", "4B"])
def test_a_large_sample_planted_world_holds_the_concept_value(sid):
    """At item SD 0 with 200 sentences a context (4B: the trend worlds' 100), the crossed
    estimate of every judged row is within 0.1 of its concept-level value (a concept value of 0
    for a planted condition, the pooled-SD scale or a sign error would be far off)."""
    world = bc.world_of(sid, "planted", 0.0, 12)
    world = replace(world, samples=world.samples or 200)
    study, _, criteria = bc.setting(sid)
    _, sampled = cal.perfect_learner_scores(world, 1, criteria)
    est = cal.analyse(study, sampled, criteria, inference="crossed", **bc.scale(study, "planted"))
    est = est[~est["condition"].str.fullmatch(bc.NAMED_ITEM)]
    concept = bc.concept_values(sid, "planted", est)
    assert len(est) and np.isfinite(concept).all()
    far = est.assign(concept=concept)[np.abs(est["value"].to_numpy() - concept) > 0.1]
    assert far.empty, far.to_string()


def test_a_small_run_writes_its_summary_and_rows(tmp_path, capsys):
    out, runs = tmp_path / "s.csv", tmp_path / "r.csv"
    argv = ["--studies", "3D", "--item-sd", "0,0.2", "--worlds", "1", "--models", "3", "--out", str(out), "--runs", str(runs)]
    assert bc.main(argv) == 0
    tab = pd.read_csv(out)
    assert len(tab) == 2 * 2 * 2  # kinds x item SDs x variants
    assert set(tab["measure"]) == {"fpr", "coverage"} and (tab["worlds"] == 1).all()
    assert len(pd.read_csv(runs)) == tab["rows"].sum()
    assert "4 of 4 world-settings" in capsys.readouterr().out


def test_a_summary_from_earlier_rows_has_world_level_cis_and_a_line_per_condition(tmp_path, capsys):
    # three worlds of two correlated rows (a world rejects both or neither): the rows' exact
    # CI counts 6 rows, the worlds' CI (Korn-Graubard) only 3 independent draws, so it is wider
    runs = pd.DataFrame(
        {
            "study": "1C",  # its study file needs a criteria folder: not loaded to summarize rows
            "kind": "concept-null",
            "item_sd": 0.1,
            "variant": "crossed",
            "condition": ["year", "2000vs1900"] * 3,
            "seed": [1, 1, 2, 2, 3, 3],
            "rejected": [True, True, False, False, False, False],
            "concept": 0.0,
            "covered": None,
        }
    )
    path = tmp_path / "runs.csv.gz"
    runs.to_csv(path, index=False)
    out = tmp_path / "s.csv"
    assert bc.main(["--from-runs", str(path), "--studies", "1C", "--item-sd", "0.1", "--out", str(out)]) == 0
    tab = pd.read_csv(out).iloc[0]
    assert (tab["worlds"], tab["rows"], tab["share"]) == (3, 6, pytest.approx(1 / 3))
    assert tab["low_worlds"] < tab["low"] and tab["high_worlds"] > tab["high"]
    assert bc.main(["--from-runs", str(path), "--studies", "1C", "--item-sd", "0.1", "--by-condition", "--out", str(out)]) == 0
    tab = pd.read_csv(out).set_index("condition")
    assert set(tab.index) == {"year", "2000vs1900"} and (tab["rows"] == 3).all() and (tab["worlds"] == 3).all()
    assert "2000vs1900" in capsys.readouterr().out


BAD = [
    (["--from-runs", "{tmp}/none.csv"], "--from-runs", "no such file"),
    (["--studies", "9Z"], "--studies", "unknown study '9Z'"),
    (["--studies", "3D", "--worlds", "0"], "--worlds", "must be at least 1; got 0"),
    (["--studies", "3D", "--first-seed", "0"], "--first-seed", "must be at least 1; got 0"),
    (["--studies", "3D", "--models", "1"], "--models", "must be at least 2"),
    (["--studies", "3D", "--jobs", "0"], "--jobs", "must be at least 1"),
    (["--studies", "3D", "--kinds", "null"], "--kinds", "unknown kind of world"),
    (["--studies", "3D", "--item-sd", "0,-0.1"], "--item-sd", "is not a list of SDs"),
    (["--studies", "3D", "--item-sd", "small"], "--item-sd", "is not a list of SDs"),
    (["--studies", "3D", "--minutes", "0"], "--minutes", "must be above 0"),
    (["--studies", "1C"], "--criteria-dir", "study 1C cannot be loaded"),
    (["--studies", "3D", "--criteria-dir", "no-such-folder"], "--criteria-dir", "no such folder"),
    (["--studies", "3D", "--out", "{tmp}/no/s.csv"], "--out", "no such folder"),
]


@pytest.mark.parametrize("argv, where, says", BAD, ids=[" ".join(c[0]) for c in BAD])
def test_bench_concept_checks_its_arguments(argv, where, says, tmp_path, capsys, monkeypatch):
    def no_run(args):
        raise AssertionError("ran despite a bad argument")

    monkeypatch.setattr(bc, "_main", no_run)
    assert bc.main([a.format(tmp=tmp_path) for a in argv]) == 2, argv
    err = capsys.readouterr().err
    assert f"bench_concept.py: error: {where}: " in err and says in err and "\n  fix: " in err, err
