"""``scipy.stats``, imported when a function first uses it (importing it costs about a second of
CPU, and most jobs and commands that import :mod:`fmat.stats` run no test): ``from
fmat.lazy_scipy import stats`` and ``stats.t.ppf(...)`` as before, the same module."""

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
