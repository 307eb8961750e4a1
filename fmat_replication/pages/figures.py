"""Figures and small tables that the report pages draw: each reads result tables and returns a
matplotlib Figure (Agg backend, no display) or a DataFrame. An analysis' figure table
(``results/analysis/{study}/figures/<name>.parquet``) is drawn by :func:`plot_figure_table` in the
convention of docs/reports.md ("Figure tables": columns ``x``, ``y`` and optional others).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from fmat.html import table_data
from fmat_replication.pages.html import render

from .paper_figures import FigureUnavailable, _plt

ICC_STATS = ("ICC_average", "ICC_single")
#: Cicchetti (1994) criteria drawn on Figure 2: good > .60, excellent > .75
ICC_CRITERIA = {"good": 0.60, "excellent": 0.75}


def icc_table(stats: pd.DataFrame, studies: Iterable[str] | None = None) -> pd.DataFrame:
    """ICC_average and ICC_single per study (condition ``all``: the paper's ICC on raw log
    probabilities) from results rows: study, statistic, value, ci_low, ci_high, n (items), in the
    order of ``studies`` (default: as found)."""
    sel = stats[stats["statistic"].isin(ICC_STATS) & (stats["model"] == "all")]
    parts = []
    for _key, grp in sel.groupby(["study", "statistic"], sort=False):
        pick = grp[grp["condition"] == "all"]
        if not pick.empty:
            parts.append(pick.iloc[[0]])
    cols = ["study", "statistic", "value", "ci_low", "ci_high", "n"]
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)[cols]
    order = list(studies) if studies is not None else list(dict.fromkeys(out["study"]))
    out = out[out["study"].isin(order)].copy()
    out["_o"] = out["study"].map({s: i for i, s in enumerate(order)})
    out["_s"] = out["statistic"].map({s: i for i, s in enumerate(ICC_STATS)})
    return out.sort_values(["_o", "_s"]).drop(columns=["_o", "_s"]).reset_index(drop=True)


def figure2_icc(
    stats: pd.DataFrame,
    paper: pd.DataFrame | None = None,
    studies: Iterable[str] | None = None,
    title: str = "Interrater agreement of the models per study",
):
    """Figure 2 of Bao (2024): ICC_average and ICC_single with 95% CIs for every study of
    ``stats`` (results rows), the paper's (``load_paper_results()``) as open markers, dashed lines
    at the criteria good (.60) and excellent (.75)."""
    plt = _plt()
    icc = icc_table(stats, studies)
    order = list(studies) if studies is not None else list(dict.fromkeys(icc["study"]))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(order) + 2), 4.0))
    xs = {s: i for i, s in enumerate(order)}
    colours = {"ICC_average": "#1f77b4", "ICC_single": "#d62728"}
    offset = {"ICC_average": -0.12, "ICC_single": 0.12}
    for stat in ICC_STATS:
        d = icc[icc["statistic"] == stat]
        if d.empty:
            continue
        x = np.array([xs[s] for s in d["study"]], dtype=float) + offset[stat]
        y, lo, hi = (d[c].to_numpy(dtype=float) for c in ("value", "ci_low", "ci_high"))
        # a value a hair outside its own CI (float rounding of a degenerate interval) draws no bar
        err = np.vstack(
            [np.where(np.isnan(lo), 0, np.clip(y - lo, 0, None)), np.where(np.isnan(hi), 0, np.clip(hi - y, 0, None))]
        )
        ax.errorbar(x, y, yerr=err, fmt="o", color=colours[stat], capsize=3, label=f"{stat} (ours, 95% CI)")
    if paper is not None and len(paper):
        pp = paper[paper["statistic"].isin(ICC_STATS) & paper["study"].isin(order)]
        for stat in ICC_STATS:
            d = pp[pp["statistic"] == stat]
            if len(d):
                x = np.array([xs[s] for s in d["study"]], dtype=float) + offset[stat]
                ax.scatter(
                    x,
                    d["value"].to_numpy(dtype=float),
                    marker="D",
                    facecolors="none",
                    edgecolors=colours[stat],
                    s=36,
                    label=f"{stat} (paper)",
                )
    for name, level in ICC_CRITERIA.items():
        ax.axhline(level, ls="--", lw=0.8, color="grey")
        ax.text(len(order) - 0.5 if order else 0, level, f" {name}", va="bottom", ha="right", fontsize=7, color="grey")
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels(order)
    ax.set_xlim(-0.6, max(len(order) - 0.4, 0.6))
    ax.set_ylim(min(0.0, float(np.nanmin(icc["ci_low"].to_numpy(dtype=float), initial=0.0))), 1.0)
    ax.set_xlabel("Study")
    ax.set_ylabel("ICC (absolute agreement, two-way random)")
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def _first(df: pd.DataFrame, col: str, default: str = "") -> str:
    if col in df.columns and len(df) and pd.notna(df[col].iloc[0]):
        return str(df[col].iloc[0])
    return default


def _xy(df: pd.DataFrame, name: str = "") -> tuple[pd.DataFrame, str]:
    """The table with x/y columns (convention), and the kind of plot. Without ``x``/``y``, a table
    with a numeric ``year`` column is drawn as lines of the first other numeric column over the
    years; any other table, or a y that is not numbers, raises :class:`FigureUnavailable` (the
    page says why instead of guessing a meaningless plot)."""
    if {"x", "y"} <= set(df.columns):
        d = df
    else:
        num = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
        year = next((c for c in num if c.lower() == "year"), None)
        others = [c for c in num if c != year]
        if year is None or not others:
            raise FigureUnavailable("a figure table needs columns x and y (docs/reports.md)")
        d = df.rename(columns={year: "x", others[0]: "y"})
        d = d.assign(xlabel=d.get("xlabel", year), ylabel=d.get("ylabel", others[0]), kind=d.get("kind", "line"))
    if not pd.api.types.is_numeric_dtype(d["y"]):
        raise FigureUnavailable(f"the values of the table '{name}' to draw (its y column) are not numbers")
    return d, _first(d, "kind") or ("scatter" if pd.api.types.is_numeric_dtype(d["x"]) else "bar")


def _bars(ax, dp: pd.DataFrame, dg: pd.DataFrame, groups: list, g, label) -> None:
    """Bars of several groups side by side at each category (dodged), with error bars."""
    cats = list(dict.fromkeys(dp["x"].astype(str)))
    width = 0.8 / len(groups)
    shift = (groups.index(g) - (len(groups) - 1) / 2) * width
    pos = np.array([cats.index(c) for c in dg["x"].astype(str)], dtype=float) + shift
    y = dg["y"].to_numpy(dtype=float)
    ax.bar(pos, y, width=width, label=label, alpha=0.8)
    if {"ymin", "ymax"} <= set(dg.columns):
        low, high = dg["ymin"].to_numpy(dtype=float), dg["ymax"].to_numpy(dtype=float)
        yerr = [np.clip(y - low, 0, None), np.clip(high - y, 0, None)]
        ax.errorbar(pos, y, yerr=yerr, fmt="none", color="black", capsize=3)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats)


def _series(ax, kind: str, dg: pd.DataFrame, label) -> None:
    """One group as a line (with a band) or as points (with error bars)."""
    bounds = {"ymin", "ymax"} <= set(dg.columns)
    if kind == "line":
        dg = dg.sort_values("x")
        ax.plot(dg["x"], dg["y"], label=label, lw=1.2)
        if bounds:
            x, low, high = (dg[c].to_numpy(dtype=float) for c in ("x", "ymin", "ymax"))
            ax.fill_between(x, low, high, alpha=0.2)
        return
    ax.scatter(dg["x"], dg["y"], s=12, alpha=0.7, label=label)
    if bounds:
        y = dg["y"].to_numpy(dtype=float)
        yerr = [y - dg["ymin"].to_numpy(dtype=float), dg["ymax"].to_numpy(dtype=float) - y]
        ax.errorbar(dg["x"], y, yerr=yerr, fmt="none", color="grey", lw=0.8)


def plot_figure_table(df: pd.DataFrame, name: str = ""):
    """Draw one figure table (docs/reports.md, "Figure tables"); returns the Figure."""
    plt = _plt()
    d, kind = _xy(df, name)
    panels = list(dict.fromkeys(d["panel"])) if "panel" in d.columns else [None]
    ncol = min(len(panels), 2)
    nrow = math.ceil(len(panels) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.6 * nrow), squeeze=False)
    for k, panel in enumerate(panels):
        ax = axes[k // ncol][k % ncol]
        dp = d if panel is None else d[d["panel"] == panel]
        groups = list(dict.fromkeys(dp["group"])) if "group" in dp.columns else [None]
        for g in groups:
            dg = dp if g is None else dp[dp["group"] == g]
            label = None if g is None else str(g)
            if kind == "bar":
                _bars(ax, dp, dg, groups, g, label)
            else:
                _series(ax, kind, dg, label)
        ax.set_xlabel(_first(d, "xlabel", "x"))
        ax.set_ylabel(_first(d, "ylabel", "y"))
        if panel is not None:
            ax.set_title(str(panel), fontsize=9)
        if groups != [None] and len(groups) <= 15:
            ax.legend(fontsize=7)
    for k in range(len(panels), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    fig.suptitle(_first(d, "title", name))
    fig.tight_layout()
    return fig


def html_table(df: pd.DataFrame | None, max_rows: int | None = None, cls: str = "fmat-table") -> str:
    """A results-like table as HTML: p as "< .001"/".044", counts as integers, other numbers at 3
    decimals, empty cells for missing values; "(none)" for an empty table (the macro
    ``results_table``, :func:`fmat.html.table_data`)."""
    return render("results_table.html.j2", t=table_data(df, max_rows), cls=cls)


def run_settings(params: Mapping[str, object]) -> pd.DataFrame:
    """Key/value table of the run: whatever ``params`` holds (device, dtype, date, config hash...)."""
    return pd.DataFrame([{"item": k, "value": str(v)} for k, v in params.items() if str(v) != ""])


__all__ = [
    "ICC_STATS",
    "ICC_CRITERIA",
    "icc_table",
    "figure2_icc",
    "plot_figure_table",
    "html_table",
    "run_settings",
]
