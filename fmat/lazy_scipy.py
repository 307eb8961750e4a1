"""``scipy.stats``, imported when a function first uses it.

Importing scipy.stats costs about a second of CPU, and most of the workflow's jobs (queries,
LPR, pages) and ``fmat`` commands import :mod:`fmat.stats` without ever running a test: the
modules that test write ``from fmat.lazy_scipy import stats`` and call ``stats.t.ppf(...)`` as
before; the first such call imports scipy.stats (the same module, the same numbers)."""

from __future__ import annotations

import importlib


class LazyModule:
    """A module imported on first attribute access (``LazyModule("scipy.stats").norm``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazily imported module {self._name!r}>"


stats = LazyModule("scipy.stats")
