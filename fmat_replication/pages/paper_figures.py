"""The paper's figures redrawn from the analyses' figure tables (:func:`figure3_criterion`,
:func:`figure4_trend`), and forest plots for the studies the paper shows no figure for
(:func:`figure_attitude_forest`, :func:`figure_stereotype_forest`). Each returns a matplotlib
Figure, or raises :class:`FigureUnavailable` saying in plain words why it cannot be drawn.
"""

from __future__ import annotations

import math
import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from fmat_replication.paper import stars_for

GREY, BLACK = "#8c8c8c", "#000000"
#: Figure 4's x axis
YEARS = (1800, 2019)


class FigureUnavailable(Exception):
    """A figure cannot be drawn; the message says why, in words a reader understands."""


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def close_figure(fig) -> None:
    """Free a drawn figure (pyplot keeps every figure until closed)."""
    _plt().close(fig)


def _need(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if df is None or df.empty:
        raise FigureUnavailable(f"the analysis wrote no rows for {what}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise FigureUnavailable(f"the analysis' table for {what} has no {', '.join(missing)} column")


def _r(x, y) -> tuple[float, float, int]:
    from scipy import stats

    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.std(x[ok]) == 0 or np.std(y[ok]) == 0:
        return math.nan, math.nan, int(ok.sum())
    res = stats.pearsonr(x[ok], y[ok])
    return float(res.statistic), float(res.pvalue), int(ok.sum())


def _r_label(r: float, p: float) -> str:
    if math.isnan(r):
        return "r not computable"
    s = stars_for(p)
    return f"r = {r:.2f}".replace("0.", ".") + ("" if s == "ns" else s)


def figure3_criterion(table: pd.DataFrame, study: str = "", logit: bool = False, wefat_label: str = "WEFAT male (GloVe)"):
    """Figure 3 (1A-1C): the FMAT score of each item (y) against % male (x; grey linear fit,
    black logit fit when ``logit``: the analysis regresses the logit of % male) and, when the
    table has WEFAT scores, against WEFAT male (x, labelled ``wefat_label``; grey linear fit);
    r with stars in each panel."""
    _need(table, ["fmat", "pct_male"], f"Figure 3{(' ' + study) if study else ''}")
    y, x = (table[c].to_numpy(float) for c in ("fmat", "pct_male"))
    if not (np.isfinite(x) & np.isfinite(y)).any():
        raise FigureUnavailable("no item has both an FMAT score and a % male criterion")
    wefat = table["wefat_male"].to_numpy(float) if "wefat_male" in table.columns else np.full(len(y), np.nan)
    panels = [("pct", x)] + ([("wefat", wefat)] if np.isfinite(wefat).sum() >= 2 else [])
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    small = len(y) > 500
    for ax, (kind, xx) in zip(axes[0], panels):
        ok = np.isfinite(xx) & np.isfinite(y)
        ax.scatter(
            xx[ok],
            y[ok],
            s=4 if small else 14,
            alpha=0.35 if small else 0.8,
            color="#1f4e79",
            edgecolors="none",
            rasterized=small,
        )  # thousands of points: one bitmap layer in the SVG
        if ok.sum() >= 2 and np.std(xx[ok]) > 0:
            b, a = np.polyfit(xx[ok], y[ok], 1)
            grid = np.linspace(np.nanmin(xx[ok]), np.nanmax(xx[ok]), 100)
            ax.plot(grid, a + b * grid, color=GREY, lw=1.5, label="linear fit")
        if kind == "pct" and logit and "fit_logit" in table.columns:
            order = np.argsort(x)
            fl = table["fit_logit"].to_numpy(float)[order]
            keep = np.isfinite(fl) & np.isfinite(x[order])
            if keep.any():
                ax.plot(x[order][keep], fl[keep], color=BLACK, lw=1.8, label="logit fit")
        r, p, n = _r(xx, y)
        ax.text(0.03, 0.95, f"{_r_label(r, p)} (n = {n})", transform=ax.transAxes, va="top", fontsize=9)
        ax.set_xlabel("% male" if kind == "pct" else wefat_label)
        ax.set_ylabel("FMAT male (LPR, standardized and averaged)")
        ax.grid(alpha=0.25)
        if kind == "pct":
            ax.set_xlim(-2, 102)
    axes[0][0].legend(loc="lower right", fontsize=8, frameon=False)
    fig.suptitle(f"Figure 3 (Study {study}): FMAT against the criterion" if study else "FMAT against the criterion", fontsize=11)
    fig.tight_layout()
    return fig


def figure4_trend(trend: pd.DataFrame, study: str = "", ylabel: str = "FMAT d (LPR contrast)", years: tuple[int, int] = YEARS):
    """Figure 4 (4A-4D) from the analysis' ``trend`` table (model, year, d, d_interpolated,
    d_smooth; model ``all`` = the mean over models): the yearly mean d (points), each model's
    smoothed series (thin lines) and the smoothed mean (bold), a zero line, 1800-2019."""
    _need(trend, ["model", "year", "d", "d_smooth"], f"Figure 4{(' ' + study) if study else ''}")
    t = trend.assign(model=trend["model"].astype(str))
    mean = t[t["model"] == "all"].sort_values("year")
    if mean.empty or not np.isfinite(mean["d"].to_numpy(float)).any():
        raise FigureUnavailable("no year has scores for any model, so there is no series to draw")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    models = [m for m in dict.fromkeys(t["model"]) if m != "all"]
    colors = plt.get_cmap("tab20")(np.linspace(0, 1, max(len(models), 1)))
    for m, c in zip(models, colors):
        g = t[t["model"] == m].sort_values("year")
        if np.isfinite(g["d_smooth"].to_numpy(float)).any():
            ax.plot(g["year"], g["d_smooth"], lw=0.8, alpha=0.7, color=c, label=m)
    ax.scatter(mean["year"], mean["d"], s=6, color=GREY, zorder=2, label="yearly mean over models")
    ax.plot(mean["year"], mean["d_smooth"], lw=2.6, color=BLACK, zorder=3, label="mean, 10-year moving average")
    ax.axhline(0, color="#555555", lw=0.8, ls="--")
    ax.set_xlim(years[0] - 3, years[1] + 3)
    ax.set_xticks(list(range(1800, years[1] + 1, 20)))
    ax.set_xlabel("Year")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=7, ncol=2, frameon=False, loc="best")
    ax.set_title(f"Figure 4 (Study {study}): yearly FMAT effect, 1800–2019" if study else "Yearly FMAT effect", fontsize=11)
    fig.tight_layout()
    return fig


def wrap_label(label: str, width: int = 26) -> str:
    """A row label as a reader reads it: ``wording:men/women`` -> "wording: men vs. women",
    wrapped at ``width`` characters."""
    text = str(label).replace(":", ": ").replace("/", " vs. ").replace("_", " ").replace("  ", " ")
    return "\n".join(textwrap.wrap(text, width)) or text


def forest_plot(rows: pd.DataFrame, title: str = "", xlabel: str = "d (95% CI)"):
    """A forest plot of ``rows`` (label, d, ci_low, ci_high, optional paper, optional planted):
    our d with its CI (filled), the paper's d (open diamond) and the value planted in the demo's
    world (cross), top to bottom, a zero line; labels wrapped, the legend below the data."""
    _need(rows, ["label", "d", "ci_low", "ci_high"], title or "the forest plot")
    r = rows.reset_index(drop=True)
    if not np.isfinite(r["d"].to_numpy(float)).any():
        raise FigureUnavailable("no effect size was computed (every d is missing)")
    plt = _plt()
    labels = [wrap_label(x) for x in r["label"].astype(str)]
    rows_in = 0.22 * sum(1 + x.count("\n") for x in labels) + 0.12 * len(r)  # the rows' height, in inches
    bottom, top = 1.0, 0.45  # below the data: the x axis and the legend; above: the title
    height = rows_in + bottom + top
    fig = plt.figure(figsize=(9.0, height))
    ax = fig.add_axes((0.30, bottom / height, 0.66, rows_in / height))  # data: 66% of the width
    ypos = np.arange(len(r))[::-1]
    d, lo, hi = (r[c].to_numpy(float) for c in ("d", "ci_low", "ci_high"))
    ax.errorbar(
        d,
        ypos,
        xerr=[np.where(np.isfinite(lo), d - lo, 0), np.where(np.isfinite(hi), hi - d, 0)],
        fmt="o",
        color="#1f4e79",
        ecolor="#1f4e79",
        capsize=3,
        label="ours (95% CI)",
    )
    for column, style in (
        ("paper", {"marker": "D", "facecolors": "none", "edgecolors": "#c0392b", "s": 40, "label": "paper"}),
        ("planted", {"marker": "x", "color": "#e08a00", "s": 50, "label": "planted (demo world)"}),
    ):
        if column in r.columns and np.isfinite(r[column].to_numpy(float)).any():
            ax.scatter(r[column].to_numpy(float), ypos, zorder=3, **style)
    ax.axvline(0, color="#555555", lw=0.8, ls="--")
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=9)
    ax.set_ylim(-0.6, len(r) - 0.4)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.25)
    ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.55 / rows_in), ncol=3)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


