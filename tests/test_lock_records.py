"""A model's lock record is a promise (issue 44): a job that loads a model refuses a record that
vouches for nothing -- missing, cut to its header, emptied, cut mid-row, listing another model,
without a sha256, or naming another folder -- with an error naming the model, the record and the
fix (rerun that model's download job alone); the gathered lock file never drops a model silently.
The workflow's own runs of these cases: tests/test_declared_locks.py."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.models import LOCK_COLUMNS
from fmat_replication.model_stage import check_lock_record, gather_lock

SHA = hashlib.sha256(b"weights").hexdigest()


def record(tmp_path, rows, name="tiny-a.lock.tsv"):
    path = tmp_path / name
    pd.DataFrame(rows, columns=LOCK_COLUMNS).to_csv(path, sep="\t", index=False)
    return path


def row(model="tiny-a", folder="models/tiny-a", sha=SHA):
    return {"model": model, "revision": "local", "commit": folder, "files": "config.json,model.safetensors", "sha256": sha,
            "date": "2026-11-27T10:00:00Z", "created": ""}  # fmt: skip


@pytest.fixture
def marker(tmp_path):
    folder = tmp_path / "models" / "tiny-a"
    folder.mkdir(parents=True)
    return {"name": "tiny-a", "path": str(folder)}


def test_a_good_record_passes(tmp_path, marker):
    check_lock_record(record(tmp_path, [row(folder=marker["path"])]), marker)
    check_lock_record(None, marker)  # the demo: no record, nothing to check


def _cut_to_header(path):
    path.write_text(path.read_text().splitlines()[0] + "\n")


def _cut_mid_row(path):
    text = path.read_text()
    path.write_text(text[: len(text) - 40])


def _emptied(path):
    path.write_text("")


def _other_model(path):
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    df["model"] = "tiny-b"
    df.to_csv(path, sep="\t", index=False)


def _no_sha(path):
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    df["sha256"] = ""
    df.to_csv(path, sep="\t", index=False)


def _other_folder(path):
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    df["commit"] = "/elsewhere/tiny-a"
    df.to_csv(path, sep="\t", index=False)


def _deleted(path):
    path.unlink()


@pytest.mark.parametrize(
    "damage, says",
    [
        (_cut_to_header, "has no row for it (it holds only its header)"),
        (_emptied, "cannot be read"),
        (_cut_mid_row, "cannot be read"),
        (_other_model, "has no row for it (it lists 'tiny-b')"),
        (_no_sha, "has no sha256"),
        (_other_folder, "not the local folder"),
        (_deleted, "is missing"),
    ],
)
def test_a_record_that_vouches_for_nothing_is_refused(tmp_path, marker, damage, says):
    path = record(tmp_path, [row(folder=marker["path"])])
    damage(path)
    with pytest.raises(InputError) as err:
        check_lock_record(path, marker)
    text = str(err.value)
    assert says in text, text
    assert "'tiny-a'" in text and str(path) in text  # the model and the record
    assert "--forcerun resources/models/tiny-a.json" in text  # the fix: that model's download job alone


def test_gathering_refuses_a_record_without_its_model(tmp_path, marker):
    good = record(tmp_path, [row(folder=marker["path"])])
    empty = record(tmp_path, [], name="tiny-b.lock.tsv")
    out = tmp_path / "models.lock.tsv"
    gather_lock([good], out)
    assert pd.read_csv(out, sep="\t")["model"].tolist() == ["tiny-a"]
    with pytest.raises(InputError, match=r"tiny-b\.lock\.tsv has no row for its model \(tiny-b\)"):
        gather_lock([good, empty], out)
