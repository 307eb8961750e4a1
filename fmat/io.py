"""Reading and writing tables: parquet by default, CSV for R users.

All writes are atomic (write to a temporary file in the same folder, then rename), so a
killed run never leaves a half-written output that looks finished. Only regular files are
written: an existing regular file is replaced, a symbolic link is written through (its target
gets the new content, the link stays), a folder, device, FIFO or socket is refused.
:func:`check_output` refuses, before any work, an output that is one of the command's inputs.
"""

from __future__ import annotations

import io as _io
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Iterable

import pandas as pd
import pyarrow.parquet as pq

from .errors import InputError, os_error
from .validate import check_separator, read_text

FORMATS = ("parquet", "csv", "tsv")
#: File name extensions and the format each is read and written as.
EXTENSIONS = {"parquet": "parquet", "pq": "parquet", "csv": "csv", "tsv": "tsv", "txt": "tsv"}
PARQUET_MAGIC = b"PAR1"


#: the fix for an fmat/workflow output that is damaged (docs/resuming.md)
DAMAGED_FIX = (
    "write it again: a workflow output is rebuilt when you delete it and run the same snakemake "
    "command again (docs/resuming.md); a table from fmat run/summary: run that command again"
)


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
        raise InputError(
            f"cannot read or write a .{suffix} table",
            where=str(path),
            fix=f"use one of {_accepted()} (parquet, or CSV/TSV text in UTF-8; export spreadsheets as CSV, unpack .gz files)",
        )
    return EXTENSIONS[suffix]


