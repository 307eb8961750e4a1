"""Errors that users see.

Every error raised on bad input is an :class:`FmatError` whose message names *where*
(file, block, field), *what* is wrong and *how to fix it*. The CLI prints these without
a traceback (``--debug`` shows it) and exits with :data:`EXIT_USAGE`.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1  # unexpected failure (a bug, or the environment)
EXIT_USAGE = 2  # bad input: fix the file/argument the message names


class FmatError(Exception):
    """A user-facing error with a message that says where, what and how to fix."""

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None):
        self.message = message
        self.where = where
        self.fix = fix
        parts = []
        if where:
            parts.append(f"{where}: ")
        parts.append(message)
        if fix:
            parts.append(f"\n  fix: {fix}")
        super().__init__("".join(parts))


class InputError(FmatError, ValueError):
    """Bad user input (query design, study file, table, option)."""


class ModelError(FmatError, RuntimeError):
    """A model that cannot be found, loaded or used as a masked language model."""


class OfflineError(FmatError, RuntimeError):
    """Something needs the network and it is not reachable (or offline mode is on)."""


class RenderError(FmatError, RuntimeError):
    """A report page that could not be rendered (the renderer's own words in the message)."""
