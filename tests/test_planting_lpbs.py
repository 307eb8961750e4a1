"""A study scored with LPBS (``score: {method: lpbs}``, e.g. X2) in a planted world: a world
plants P(option | sentence) only, never the prior LPBS divides by, so ``fmat pilot`` and
``fmat power`` refuse it with an error naming the study file and ``score.method``, before any
model is trained or any world drawn. Before, ``fmat pilot`` trained every model and only then
failed with "scores have no 'prior' column"; ``fmat power`` failed the same way in its first world."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fmat.cli import main
from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
X2 = REPO / "config" / "studies" / "X2.yaml"
WORLD = REPO / "config" / "world.yaml"


def _never(*args, **kwargs):
    raise AssertionError("trained a model or drew a world for an LPBS study")


def _says_why_and_the_fix(err: str, command: str) -> None:
    assert f"{X2}: score.method" in err, err
    assert f"{command} cannot run study X2" in err and "lpbs" in err and "no prior" in err, err
    assert "fix:" in err and "score: {method: fmat}" in err and "config/studies/3A.yaml" in err, err
    assert "Traceback" not in err and "scores have no 'prior' column" not in err, err


def test_fmat_pilot_refuses_an_lpbs_study_before_any_training(tmp_path, capsys, monkeypatch):
    import fmat.commands.pilot
    import fmat.tiny

    monkeypatch.setattr(fmat.tiny, "build_trained_model", _never)
    monkeypatch.setattr(fmat.commands.pilot, "_train_models", _never)
    out = tmp_path / "pilot-X2"
    start = time.monotonic()
    rc = main(["pilot", str(X2), "--world", str(WORLD), "-o", str(out), "--families", "bert-uncased,roberta", "--steps", "5"])
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert rc == 2, err
    _says_why_and_the_fix(err, "fmat pilot")
    assert not out.exists()  # no folder claimed, no models/ folder
    assert took < 15, took


def test_fmat_power_refuses_an_lpbs_study_before_any_world(tmp_path, capsys, monkeypatch):
    import fmat.power

    monkeypatch.setattr(fmat.power, "_one_world", _never)
    out = tmp_path / "power-X2"
    rc = main(["power", str(X2), "--world", str(WORLD), "-o", str(out), "--models", "3", "--worlds", "2", "--jobs", "1"])
    err = capsys.readouterr().err
    assert rc == 2, err
    _says_why_and_the_fix(err, "fmat power")
    assert not out.exists()


def test_power_table_refuses_an_lpbs_study_before_any_world(monkeypatch):
    import fmat.power
    from fmat.plant import load_world
    from fmat.study import load_study

    monkeypatch.setattr(fmat.power, "_one_world", _never)
    study = load_study(X2)
    with pytest.raises(InputError) as info:
        fmat.power.power_table(study, load_world(WORLD).plant("X2"), models=[3], worlds=1)
    assert info.value.where == f"{X2}: score.method", info.value.where
    assert "score: {method: fmat}" in info.value.fix


def test_the_same_design_scored_as_lprs_is_accepted(tmp_path, capsys, monkeypatch):
    """The fix the error gives works: X2's design with score: {method: fmat} gets past the check
    (here up to the training, which is stopped)."""
    import fmat.commands.pilot

    reached = []

    def stop(*args, **kwargs):
        reached.append(True)
        raise RuntimeError("stopped before training")

    monkeypatch.setattr(fmat.commands.pilot, "_train_models", stop)
    mine = tmp_path / "X2.yaml"
    mine.write_text(X2.read_text(encoding="utf-8").replace("method: lpbs", "method: fmat"), encoding="utf-8")
    main(["pilot", str(mine), "--world", str(WORLD), "-o", str(tmp_path / "o"), "--families", "bert-uncased,roberta"])
    err = capsys.readouterr().err
    assert reached == [True], err
    assert "score.method" not in err and "stopped before training" in err, err
