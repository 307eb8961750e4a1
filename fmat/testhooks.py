"""Test hooks of the workflow: off unless a test sets their environment variable.

``FMAT_TEST_SLOW_SCORING=SECONDS`` makes the FIRST scoring job of each model sleep that many
seconds before it scores (later attempts and later runs do not), so that a test can cancel a
running job with ``scancel`` or let SLURM kill it at its time limit (tests/test_slurm.py,
docs/cluster.md). The first job leaves a stamp ``<model>.slowed`` beside its log; nothing else
changes, and with the variable unset (every normal run) the hook does nothing.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

SLOW_SCORING = "FMAT_TEST_SLOW_SCORING"


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
