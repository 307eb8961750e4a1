"""Ordinary least squares with Delta R^2 and a test that two coefficients are equal (Study 1C)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fmat.lazy_scipy import stats

from ..errors import InputError


def fit_ols(data: pd.DataFrame, formula: str):
    """statsmodels OLS of ``formula`` (patsy syntax); rows with missing values are dropped.

    Examples
    --------
    As ``stats::lm(y ~ x)``:

    >>> import pandas as pd
    >>> data = pd.DataFrame({"x": [1, 2, 3, 4, 5], "y": [1.0, 2.5, 2.5, 4.5, 5.0]})
    >>> fit = fit_ols(data, "y ~ x")
    >>> fit.params.round(3).to_dict()
    {'Intercept': 0.1, 'x': 1.0}
    """
    import statsmodels.formula.api as smf

    try:
        return smf.ols(formula, data=data, missing="drop").fit()
    except Exception as err:  # patsy errors: name the formula
        raise InputError(f"cannot fit {formula!r}: {err}", where="fit_ols(formula)", fix="check the column names") from err


def delta_r2(data: pd.DataFrame, outcome: str, predictors: list[str]) -> pd.DataFrame:
    """R^2 of ``outcome ~ predictors`` and, for each predictor, Delta R^2 = R^2(full) -
    R^2(full without it) (its squared semipartial correlation) with the F(1, n - k - 1) test of
    that increase; every model on the same rows (any missing value drops the row).  Returns
    ``predictor, R2_full, R2_reduced, delta_R2, F, df1, df2, p, n``.

    Examples
    --------
    The R^2 change of nested ``stats::lm`` fits (``anova(reduced, full)``):

    >>> import pandas as pd
    >>> data = pd.DataFrame({"y": [1.0, 2.0, 2.5, 4.0, 4.5, 6.5], "a": [1, 2, 3, 4, 5, 6], "b": [0, 1, 0, 1, 1, 0]})
    >>> delta_r2(data, "y", ["a", "b"])[["predictor", "R2_full", "delta_R2", "F", "df2"]].round(3)
      predictor  R2_full  delta_R2       F  df2
    0         a    0.968     0.966  91.159    3
    1         b    0.968     0.003   0.237    3
    """
    cols = [outcome, *predictors]
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise InputError(f"columns {missing} not in the table", where="delta_r2")
    d = data[cols].apply(pd.to_numeric, errors="raise").dropna()
    n, df2 = len(d), len(d) - len(predictors) - 1
    q = lambda c: f"Q('{c}')"
    full = fit_ols(d, f"{q(outcome)} ~ " + " + ".join(map(q, predictors)))
    rows = []
    for pred in predictors:
        rest = [p for p in predictors if p != pred]
        red = fit_ols(d, f"{q(outcome)} ~ " + (" + ".join(map(q, rest)) if rest else "1"))
        dr2 = full.rsquared - red.rsquared
        F = dr2 / ((1 - full.rsquared) / df2)
        rows.append(
            {
                "predictor": pred,
                "R2_full": full.rsquared,
                "R2_reduced": red.rsquared,
                "delta_R2": dr2,
                "F": F,
                "df1": 1,
                "df2": df2,
                "p": float(stats.f.sf(F, 1, df2)),
                "n": n,
            }
        )
    return pd.DataFrame(rows)


def coef_difference_test(fit, a: str, b: str) -> dict:
    """Wald F(1, df_resid) test of H0: b_a = b_b in a fitted statsmodels OLS ``fit``.

        F = (b_a - b_b)^2 / (Var b_a + Var b_b - 2 Cov(b_a, b_b))
    (= the restricted-vs-full SSR test with x_a + x_b as one predictor).  Study 1C, Table 5:
    F(1, 3641) = 128.23 with n = 3,644 and two predictors.  Returns ``diff, F, df1, df2, p``.

    Examples
    --------
    As ``car::linearHypothesis(fit, "a = b")``:

    >>> import pandas as pd
    >>> data = pd.DataFrame({"y": [1.0, 2.0, 2.5, 4.0, 4.5, 6.5], "a": [1, 2, 3, 4, 5, 6], "b": [0, 1, 0, 1, 1, 0]})
    >>> res = coef_difference_test(fit_ols(data, "y ~ a + b"), "a", "b")
    >>> {k: round(v, 3) for k, v in res.items()}
    {'diff': 1.231, 'F': 9.428, 'df1': 1, 'df2': 3.0, 'p': 0.055}
    """
    names = list(fit.params.index)
    for c in (a, b):
        if c not in names:
            raise InputError(f"coefficient {c!r} not in the model", where="coef_difference_test", fix=f"coefficients are {names}")
    L = np.zeros(len(names))
    L[names.index(a)], L[names.index(b)] = 1.0, -1.0
    res = fit.f_test(L.reshape(1, -1))
    F = float(np.squeeze(res.fvalue))
    return {
        "diff": float(L @ fit.params.to_numpy()),
        "F": F,
        "df1": int(res.df_num),
        "df2": float(res.df_denom),
        "p": float(np.squeeze(res.pvalue)),
    }
