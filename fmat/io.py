"""Reading and writing tables: parquet by default, CSV for R users.

All writes are atomic (write to a temporary file in the same folder, then rename), so a
killed run never leaves a half-written output that looks finished. Only regular files are
written: an existing regular file is replaced, a symbolic link is written through (its target
gets the new content, the link stays), a folder, device, FIFO or socket is refused.
:func:`check_output` refuses, before any work, an output that is one of the command's inputs.
"""

from __future__ import annotations

import contextlib
import io as _io
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

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
    .csv.gz) is an InputError that names the accepted ones.

    Examples
    --------
    >>> table_format("scores.parquet"), table_format("lpr.csv"), table_format("lpr.tsv"), table_format("scores")
    ('parquet', 'csv', 'tsv', 'parquet')
    >>> table_format("scores.xlsx")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: scores.xlsx: cannot read or write a .xlsx table
      fix: use one of .parquet, .pq, .csv, .tsv, .txt (parquet, or CSV/TSV text in UTF-8; export spreadsheets as CSV, unpack
    .gz files)
    """
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
    read only those of them the table has (a parquet file reads no other column).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> import pandas as pd
    >>> path = write_table(pd.DataFrame({"model": ["bert"], "LPR": [0.5]}), tmp / "lpr.csv")
    >>> read_table(path)
      model  LPR
    0  bert  0.5
    >>> read_table(tmp / "missing.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: file not found: ...
      fix: check the path (relative to the current folder)
    """

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
    """The process umask (read without changing it, where the system allows).

    Examples
    --------
    >>> import os
    >>> mask = umask()
    >>> mask == os.umask(mask)
    True
    """
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


#: what a non-regular file is, by its type bits
_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
}
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
    except OSError:  # it does not exist, or e.g. a path through a file (ENOTDIR): the write will say it
        return
    kind = None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")
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
    (outputs are written THROUGH links: the link stays, its target gets the new content).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> (tmp / "real.csv").touch()
    >>> (tmp / "link.csv").symlink_to(tmp / "real.csv")
    >>> write_target(tmp / "link.csv").name
    'real.csv'
    """
    return Path(os.path.realpath(path))


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Are ``a`` and ``b`` the same file (same inode: also through symbolic and hard links)?

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> (tmp / "a.csv").touch()
    >>> (tmp / "b.csv").symlink_to(tmp / "a.csv")
    >>> same_file(tmp / "a.csv", tmp / "b.csv"), same_file(tmp / "a.csv", tmp / "new.csv")
    (True, False)
    """
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

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> check_output(tmp / "lpr.parquet").name
    'lpr.parquet'
    >>> check_output(tmp, where="-o")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: -o: ... is a folder, not a file
      fix: give a file name, e.g. ...
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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Context manager yielding a temporary path that replaces ``path`` on success.

    A symbolic link is written through (its target is replaced; the link stays); an existing
    folder, device, FIFO or socket is refused (InputError), never replaced. An OSError inside
    the block (a full disk...) is raised again naming ``path`` instead of the temporary file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(tmp / "note.txt") as part:
    ...     _ = part.write_text("done")
    >>> (tmp / "note.txt").read_text(), [p.name for p in tmp.iterdir()]
    ('done', ['note.txt'])
    """
    path = Path(path)
    _refuse_special(path)
    target = write_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:  # the folder cannot be made or written: name the output
        if not err.errno:
            raise
        raise OSError(err.errno, os.strerror(err.errno), str(path)) from err
    try:  # mkstemp makes 0600; outputs follow the umask as other programs' files do
        os.fchmod(fd, 0o666 & ~umask())
    finally:
        os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        # an OSError names the output instead of the temporary file (pyarrow's name no file at all)
        if isinstance(exc, OSError) and exc.errno and exc.filename in (None, str(tmp)):
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from exc
        raise


def write_table(df: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``df`` atomically as parquet (default), CSV or TSV; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> import pandas as pd
    >>> write_table(pd.DataFrame({"model": ["bert"], "LPR": [0.5]}), tmp / "lpr.tsv").name
    'lpr.tsv'
    >>> read_table(tmp / "lpr.tsv")
      model  LPR
    0  bert  0.5
    """
    path = Path(path)
    kind = table_format(path, fmt)
    with atomic_path(path) as tmp:
        if kind == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, sep="," if kind == "csv" else "\t", index=False, na_rep="NA")
    return path


#: the record an output folder keeps of the run that wrote it (`fmat study`, `fmat pilot`,
#: `fmat power`): ``{"command", "study", "files"}``, ``files`` the paths (relative to the folder)
#: of everything that run wrote there; a folder it made to hold others ends in ``/``
FOLDER_RECORD = ".fmat-run.json"

_WHERE = "-o/--output"


def _listed(names: Iterable[str]) -> str:
    names = list(names)
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _record_entry(entry) -> bool:
    """A path a run record may list: relative, inside the folder (no ``..``), not the record."""
    if not isinstance(entry, str) or not entry.strip("/") or entry.startswith("/") or "\\" in entry:
        return False
    parts = entry.rstrip("/").split("/")
    return all(p not in ("", ".", "..") for p in parts) and entry != FOLDER_RECORD


