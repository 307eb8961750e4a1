"""OLS Delta R^2 and the coefficient-difference F test against hand computations (Study 1C)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fmat.stats import coef_difference_test, delta_r2, fit_ols


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 3644  # Study 1C names
    fmat_ = rng.normal(size=n)
    wefat = 0.6 * fmat_ + 0.8 * rng.normal(size=n)
    y = 2.4 * fmat_ + 1.3 * wefat + rng.normal(scale=2, size=n)
    return pd.DataFrame({"logit": y, "fmat": fmat_, "wefat": wefat})


def _r2(y, X):
    X = np.column_stack([np.ones(len(y)), X])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    res = y - X @ beta
    return 1 - res @ res / ((y - y.mean()) @ (y - y.mean())), res @ res


def test_delta_r2_hand(data):
    out = delta_r2(data, "logit", ["fmat", "wefat"]).set_index("predictor")
    y = data["logit"].to_numpy()
    r2_full, _ = _r2(y, data[["fmat", "wefat"]].to_numpy())
    for pred, other in [("fmat", "wefat"), ("wefat", "fmat")]:
        r2_red, _ = _r2(y, data[[other]].to_numpy())
        assert out.loc[pred, "delta_R2"] == pytest.approx(r2_full - r2_red, abs=1e-12)
        # = squared semipartial correlation: y with the part of pred not explained by the other
        x = data[pred].to_numpy()
        z = np.column_stack([np.ones(len(x)), data[other].to_numpy()])
        xr = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
        assert out.loc[pred, "delta_R2"] == pytest.approx(np.corrcoef(y, xr)[0, 1] ** 2, abs=1e-12)
        # F for Delta R^2 equals the squared t of the coefficient
        t = fit_ols(data, "logit ~ fmat + wefat").tvalues[pred]
        assert out.loc[pred, "F"] == pytest.approx(t**2, rel=1e-9)
    assert out["df2"].iloc[0] == 3641


def test_coefficient_difference_F_restricted_model(data):
    fit = fit_ols(data, "logit ~ fmat + wefat")
    res = coef_difference_test(fit, "fmat", "wefat")
    # independent: restricted model with b_fmat = b_wefat is y ~ (fmat + wefat)
    y = data["logit"].to_numpy()
    _, ssr_full = _r2(y, data[["fmat", "wefat"]].to_numpy())
    _, ssr_red = _r2(y, (data["fmat"] + data["wefat"]).to_numpy()[:, None])
    df2 = len(y) - 3
    F = (ssr_red - ssr_full) / (ssr_full / df2)
    assert res["df1"] == 1 and res["df2"] == 3641
    assert res["F"] == pytest.approx(F, rel=1e-8)
    assert res["p"] == pytest.approx(stats.f.sf(F, 1, df2), rel=1e-6)
    assert res["diff"] == pytest.approx(fit.params["fmat"] - fit.params["wefat"])
