"""Linear mixed models with a random intercept per model (the paper used R ``nlme::lme``).

    y_ij = x_ij' beta + u_j + e_ij,   u_j ~ N(0, tau^2),  e_ij ~ N(0, sigma^2)

j = BERT model (level 2), i = LPR (level 1).  REML: the one variance ratio gamma = tau^2/sigma^2
maximizes the exact profiled likelihood (:class:`_Profile`, closed form from group sums), so
estimates equal nlme's to ~1e-7.  From (tau^2, sigma^2) everything follows in closed form, as
nlme: beta and its covariance by GLS, the denominator df as nlme's ``getFixDF`` (Pinheiro &
Bates 2000, sec. 2.4.2), F tests as ``anova.lme``, R2 as Nakagawa & Schielzeth (2013);
docs/statistics.md has the details.
"""

from __future__ import annotations

import itertools
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fmat.lazy_scipy import stats

from ..errors import FmatError, InputError, user_stacklevel


class SingularFitWarning(UserWarning):
    """The random-intercept variance is (nearly) zero.

    Examples
    --------
    lme4 says ``boundary (singular) fit``; this is the same case:

    >>> issubclass(SingularFitWarning, UserWarning)
    True
    """


@dataclass
class LmmFit:
    """A fitted random-intercept model (see :func:`fit_lmm`).

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
    ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
    >>> fit = fit_lmm(data, "lpr ~ gender")
    >>> type(fit).__name__, fit.n, fit.n_groups, fit.singular
    ('LmmFit', 12, 3, False)
    >>> round(fit.r2m, 3), round(fit.r2c, 3)
    (0.624, 0.86)
    """

    formula: str
    group: str
    coefs: pd.DataFrame  # term, b, se, df, t, p, ci_low, ci_high, beta
    beta: np.ndarray
    cov: np.ndarray
    col_df: np.ndarray  # denominator df of each column (nlme rule)
    term_cols: dict  # term -> list of column indices
    term_df: dict  # term -> denominator df
    columns: list
    var_group: float  # tau^2
    var_resid: float  # sigma^2
    r2m: float
    r2c: float
    llf: float
    n: int
    n_groups: int
    singular: bool
    converged: bool
    design_info: object = field(repr=False, default=None)
    data: pd.DataFrame = field(repr=False, default=None)
    result: object = field(repr=False, default=None)
    _cells: dict = field(repr=False, default_factory=dict)  # cell_means by specs (compare asks often)

    # ------------------------------------------------------------------ tests
    def anova(self, type: str = "sequential") -> pd.DataFrame:
        """F tests of the formula's terms, as ``nlme::anova.lme(fit, type=...)``.

        Returns ``term, num_df, den_df, F, p``.  "sequential" (default, as nlme): terms in
        formula order, each adjusted for the ones before it; "marginal": each term adjusted for
        all others (Wald test of its columns; depends on contrast coding).

        Examples
        --------
        Reproduces ``anova(nlme::lme(lpr ~ gender, random = ~1 | model))``:

        >>> import pandas as pd
        >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
        ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
        >>> fit = fit_lmm(data, "lpr ~ gender")
        >>> fit.anova().round(3)
                term  num_df  den_df       F      p
        0  Intercept       1     8.0   0.860  0.381
        1     gender       1     8.0  49.227  0.000
        """
        if type not in ("sequential", "marginal"):
            raise InputError(f"unknown anova type {type!r}", where="LmmFit.anova(type=...)", fix="use 'sequential' or 'marginal'")
        info = np.linalg.inv(self.cov)
        c0 = np.linalg.cholesky(info).T @ self.beta  # upper factor R: info = R'R; effects R b
        rows = []
        for term, cols in self.term_cols.items():
            q = len(cols)
            if type == "sequential":
                fval = float(np.sum(c0[cols] ** 2) / q)
            else:
                b = self.beta[cols]
                fval = float(b @ np.linalg.solve(self.cov[np.ix_(cols, cols)], b) / q)
            den = self.term_df[term]
            rows.append({"term": term, "num_df": q, "den_df": den, "F": fval, "p": float(stats.f.sf(fval, q, den))})
        return pd.DataFrame(rows)

    def contrast(self, L, name: str = "contrast", conf_level: float = 0.95) -> dict:
        """Estimate, SE, t, df, p and CI of ``L @ beta`` (L: weights per column, array or dict
        column-name -> weight).  df: the smallest denominator df among the columns with a
        non-zero weight (the level-1 df when any level-1 column is involved, as in the paper).

        Examples
        --------
        >>> import pandas as pd
        >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
        ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
        >>> fit = fit_lmm(data, "lpr ~ gender")

        The male-female difference (as ``multcomp::glht(fit, linfct = L)``):

        >>> res = fit.contrast({"gender[T.male]": 1}, name="male - female")
        >>> res["contrast"], round(res["estimate"], 3), round(res["se"], 3), res["df"]
        ('male - female', 0.95, 0.135, 8.0)
        """
        if isinstance(L, dict):
            unknown = set(L) - set(self.columns)
            if unknown:
                raise InputError(
                    f"unknown columns {sorted(unknown)}", where="LmmFit.contrast(L)", fix=f"columns are {self.columns}"
                )
            L = np.array([float(L.get(c, 0.0)) for c in self.columns])
        L = np.asarray(L, dtype=float)
        nz = np.abs(L) > 1e-12
        df = float(self.col_df[nz].min()) if nz.any() else float(self.col_df.max())
        return {"contrast": name, **_t_test(float(L @ self.beta), float(np.sqrt(L @ self.cov @ L)), df, conf_level)}

    # ------------------------------------------------------------ cell means
    def _grid(self) -> tuple[pd.DataFrame, list, list]:
        """Reference grid (emmeans): all combinations of the categorical variables in the data,
        numeric variables at their mean."""
        code = " ".join(f.code for f in self.design_info.factor_infos)
        used = [c for c in self.data.columns if c != self.group and re.search(rf"(?<![\w.]){re.escape(str(c))}(?![\w])", code)]
        cats = [
            c for c in used if not pd.api.types.is_numeric_dtype(self.data[c]) or re.search(rf"C\(\s*{re.escape(str(c))}\b", code)
        ]
        nums = [c for c in used if c not in cats]
        levels = [pd.unique(self.data[c]) for c in cats]
        grid = pd.DataFrame(list(itertools.product(*levels)), columns=cats) if cats else pd.DataFrame(index=[0])
        for c in nums:
            grid[c] = float(self.data[c].mean())
        return grid, cats, nums

    def cell_means(self, specs) -> pd.DataFrame:
        """Estimated marginal means (emmeans-style, equal weights over the other factors) for
        each combination of the factors ``specs``; columns: specs, estimate, se, df, t, p, CI, and
        ``L`` (the weight vector, for :meth:`contrast`); computed once per ``specs`` (a copy is
        returned).

        Examples
        --------
        As ``emmeans::emmeans(fit, "gender")``:

        >>> import pandas as pd
        >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
        ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
        >>> fit = fit_lmm(data, "lpr ~ gender")
        >>> fit.cell_means("gender")[["gender", "estimate", "se", "df"]].round(3)
           gender  estimate     se   df
        0    male      0.65  0.201  8.0
        1  female     -0.30  0.201  8.0
        """
        import patsy

        specs = [specs] if isinstance(specs, str) else list(specs)
        if tuple(specs) in self._cells:
            return self._cells[tuple(specs)].copy()
        grid, cats, _ = self._grid()
        missing = [s for s in specs if s not in cats]
        if missing:
            raise InputError(
                f"{missing} are not categorical variables of the model",
                where="LmmFit.cell_means(specs)",
                fix=f"use some of {cats}",
            )
        X = np.asarray(patsy.build_design_matrices([self.design_info], grid)[0])
        rows = []
        for key, idx in grid.groupby(specs, sort=False).indices.items():
            key = key if isinstance(key, tuple) else (key,)
            L = X[idx].mean(axis=0)
            res = self.contrast(L, name=":".join(map(str, key)))
            rows.append({**dict(zip(specs, key)), **{k: v for k, v in res.items() if k != "contrast"}, "L": L})
        self._cells[tuple(specs)] = pd.DataFrame(rows)
        return self._cells[tuple(specs)].copy()

    def compare(self, specs, a: dict, b: dict, name: str | None = None) -> dict:
        """Contrast of two cells of :meth:`cell_means`: mean(a) - mean(b), e.g.
        ``fit.compare(["perceiver"], {"perceiver": "personal"}, {"perceiver": "societal"})``.
        A cell can also fix other factors (``specs`` lists all factors used in ``a``/``b``).

        Examples
        --------
        As ``emmeans::contrast(emmeans(fit, "gender"), "pairwise")``:

        >>> import pandas as pd
        >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
        ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
        >>> fit = fit_lmm(data, "lpr ~ gender")
        >>> res = fit.compare(["gender"], {"gender": "male"}, {"gender": "female"})
        >>> round(res["estimate"], 3), round(res["t"], 2), res["df"]
        (0.95, 7.02, 8.0)
        """
        cm = self.cell_means(specs)

        def pick(sel: dict) -> np.ndarray:
            m = np.ones(len(cm), bool)
            for k, v in sel.items():
                m &= cm[k].astype(str).to_numpy() == str(v)
            if m.sum() != 1:
                raise InputError(
                    f"cell {sel} matches {int(m.sum())} cells", where="LmmFit.compare", fix=f"give one level of each of {specs}"
                )
            return cm.loc[m, "L"].iloc[0]

        return self.contrast(pick(a) - pick(b), name=name or f"{a} - {b}")