def read_table(path: str | os.PathLike, fmt: str | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a parquet/CSV/TSV table; a missing, mislabelled or broken file is an InputError
    naming the file (parquet is checked by its PAR1 magic bytes, text as UTF-8). ``columns``:
    read only those of them the table has (a parquet file reads no other column)."""

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
            if head == PARQUET_MAGIC and tail != PARQUET_MAGIC:
                raise InputError(
                    "the parquet file is truncated or damaged (it begins with 'PAR1' but does not "
                    "end with it: a killed copy, a full disk?)",
                    where=where,
                    fix=DAMAGED_FIX,
                )
            if head != PARQUET_MAGIC:
                raise InputError(
                    f"not a parquet file (parquet files begin and end with 'PAR1'; this one begins with {head!r})",
                    where=where,
                    fix=f"if it is a CSV/TSV table, give it the extension .csv/.tsv (accepted: "
                    f"{_accepted()}); if fmat or the workflow wrote it, it is damaged: {DAMAGED_FIX}",
                )
            if columns is not None:
                have = set(pq.read_schema(path).names)
                return pd.read_parquet(path, columns=[c for c in columns if c in have])
            return pd.read_parquet(path)
        text = read_text(path, "table")
        sep = "," if kind == "csv" else "\t"
        check_separator(text, sep, where)
        table = pd.read_csv(_io.StringIO(text), sep=sep, keep_default_na=True)
        return table if columns is None else table[[c for c in columns if c in table.columns]]
    except InputError:
        raise
    except MemoryError:
        raise InputError("the table does not fit in memory", where=where, fix="use a smaller table") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as err:
        if os_error(err) is not None:
            raise  # permission denied, ...: the CLI names the file and the fix
        if kind == "parquet":  # it has parquet's marks at both ends, so it was one: it is damaged
            raise InputError(
                f"cannot read the parquet table (damaged?): {type(err).__name__}: {str(err)[:300]}", where=where, fix=DAMAGED_FIX
            ) from None
        raise InputError(
            f"cannot read the {kind} table: {type(err).__name__}: {str(err)[:300]}",
            where=where,
            fix=f"give a {kind} table written by fmat or R (accepted: {_accepted()})",
        ) from None
    except Exception as err:  # pyarrow's errors (ArrowInvalid, ArrowIOError...) are not all ValueErrors
        if type(err).__module__.startswith("pyarrow"):
            raise InputError(
                f"cannot read the parquet table (damaged?): {str(err)[:300]}", where=where, fix=DAMAGED_FIX
            ) from None
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


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is ("a folder", "a device"...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


_STREAM_NAMES = {0: "standard input", 1: "standard output", 2: "standard error"}


def _open_descriptor(path: Path) -> str | None:
    """What ``path`` is when it names a file this process has open (``/dev/stdout``,
    ``/dev/fd/N``, ``/proc/self/fd/N``, or the very file standard output is redirected to); else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    for fd, name in _STREAM_NAMES.items():
        try:
            fst = os.fstat(fd)
        except OSError:
            continue
        if (fst.st_dev, fst.st_ino) == (st.st_dev, st.st_ino):
            return f"this command's {name}"
    hop, seen = Path(os.path.abspath(path)), 0
    while seen < 40:
        text = str(hop)
        if (
            text in ("/dev/stdin", "/dev/stdout", "/dev/stderr")
            or text.startswith("/dev/fd/")
            or (text.startswith("/proc/") and "/fd/" in text)
        ):
            return "an open file descriptor of this command"
        if not hop.is_symlink():
            return None
        hop, seen = Path(os.path.abspath(hop.parent / os.readlink(hop))), seen + 1
    return None


def _refuse_special(path: Path, where: str | None = None) -> None:
    """InputError when ``path`` (followed through links) exists and is not a regular file, or is a
    file this process has open (its standard output redirected to a file, ``/dev/fd/N``)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:  # e.g. a path through a file (ENOTDIR): the write will say it
        return
    kind = _kind_of(mode)
    stream = _open_descriptor(path) if kind is None else None
    if stream:
        raise InputError(
            f"{path} is {stream}, redirected to the file {os.path.realpath(path)}: fmat writes an "
            "output to a new file and renames it over the old one, which would cut that file off "
            "from everything written to it before and after (a log would keep only the table)",
            where=where,
            fix="give the output file's own name (e.g. -o table.csv), or leave out -o for a preview on the screen",
        )
    if kind == "a folder":
        raise InputError(f"{path} is a folder, not a file", where=where, fix=f"give a file name, e.g. {Path(path) / 'NAME'}.EXT")
    if kind:
        raise InputError(
            f"{path} is {kind}; fmat writes only regular files and never replaces anything else",
            where=where,
            fix="give the path of a (new or existing) regular file",
        )


def write_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symbolic link points to
    (outputs are written THROUGH links: the link stays, its target gets the new content)."""
    return Path(os.path.realpath(path))


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Are ``a`` and ``b`` the same file (same inode: also through symbolic and hard links)?"""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def why_not_writable(folder: str | os.PathLike) -> str:
    """Why a folder this process may not write cannot be written: its file system is read-only,
    or permission is denied."""
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "its file system is read-only" if read_only else "permission denied"


def _writable_folder(target: Path, where: str | None, *, is_folder: bool = False) -> None:
    """InputError unless the folder ``target`` goes into (``is_folder``: ``target`` itself) exists
    or can be made, and may be written."""
    folder = target if is_folder else target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"cannot write {target}: {folder} is a file, not a folder", where=where, fix="check the path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(
            f"cannot write into the folder {folder}: {why_not_writable(folder)}",
            where=where,
            fix="write to a folder you may write (another output path), or change its permissions",
        )


def check_output(
    path: str | os.PathLike,
    *,
    inputs: Iterable[str | os.PathLike] = (),
    where: str = "-o/--output",
    fmt: str | None = None,
    table: bool = True,
    folder: bool = False,
) -> Path:
    """Check an output path BEFORE any work: returns the file that will be written.

    Refused (:class:`~fmat.errors.InputError` naming ``where``, the path and the fix):

    - an existing folder, device, FIFO or socket: only regular files are written (an existing
      regular file is replaced, atomically; a symbolic link is written through to its target);
    - the same file as one of ``inputs`` (compared by inode: also through symbolic and hard links);
    - with ``table``: an extension fmat does not write (:func:`table_format`, unless ``fmt``);
    - a place that cannot be written: a read-only file system, no permission, a path through a file.

    ``folder=True``: ``path`` is an output FOLDER (``fmat study -o``): it must be a folder or not
    exist, and it must not be one of the inputs.
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise InputError("the output path is empty", where=where, fix="give a file name")
    if folder:
        target = write_target(path)
        if target.exists() and not target.is_dir():
            raise InputError(f"{path} is a file, not a folder", where=where, fix="give a folder (new or existing)")
        for item in inputs:
            if item and same_file(target, item):
                raise InputError(f"{path} is the input {item}", where=where, fix="give another output folder")
        _writable_folder(target, where, is_folder=True)
        return target
    _refuse_special(Path(text), where)
    target = write_target(path)
    for item in inputs:
        if item and same_file(target, item):
            raise InputError(
                f"{path} is the input file {item}: writing it would destroy the input",
                where=where,
                fix="write the output to another file",
            )
    if table:
        try:
            table_format(path, fmt)
        except InputError as err:
            raise InputError(err.message, where=f"{where} {path}", fix=err.fix) from None
    _writable_folder(target, where)
    return target


def atomic_path(path: str | os.PathLike):
    """Context manager yielding a temporary path that replaces ``path`` on success.

    A symbolic link is written through (its target is replaced; the link stays); an existing
    folder, device, FIFO or socket is refused (InputError), never replaced. An OSError inside
    the block (a full disk...) is raised again naming ``path`` instead of the temporary file.
    """
    return _Atomic(Path(path))


class _Atomic:
    def __init__(self, path: Path):
        self.path = path
        self.target = path
        self.tmp: Path | None = None

    def _named(self, err: OSError) -> OSError:
        """``err`` naming the output instead of the temporary file (pyarrow's name no file at all)."""
        if err.errno and err.filename in (None, str(self.tmp)):
            return OSError(err.errno, os.strerror(err.errno), str(self.path))
        return err

    def __enter__(self) -> Path:
        _refuse_special(self.path)
        self.target = write_target(self.path)
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent)
        except OSError as err:  # the folder cannot be made or written: name the output
            if not err.errno:
                raise
            raise OSError(err.errno, os.strerror(err.errno), str(self.path)) from err
        try:  # mkstemp makes 0600; outputs follow the umask as other programs' files do
            os.fchmod(fd, 0o666 & ~umask())
        finally:
            os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        assert self.tmp is not None
        if exc_type is None:
            try:
                os.replace(self.tmp, self.target)
                return False
            except OSError as err:
                self.tmp.unlink(missing_ok=True)
                raise self._named(err) from err
        self.tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            named = self._named(exc)
            if named is not exc:
                raise named from exc
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


