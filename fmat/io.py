"""Reading and writing tables: parquet by default, CSV for R users.

All writes are atomic (write to a temporary file in the same folder, then rename), so a
killed run never leaves a half-written output that looks finished.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from .errors import InputError

FORMATS = ("parquet", "csv", "tsv")


def table_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The format of ``path``: ``fmt`` if given, else from the extension (default parquet)."""
    if fmt:
        if fmt not in FORMATS:
            raise InputError(f"unknown table format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in ("csv",):
        return "csv"
    if suffix in ("tsv", "txt"):
        return "tsv"
    return "parquet"


def read_table(path: str | os.PathLike, fmt: str | None = None) -> pd.DataFrame:
    """Read a parquet/CSV/TSV table; a missing file is a clear error."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}", fix="check the path (relative to the current folder)")
    kind = table_format(path, fmt)
    if kind == "parquet":
        return pd.read_parquet(path)
    sep = "," if kind == "csv" else "\t"
    return pd.read_csv(path, sep=sep, keep_default_na=True)


def atomic_path(path: str | os.PathLike):
    """Context manager yielding a temporary path that replaces ``path`` on success."""
    return _Atomic(Path(path))


class _Atomic:
    def __init__(self, path: Path):
        self.path = path
        self.tmp: Path | None = None

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        assert self.tmp is not None
        if exc_type is None:
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)
        return False


def write_table(df: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``df`` atomically as parquet (default), CSV or TSV; returns the path."""
    path = Path(path)
    kind = table_format(path, fmt)
    with atomic_path(path) as tmp:
        if kind == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, sep="," if kind == "csv" else "\t", index=False, na_rep="NA")
    return path
