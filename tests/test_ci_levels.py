"""The confidence level of every interval an analysis reports.

Every row with a standard error and degrees of freedom carries a symmetric t interval at 95%:
``ci_high - value = value - ci_low = t(0.975, df) * se``, per model and overall, for every
analysis family and every inference variant its function declares (``inference: Literal[...]``,
read from the registry: a new variant is covered without a list here). A per-model slope CI
computed at 90% (``t.ppf(0.95, df)``) once passed every test; here it fails.

The data are one world of perfect learners (:mod:`fmat.calibration`) of the paper's designs,
planted as ``config/world.yaml`` says, so every family's rows are there to check.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_oracle_mutations import use_mutant

from fmat import analyses, plant
from fmat import calibration as cal
from fmat.stages import lpr_table
from fmat.study import load_study

REPO = Path(__file__).resolve().parents[1]

#: one design of each family without criterion tables (the criterion family's r has a Fisher-z
#: interval: tests/test_analyses_factual.py holds it to R's cor.test)
DESIGNS = ["2A", "3A", "3B", "4A"]


def _variants(name: str) -> list[str | None]:
    return [None, *analyses.option_values(name, "inference")]


def _rows(sid: str, inference: str | None):
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    p = plant.load_world(REPO / "config" / "world.yaml").plant(sid)
    _, sampled = cal.perfect_learner_scores(cal.World(study, p, n_models=4), seed=1)
    spec = dict(study.analysis)
    options = dict(spec.get("options") or {})
    if inference is not None:
        options["inference"] = inference
    data = analyses.AnalysisInput(study=study, scores=sampled, lpr=lpr_table(study, sampled), criteria={})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyses.run_analysis(str(spec["name"]), data, options).stats


CASES = [
    (sid, inf)
    for sid in DESIGNS
    for inf in _variants(str(load_study(REPO / "config" / "studies" / f"{sid}.yaml").analysis["name"]))
]


def interval_level(rows) -> np.ndarray:
    """The two-sided level each row's interval has, from its half-width, se and df."""
    half = (rows["ci_high"] - rows["ci_low"]).to_numpy(float) / 2
    q = half / rows["se"].to_numpy(float)
    return 2 * stats.t.cdf(q, rows["df"].to_numpy(float)) - 1


@pytest.mark.parametrize("sid,inference", CASES, ids=[f"{s}-{i or 'default'}" for s, i in CASES])
def test_every_interval_is_a_95_percent_t_interval(sid, inference):
    out = _rows(sid, inference)
    have = out[np.isfinite(out["se"]) & np.isfinite(out["df"]) & np.isfinite(out["ci_low"])]
    assert len(have), f"{sid}: no row with se, df and a CI"
    np.testing.assert_allclose(have["ci_high"] - have["value"], have["value"] - have["ci_low"], rtol=1e-9, atol=1e-12)
    level = interval_level(have)
    bad = have.assign(level=level)[np.abs(level - 0.95) > 1e-9]
    assert bad.empty, f"{sid} ({inference}): intervals not at 95%:\n{bad[['statistic', 'condition', 'model', 'level']]}"
    # a row that has a CI but no se/df could not be checked: there is none
    unchecked = out[np.isfinite(out["ci_low"]) & ~(np.isfinite(out["se"]) & np.isfinite(out["df"]))]
    assert unchecked.empty, f"{sid}: intervals without se/df: {sorted(set(unchecked['statistic']))}"


def test_the_level_check_can_fail(monkeypatch):
    """4A's per-model slopes (rows of each model) are among the rows checked, and with their
    interval computed at 90% (a one-line mutation of fmat.analyses.change) the check fails."""
    assert (_rows("4A", None).query("statistic == 'b'")["model"].astype(str) != "all").sum() >= 2
    use_mutant(monkeypatch, "fmat.analyses.change", "q = sps.t.ppf(0.975, df)", "q = sps.t.ppf(0.95, df)")
    with pytest.raises(AssertionError, match="not at 95%"):
        test_every_interval_is_a_95_percent_t_interval("4A", None)