def _t_test(est: float, se: float, df: float, conf_level: float = 0.95) -> dict:
    """The two-sided t test and CI of ``est`` with standard error ``se`` on ``df`` degrees of freedom."""
    t = est / se
    q = float(stats.t.ppf(0.5 + conf_level / 2, df))
    return {
        "estimate": est,
        "se": se,
        "df": float(df),
        "t": float(t),
        "p": float(2 * stats.t.sf(abs(t), df)),
        "ci_low": est - q * se,
        "ci_high": est + q * se,
    }


def nlme_col_df(X: np.ndarray, groups: np.ndarray, has_intercept: bool) -> np.ndarray:
    """Denominator df of each column, as ``nlme:::getFixDF`` with one grouping level.

    Examples
    --------
    As ``nlme:::getFixDF`` with one grouping level (``lme(y ~ x, random = ~1 | g)``):

    >>> import numpy as np
    >>> X = np.column_stack([np.ones(6), [1, 2, 3, 1, 2, 3]])
    >>> nlme_col_df(X, np.array([0, 0, 0, 1, 1, 1]), has_intercept=True)
    array([3., 3.])
    """
    n, p = X.shape
    codes, uniq = pd.factorize(groups)
    G = len(uniq)
    const = np.array([np.allclose(X[:, j], X[0, j]) for j in range(p)])
    inner = np.zeros(p, bool)
    for j in np.flatnonzero(~const):
        s = pd.Series(X[:, j]).groupby(codes)
        inner[j] = bool(((s.max() - s.min()) > 1e-12 * max(1.0, np.abs(X[:, j]).max())).any())
    p1 = int((~const & inner).sum())
    p2 = int((~const & ~inner).sum())
    df_outer = G - p2 - (1 if has_intercept or const.any() else 0)
    df_inner = n - G - p1
    if not const.any():  # no intercept column: nlme adds 1 to the lower strata
        df_inner += 1
    out = np.where(inner, df_inner, df_outer).astype(float)
    out[const] = max(df_outer, df_inner)
    return out


