"""Lock files: small tab-separated tables that pin what a run used, one mechanism for all of them.

The models' lock (:mod:`fmat.models`; the workflow keeps one per model,
``resources/models/{model}.lock.tsv``) and the criterion sources' lock (the replication's
``resources/criteria.lock.tsv``) are read with :func:`read` (a damaged lock is an InputError
naming the file, the line and the fix, never used as provenance), changed inside
:func:`exclusive` where parallel processes rewrite the same file, and written atomically with
:func:`write`. :func:`sha256_file` is the digest every lock records.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pandas as pd

from .errors import InputError
from .io import write_table


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks.

    Examples
    --------
    As ``sha256sum FILE`` (or R ``digest::digest(file = FILE, algo = "sha256")``):

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.txt"
    >>> _ = path.write_bytes(b"")
    >>> sha256_file(path)
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def exclusive(path: str | os.PathLike):
    """An exclusive lock on ``path`` + ``.lck`` for the block: read, change and write the lock
    file inside it, so that parallel jobs do not lose each other's rows.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> lock = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> import pandas as pd
    >>> with exclusive(lock):
    ...     rows = read(lock, ["model", "commit"], what="lock", fix="-")
    ...     rows = replace_rows(rows, pd.DataFrame({"model": ["m"], "commit": ["abc"]}), ["model"])
    ...     _ = write(lock, rows, ["model", "commit"])
    >>> read(lock, ["model", "commit"], what="lock", fix="-")
      model commit
    0     m    abc
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lck"), "a+") as fh:
        try:
            import fcntl  # here: POSIX only
        except ImportError:  # pragma: no cover - Windows: no parallel jobs to guard against
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def empty(columns: Sequence[str]) -> pd.DataFrame:
    """An empty lock table with ``columns`` (all text).

    Examples
    --------
    >>> empty(["model", "commit"])
    Empty DataFrame
    Columns: [model, commit]
    Index: []
    """
    return pd.DataFrame({c: pd.Series(dtype="str") for c in columns})


def read(
    path: str | os.PathLike,
    columns: Sequence[str],
    *,
    what: str,
    fix: str,
    optional: Iterable[str] = (),
    check_row: Callable[[pd.Series], str | None] | None = None,
) -> pd.DataFrame:
    """The lock table at ``path`` (empty with ``columns`` when there is none yet), checked.

    ``optional`` columns may be missing from an older lock (read as empty text); any other
    missing column, a file that is not a tab-separated table, or a row for which ``check_row``
    returns a problem (text) is an InputError: ``what`` names the file's kind, ``fix`` says
    what to do. Columns come back in the order of ``columns``, other columns after them.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> read(path, ["model", "commit"], what="models lock", fix="delete it").shape
    (0, 2)
    >>> import pandas as pd
    >>> _ = write(path, pd.DataFrame({"model": ["bert"]}), ["model"])
    >>> read(path, ["model", "commit"], what="models lock", fix="delete it")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: ...: the models lock lacks column(s) ['commit']
      fix: delete it
    """
    p = Path(path)
    if not p.exists():
        return empty(columns)
    try:
        df = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False, encoding="utf-8")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as err:
        first = str(err).splitlines()[0] if str(err) else ""
        raise InputError(
            f"the {what} is not a tab-separated table ({type(err).__name__}: {first})", where=str(p), fix=fix
        ) from err
    df = df.assign(**{c: "" for c in optional if c not in df.columns})
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"the {what} lacks column(s) {missing}", where=str(p), fix=fix)
    for line, (_, row) in enumerate(df.iterrows() if check_row else (), start=2):
        if problem := check_row(row):
            raise InputError(f"the {what} is damaged: line {line} has {problem}", where=str(p), fix=fix)
    return df[list(columns) + [c for c in df.columns if c not in columns]]


def write(path: str | os.PathLike, df: pd.DataFrame, columns: Sequence[str]) -> Path:
    """Write the lock table atomically (a killed job leaves the old file), ``columns`` first.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "lock.tsv"
    >>> _ = write(path, pd.DataFrame({"commit": ["abc"], "model": ["bert"]}), ["model"])
    >>> path.read_text().split()
    ['model', 'commit', 'bert', 'abc']
    """
    return write_table(df[list(columns) + [c for c in df.columns if c not in columns]], path, "tsv")


def replace_rows(df: pd.DataFrame, rows: pd.DataFrame, key: Sequence[str]) -> pd.DataFrame:
    """``df`` with the rows whose ``key`` appears in ``rows`` replaced by ``rows`` (appended).

    Examples
    --------
    >>> import pandas as pd
    >>> old = pd.DataFrame({"model": ["a", "b"], "commit": ["1", "2"]})
    >>> replace_rows(old, pd.DataFrame({"model": ["b"], "commit": ["3"]}), ["model"])
      model commit
    0     a      1
    1     b      3
    """
    if not len(rows):
        return df
    keys = set(map(tuple, rows[list(key)].astype(str).to_numpy()))
    keep = [tuple(r) not in keys for r in df[list(key)].astype(str).to_numpy()]
    return pd.concat([df[keep], rows], ignore_index=True)