def paper_d(replication: pd.DataFrame | None, study: str, conditions, column: str = "paper_value") -> list[float]:
    """The paper's d of each condition, from the replication table (``paper_value``); NaN where
    the paper prints none."""
    if replication is None or replication.empty or column not in replication.columns:
        return [math.nan] * len(conditions)
    rep = replication
    p = rep[(rep["study"] == study) & (rep["statistic"] == "d") & (rep["model"].astype(str) == "all")]
    by = dict(zip(p["condition"].astype(str), pd.to_numeric(p[column], errors="coerce")))
    return [float(by.get(c, math.nan)) for c in conditions]


def figure_attitude_forest(
    effects: pd.DataFrame, replication: pd.DataFrame | None = None, study: str = "", planted: Mapping[str, float] | None = None
):
    """2A-2D from the analysis' ``effects`` table (relation, perceiver, d, ci_low, ci_high): one
    row per relation x perceiver, the paper's d (condition ``relation:perceiver`` of the
    replication table) and the planted value (demo) beside ours."""
    _need(effects, ["relation", "perceiver", "d", "ci_low", "ci_high"], f"the {study} effects".replace("  ", " "))
    conds = (effects["relation"].astype(str) + ":" + effects["perceiver"].astype(str)).tolist()
    labels = [c.replace(":", ", ").replace("personal-societal", "personal − societal") for c in conds]
    return _forest(effects, conds, labels, replication, study, planted, "d per relation and perceiver")


