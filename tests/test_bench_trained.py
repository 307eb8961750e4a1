"""bench_null.py --study: a trained null world of a study other than N0, written as
bench_calibration.py's runs file (docs/calibration.md, "Trained models")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_calibration
import bench_null


def test_one_trained_null_world_of_3d_is_a_runs_file_bench_calibration_summarises(tmp_path, capsys):
    """3D (stereotype_pairs, 20 queries: the smallest study) with 3 tiny models of 20 steps:
    the same columns as a perfect-learner runs file, realised 0, both inferences, and the
    summary of bench_calibration.table; a rerun skips the world already written."""
    import pandas as pd
    import torch

    torch.set_num_threads(1)
    out = tmp_path / "trained.csv"
    argv = ["--study", "3D", "--seeds", "1", "--first-seed", "3", "--steps", "20", "--out", str(out)]
    assert bench_null.main(argv) == 0
    runs = bench_calibration.read_runs(out)
    ref = tmp_path / "perfect.csv"
    bench_calibration.main(["--studies", "3D", "--worlds", "1", "--others", "0", "--kinds", "null", "--runs", str(ref)])
    assert list(runs.columns) == list(bench_calibration.read_runs(ref).columns)
    assert set(runs["study"]) == {"3D"} and set(runs["analysis"]) == {"stereotype_pairs"}
    assert set(runs["kind"]) == {"null"} and set(runs["others"]) == {0} and set(runs["models"]) == {3}
    assert set(runs["seed"]) == {3}
    assert (runs["realised"] == 0).all() and (runs["planted"] == 0).all() and runs["null"].all()
    assert set(runs["variant"]) == {"paper", "sentence"}
    assert set(runs["statistic"]) <= {"d", "b", "r"} and "all" in set(runs["condition"])
    assert runs[["p", "ci_low", "ci_high", "value"]].notna().all().all()
    assert (runs["rejected"] == (runs["p"] < 0.05)).all()
    assert (runs["covered"] == ((runs["ci_low"] <= 0) & (0 <= runs["ci_high"]))).all()
    # the two inferences of one analysis run: the same d, their own p
    paper, sentence = (runs[runs["variant"] == v].set_index("condition") for v in ("paper", "sentence"))
    assert set(sentence.index) <= set(paper.index)
    assert (sentence["value"] - paper.loc[sentence.index, "value"]).abs().max() < 1e-12
    tab = bench_calibration.table(runs)
    overall = tab[(tab["rows_judged"] == "overall") & (tab["kind"] == "null")]
    assert sorted(overall["variant"]) == ["paper", "sentence"] and (overall["worlds"] == 1).all()
    assert (overall["null_rows"] == 1).all() and overall["fpr"].isin([0.0, 1.0]).all()
    summary = tmp_path / "summary.csv"
    assert bench_calibration.main(["--table", "--runs", str(out), "--out", str(summary)]) == 0
    assert len(pd.read_csv(summary)) == len(tab)
    # a rerun skips the world already in the file: nothing trained, nothing added
    capsys.readouterr()
    assert bench_null.main(argv) == 0
    assert "already in" in capsys.readouterr().out
    assert len(bench_calibration.read_runs(out)) == len(runs)


def test_a_trained_planted_world_is_judged_against_the_oracle(tmp_path):
    """``--kind planted``: 3D's plant in the demo's world; each row's realised value is the
    oracle's for the world's items and the models' names (what an infinite-data learner holds)."""
    import torch

    from fmat import calibration as cal
    from fmat.oracle import oracle

    torch.set_num_threads(1)
    assert bench_null.main(["--kind", "planted", "--seeds", "1"]) == 2  # N0 plants nothing (exit 2, as fmat's errors)
    out = tmp_path / "planted.csv"
    argv = ["--study", "3D", "--kind", "planted", "--seeds", "1", "--steps", "20", "--models", "bert-uncased,roberta"]
    assert bench_null.main([*argv, "--out", str(out)]) == 0
    runs = bench_calibration.read_runs(out)
    assert set(runs["kind"]) == {"planted"} and set(runs["models"]) == {2} and set(runs["seed"]) == {1}
    world, criteria = bench_calibration._setting("3D", "planted", 0.0, 2)
    names = ["planted-3D-1-bert-uncased", "planted-3D-1-roberta"]
    o = oracle(bench_calibration.REPO / "config" / "studies" / "3D.yaml", cal.with_seed(world.plant, 1), names, criteria)
    o = o[o["model"] == "all"].set_index("condition")["value"]
    assert (runs["realised"] - o.loc[runs["condition"]].to_numpy()).abs().max() < 1e-12
    assert (runs["planted"] == runs["realised"]).all()
    assert not runs["null"].any() and (runs.loc[runs["condition"] == "all", "realised"] > 0.2).all()
    assert (runs["covered"] == ((runs["ci_low"] <= runs["realised"]) & (runs["realised"] <= runs["ci_high"]))).all()
    tab = bench_calibration.table(runs)
    assert set(tab["kind"]) == {"planted"} and tab["coverage"].notna().all()


def test_a_trained_planted_worlds_disattenuated_r_is_judged_against_its_own_analysis(tmp_path):
    """1A planted, trained: the paper's r is judged against the oracle's r; the disattenuated r
    (a variant with its own point estimate) against the disattenuated r of the world's planted
    probabilities for the same model names, which is larger (those models still disagree a
    little about the items)."""
    import torch

    from fmat import calibration as cal
    from fmat import plant

    torch.set_num_threads(1)
    out = tmp_path / "planted.csv"
    argv = ["--study", "1A", "--kind", "planted", "--seeds", "1", "--steps", "20", "--models", "bert-uncased,roberta"]
    assert bench_null.main([*argv, "--out", str(out)]) == 0
    runs = bench_calibration.read_runs(out)
    world, criteria = bench_calibration._setting("1A", "planted", 0.0, 2)
    p = cal.with_seed(world.plant, 1)
    exact = plant.planted_scores(world.study, p, ["planted-1A-1-bert-uncased", "planted-1A-1-roberta"], criteria)
    own = cal.analyse(world.study, exact, criteria, inference="disattenuated").set_index("condition")["value"]
    paper = cal.analyse(world.study, exact, criteria).set_index("condition")["value"]
    ours = runs[runs["variant"] == "disattenuated"].set_index("condition")["realised"]
    mine = runs[runs["variant"] == "paper"].set_index("condition")["realised"]
    assert len(ours) and len(mine) == 5
    assert (ours - own.loc[ours.index]).abs().max() < 1e-12
    assert (mine - paper.loc[mine.index]).abs().max() < 1e-9  # the oracle's closed form: the analysis's value
    assert (ours > paper.loc[ours.index]).all()
