"""Test hook ``FMAT_TEST_SLOW_SCORING=SECONDS``: the FIRST scoring job of each model sleeps that
many seconds before it scores (later attempts and later runs do not), so that a test can cancel a
running job with ``scancel`` or let SLURM kill it at its time limit (tests/test_slurm.py).

It lives in the tests, not in fmat: the jobs of a test run load it through ``sitecustomize``
(tests/hooks/sitecustomize.py), which Python imports at start-up when ``tests/hooks`` is on
``PYTHONPATH`` -- the test puts it there, SLURM passes the environment on to its jobs. It wraps
the workflow's scoring function as soon as its module is imported; nothing in the package knows.

The first job of a model leaves a stamp ``<model slug>.slowed`` in ``$FMAT_TEST_SLOW_STAMPS``.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import os
import sys
import time
from pathlib import Path

SLOW_SCORING = "FMAT_TEST_SLOW_SCORING"
STAMPS = "FMAT_TEST_SLOW_STAMPS"
#: the module whose scoring function the hook wraps, and the function
TARGET = ("fmat_replication.score", "score_studies")


def slow_seconds(env: dict | None = None) -> float:
    """Seconds asked by ``FMAT_TEST_SLOW_SCORING`` (0 when unset or empty)."""
    raw = (os.environ if env is None else env).get(SLOW_SCORING, "").strip()
    if not raw:
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{SLOW_SCORING}={raw!r}: expected a number of seconds (or unset it)") from None
    if seconds < 0:
        raise ValueError(f"{SLOW_SCORING}={raw!r}: expected a number of seconds >= 0")
    return seconds


def slow_first_attempt(stamp: Path, env: dict | None = None, sleep=time.sleep) -> float:
    """Sleep ``FMAT_TEST_SLOW_SCORING`` seconds unless ``stamp`` exists (then write it first);
    return the seconds slept."""
    seconds = slow_seconds(env)
    stamp = Path(stamp)
    if seconds <= 0 or stamp.exists():
        return 0.0
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(f"{seconds}\n", encoding="utf-8")
    print(f"{SLOW_SCORING}={seconds:g}: test hook, sleeping before scoring (first attempt only)", flush=True)
    sleep(seconds)
    return seconds


def slowed(score, stamps: Path):
    """``score`` (a generator function taking the model's marker first) that first sleeps once per model."""

    @functools.wraps(score)
    def wrapper(marker, *args, **kwargs):
        slow_first_attempt(Path(stamps) / f"{marker['slug']}.slowed")
        yield from score(marker, *args, **kwargs)

    return wrapper


class _Wrapper(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds TARGET's module with the normal finders, runs it, then wraps its function."""

    def __init__(self, stamps: Path):
        self.stamps = stamps
        self.loader = None

    def find_spec(self, name, path=None, target=None):
        if name != TARGET[0] or self.loader is not None:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        self.loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        setattr(module, TARGET[1], slowed(getattr(module, TARGET[1]), self.stamps))


def install(env: dict | None = None) -> bool:
    """Put the wrapper in place when ``FMAT_TEST_SLOW_SCORING`` asks for it; True when it did."""
    env = os.environ if env is None else env
    if slow_seconds(env) <= 0:
        return False
    stamps = Path(env.get(STAMPS) or Path.cwd() / "logs" / "slowed")
    sys.meta_path.insert(0, _Wrapper(stamps))
    return True