#: the record an output folder keeps of the run that wrote it (`fmat study`, `fmat pilot`)
FOLDER_RECORD = ".fmat-run.json"


def claim_folder(out: Path, *, command: str, study: str, names, force: bool = False, resume: bool = False) -> None:
    """Make ``out`` the output folder of ``command`` on ``study``, before any model loads.

    ``names``: the files and folders the command writes there (fixed names). A folder that holds
    some of them from a run of another study (or of another command, or of a run before the
    folder kept a record, :data:`FOLDER_RECORD`) is refused: its tables would be replaced one by
    one and the rest (an old ``report.html``) left beside the new ones. With ``force`` those
    files are removed first, so nothing of the two runs is mixed; other files are never touched.
    The same study again (``--resume``, a rerun) is fine, and so is ``resume`` into a folder
    without a record (written before folders kept one: ``--resume`` checks each model's rows).
    """
    record = out / FOLDER_RECORD
    present = [n for n in names if (out / n).exists() or (out / n).is_symlink()]
    previous = None
    if record.is_file():
        try:
            previous = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
    mine = {"command": command, "study": str(study)}
    same = isinstance(previous, dict) and {k: str(previous.get(k)) for k in mine} == mine
    same = same or (resume and previous is None)
    if present and not same:
        whose = (
            f"a run of `fmat {previous.get('command')}` on study {previous.get('study')!r}"
            if isinstance(previous, dict) and previous.get("study")
            else "an earlier run that did not record its study"
        )
        if not force:
            raise InputError(
                f"the output folder {out} holds the files of {whose} ({', '.join(present[:4])}"
                + (" ..." if len(present) > 4 else "")
                + f"); writing study {study!r} there would replace them one by one and mix the two runs",
                where="-o/--output",
                fix=f"give another output folder (e.g. -o {out.parent / str(study)}), or add --force to remove those files first",
            )
        for n in present:
            path = out / n
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(mine) + "\n", encoding="utf-8")
