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
#: File name extensions and the format each is read and written as.
EXTENSIONS = {"parquet": "parquet", "pq": "parquet", "csv": "csv", "tsv": "tsv", "txt": "tsv"}
PARQUET_MAGIC = b"PAR1"


def _accepted() -> str:
    return ", ".join(f".{e}" for e in EXTENSIONS)


def table_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The format of a table file: ``fmt`` if given, else from the extension (.parquet/.pq,
    .csv, .tsv/.txt). A file without an extension is parquet; any other extension (.xlsx,
    .csv.gz) is an InputError that names the accepted ones."""
    if fmt:
        if fmt not in FORMATS:
            raise InputError(f"unknown table format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    if not suffix:
        return "parquet"
    if suffix not in EXTENSIONS:
        raise InputError(f"cannot read or write a .{suffix} table", where=str(path),
                         fix=f"use one of {_accepted()} (parquet, or CSV/TSV text in UTF-8; "
                             "export spreadsheets as CSV, unpack .gz files)")
    return EXTENSIONS[suffix]


def read_table(path: str | os.PathLike, fmt: str | None = None) -> pd.DataFrame:
    """Read a parquet/CSV/TSV table; a missing, mislabelled or broken file is an InputError
    naming the file (parquet is checked by its PAR1 magic bytes, text as UTF-8)."""
    from .validate import read_text

    path = Path(path)
    where = str(path)
    if not path.exists():
        raise InputError(f"file not found: {path}", fix="check the path (relative to the current folder)")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a table file", where=where, fix="give the table file itself")
    kind = table_format(path, fmt)
    try:
        if kind == "parquet":
            with open(path, "rb") as fh:
                head = fh.read(4)
                fh.seek(max(0, path.stat().st_size - 4))
                tail = fh.read(4)
            if head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
                raise InputError("not a parquet file (parquet files begin and end with 'PAR1'; this one "
                                 f"begins with {head!r}{' and is truncated' if head == PARQUET_MAGIC else ''})",
                                 where=where, fix=f"give a parquet table, or a CSV/TSV with the extension "
                                                  f".csv/.tsv (accepted: {_accepted()})")
            return pd.read_parquet(path)
        import io as _io

        text = read_text(path, "table")
        sep = "," if kind == "csv" else "\t"
        return pd.read_csv(_io.StringIO(text), sep=sep, keep_default_na=True)
    except InputError:
        raise
    except MemoryError:
        raise InputError("the table does not fit in memory", where=where, fix="use a smaller table") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as err:
        raise InputError(f"cannot read the {kind} table: {type(err).__name__}: {str(err)[:300]}", where=where,
                         fix=f"give a {kind} table written by fmat or R (accepted: {_accepted()})") from None
    except Exception as err:  # pyarrow's errors (ArrowInvalid, ArrowIOError...) are not all ValueErrors
        if type(err).__module__.startswith("pyarrow"):
            raise InputError(f"cannot read the parquet table: {str(err)[:300]}", where=where,
                             fix="the file is damaged or not parquet; write it again") from None
        raise


def umask() -> int:
    """The process umask (read without changing it, where the system allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
        try:  # mkstemp makes 0600; outputs follow the umask as other programs' files do
            os.fchmod(fd, 0o666 & ~umask())
        finally:
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
