"""Output folders are claimed with a run record (``.fmat-run.json``, :func:`fmat.io.claim_folder`):
``--force`` removes exactly the files an earlier run recorded, never the user's own, and the record
is fmat's own file (never written through a link; a damaged one is called damaged). Issue 55."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fmat import tiny
from fmat.cli import main
from fmat.errors import InputError
from fmat.io import FOLDER_RECORD, claim_folder, settle_folder_record

REPO = Path(__file__).resolve().parents[1]
X1 = str(REPO / "config" / "studies" / "X1.yaml")
WORLD = str(REPO / "config" / "world.yaml")
PILOT = ["models/", "models/pilot-bert-uncased", "models/pilot-albert", "scores.parquet", "recovery.csv"]


def _earlier_pilot(out: Path, study: str = "X2") -> None:
    """The folder as a pilot of ``study`` (bert-uncased and albert) leaves it."""
    claim_folder(out, command="pilot", study=study, names=PILOT)
    for name in ("models/pilot-bert-uncased", "models/pilot-albert"):
        (out / name).mkdir(parents=True)
        (out / name / "config.json").write_text("{}", encoding="utf-8")
    (out / "scores.parquet").write_bytes(b"PAR1 earlier PAR1")
    (out / "recovery.csv").write_text("model\n", encoding="utf-8")


def _users_files(out: Path) -> dict[str, bytes]:
    """A user's own model inside models/, and notes beside it."""
    (out / "models" / "my-bert").mkdir(parents=True, exist_ok=True)
    (out / "models" / "my-bert" / "config.json").write_text('{"mine": true}', encoding="utf-8")
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    (out / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return {p: (out / p).read_bytes() for p in ("models/my-bert/config.json", "notes.txt", "data.csv")}


@pytest.fixture()
def no_training(monkeypatch):
    """`fmat pilot` stops (Ctrl-C) where it would train its first model: what --force removed is
    then what a real pilot had removed."""

    def train(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tiny, "build_trained_model", train)


def test_pilot_force_keeps_a_users_model_folder_inside_models(tmp_path, capsys, no_training):
    """Issue 55: `fmat pilot --force` removed the whole models/ folder, the user's models/my-bert
    with it; a pilot writes only models/pilot-<family>/. Now --force removes what the earlier
    pilot recorded, and the refusal names that pilot's files, not the user's."""
    out = tmp_path / "project"
    _earlier_pilot(out)
    theirs = _users_files(out)
    args = ["pilot", X1, "--world", WORLD, "-o", str(out), "--families", "bert-uncased,roberta"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "holds the files of a run of `fmat pilot` on study 'X2'" in err and "--force" in err, err
    assert "models/pilot-albert" in err and "my-bert" not in err and "notes.txt" not in err, err
    assert (out / "models" / "pilot-albert" / "config.json").is_file()  # refused: nothing removed
    assert main([*args, "--force"]) == 130
    capsys.readouterr()
    assert {p: (out / p).read_bytes() for p in theirs} == theirs
    assert not (out / "models" / "pilot-albert").exists() and not (out / "models" / "pilot-bert-uncased").exists()
    assert not (out / "scores.parquet").exists() and not (out / "recovery.csv").exists()
    record = json.loads((out / FOLDER_RECORD).read_text(encoding="utf-8"))
    assert record["command"] == "pilot" and record["study"] == "X1"
    assert "models/pilot-roberta" in record["files"] and "models/my-bert" not in record["files"]
    assert "models/" not in record["files"]  # models/ was there before: not this pilot's folder


def test_pilot_into_a_project_folder_touches_none_of_its_files(tmp_path, capsys, no_training):
    """The issue's folder (models/my-bert, notes.txt, data.csv, no record): a pilot writes beside
    them, as nothing there bears one of its names; no refusal calls them an earlier run's."""
    out = tmp_path / "project"
    out.mkdir()
    theirs = _users_files(out)
    assert main(["pilot", X1, "--world", WORLD, "-o", str(out), "--families", "bert-uncased,roberta"]) == 130
    assert "earlier run" not in capsys.readouterr().err
    assert {p: (out / p).read_bytes() for p in theirs} == theirs


def test_a_recorded_folder_that_holds_a_users_file_is_kept():
    """A folder the earlier run made (models/) is removed by --force only when it is empty once
    that run's files are gone."""
    import tempfile

    for users in (False, True):
        out = Path(tempfile.mkdtemp()) / "o"
        _earlier_pilot(out)
        assert "models/" in json.loads((out / FOLDER_RECORD).read_text(encoding="utf-8"))["files"]
        if users:
            (out / "models" / "my-bert").mkdir()
        claim_folder(out, command="pilot", study="X1", names=PILOT, force=True)
        assert (out / "models").exists() == users
        assert (out / "models" / "my-bert").exists() == users


def test_a_users_file_named_like_ours_is_theirs_force_or_not(tmp_path):
    """A file of one of the names the run writes, not in the record: the user's. Refused with and
    without force, named as the user's, and left as it is (so are the earlier run's files)."""
    out = tmp_path / "o"
    claim_folder(out, command="pilot", study="X2", names=["scores.parquet"])
    (out / "scores.parquet").write_bytes(b"earlier")
    (out / "recovery.csv").write_text("mine", encoding="utf-8")  # a name the next run writes, not recorded
    for force in (False, True):
        with pytest.raises(InputError) as err:
            claim_folder(out, command="pilot", study="X1", names=["scores.parquet", "recovery.csv"], force=force)
        assert "holds recovery.csv, which no fmat run recorded as its own" in err.value.message
        assert "your file" in err.value.message and "--force included" in err.value.message
    assert (out / "recovery.csv").read_text(encoding="utf-8") == "mine"
    assert (out / "scores.parquet").read_bytes() == b"earlier"


def test_the_record_lists_what_the_run_wrote_not_what_it_would_have(tmp_path):
    """settle_folder_record at a run's end: a name the run did not write (a pilot without
    expectations writes no expectations.csv) is not kept as fmat's, so a user's file of that name
    made later survives the next --force."""
    out = tmp_path / "o"
    claim_folder(out, command="pilot", study="X2", names=["scores.parquet", "expectations.csv"])
    (out / "scores.parquet").write_bytes(b"ours")
    settle_folder_record(out)
    assert json.loads((out / FOLDER_RECORD).read_text(encoding="utf-8"))["files"] == ["scores.parquet"]
    (out / "expectations.csv").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="holds expectations.csv, which no fmat run recorded"):
        claim_folder(out, command="pilot", study="X1", names=["scores.parquet", "expectations.csv"], force=True)


def test_a_record_that_lists_paths_outside_the_folder_is_damaged_and_nothing_is_removed(tmp_path):
    """A record is data fmat reads: one that lists ../ or an absolute path is damaged, never a
    list of what to remove."""
    out = tmp_path / "o"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (out / "scores.parquet").write_bytes(b"x")
    for files in (["../victim.txt", "scores.parquet"], [str(victim), "scores.parquet"], "scores.parquet"):
        (out / FOLDER_RECORD).write_text(json.dumps({"command": "pilot", "study": "X2", "files": files}), encoding="utf-8")
        with pytest.raises(InputError, match="is damaged"):
            claim_folder(out, command="pilot", study="X1", names=["scores.parquet"], force=True)
        assert victim.read_text(encoding="utf-8") == "keep me" and (out / "scores.parquet").exists()


def test_the_record_is_replaced_whole_never_written_through_a_link(tmp_path):
    out = tmp_path / "o"
    claim_folder(out, command="power", study="X1", names=["power.csv"])
    outside = tmp_path / "outside.json"
    outside.write_text("the user's", encoding="utf-8")
    (out / FOLDER_RECORD).unlink()
    (out / FOLDER_RECORD).symlink_to(outside)
    for resume in (False, True):
        with pytest.raises(InputError, match="is a symbolic link") as err:
            claim_folder(out, command="power", study="X1", names=["power.csv"], resume=resume)
        assert err.value.where == "-o/--output" and "remove the link" in err.value.fix
    assert outside.read_text(encoding="utf-8") == "the user's"
    settle_folder_record(out)  # at a run's end: never raises, never writes through the link
    assert outside.read_text(encoding="utf-8") == "the user's"
    assert sorted(p.name for p in out.iterdir()) == [FOLDER_RECORD]  # no temporary file left


def test_fmat_power_claims_its_folder(tmp_path, capsys, monkeypatch):
    """`fmat power` made its folder and wrote into any: now it claims it as the other commands
    do, before any simulation, and --force removes only the recorded files."""
    import fmat.power

    out = tmp_path / "o"
    _earlier_pilot(out, study="X1")
    theirs = _users_files(out)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fmat.power, "power_table", stop)
    args = ["power", X1, "--world", WORLD, "-o", str(out), "--models", "3", "--worlds", "1", "--jobs", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "holds the files of a run of `fmat pilot` on study 'X1'" in err, err
    assert main([*args, "--force"]) == 130
    capsys.readouterr()
    assert {p: (out / p).read_bytes() for p in theirs} == theirs
    assert not (out / "scores.parquet").exists() and not (out / "models" / "pilot-albert").exists()
    record = json.loads((out / FOLDER_RECORD).read_text(encoding="utf-8"))
    assert (record["command"], record["study"]) == ("power", "X1")


@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_fmat_power_checks_its_seed_before_any_simulation(tmp_path, capsys, monkeypatch, seed):
    """Issue 55: `fmat power --seed -1` simulated for 38 s, then "unexpected error" (numpy's seeds
    are 0 or more). Now refused before any simulation, naming --seed."""
    import fmat.power

    def simulated(*args, **kwargs):
        raise AssertionError("simulated before the arguments were checked")

    monkeypatch.setattr(fmat.power, "power_table", simulated)
    assert main(["power", X1, "--world", WORLD, "-o", str(tmp_path / "o"), "--seed", seed]) == 2
    err = capsys.readouterr().err
    assert (
        f"--seed: a seed is a whole number from 0 to 4294967295, not {seed}" in err and "fix: give a seed of 0 or more" in err
    ), err
    assert not (tmp_path / "o").exists()
