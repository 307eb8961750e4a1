"""Figure 4 smoothing: linear interpolation and the adaptive two-sided moving average."""

import numpy as np
import pandas as pd
import pytest

from fmat.stats import interpolate_years, moving_average, smooth_series


def test_interpolate_years():
    s = pd.Series([1.0, 4.0, 10.0], index=[1800, 1803, 1805])
    out = interpolate_years(s)
    assert list(out.index) == list(range(1800, 1806))
    assert list(out) == pytest.approx([1, 2, 3, 4, 7, 10])
    lead = interpolate_years(pd.Series([np.nan, 2.0, np.nan, 4.0], index=[1800, 1801, 1802, 1803]))
    assert np.isnan(lead.iloc[0]) and lead.iloc[2] == 3.0  # no extrapolation


def test_moving_average_width4_hand():
    x = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    # width 4, even="right": window i-1 .. i+2, cut at the ends
    expected = [
        np.mean([1, 2, 4]),
        np.mean([1, 2, 4, 8]),
        np.mean([2, 4, 8, 16]),
        np.mean([4, 8, 16, 32]),
        np.mean([8, 16, 32]),
        np.mean([16, 32]),
    ]
    assert moving_average(x, 4) == pytest.approx(expected)
    # even="left": window i-2 .. i+1
    expected_left = [
        np.mean([1, 2]),
        np.mean([1, 2, 4]),
        np.mean([1, 2, 4, 8]),
        np.mean([2, 4, 8, 16]),
        np.mean([4, 8, 16, 32]),
        np.mean([8, 16, 32]),
    ]
    assert moving_average(x, 4, even="left") == pytest.approx(expected_left)


def test_moving_average_width10_window():
    x = np.zeros(30)
    x[15] = 10.0  # an impulse is seen by positions 10..19 (t-4..t+5 contains 15)
    out = moving_average(x, 10)
    assert np.flatnonzero(out).tolist() == list(range(10, 20))
    assert out[12] == pytest.approx(1.0)
    assert moving_average(np.arange(5.0), 3) == pytest.approx([0.5, 1, 2, 3, 3.5])


def test_smooth_series_by_group():
    d = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 2, "year": [2000, 2002, 2003, 2000, 2001], "v": [0.0, 2.0, 3.0, 5.0, 7.0]})
    out = smooth_series(d, "v", by="g", width=3)
    a = out[out["g"] == "a"]
    assert list(a["year"]) == [2000, 2001, 2002, 2003] and list(a["value"]) == [0, 1, 2, 3]
    assert list(a["smooth"]) == pytest.approx([0.5, 1, 2, 2.5])
