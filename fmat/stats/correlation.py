"""Correlations: Pearson r with a Fisher-z CI, and Williams' t for dependent correlations."""

from __future__ import annotations

import math

import numpy as np

from fmat.lazy_scipy import stats

from ..errors import InputError


def pearson(x, y, conf_level: float = 0.95) -> dict:
    """Pearson r of the complete (x, y) pairs, t test (df = n - 2) and Fisher-z CI.

    CI: tanh(atanh(r) +- z_(1+c)/2 / sqrt(n - 3))  (Fisher 1921; as R ``cor.test``).

    Examples
    --------
    Reproduces ``stats::cor.test(x, y)`` (estimate, t, df, p, conf.int):

    >>> res = pearson([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5])
    >>> {k: round(v, 3) for k, v in res.items()}
    {'r': 0.829, 'n': 6, 'df': 4, 't': 2.96, 'p': 0.042, 'ci_low': 0.052, 'ci_high': 0.981}
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise InputError(f"x and y differ in length ({len(x)} vs {len(y)})", where="pearson(x, y)")
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 4:
        raise InputError(f"pearson needs at least 4 complete pairs (have {n})", where="pearson(x, y)")
    r = float(np.corrcoef(x, y)[0, 1])
    df = n - 2
    t = r * math.sqrt(df / (1 - r * r)) if abs(r) < 1 else math.copysign(math.inf, r)
    p = float(2 * stats.t.sf(abs(t), df))
    z, q = math.atanh(min(max(r, -1 + 1e-15), 1 - 1e-15)), stats.norm.ppf(0.5 + conf_level / 2)
    half = q / math.sqrt(n - 3)
    return {"r": r, "n": n, "df": df, "t": t, "p": p, "ci_low": math.tanh(z - half), "ci_high": math.tanh(z + half)}


def williams_t(r12: float, r13: float, r23: float, n: int) -> dict:
    """Williams' t for H0: rho12 = rho13 (two correlations sharing variable 1), df = n - 3.

        det = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,   rbar = (r12 + r13)/2
        t = (r12 - r13) sqrt( (n-1)(1+r23) / (2 (n-1)/(n-3) det + rbar^2 (1-r23)^3) )

    Williams (1959); Steiger (1980) eq. 7; R ``psych::r.test(n, r12, r13, r23)``; p two-sided.

    Examples
    --------
    Reproduces ``psych::r.test(n = 100, r12 = .5, r13 = .3, r23 = .4)``:

    >>> res = williams_t(0.5, 0.3, 0.4, n=100)
    >>> round(res["t"], 3), res["df"], round(res["p"], 4)
    (2.065, 97, 0.0416)
    """
    if n <= 3:
        raise InputError("Williams' t needs n > 3", where="williams_t(n)")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3))
    df = n - 3
    return {"t": float(t), "df": df, "p": float(2 * stats.t.sf(abs(t), df))}
