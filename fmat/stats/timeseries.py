"""Yearly series of Study 4 / Figure 4: linear interpolation and an adaptive moving average.

Figure 4 note (Bao, 2024): "Missing values are linearly interpolated. Time series are smoothed
using a two-sided 10-year moving average, with adaptive smoothing applied to the two ends using
the nearest (diminishing) available years."

Our window (the paper gives none; :func:`moving_average`) is R ``zoo::rollapply(x, w, mean,
align = "center", partial = TRUE)``'s, cut at the ends to the years that exist.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError


def interpolate_years(values: pd.Series, years=None) -> pd.Series:
    """Linear interpolation of missing years of a series indexed by year.

    ``years``: the years to report (default: every integer year min..max of the index).
    Leading/trailing gaps stay NaN (no extrapolation).

    Examples
    --------
    As ``zoo::na.approx(x, na.rm = FALSE)``:

    >>> import pandas as pd
    >>> interpolate_years(pd.Series([1.0, 3.0, 4.0], index=[2000, 2002, 2003])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    s = pd.Series(values, dtype=float)
    s.index = pd.Index(pd.to_numeric(s.index), name=s.index.name or "year")
    s = s.groupby(level=0).mean().sort_index()
    full = pd.Index(years if years is not None else np.arange(int(s.index.min()), int(s.index.max()) + 1), name=s.index.name)
    return s.reindex(full).interpolate(method="index", limit_area="inside")


def moving_average(values, width: int = 10, even: str = "right") -> np.ndarray:
    """Two-sided moving average with partial (shrinking) windows at the ends; NaNs ignored.

    Window of position i: i - floor((w-1)/2) ... i + floor(w/2) for ``even="right"`` (zoo's
    center alignment; w = 10 -> i-4..i+5) or i - floor(w/2) ... i + floor((w-1)/2) for
    ``even="left"`` (i-5..i+4); odd w: symmetric either way.

    Examples
    --------
    As ``zoo::rollapply(x, 3, mean, align = "center", partial = TRUE)``:

    >>> moving_average([1.0, 2.0, 3.0, 4.0, 10.0], width=3).round(3).tolist()
    [1.5, 2.0, 3.0, 5.667, 7.0]
    """
    if width < 1:
        raise InputError("width must be >= 1", where="moving_average(width)")
    if even not in ("right", "left"):
        raise InputError(f"unknown even={even!r}", where="moving_average(even)", fix="'right' or 'left'")
    x = np.asarray(values, dtype=float)
    lo, hi = ((width - 1) // 2, width // 2) if even == "right" else (width // 2, (width - 1) // 2)
    out = np.full(len(x), np.nan)
    for i in range(len(x)):
        w = x[max(0, i - lo) : i + hi + 1]
        w = w[np.isfinite(w)]
        if len(w):
            out[i] = w.mean()
    return out


def smooth_series(
    data: pd.DataFrame, value: str, year: str = "year", by=None, width: int = 10, even: str = "right"
) -> pd.DataFrame:
    """Figure-4 series: per ``by`` split, the yearly mean of ``value`` interpolated over all
    years min..max (``value``), then its adaptive moving average (``smooth``).

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"year": [2000, 2002, 2003], "lpr": [1.0, 3.0, 5.0]})
    >>> smooth_series(data, "lpr", width=3).round(3)
       year  value  smooth
    0  2000    1.0   1.500
    1  2001    2.0   2.000
    2  2002    3.0   3.333
    3  2003    5.0   4.000
    """
    by = [by] if isinstance(by, str) else list(by or [])
    for c in [value, year, *by]:
        if c not in data.columns:
            raise InputError(f"column {c!r} not in the table", where="smooth_series")
    parts = []
    groups = data.groupby(by, observed=True, sort=False) if by else [((), data)]
    for key, g in groups:
        s = interpolate_years(pd.Series(g[value].to_numpy(float), index=pd.to_numeric(g[year]).to_numpy()))
        smooth = moving_average(s.to_numpy(), width, even)
        part = pd.DataFrame({year: s.index.astype(int), "value": s.to_numpy(), "smooth": smooth})
        for c, v in zip(by, key):
            part.insert(0, c, v)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
