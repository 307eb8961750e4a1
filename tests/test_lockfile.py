"""fmat.lockfile: the one mechanism behind the models' and the criterion sources' lock files."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
from pathlib import Path

import pandas as pd
import pytest

from fmat import lockfile
from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
COLS = ["name", "sha256"]


def _add(args):
    path, name = args
    with lockfile.exclusive(path):
        df = lockfile.read(path, COLS, what="test lock", fix="x")
        df = lockfile.replace_rows(df, pd.DataFrame([{"name": name, "sha256": "0" * 64}]), ["name"])
        lockfile.write(path, df, COLS)


def test_parallel_writers_lose_no_row(tmp_path):
    path = tmp_path / "lock.tsv"
    with mp.get_context("fork").Pool(4) as pool:
        pool.map(_add, [(path, f"m{i}") for i in range(40)])
    assert sorted(lockfile.read(path, COLS, what="test lock", fix="x")["name"]) == sorted(f"m{i}" for i in range(40))


def test_read_checks_columns_rows_and_format(tmp_path):
    p = tmp_path / "lock.tsv"
    assert list(lockfile.read(p, COLS, what="test lock", fix="x").columns) == COLS  # none yet: empty
    p.write_text("name\tsha256\textra\na\tbad\t1\n")
    with pytest.raises(InputError, match=r"(?s)test lock is damaged: line 2 has a short sha256.*fix: redo"):
        lockfile.read(
            p, COLS, what="test lock", fix="redo", check_row=lambda r: None if len(r["sha256"]) == 64 else "a short sha256"
        )
    assert list(lockfile.read(p, ["sha256", "name", "new"], what="t", fix="x", optional=["new"]).columns) == [
        "sha256",
        "name",
        "new",
        "extra",
    ]
    p.write_text("name\n\x00\xff")
    with pytest.raises(InputError, match="lacks column|not a tab-separated"):
        lockfile.read(p, COLS, what="test lock", fix="x")
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="not a tab-separated table"):
        lockfile.read(p, COLS, what="test lock", fix="x")


def test_sha256_file_equals_hashlib(tmp_path):
    p = tmp_path / "w.bin"
    p.write_bytes(bytes(range(256)) * 9000)
    assert lockfile.sha256_file(p, chunk=1000) == hashlib.sha256(p.read_bytes()).hexdigest()


def test_one_lock_mechanism():
    """The models' and the criteria's locks both go through fmat.lockfile: no second file-lock,
    reader or digest elsewhere."""
    for path in (REPO / "fmat").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name == "lockfile.py":
            continue
        assert "fcntl" not in text, f"{path}: file locking belongs to fmat.lockfile"
        assert "hashlib.sha256()" not in text or path.name == "agreement.py", f"{path}: use fmat.lockfile.sha256_file"
