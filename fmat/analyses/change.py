"""Studies 4A-4D (Bao, 2024): perceived change over time, 1800-2019.

Registered analysis ``change_over_time``; steps, options and Figure 4: ``docs/analyses-3-4.md``.
The [MASK] options are year tokens; the LPR table is paired over the TARGET (4A/4B) or ATTRIB
groups (4C/4D).  ``d = mean LPR / sigma`` per (model, year) over ``average_over`` (a year a
model lacks is left out and listed); LMM ``d ~ year / year_scale``, models as random intercepts
(rows ``b``, ``t``, ``beta``, ``R2m``, ``R2c``); ``century_contrasts`` as LMMs ``d ~ century``;
per model the OLS slope; ``inference: crossed`` (ours): :func:`crossed_trend`.  Figure table
``trend``: interpolated (:func:`fmat.stats.interpolate_years`) and smoothed
(:func:`fmat.stats.moving_average`, zoo's centre alignment) d per model and ``all``.
"""

from __future__ import annotations

import itertools
from typing import Literal, Mapping

import numpy as np
import pandas as pd

from fmat.analyses import AnalysisInput, AnalysisOutput, nearest, register
from fmat.analyses.stereotype import _levels, _need, _study_id, _where
from fmat.errors import InputError
from fmat.lazy_scipy import stats as sps
from fmat.results import model_slug, results_frame
from fmat.stats.crossed import crossed_contrast
from fmat.stats.effects import LPR_SIGMA
from fmat.stats.mixed import fit_lmm
from fmat.stats.timeseries import interpolate_years, moving_average

#: label columns of an LPR table (everything but the value)
LABELS = ("query", "MASK", "M_word", "TARGET", "T_pair", "T_word", "ATTRIB", "A_pair", "A_word")


def _years(words: pd.Series, where: str) -> pd.Series:
    y = pd.to_numeric(words.astype(str), errors="coerce")
    if y.isna().any():
        bad = sorted(set(words.astype(str)[y.isna()]))[:5]
        raise InputError(
            f"[MASK] words {bad} are not years", where=where, fix="give the year tokens as MASK words ({range: [1800, 2019]})"
        )
    return y.astype(int)


def expected_years(data: AnalysisInput, lpr: pd.DataFrame) -> list[int]:
    """All year tokens of the design: the study's query table's M_word, else the LPR's."""
    q = getattr(data.study, "queries", None)
    words = q["M_word"] if isinstance(q, pd.DataFrame) and "M_word" in q.columns else lpr["M_word"]
    return sorted(set(_years(pd.Series(words), "study queries: MASK").tolist()))


def yearly_effects(lpr: pd.DataFrame, average_over, sigma: float, where: str) -> pd.DataFrame:
    """``d`` per (model, year) = mean over ``average_over`` of the finite LPRs / sigma.

    Columns model, year, d, n_items (the items averaged).  Years whose LPRs are all missing
    are left out.  Other label columns must not vary within (model, year)."""
    average_over = [average_over] if isinstance(average_over, str) else list(average_over or [])
    _need(lpr, ["model", "M_word", "LPR", *average_over], where=where)
    df = lpr.copy()
    df["year"] = _years(df["M_word"], where="data.lpr: M_word").to_numpy()
    df["model"] = df["model"].astype(str)
    others = [c for c in LABELS if c in df.columns and c not in average_over and c != "M_word"]
    for c in others:
        n = df.groupby(["model", "year"])[c].nunique(dropna=False)
        if (n > 1).any():
            raise InputError(
                f"column {c!r} varies within a model and year but is not averaged over",
                where=where.replace("data.lpr", "analysis.options.average_over"),
                fix=f"add {c} to average_over, or make the LPR with the study's lpr "
                "options (the two TARGET/ATTRIB groups paired)",
            )
    df["LPR"] = pd.to_numeric(df["LPR"], errors="coerce").astype(float)
    ok = df[np.isfinite(df["LPR"])]
    out = ok.groupby(["model", "year"], sort=False).agg(d=("LPR", "mean"), n_items=("LPR", "size")).reset_index()
    out["d"] = out["d"] / float(sigma)
    out["model"] = pd.Categorical(out["model"], categories=list(dict.fromkeys(df["model"])))
    return out.sort_values(["model", "year"]).reset_index(drop=True)