def read_folder_record(out: Path) -> tuple[dict | None, str]:
    """The run record of ``out`` (:data:`FOLDER_RECORD`) and, when it is damaged, why.

    ``(None, "")``: there is none. ``(None, why)``: it is damaged (cut short, not JSON, another
    shape). A record that is a symbolic link, a folder or anything but a regular file is an
    InputError: fmat reads and writes its own record only, never through a link.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> read_folder_record(tmp)
    (None, '')
    >>> write_folder_record(tmp, {"command": "study", "study": "1A", "files": ["lpr.parquet"]})
    >>> read_folder_record(tmp)
    ({'command': 'study', 'study': '1A', 'files': ['lpr.parquet']}, '')
    """
    record = Path(out) / FOLDER_RECORD
    if record.is_symlink():
        raise InputError(
            f"the run record {record} is a symbolic link (to {os.readlink(record)}); fmat writes its "
            "record itself and never through a link, which would change the file it points to",
            where=_WHERE,
            fix=f"remove the link {record} (the file it points to is left as it is), or give another output folder",
        )
    if not record.exists():
        return None, ""
    if not record.is_file():
        raise InputError(
            f"the run record {record} is not a file (fmat keeps the record of the run that wrote the folder there)",
            where=_WHERE,
            fix=f"move {record} away, or give another output folder",
        )
    try:
        raw = record.read_bytes()
    except OSError as err:
        known = os_error(err)
        if known is None:
            raise
        raise InputError(f"the run record {record} cannot be read: {known.message}", where=_WHERE, fix=known.fix) from err
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, f"not UTF-8 text ({len(raw)} bytes)"
    except ValueError as err:
        return None, f"not valid JSON ({len(raw)} bytes, {err.args[0] if err.args else err}): cut short, or changed by hand?"
    if not isinstance(data, dict):
        return None, f"a JSON {type(data).__name__}, not the record's mapping of command, study and files"
    bad = [k for k in ("command", "study") if not isinstance(data.get(k), str) or not data.get(k)]
    if bad:
        return None, f"its {' and '.join(bad)} {'is' if len(bad) == 1 else 'are'} missing or not text"
    files = data.get("files")
    if files is not None and (not isinstance(files, list) or not all(_record_entry(f) for f in files)):
        return None, "its files are not a list of paths inside the folder"
    return data, ""


def write_folder_record(out: Path, data: Mapping) -> None:
    """Write the run record of ``out`` atomically (:func:`atomic_path`), never through a link: a
    record that is one is refused.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> write_folder_record(tmp, {"command": "study", "study": "1A", "files": []})
    >>> (tmp / FOLDER_RECORD).exists()
    True
    """
    record = Path(out) / FOLDER_RECORD
    if record.is_symlink() or (record.exists() and not record.is_file()):
        read_folder_record(out)  # the error that names it
    with atomic_path(record) as tmp:
        tmp.write_text(json.dumps(dict(data), indent=1) + "\n", encoding="utf-8")


def settle_folder_record(out: Path) -> None:
    """At the end of a run (finished, failed or interrupted): the run record of ``out`` lists only
    the files that run wrote, not those it would have written next (a user's file of that name
    made later is then the user's). Never raises: the run's own outcome is what the user sees.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> claim_folder(out, command="study", study="1A", names=["lpr.parquet", "page.html"])
    >>> (out / "lpr.parquet").touch()
    >>> settle_folder_record(out)
    >>> read_folder_record(out)[0]["files"]
    ['lpr.parquet']
    """
    try:
        data, damaged = read_folder_record(Path(out))
        if data is None or damaged or data.get("files") is None:
            return
        kept = [f for f in data["files"] if (Path(out) / f.rstrip("/")).exists() or (Path(out) / f.rstrip("/")).is_symlink()]
        if kept != data["files"]:
            write_folder_record(Path(out), {**data, "files": kept})
    except (OSError, InputError):
        return


def _inside(out: Path, path: Path) -> bool:
    """``path``'s folder is ``out`` or below it once links are followed (a recorded path under a
    linked folder that points elsewhere is not removed)."""
    try:
        path.parent.resolve().relative_to(out.resolve())
    except (ValueError, OSError):
        return False
    return True