class _Profile:
    """Exact (RE)ML log-likelihood of the random-intercept model, profiled over sigma^2, as a
    function of gamma = tau^2 / sigma^2 (closed form from group sums; Pinheiro & Bates 2000,
    sec. 2.2).  REML: -1/2 [(N-p) log(2 pi s2) + (N-p) + sum_j log(1 + n_j gamma)
    + log|X' H^-1 X|], s2 = r' H^-1 r / (N-p), H_j = I + gamma 11' (nlme's logLik)."""

    def __init__(self, X, y, codes, reml):
        G = codes.max() + 1
        self.N, self.p = X.shape
        self.reml = reml
        self.ng = np.bincount(codes, minlength=G).astype(float)
        self.sx = np.zeros((G, self.p))
        np.add.at(self.sx, codes, X)
        self.sy = np.bincount(codes, weights=y, minlength=G)
        self.XX, self.Xy, self.yy = X.T @ X, X.T @ y, float(y @ y)

    def __call__(self, gamma):
        w = gamma / (1 + self.ng * gamma)
        A = self.XX - (self.sx * w[:, None]).T @ self.sx
        b = self.Xy - (self.sx * w[:, None]).T @ self.sy
        rss = self.yy - float((w * self.sy * self.sy).sum()) - b @ np.linalg.solve(A, b)
        m = self.N - self.p if self.reml else self.N
        s2 = rss / m
        ll = m * np.log(2 * np.pi * s2) + m + np.log1p(self.ng * gamma).sum()
        if self.reml:
            ll += np.linalg.slogdet(A)[1]
        return -0.5 * ll, s2

    def optimum(self, start=np.nan):
        from scipy.optimize import minimize_scalar

        f = lambda lg: -self(np.exp(lg))[0]
        r = minimize_scalar(f, bounds=(-30.0, 15.0), method="bounded", options={"xatol": 1e-10})
        cands = [np.exp(r.x), 0.0]
        if np.isfinite(start) and start > 0:
            r2 = minimize_scalar(f, bracket=(np.log(start) - 0.1, np.log(start) + 0.1), options={"xtol": 1e-12})
            cands.append(float(np.exp(r2.x)))
        best = max(cands, key=lambda g: self(g)[0])
        ll, s2 = self(best)
        return float(best), float(ll), float(s2)

    def gls(self, tau2, sigma2):
        """GLS information matrix and beta for the random-intercept covariance (closed form)."""
        w = tau2 / (sigma2 + self.ng * tau2)
        info = (self.XX - (self.sx * w[:, None]).T @ self.sx) / sigma2
        xy = (self.Xy - (self.sx * w[:, None]).T @ self.sy) / sigma2
        return info, np.linalg.solve(info, xy)


