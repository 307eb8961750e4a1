"""Issue 18: what docs/analyses-3-4.md says about the century contrast holds for the numbers.

The pairwise century contrast is an LMM ``d ~ C(century)`` with a random intercept per model on
two years. With a positive random-intercept variance (the two years' d are positively
correlated over models) its t is the paired t test's; when the variance estimate is at zero
(the years are negatively correlated), the model is OLS and its t is the two-sample pooled t
(the df stays the paired one), which differs from the paired t.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fmat.analyses.change import century_contrast


def _yearly(d1900, d2000):
    n = len(d1900)
    return pd.DataFrame(
        [{"model": f"m{i}", "year": 1900, "d": d1900[i]} for i in range(n)]
        + [{"model": f"m{i}", "year": 2000, "d": d2000[i]} for i in range(n)]
    )


def _contrast(d1900, d2000):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels warns at the boundary (variance 0)
        return century_contrast(_yearly(d1900, d2000), (2000, 1900), [2000, 1900])


def test_positive_intercept_variance_gives_the_paired_t():
    rng = np.random.default_rng(1)
    u = rng.normal(0, 1, 8)
    d1900, d2000 = u + rng.normal(0, 0.3, 8), u - 0.4 + rng.normal(0, 0.3, 8)
    assert np.corrcoef(d1900, d2000)[0, 1] > 0.5
    res = _contrast(d1900, d2000)
    paired = sps.ttest_rel(d2000, d1900)
    assert res["estimate"] == pytest.approx(np.mean(d2000 - d1900), abs=1e-9)
    assert res["t"] == pytest.approx(paired.statistic, rel=1e-5) and res["df"] == 7
    assert res["p"] == pytest.approx(paired.pvalue, rel=1e-4)


def test_intercept_variance_at_zero_gives_the_two_sample_t_not_the_paired_one():
    rng = np.random.default_rng(1)
    u = rng.normal(0, 1, 8)
    d1900, d2000 = u, -u + 1.0 + rng.normal(0, 0.1, 8)  # negatively correlated over models
    assert np.corrcoef(d1900, d2000)[0, 1] < -0.5
    res = _contrast(d1900, d2000)
    paired, pooled = sps.ttest_rel(d2000, d1900), sps.ttest_ind(d2000, d1900)
    assert res["estimate"] == pytest.approx(np.mean(d2000 - d1900), abs=1e-9)  # same d either way
    assert res["t"] == pytest.approx(pooled.statistic, rel=1e-4)  # OLS: the pooled t
    assert abs(res["t"] - paired.statistic) > 0.1 * abs(paired.statistic)  # not the paired t
    assert res["df"] == 7  # df stay the paired ones
    assert res["singular"] and not _contrast(u + 0.1 * rng.normal(size=8), u - 0.4)["singular"]
