"""Errors that users see.

Every error raised on bad input is an :class:`FmatError` whose message names *where*
(file, block, field), *what* is wrong and *how to fix it*. The CLI prints these without
a traceback (``--debug`` shows it) and exits with :data:`EXIT_USAGE`.
"""

from __future__ import annotations

import errno as _errno
import os
import sys

EXIT_OK = 0
EXIT_ERROR = 1  # unexpected failure (a bug, or the environment)
EXIT_USAGE = 2  # bad input: fix the file/argument the message names
EXIT_NO_ANALYSIS = 3  # the tables were written but the study's analysis did not run (the reason is printed last)


class FmatError(Exception):
    """A user-facing error with a message that says where, what and how to fix.

    Examples
    --------
    >>> from fmat import InputError
    >>> err = InputError("unknown group 'Greek'", where="S.yaml: analysis.options", fix="use Greeks")
    >>> print(err)
    S.yaml: analysis.options: unknown group 'Greek'
      fix: use Greeks
    >>> err.fix
    'use Greeks'
    """

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None):
        self.message = message
        self.where = where
        self.fix = fix
        super().__init__((f"{where}: " if where else "") + message + (f"\n  fix: {fix}" if fix else ""))


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes :func:`warnings.warn` point at the caller's own code: the
    first frame outside the ``fmat`` package (so a warning shows the user's ``fmat.run(...)``
    line, not a line of fmat's source).

    Examples
    --------
    >>> user_stacklevel() >= 1
    True
    """
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level


class InputError(FmatError, ValueError):
    """Bad user input (query design, study file, table, option).

    Examples
    --------
    >>> import fmat
    >>> try:
    ...     fmat.query("no mask here", MASK={"Male": ["he"], "Female": ["she"]})
    ... except fmat.InputError as err:
    ...     print(type(err).__name__, "[MASK]" in str(err))
    InputError True
    """


class ModelError(FmatError, RuntimeError):
    """A model that cannot be found, loaded or used as a masked language model.

    Examples
    --------
    >>> import fmat, tempfile
    >>> try:
    ...     fmat.remove(tempfile.mkdtemp())
    ... except fmat.ModelError as err:
    ...     print("local folder" in err.message)
    True
    """


class OfflineError(FmatError, RuntimeError):
    """Something needs the network and it is not reachable (or offline mode is on).

    Examples
    --------
    >>> err = OfflineError("cannot reach the Hugging Face hub", fix="run fmat download first, online")
    >>> print(err)
    cannot reach the Hugging Face hub
      fix: run fmat download first, online
    >>> isinstance(err, FmatError), isinstance(err, RuntimeError)
    (True, True)
    """


#: errno -> (what happened, how to fix it) for the failures of the environment that users meet
#: (a full disk, a read-only or foreign folder); see :func:`os_error`
_OS_ERRORS = {
    "ENOSPC": (
        "no space left on the device",
        "free some space there, or write to another disk (another output path, cache or working folder)",
    ),
    "EDQUOT": ("the disk quota is exceeded", "free some space in your quota, or write to another disk"),
    "EROFS": (
        "the file system is read-only",
        "write to a folder on a writable disk (another output path, cache or working folder)",
    ),
    "EACCES": ("permission denied", "use a file or folder you may write (and read), or ask its owner to change its permissions"),
    "EPERM": ("operation not permitted", "use a file or folder you own, or ask its owner to change its permissions"),
    "EISDIR": ("it is a folder, not a file", "give a file name (for an output: a file inside that folder)"),
    "ENOTDIR": ("a part of the path is a file, not a folder", "check the path"),
    "ENAMETOOLONG": ("the file name is too long", "use a shorter path"),
    "ELOOP": ("too many levels of symbolic links (a link that points to itself?)", "check the links on the path"),
    "ENOENT": (
        "no such file or folder (or this file system takes no new files there)",
        "check the path, and write to an ordinary folder",
    ),
    "EMFILE": ("too many files are open", "raise the limit (ulimit -n) or run fewer jobs at once"),
}


def os_error(err: BaseException) -> FmatError | None:
    """The user-facing error for a failure of the environment, or None.

    An :class:`OSError` whose errno :data:`_OS_ERRORS` lists (a full disk, a read-only file system,
    a permission, a wrong kind of path...) becomes an :class:`FmatError` naming the file and the
    fix; any other exception: None (a bug: the caller shows the traceback).

    Examples
    --------
    >>> import errno
    >>> err = os_error(OSError(errno.ENOSPC, "No space left on device", "results/scores.parquet"))
    >>> type(err).__name__, "results/scores.parquet" in str(err)
    ('FmatError', True)
    >>> os_error(KeyError("x")) is None
    True
    """
    if not isinstance(err, OSError) or not err.errno:
        return None
    name = _errno.errorcode.get(err.errno)
    if name not in _OS_ERRORS:
        return None
    what, fix = _OS_ERRORS[name]
    path = f"{err.filename} -> {err.filename2}" if err.filename2 else err.filename
    return FmatError(what, where=str(path) if path else None, fix=fix)


class RenderError(FmatError, RuntimeError):
    """A report page that could not be rendered (the renderer's own words in the message).

    Examples
    --------
    >>> print(RenderError("quarto failed: no such file", where="report/1A.qmd"))
    report/1A.qmd: quarto failed: no such file
    """