def figure_stereotype_forest(
    effects: pd.DataFrame,
    replication: pd.DataFrame | None = None,
    study: str = "",
    labels: Mapping[str, str] | None = None,
    planted: Mapping[str, float] | None = None,
):
    """3A-3D from the analysis' ``effects`` table (model, condition, d, ci_low, ci_high): the
    overall d (condition ``all``) and the d per attribute pair / form over all models, the
    paper's (replication table) and the planted value (demo) beside ours."""
    _need(effects, ["condition", "d", "ci_low", "ci_high"], f"the {study} effects".replace("  ", " "))
    e = effects[effects["model"].astype(str) == "all"] if "model" in effects.columns else effects
    if e.empty:
        raise FigureUnavailable("the analysis wrote no effect over all models")
    conds = e["condition"].astype(str).tolist()
    shown = ["overall" if c == "all" else (labels or {}).get(c, c) for c in conds]
    return _forest(e, conds, shown, replication, study, planted, "stereotype d per attribute pair / form")


def _forest(effects: pd.DataFrame, conds: list[str], labels: list[str], replication, study: str, planted, what: str):
    """The forest plot of the ``effects`` rows (their d and CI, one row a condition ``conds``,
    shown as ``labels``), the paper's d and the planted value beside them."""
    rows = pd.DataFrame({"label": labels, **{c: effects[c].to_numpy(float) for c in ("d", "ci_low", "ci_high")}})
    rows["paper"] = paper_d(replication, study, conds)
    rows["planted"] = [float((planted or {}).get(c, math.nan)) for c in conds]
    return forest_plot(rows, title=f"Study {study}: {what}" if study else "")