def claim_folder(
    out: Path, *, command: str, study: str, names, force: bool = False, resume: bool = False, can_resume: bool = False
) -> None:
    """Make ``out`` the output folder of ``command`` on ``study``, before any model loads.

    ``names``: the files and folders the command writes there (paths relative to ``out``; a
    folder that only holds others, as a pilot's ``models/``, ends in ``/``). They are recorded
    in :data:`FOLDER_RECORD` with what an earlier run of the same command and study wrote, so a
    later ``force`` removes exactly those and nothing else.

    Refused (InputError, nothing touched):

    * a folder that holds files of a run of another study or command (``force`` removes those
      recorded files first, a recorded folder that holds anything else is kept);
    * one of ``names`` present but not recorded as fmat's: the user's own file, which fmat
      neither replaces nor removes (``force`` included);
    * a damaged record beside files of ``names`` (fmat cannot tell which are its own);
      ``resume`` reads the folder as this study's (each model's rows are checked) and writes
      a new record; ``can_resume``: the fix offers it.

    ``resume`` into a folder without a record (written before folders kept one) is fine too.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> claim_folder(tmp / "out", command="study", study="1A", names=["lpr.parquet"])
    >>> read_folder_record(tmp / "out")[0]["files"]
    ['lpr.parquet']
    >>> (tmp / "out" / "lpr.parquet").touch()
    >>> claim_folder(tmp / "out", command="study", study="2B", names=["lpr.parquet"])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: -o/--output: the output folder ... holds the files of a run of `fmat study` on study '1A'
    (lpr.parquet); writing study '2B' there would mix the two runs
      fix: give another output folder (e.g. -o ...), or add --force to remove the files that run recorded in .fmat-run.json
    first (nothing else in the folder is touched)
    """
    out = Path(out)
    previous, damaged = read_folder_record(out)
    mine = {"command": command, "study": str(study)}
    names = list(dict.fromkeys(str(n) for n in names))
    holders = [n for n in names if n.endswith("/")]
    planned = [n for n in names if not n.endswith("/")]

    def exists(name: str) -> bool:
        path = out / name.rstrip("/")
        return path.exists() or path.is_symlink()

    present = [n for n in planned if exists(n)]
    elsewhere = out.parent / str(study)
    resume_fix = (
        "; if they are this study's tables from an earlier run, add --resume (resume=True in Python) to reuse "
        "its scores (each model's rows are checked) and write a new record"
        if can_resume
        else ""
    )
    if damaged and present and not resume:
        _refuse_damaged(out, damaged, present, can_resume, elsewhere)
    if previous is None:
        recorded = present if (resume or damaged) else []
        same = bool(resume or damaged or not present)
    else:
        listed = previous.get("files")
        if listed is None:  # a record of an fmat that did not list its files: the fixed names it wrote
            listed = present
        recorded = [f for f in dict.fromkeys(listed) if exists(f) and _inside(out, out / f.rstrip("/"))]
        same = {k: str(previous.get(k)) for k in mine} == mine
    theirs = [n for n in present if n not in recorded]
    if theirs:
        raise InputError(
            f"the output folder {out} holds {_listed(theirs)}, which no fmat run recorded as its own: fmat treats "
            f"{'it' if len(theirs) == 1 else 'them'} as your file{'s' if len(theirs) > 1 else ''} and neither replaces "
            "nor removes them (--force included)",
            where=_WHERE,
            fix=f"give another output folder (-o {elsewhere}), or move your file{'s' if len(theirs) > 1 else ''} "
            f"away first{resume_fix}",
        )
    if recorded and not same:
        whose = f"a run of `fmat {previous['command']}` on study {previous['study']!r}"  # type: ignore[index]
        if not force:
            raise InputError(
                f"the output folder {out} holds the files of {whose} ({_listed(recorded)}); writing study {study!r} there "
                "would mix the two runs",
                where=_WHERE,
                fix=f"give another output folder (e.g. -o {elsewhere}), or add --force to remove the files "
                f"that run recorded in {FOLDER_RECORD} first (nothing else in the folder is touched)",
            )
        _remove_recorded(out, recorded)
        recorded = []
    new_holders = [h for h in holders if not exists(h) or h in recorded]
    files = list(dict.fromkeys(recorded + planned + new_holders))
    out.mkdir(parents=True, exist_ok=True)
    write_folder_record(out, {**mine, "files": files})


def _refuse_damaged(out: Path, damaged: str, present: list, can_resume: bool, elsewhere: Path) -> None:
    """Raise: a damaged run record beside files of the run, so fmat cannot tell its own from yours."""
    record = out / FOLDER_RECORD
    raise InputError(
        f"the run record {record} is damaged ({damaged}), so fmat cannot tell which files of {out} an earlier "
        f"run wrote ({_listed(present)}) and which are yours",
        where=_WHERE,
        fix=(
            "add --resume (resume=True in Python): the scores there are reused (each model's rows are checked) "
            f"and a new record written; or give another output folder (-o {elsewhere})"
            if can_resume
            else f"give another output folder (-o {elsewhere}), or delete {_listed(present)} and {record} yourself"
        ),
    )


def _remove_recorded(out: Path, recorded: list) -> None:
    """Remove the files and folders a run recorded (``--force``): files first, the deepest first;
    a recorded folder only where it is empty now (the user's files in it stay)."""
    for name in sorted(recorded, key=lambda n: (n.endswith("/"), -n.count("/"))):
        path = out / name.rstrip("/")
        if name.endswith("/"):
            if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()
        elif path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
