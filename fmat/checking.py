"""One checking vocabulary: the tests that decide both whether the paper's number is replicated
(:mod:`fmat_replication.compare`) and whether a planted number is recovered
(:func:`fmat.plant.judge_recovery`). Each answers an :class:`Outcome`; the callers word the
reasons. A missing value (NaN) never passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

#: the significance level both checks use
LEVEL = 0.05


@dataclass
class Outcome:
    """What one test found: ``ok`` (True, False, or None when it does not apply) and the
    values of ours that failed it.

    Examples
    --------
    >>> Outcome(ok=False, bad=[-0.2])
    Outcome(ok=False, bad=[-0.2])
    """

    ok: bool | None
    bad: list[float] = field(default_factory=list)


def _values(x) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


def sign(want: int, ours: Sequence[float] | float) -> Outcome:
    """Every value of ``ours`` has the sign ``want`` (+1 or -1); ``want`` 0: not applicable.

    Examples
    --------
    >>> sign(+1, [0.4, 0.9]), sign(+1, [0.4, -0.2]), sign(0, 0.4)
    (Outcome(ok=True, bad=[]), Outcome(ok=False, bad=[-0.2]), Outcome(ok=None, bad=[]))
    """
    v = _values(ours)
    if not want:
        return Outcome(None)
    bad = [float(x) for x in v if not (math.isfinite(x) and np.sign(x) == np.sign(want))]
    return Outcome(not bad, bad)


def significance(want: bool | None, ours_p: Sequence[float] | float, level: float = LEVEL) -> Outcome:
    """Every p of ``ours_p`` is below ``level`` exactly when ``want`` (True: significant,
    False: not significant, None: not applicable). Not applicable when no p is there.

    Examples
    --------
    >>> significance(True, [0.001, 0.02]), significance(False, 0.03), significance(True, float("nan"))
    (Outcome(ok=True, bad=[]), Outcome(ok=False, bad=[0.03]), Outcome(ok=None, bad=[]))
    """
    p = _values(ours_p)
    if want is None or np.isnan(p).all():
        return Outcome(None)
    bad = [float(q) for q in p if not math.isfinite(q) or bool(q < level) != bool(want)]
    return Outcome(not bad, bad)


def closeness(target: float, ours: Sequence[float] | float, tolerance: float) -> Outcome:
    """Every value of ``ours`` is within ``tolerance`` (absolute) of ``target``.

    Examples
    --------
    >>> closeness(0.5, [0.45, 0.52], tolerance=0.1), closeness(0.5, 0.7, tolerance=0.1)
    (Outcome(ok=True, bad=[]), Outcome(ok=False, bad=[0.7]))
    """
    v = _values(ours)
    bad = [float(x) for x in v if not (math.isfinite(x) and abs(x - float(target)) <= float(tolerance) + 1e-12)]
    return Outcome(not bad, bad)


def covers(target: float, ci_low: float, ci_high: float) -> Outcome:
    """Our confidence interval ``[ci_low, ci_high]`` covers ``target``; not applicable without
    an interval.

    Examples
    --------
    >>> covers(0.5, 0.3, 0.7), covers(0.5, 0.6, 0.9), covers(0.5, float("nan"), float("nan"))
    (Outcome(ok=True, bad=[]), Outcome(ok=False, bad=[0.5]), Outcome(ok=None, bad=[]))
    """
    if not (math.isfinite(float(ci_low)) and math.isfinite(float(ci_high))):
        return Outcome(None)
    ok = float(ci_low) <= float(target) <= float(ci_high)
    return Outcome(ok, [] if ok else [float(target)])