def fit_lmm(
    data: pd.DataFrame,
    formula: str,
    group: str = "model",
    *,
    reml: bool = True,
    conf_level: float = 0.95,
    engine: str = "profile",
) -> LmmFit:
    """Fit ``formula`` (patsy syntax, R-like: ``y ~ C(a, Sum) * b``) with a random intercept per
    ``group`` (default: the BERT model), REML; rows with missing values are dropped.

    A (near) zero random-intercept variance emits :class:`SingularFitWarning` and still reports;
    a non-finite log-likelihood raises :class:`fmat.errors.FmatError`.  ``engine``: "profile"
    (default; module docstring) or "statsmodels" (``MixedLM`` first, kept in ``.result``; the
    same numbers).  Source: Pinheiro & Bates (2000); nlme::lme.

    Examples
    --------
    Reproduces ``nlme::lme(lpr ~ gender, random = ~1 | model)`` (REML; = ``lme4::lmer(lpr ~ gender + (1 | model))`` with
    nlme's df):

    >>> import pandas as pd
    >>> data = pd.DataFrame({"model": list("aabbcc") * 2, "gender": ["male", "female"] * 6,
    ...                      "lpr": [1.0, 0.2, 0.4, -0.5, 0.6, -0.3, 0.8, -0.4, 0.2, -0.9, 0.9, 0.1]})
    >>> fit = fit_lmm(data, "lpr ~ gender")
    >>> fit.coefs[["term", "b", "se", "df", "t"]].round(3)
                 term     b     se   df      t
    0       Intercept -0.30  0.201  8.0 -1.496
    1  gender[T.male]  0.95  0.135  8.0  7.016
    >>> round(fit.var_group, 3), round(fit.var_resid, 3), fit.n_groups
    (0.093, 0.055, 3)
    """
    df = _lmm_frame(data, formula, group)
    y, X, di, codes, uniq, used = _lmm_design(df, formula, group)
    yv, Xv = y.iloc[:, 0].to_numpy(float), X.to_numpy(float)
    if np.linalg.matrix_rank(Xv) < Xv.shape[1]:
        raise InputError(
            "the fixed-effects design is rank deficient (a term is aliased)",
            where=f"fit_lmm({formula!r})",
            fix="drop redundant terms or check the data",
        )
    res, sm_gamma = _statsmodels_start(engine, yv, Xv, list(X.columns), codes, reml)
    prof = _Profile(Xv, yv, codes, reml)
    gamma, llf, sigma2 = prof.optimum(sm_gamma)
    if not np.isfinite(llf):
        raise FmatError(
            f"mixed model did not converge (log-likelihood {llf})",
            where=f"fit_lmm({formula!r})",
            fix="check the outcome for constant/duplicated values",
        )
    tau2 = gamma * sigma2
    singular = gamma <= 1e-8
    if singular:
        warnings.warn(
            f"singular fit: random-intercept variance of {group!r} is ~0 ({tau2:.3g}); estimates equal OLS",
            SingularFitWarning,
            stacklevel=user_stacklevel(),
        )
    info, beta = prof.gls(tau2, sigma2)
    cov = np.linalg.inv(info)
    col_df = nlme_col_df(Xv, codes, "Intercept" in X.columns)
    coefs = _coef_table(list(X.columns), Xv, yv, beta, cov, col_df, conf_level)
    term_cols = {name: list(range(sl.start, sl.stop)) for name, sl in di.term_name_slices.items()}
    term_df = {name: float(col_df[cols].max()) if cols else np.nan for name, cols in term_cols.items()}
    var_f = float(np.var(Xv @ beta, ddof=1))
    tot = var_f + tau2 + sigma2
    return LmmFit(
        formula=formula,
        group=group,
        coefs=coefs,
        beta=beta,
        cov=cov,
        col_df=col_df,
        term_cols=term_cols,
        term_df=term_df,
        columns=list(X.columns),
        var_group=tau2,
        var_resid=sigma2,
        r2m=var_f / tot,
        r2c=(var_f + tau2) / tot,
        llf=llf,
        n=len(yv),
        n_groups=len(uniq),
        singular=bool(singular),
        converged=bool(getattr(res, "converged", True)),
        design_info=di,
        data=used,
        result=res,
    )


