"""fmat.checking: the one checking vocabulary that the paper check (fmat_replication.compare:
replicated / not) and the plant check (fmat.plant.judge_recovery: recovered / not) both run."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fmat import checking
from fmat import plant as P
from fmat_replication import compare


@pytest.mark.parametrize(
    "want, ours, ok",
    [(1, [0.3, 2.0], True), (1, [0.3, -0.1], False), (-1, -0.5, True), (1, [math.nan], False), (0, [-1.0], None)],
)
def test_sign(want, ours, ok):
    assert checking.sign(want, ours).ok is ok


@pytest.mark.parametrize(
    "want, p, ok",
    [
        (True, [0.01], True),
        (True, [0.2], False),
        (False, [0.2, 0.5], True),
        (False, [0.01], False),
        (True, [math.nan], None),
        (None, [0.01], None),
    ],
)
def test_significance(want, p, ok):
    assert checking.significance(want, p).ok is ok


def test_closeness_and_cover():
    assert checking.closeness(1.0, [0.9, 1.1], 0.1).ok and not checking.closeness(1.0, [1.2], 0.1).ok
    assert checking.closeness(1.0, [1.2], 0.1).bad == [1.2]
    assert checking.covers(1.0, 0.5, 1.5).ok and checking.covers(2.0, 0.5, 1.5).ok is False
    assert checking.covers(1.0, math.nan, 1.5).ok is None


def test_the_paper_check_and_the_plant_check_run_the_same_tests(monkeypatch):
    """Both verdicts go through fmat.checking's sign and significance (and a closeness rule):
    replace them and both verdicts follow."""
    calls = []
    for name in ("sign", "significance", "closeness", "covers"):
        real = getattr(checking, name)

        def spy(*args, _real=real, _name=name, **kw):
            calls.append(_name)
            return _real(*args, **kw)

        monkeypatch.setattr(checking, name, spy)
    row = {"study": "3A", "statistic": "d", "condition": "all", "model": "all", "value": 1.02, "p": 0.001, "bound": "<"}
    matched = pd.DataFrame({"value": [0.95], "p": [1e-6]})
    assert compare.judge(row, matched)["verdict"] == compare.REPLICATED
    paper_calls, calls[:] = list(calls), []
    verdict, _ = P.judge_recovery({"statistic": "d", "value": 1.0}, 0.95, 1e-6, realised=0.97, ci=(0.8, 1.1))
    assert verdict == P.RECOVERED
    assert {"sign", "significance", "closeness"} <= set(paper_calls)
    assert {"sign", "significance", "covers"} <= set(calls)
    # the same test with another target and rule: a failure the one module finds for both
    monkeypatch.setattr(checking, "sign", lambda want, ours: checking.Outcome(False, [float(pd.Series(ours).iloc[0])]))
    assert compare.judge(row, matched)["verdict"] == compare.NOT_REPLICATED
    assert P.judge_recovery({"statistic": "d", "value": 1.0}, 0.95, 1e-6, realised=0.97, ci=(0.8, 1.1))[0] == P.NOT_RECOVERED