def missing_years(yearly: pd.DataFrame, models: list[str], years: list[int]) -> pd.DataFrame:
    """Years of the design each model has no d for: columns model (slug), year."""
    rows = []
    for m in models:
        have = set(yearly.loc[yearly["model"].astype(str) == m, "year"].tolist())
        rows += [{"model": model_slug(m), "year": y} for y in years if y not in have]
    return pd.DataFrame(rows, columns=["model", "year"]).astype({"model": object, "year": "int64"})


def _ranges(years) -> str:
    """[1800, 1801, 1802, 1805] -> '1800-1802, 1805'."""
    parts = []
    for _, run in itertools.groupby(enumerate(sorted(years)), lambda iy: iy[1] - iy[0]):
        run = [y for _, y in run]
        parts.append(f"{run[0]}" if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(parts)


def trend_table(yearly: pd.DataFrame, years: list[int], window: int = 10, even: str = "right") -> pd.DataFrame:
    """Figure 4 series: per model and ``all`` (mean over models per year): d, linearly
    interpolated d over ``years`` (no extrapolation), moving average (partial end windows)
    of the interpolated series, NaN where the interpolated value is NaN."""
    parts = []
    series = [(model_slug(str(m)), g) for m, g in yearly.groupby("model", observed=True, sort=False)]
    mean = yearly.groupby("year")["d"].mean()
    series.append(("all", mean.rename("d").reset_index()))
    for name, g in series:
        raw = pd.Series(g["d"].to_numpy(float), index=g["year"].to_numpy(int))
        interp = interpolate_years(raw, years=years)
        smooth = moving_average(interp.to_numpy(), width=window, even=even)
        smooth[~np.isfinite(interp.to_numpy())] = np.nan
        parts.append(
            pd.DataFrame(
                {
                    "model": name,
                    "year": np.asarray(years, dtype="int64"),
                    "d": raw.reindex(years).to_numpy(float),
                    "d_interpolated": interp.to_numpy(float),
                    "d_smooth": smooth,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def century_contrast(yearly: pd.DataFrame, pair, subset) -> dict:
    """LMM ``d ~ C(century)`` (random intercept per model) on the years ``subset``; the
    contrast of the estimated means of year pair[0] minus year pair[1] (a d)."""
    a, b = int(pair[0]), int(pair[1])
    sub = yearly[yearly["year"].isin([int(y) for y in subset])].copy()
    sub["century"] = sub["year"].astype(str)
    present = set(sub["century"])
    if not {str(a), str(b)} <= present or sub["model"].nunique() < 2:
        raise InputError(f"years {a} and {b} are not both in the data of 2+ models", where="century_contrasts")
    sub["century"] = pd.Categorical(sub["century"], categories=sorted(present))
    fit = fit_lmm(sub, "d ~ C(century)", group="model")
    res = fit.compare(["century"], {"century": str(a)}, {"century": str(b)})
    return {**res, "n": float(fit.n), "singular": bool(fit.singular)}


def per_model_slopes(yearly: pd.DataFrame, year_scale: float) -> list[dict]:
    """OLS slope of d on year / year_scale within each model (scipy.stats.linregress)."""
    rows = []
    for m, g in yearly.groupby("model", observed=True, sort=False):
        if len(g) < 3:
            continue
        r = sps.linregress(g["year"].to_numpy(float) / year_scale, g["d"].to_numpy(float))
        df = len(g) - 2
        q = sps.t.ppf(0.975, df)
        ci = {"ci_low": r.slope - q * r.stderr, "ci_high": r.slope + q * r.stderr}
        rows.append({"model": model_slug(str(m)), "value": r.slope, "se": r.stderr, "df": df, "p": r.pvalue, **ci, "n": len(g)})
    return rows


#: the ``inference`` option: the paper's model (the models random, the items averaged) or the
#: concept-level test (the items random too, crossed with the models; ours)
TrendInference = Literal["paper", "crossed"]


def _item_labels(lpr: pd.DataFrame, average_over) -> pd.Series:
    """Each LPR row's item: its values of the ``average_over`` columns (``"all"`` without)."""
    over = [average_over] if isinstance(average_over, str) else list(average_over or [])
    labels = [" | ".join(t) for t in zip(*(lpr[c].astype(str) for c in over))] if over else "all"
    return pd.Series(labels, index=lpr.index, dtype=object)


def item_slopes(lpr: pd.DataFrame, average_over, sigma: float, year_scale: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per model x item (the ``average_over`` columns' values): the OLS slope of d = LPR / sigma
    on year / year_scale over the years the cell has (finite LPRs; NaN with fewer than 2 years).
    Returns (models x items table of slopes, the long table model, item, year, d)."""
    df = pd.DataFrame(
        {
            "model": lpr["model"].astype(str).to_numpy(),
            "item": _item_labels(lpr, average_over).to_numpy(),
            "year": _years(lpr["M_word"], where="data.lpr: M_word").to_numpy(),
            "d": pd.to_numeric(lpr["LPR"], errors="coerce").to_numpy(float) / float(sigma),
        }
    )
    df = df[np.isfinite(df["d"])]
    df = df.groupby(["model", "item", "year"], sort=False)["d"].mean().reset_index()
    x = df["year"].to_numpy(float) / float(year_scale)
    g = df.assign(x=x, xx=x * x, xy=x * df["d"].to_numpy(float)).groupby(["model", "item"], sort=False)
    s = g.agg(n=("d", "size"), sx=("x", "sum"), sy=("d", "sum"), sxx=("xx", "sum"), sxy=("xy", "sum"))
    sxx = s["sxx"] - s["sx"] ** 2 / s["n"]
    slope = (s["sxy"] - s["sx"] * s["sy"] / s["n"]) / sxx.where(sxx > 1e-12 * s["sxx"].abs().clip(lower=1e-300))
    table = slope.unstack("item")
    models = list(dict.fromkeys(df["model"]))
    items = list(dict.fromkeys(df["item"]))
    return table.reindex(index=models, columns=items), df


def _test_row(res: Mapping) -> dict:
    return {k: res[k] for k in ("se", "df", "p", "ci_low", "ci_high")} | {"value": res["estimate"], "n": res["n"]}


def _t_row(res: Mapping) -> dict:
    return {"value": res["t"], "df": res["df"], "p": res["p"], "n": res["n"]}


def crossed_trend(lpr: pd.DataFrame, average_over, sigma: float, year_scale: float, contrasts) -> tuple[list[dict], list[str]]:
    """The concept-level variant (``inference: crossed``, ours, not the paper's): the year
    slope and the century contrasts with the models *and* the items (the ``average_over``
    columns' values) as crossed random factors.

    ``S[m, i]``: each model x item cell's OLS slope (:func:`item_slopes`); the slope is the grand
    mean of ``S``, tested by :func:`fmat.stats.crossed.crossed_contrast` (``truncate_items=False``:
    fmat.stats.crossed, "Few items"); per model the mean of its row, tested over the items; a
    century contrast the same of each cell's d of the first year minus the second's.  With one
    item only the models are random; a model lacking a cell is left out, with a note."""
    table, long = item_slopes(lpr, average_over, sigma, year_scale)
    notes: list[str] = []
    complete = table.dropna(axis=0, how="any")
    if len(complete) < len(table):
        gone = [model_slug(m) for m in table.index if m not in complete.index]
        notes.append(f"inference: crossed left out {len(gone)} model(s) lacking an item's slope: {', '.join(gone)}")
    random_items = table.shape[1] > 1
    res = crossed_contrast(complete.to_numpy(), random_items=random_items, truncate_items=False)
    rows = [
        {"statistic": "b", "condition": "year", "model": "all", **_test_row(res)},
        {"statistic": "t", "condition": "year", "model": "all", **_t_row(res)},
    ]
    for m, slopes in table.iterrows():
        slopes = slopes.dropna().to_numpy(float)
        if random_items and len(slopes) >= 2:
            r = sps.ttest_1samp(slopes, 0.0)
            ci = r.confidence_interval(0.95)
            se = float(slopes.std(ddof=1) / np.sqrt(len(slopes)))
            one = {"model": model_slug(str(m)), "value": float(slopes.mean()), "se": se, "df": float(len(slopes) - 1)}
            test = {"p": float(r.pvalue), "ci_low": float(ci.low), "ci_high": float(ci.high), "n": float(len(slopes))}
            rows.append({"statistic": "b", "condition": "year", **one, **test})
    for a, b in contrasts:
        cells = long[long["year"].isin([a, b])].pivot_table(index=["model", "item"], columns="year", values="d")
        if a not in cells or b not in cells:
            notes.append(f"inference: crossed: century contrast {a} vs {b} not computed (a year is missing)")
            continue
        C = (cells[a] - cells[b]).unstack("item").reindex(index=table.index, columns=table.columns).dropna(axis=0, how="any")
        r = crossed_contrast(C.to_numpy(), random_items=random_items, truncate_items=False)
        rows.append({"statistic": "d", "condition": f"{a}vs{b}", "model": "all", **_test_row(r)})
        rows.append({"statistic": "t", "condition": f"{a}vs{b}", "model": "all", **_t_row(r)})
    what = (
        f"the models ({len(complete)}) and the items ({table.shape[1]}: the values of average_over) as crossed random "
        "factors, the year slope varying by model, by item and by model x item (expected mean squares, Satterthwaite df; "
        "the items' variance never set to 0, as few items need)"
        if random_items
        else f"the models ({len(complete)}) random, the year slope varying by model (one item: average_over is empty)"
    )
    notes.insert(
        0,
        f"inference: crossed (ours, not the paper's): b, t, p and CI of the year slope, the per-model slopes and the "
        f"century contrasts with {what}; fmat.stats.crossed, docs/calibration.md. beta, R2m and R2c are the paper's LMM's",
    )
    return rows, notes


def check_options(options: Mapping, queries: pd.DataFrame, where: str) -> None:
    """``change_over_time``'s options against the study's design, when the study file is read
    (before any model loads): each error names the option, the value and the fix."""
    _check_scales(options, where)
    _check_average_over(options.get("average_over"), queries, where)
    _check_century_contrasts(options.get("century_contrasts"), queries, where)
    _check_smoothing(options.get("smoothing"), where)
    model = options.get("century_model")
    if model is not None and model not in ("pairwise", "joint"):
        raise InputError(
            f"unknown century_model {model!r}" + nearest(model, ["pairwise", "joint"]),
            where=f"{where}.century_model",
            fix="use pairwise or joint",
        )


def _check_scales(options: Mapping, where: str) -> None:
    """``sigma`` and ``year_scale``: positive numbers."""
    for key in ("sigma", "year_scale"):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            raise InputError(
                f"{key} is {value!r}; it must be a positive number",
                where=f"{where}.{key}",
                fix=f"e.g. {key}: " + ("1.414" if key == "sigma" else "100 (change per century)"),
            )


def _check_average_over(over, queries: pd.DataFrame, where: str) -> None:
    """``average_over``: columns of the study's LPR table."""
    if over is not None:
        columns = [c for c in ("query", "TARGET", "T_word", "ATTRIB", "A_word") if c in queries.columns]
        for c in over if isinstance(over, list) else [over]:
            if str(c) not in columns:
                raise InputError(
                    f"average_over names {c!r}, not a column of this study's LPR table" + nearest(c, columns),
                    where=f"{where}.average_over",
                    fix=f"use some of {', '.join(columns)} (the LPRs are averaged over them within model and year)",
                )


def _check_century_contrasts(contrasts, queries: pd.DataFrame, where: str) -> None:
    """``century_contrasts``: pairs of years the design's [MASK] holds."""
    if contrasts is not None:
        years = set(pd.to_numeric(queries["M_word"], errors="coerce").dropna().astype(int)) if "M_word" in queries else set()
        if not isinstance(contrasts, list) or not all(isinstance(p, list) and len(p) == 2 for p in contrasts):
            raise InputError(
                f"century_contrasts is {contrasts!r}; it must be a list of [later, earlier] year pairs",
                where=f"{where}.century_contrasts",
                fix="e.g. century_contrasts: [[2000, 1900]] (note the double brackets for one pair)",
            )
        for i, pair in enumerate(contrasts):
            for y in pair:
                if not isinstance(y, int) or y not in years:
                    span = f"{min(years)}-{max(years)}" if years else "none"
                    raise InputError(
                        f"century_contrasts[{i}] names the year {y!r}, which is not a [MASK] year of this design ({span})",
                        where=f"{where}.century_contrasts[{i}]",
                        fix="name years the MASK range holds, or widen the range",
                    )


def _check_smoothing(smoothing, where: str) -> None:
    """``smoothing``: a mapping of ``window`` (a whole number of years >= 1) and ``even`` (right | left)."""
    if smoothing is not None:
        if not isinstance(smoothing, Mapping):
            raise InputError(
                f"smoothing is {smoothing!r}; it must be a mapping",
                where=f"{where}.smoothing",
                fix="e.g. smoothing: {window: 10}",
            )
        for key in smoothing:
            if key not in ("window", "even"):
                raise InputError(
                    f"unknown smoothing option {key!r}" + nearest(key, ["window", "even"]),
                    where=f"{where}.smoothing",
                    fix="use window (years) and even (right | left)",
                )
        window = smoothing.get("window", 10)
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise InputError(
                f"smoothing.window is {window!r}", where=f"{where}.smoothing.window", fix="give a whole number of years >= 1"
            )
        if str(smoothing.get("even", "right")) not in ("right", "left"):
            raise InputError(
                f"smoothing.even is {smoothing.get('even')!r}", where=f"{where}.smoothing.even", fix="use right or left"
            )


@register("change_over_time", check=check_options, items=("M_word",), needs=("M_word",))
def change_over_time(
    data: AnalysisInput,
    *,
    sigma: float = LPR_SIGMA,
    year_scale: float = 100,
    average_over=None,
    century_contrasts=None,
    smoothing: Mapping | None = None,
    century_model: Literal["pairwise", "joint"] = "pairwise",
    inference: TrendInference = "paper",
) -> AnalysisOutput:
    """Studies 4A-4D: LMM of the yearly effect size (mean LPR / sigma) on year / year_scale.

    Options (study file ``analysis.options``; docs/analyses-3-4.md): ``sigma`` (default
    LPR_SIGMA = √2), ``year_scale`` (100: per century), ``average_over`` ([query] or [A_word]),
    ``century_contrasts`` ([[2000, 1900]]: first minus second year), ``century_model``
    (pairwise or joint), ``smoothing`` ({window: 10, even: right}), ``inference``.
    """
    study = _study_id(data)
    lpr = data.lpr
    where = "data.lpr (change_over_time)"
    _need(lpr, ["model", "M_word", "LPR"], where=where)
    window, even = _trend_options(data, century_model, inference, smoothing)
    yearly = yearly_effects(lpr, average_over, sigma, where)
    if yearly["model"].nunique() < 2:
        raise InputError("the LMM needs the LPRs of 2 or more models", where=where, fix="score the study with several models")
    years = expected_years(data, lpr)
    models = _levels(lpr["model"].astype(str))
    missing = missing_years(yearly, models, years)

    df = yearly.assign(time=yearly["year"] / float(year_scale))
    rows, notes = _slope_rows(df, yearly, float(year_scale))
    contrasts = [[int(a), int(b)] for a, b in (century_contrasts or [])]
    rows += _century_rows(yearly, contrasts, century_model, notes)
    for m, g in missing.groupby("model", sort=False):
        notes.append(f"{m}: {len(g)} year(s) missing (dropped): {_ranges(g['year'].tolist())}")
    if inference == "crossed":
        rows = _with_crossed(rows, notes, lpr, average_over, float(sigma), float(year_scale), contrasts)
    out = results_frame([{"study": study, "model": "all", **r} for r in rows])
    figures = {
        "trend": trend_table(yearly, years, window, even),
        "missing_years": missing,
        "yearly": yearly.assign(model=yearly["model"].astype(str).map(model_slug)),
    }
    return AnalysisOutput(stats=out, figures=figures, notes=notes)


def _trend_options(data, century_model, inference, smoothing) -> tuple[int, str]:
    """``century_model``, ``inference`` and ``smoothing`` checked -> the smoothing's ``(window, even)``."""
    if century_model not in ("pairwise", "joint"):
        raise InputError(
            f"unknown century_model {century_model!r}", where=_where(data, "century_model"), fix="use pairwise or joint"
        )
    if inference not in ("paper", "crossed"):
        raise InputError(
            f"unknown inference {inference!r}" + nearest(str(inference), ["paper", "crossed"]),
            where=_where(data, "inference"),
            fix="use 'paper' (the paper's LMM) or 'crossed' (the items random, crossed with the models: the concept-level test)",
        )
    smoothing = dict(smoothing or {})
    unknown = set(smoothing) - {"window", "even"}
    if unknown:
        raise InputError(
            f"unknown smoothing option(s) {sorted(unknown)}",
            where=_where(data, "smoothing"),
            fix="use window (years) and even (right | left)",
        )
    return int(smoothing.get("window", 10)), str(smoothing.get("even", "right"))


def _slope_rows(df: pd.DataFrame, yearly: pd.DataFrame, year_scale: float) -> tuple[list, list]:
    """``(rows, notes)``: the paper's LMM ``d ~ year / year_scale`` (random intercept per model):
    the year slope's b, t, beta, R2m and R2c, and each model's own slope."""
    fit = fit_lmm(df, "d ~ time", group="model")
    c = fit.coefs.set_index("term").loc["time"]
    test = {k: c[k] for k in ("se", "df", "p", "ci_low", "ci_high")}
    rows = [
        {"statistic": "b", "condition": "year", "value": c["b"], **test, "n": fit.n},
        {"statistic": "t", "condition": "year", "value": c["t"], "df": c["df"], "p": c["p"], "n": fit.n},
        {"statistic": "beta", "condition": "year", "value": c["beta"], "n": fit.n},
        {"statistic": "R2m", "condition": "year", "value": fit.r2m, "n": fit.n},
        {"statistic": "R2c", "condition": "year", "value": fit.r2c, "n": fit.n},
    ]
    rows += [{"statistic": "b", "condition": "year", **r} for r in per_model_slopes(yearly, year_scale)]
    notes = [
        f"LMM d ~ year/{year_scale:g} (random intercept per model): N = {fit.n} model-years, "
        f"{fit.n_groups} models, tau^2 = {fit.var_group:.4g}, sigma^2 = {fit.var_resid:.4g}"
    ]
    if fit.singular:
        notes.append("singular fit: the random-intercept variance is ~0 (estimates equal OLS)")
    return rows, notes


def _century_rows(yearly: pd.DataFrame, contrasts: list, century_model: str, notes: list) -> list:
    """The d and t of each century contrast (an LMM on its two years, or on all century years
    named with ``century_model: joint``); a contrast that cannot be computed is a note."""
    rows = []
    all_century = sorted({y for pair in contrasts for y in pair})
    for a, b in contrasts:
        subset = [a, b] if century_model == "pairwise" else all_century
        try:
            res = century_contrast(yearly, (a, b), subset)
        except InputError as err:
            notes.append(f"century contrast {a} vs {b} not computed: {err}")
            continue
        cond = f"{a}vs{b}"
        if res.get("singular"):
            notes.append(
                f"century contrast {a} vs {b}: the random-intercept variance is ~0, so its t is the "
                "two-sample t of the two years (OLS), not the paired t test over models"
            )
        rows.append({"statistic": "d", "condition": cond, **_test_row(res)})
        rows.append({"statistic": "t", "condition": cond, **_t_row(res)})
    return rows


def _with_crossed(rows: list, notes: list, lpr, average_over, sigma: float, year_scale: float, contrasts: list) -> list:
    """The rows with the crossed inference's in place of the paper's (:func:`crossed_trend`), its notes added."""
    done = [(r["statistic"], r["condition"]) for r in rows if r.get("model", "all") == "all"]
    mine, more = crossed_trend(lpr, average_over, sigma, year_scale, [tuple(c) for c in contrasts])
    swap = {(r["statistic"], r["condition"], r["model"]): r for r in mine}
    rows = [swap.get((r["statistic"], r["condition"], r.get("model", "all")), r) for r in rows]
    rows += [r for r in mine if r["model"] == "all" and (r["statistic"], r["condition"]) not in done]
    notes += more
    return rows
