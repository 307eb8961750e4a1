"""Score groups (one scoring job per model and group) and local model folders in the config
(issue 19). Fast: no Snakemake, no model loads (the folders hold a config and dummy weights)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat_replication.config import check_model_folder, model_folder, model_table, score_groups, validate_config
from fmat_replication.model_stage import local_model

REPO = Path(__file__).resolve().parents[1]
STUDIES_DIR = str(REPO / "config" / "studies")


def test_groups_keep_config_order_and_ungrouped_studies_get_their_own():
    cfg = {"studies": ["X1", "3A", "1A", "3D", "X2"], "score_groups": {"paper": ["1A", "3A", "3D", "4A"]}}
    assert score_groups(cfg) == {"paper": ["3A", "1A", "3D"], "study_X1": ["X1"], "study_X2": ["X2"]}
    # a group none of whose studies is configured has no jobs
    assert score_groups({"studies": ["X1"], "score_groups": {"paper": ["1A"]}}) == {"study_X1": ["X1"]}
    # no groups at all: one job per model and study
    assert score_groups({"studies": ["2A", "2B"]}) == {"study_2A": ["2A"], "study_2B": ["2B"]}


def test_adding_a_study_leaves_the_other_groups_as_they_were():
    paper = [f"{n}{c}" for n in "1234" for c in "ABCD" if f"{n}{c}" not in ("1D",)]
    before = score_groups({"studies": paper, "score_groups": {"paper": paper}})
    after = score_groups({"studies": paper + ["X1"], "score_groups": {"paper": paper}})
    assert after == {**before, "study_X1": ["X1"]}
    assert list(before) == ["paper"]  # the paper: ONE scoring job per model


@pytest.mark.parametrize(
    "groups, message",
    [
        ({"a": ["3A"], "b": ["3A"]}, "study '3A' is in two score groups, 'a' and 'b'"),
        ({"study_X1": ["3A"]}, "would be scored in a group named 'study_X1'"),
    ],
)
def test_bad_groups_are_named(groups, message):
    cfg = {"models": ["bert-base-uncased"], "studies": ["3A", "X1"], "studies_dir": STUDIES_DIR, "score_groups": groups}
    with pytest.raises(InputError) as err:
        validate_config(cfg, load_studies=False)
    assert message in str(err.value)
    assert "config.score_groups" in str(err.value)


def test_group_names_are_checked_by_the_schema():
    cfg = {"models": ["bert-base-uncased"], "studies": ["3A"], "studies_dir": STUDIES_DIR, "score_groups": {"my.group": ["3A"]}}
    with pytest.raises(InputError, match="config.score_groups"):
        validate_config(cfg, load_studies=False)
    # issue 35: a dash is allowed (the message said so); the name becomes the rule score_my-group
    assert validate_config({**cfg, "score_groups": {"my-group": ["3A"]}}, load_studies=False)["score_groups"] == {
        "my-group": ["3A"]
    }


def _folder(path: Path, weights: bytes = b"weights") -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_a_local_folder_is_resolved_from_the_repository_root(tmp_path):
    _folder(tmp_path / "models" / "mine")
    spec = model_table({"models": [{"name": "my-bert", "path": "models/mine"}]})["my-bert"]
    assert spec.path == "models/mine"
    assert model_folder(spec, tmp_path) == tmp_path / "models" / "mine"
    assert check_model_folder(spec, tmp_path) == tmp_path / "models" / "mine"
    assert model_folder(model_table({"models": ["bert-base-uncased"]})["bert-base-uncased"], tmp_path) is None
    cfg = {
        "models": [{"name": "my-bert", "path": "models/mine"}, "bert-base-uncased"],
        "studies": ["3A"],
        "studies_dir": STUDIES_DIR,
    }
    assert validate_config(cfg, load_studies=False, repo=tmp_path)["models"] == cfg["models"]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "there is no folder"),
        (lambda p: p.mkdir(), "has no config.json, model.safetensors or pytorch_model.bin"),
        (lambda p: (p.mkdir(), (p / "config.json").write_text("{}")), "has no model.safetensors or pytorch_model.bin"),
    ],
)
def test_a_bad_local_folder_is_named_before_any_job(tmp_path, make, message):
    make(tmp_path / "mine")
    cfg = {"models": ["bert-base-uncased", {"name": "my-bert", "path": "mine"}], "studies": ["3A"], "studies_dir": STUDIES_DIR}
    with pytest.raises(InputError) as err:
        validate_config(cfg, load_studies=False, repo=tmp_path)
    assert message in str(err.value)
    assert "config.models[1].path" in str(err.value)


def test_tiny_and_path_together_are_refused(tmp_path):
    _folder(tmp_path / "mine")
    cfg = {"models": [{"name": "t", "tiny": "bert-uncased", "path": "mine"}], "studies": ["3A"], "studies_dir": STUDIES_DIR}
    with pytest.raises(InputError, match="both `tiny` and `path`"):
        validate_config(cfg, load_studies=False, repo=tmp_path)


def test_a_local_model_is_locked_with_its_weights_hash(tmp_path):
    folder = _folder(tmp_path / "mine", b"abc")
    lock = tmp_path / "models.lock.tsv"
    marker = local_model("my-bert", folder, lock=lock)
    assert marker["path"] == str(folder.resolve()) and marker["source"] == "local"
    row = pd.read_csv(lock, sep="\t").iloc[0]
    assert row["model"] == "my-bert" and row["revision"] == "local" and row["commit"] == str(folder.resolve())
    assert row["sha256"] == hashlib.sha256(b"abc").hexdigest() == marker["sha256"]
    assert row["files"] == "config.json,model.safetensors"
    # new weights: a new hash, one row per model
    (folder / "model.safetensors").write_bytes(b"abd")
    local_model("my-bert", folder, lock=lock)
    rows = pd.read_csv(lock, sep="\t")
    assert len(rows) == 1 and rows["sha256"].iloc[0] == hashlib.sha256(b"abd").hexdigest()


def test_a_study_added_to_a_finished_group_is_not_called_lost():
    """Issue 44: the "lost table" note fired when a study was added to an existing score group,
    calling tables that never existed "missing from a finished run". Only a table whose study has
    its LPR table (so the table existed once) is lost; a new model's tables are not either."""
    from fmat_replication.score import lost_tables

    groups = {"paper": ["2A", "3A", "NEW"]}
    files = {"results/lpr/2A.parquet", "results/lpr/3A.parquet"}
    files |= {f"results/scores/{s}/{m}.parquet" for s in ("2A", "3A") for m in ("m1", "m2")}
    assert lost_tables(groups, ["m1", "m2", "m3"], exists=files.__contains__) == []  # NEW and m3: never existed
    files.discard("results/scores/3A/m2.parquet")  # a table of a finished study deleted: lost
    assert lost_tables(groups, ["m1", "m2", "m3"], exists=files.__contains__) == [("3A", "m2", "paper")]