def _lmm_frame(data: pd.DataFrame, formula: str, group: str) -> pd.DataFrame:
    """A copy of ``data`` patsy can read (categoricals without unused levels, strings as
    objects), checked: the group column is there and some row is complete."""
    if group not in data.columns:
        raise InputError(
            f"group column {group!r} not in the table", where="fit_lmm(group=...)", fix=f"columns are {list(data.columns)}"
        )
    df = data.copy()
    for c in df.columns:  # patsy and pandas 3 strings: use plain object for categoricals
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].cat.remove_unused_categories()  # else all-zero (aliased) columns
        elif pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].astype(object)
    if not len(df) or df[[c for c in df.columns if c != group]].isna().any(axis=1).all():
        raise InputError(
            f"no complete row to fit {formula!r} on (every value missing)",
            where="fit_lmm",
            fix="give values: words a model cannot score as one token (out of vocabulary) leave no LPR; use others",
        )
    return df


def _lmm_design(df: pd.DataFrame, formula: str, group: str):
    """``(y, X, design_info, codes, groups, used)``: the formula's response and design (rows with a
    missing value dropped), its patsy design info, the group codes and levels (two or more), and the rows used."""
    import patsy

    try:
        y, X = patsy.dmatrices(formula, df, return_type="dataframe", NA_action="drop")
    except patsy.PatsyError as err:
        raise InputError(
            f"cannot build the model from {formula!r}: {err}", where="fit_lmm(formula)", fix="check column names and patsy syntax"
        ) from err
    di = X.design_info
    g = df.loc[y.index, group]
    ok = g.notna().to_numpy()
    y, X, g = y[ok], X[ok], g[ok]
    used = df.loc[y.index]
    codes, uniq = pd.factorize(g)
    if len(uniq) < 2:
        raise InputError(
            f"need at least 2 groups in {group!r} (the rows left have {len(uniq)})",
            where="fit_lmm",
            fix=f"give rows of two or more {group}s (the random intercepts): a model whose values are all missing "
            "(its words out of vocabulary) does not count; score the study with more models or other words",
        )
    return y, X, di, codes, uniq, used


def _statsmodels_start(engine: str, yv, Xv, columns: list, codes, reml: bool):
    """``(result, gamma)``: with ``engine="statsmodels"``, statsmodels' ``MixedLM`` fit and its
    variance ratio (the profile's starting point); ``(None, nan)`` with ``"profile"``."""
    import statsmodels.api as sm

    res, sm_gamma = None, np.nan
    if engine == "statsmodels":
        model = sm.MixedLM(pd.Series(yv, name="y"), pd.DataFrame(Xv, columns=columns), groups=codes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit(reml=reml)  # default optimizer on purpose (never method="lbfgs")
        if np.isfinite(res.llf) and float(res.scale) > 0:
            sm_gamma = float(np.asarray(res.cov_re)[0, 0]) / float(res.scale)
    elif engine != "profile":
        raise InputError(
            f"unknown engine {engine!r}", where="fit_lmm(engine=...)", fix="use 'profile' (default) or 'statsmodels'"
        )
    return res, sm_gamma


def _coef_table(columns: list, Xv, yv, beta, cov, col_df, conf_level: float) -> pd.DataFrame:
    """The fixed effects: b, se, nlme's df, t, p, CI and the standardized beta of each column."""
    se = np.sqrt(np.diag(cov))
    t = beta / se
    qt = stats.t.ppf(0.5 + conf_level / 2, col_df)
    sd_y = yv.std(ddof=1)
    std_beta = np.array([np.nan if c == "Intercept" else beta[j] * Xv[:, j].std(ddof=1) / sd_y for j, c in enumerate(columns)])
    return pd.DataFrame(
        {
            "term": list(columns),
            "b": beta,
            "se": se,
            "df": col_df,
            "t": t,
            "p": 2 * stats.t.sf(np.abs(t), col_df),
            "ci_low": beta - qt * se,
            "ci_high": beta + qt * se,
            "beta": std_beta,
        }
    )
