"""The paper's statistics as small pure functions (see docs/statistics.md).

ICC (irr::icc), Cronbach's alpha (psych::alpha), effect sizes d (WEAT; population sigma),
random-intercept mixed models (nlme::lme), correlations (Fisher-z CI; Williams' t as
psych::r.test), OLS with Delta R^2 and coefficient-difference F, time-series smoothing.
"""

from .alpha import alpha_if_dropped, cronbach_alpha
from .correlation import pearson, williams_t
from .effects import LPR_SIGMA, effect_d, sigma_d, standardize, weat_d
from .icc import icc, mean_squares
from .mixed import LmmFit, SingularFitWarning, fit_lmm, nlme_col_df
from .regression import coef_difference_test, delta_r2, fit_ols
from .timeseries import interpolate_years, moving_average, smooth_series

__all__ = [
    "LPR_SIGMA",
    "LmmFit",
    "SingularFitWarning",
    "alpha_if_dropped",
    "coef_difference_test",
    "cronbach_alpha",
    "delta_r2",
    "effect_d",
    "fit_lmm",
    "fit_ols",
    "icc",
    "interpolate_years",
    "mean_squares",
    "moving_average",
    "nlme_col_df",
    "pearson",
    "sigma_d",
    "smooth_series",
    "standardize",
    "weat_d",
    "williams_t",
]
