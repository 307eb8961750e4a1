"""Stage ``figures`` (rules report_figures, report_figures_index): every figure a page shows, drawn
once from declared files into ``results/figures/{study}/`` (``index/`` for the overview) as SVG,
with ``figures.json`` listing each figure's file, title and caption (written from the data it
draws), in page order; a figure that cannot be drawn is listed with ``missing`` (why) and no file.

Which figures a study has follows from its analysis' figure tables (``criterion`` -> Figure 3,
``trend`` -> Figure 4, ``effects`` -> a forest plot, ``x`` and ``y`` -> the convention's figure)
and its reliability rows (Figure 2), never from its id.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from fmat.io import read_table
from fmat.study import read_study_yaml

from ..criteria import DEMO_SOURCE
from ..scripts import write_json
from .design import pair_labels
from .figures import ICC_STATS, figure2_icc, icc_table, plot_figure_table
from .inputs import _fill, study_inputs
from .paper_figures import (
    FigureUnavailable,
    close_figure,
    figure3_criterion,
    figure4_trend,
    figure_attitude_forest,
    figure_stereotype_forest,
    paper_d,
)

#: a study's figure inputs (a part of fmat_replication.pages.inputs.STUDY_INPUTS), and ``wefat``:
#: the WEFAT criterion table the analysis reads (which items have demo vectors), where it reads one
FIGURE_INPUTS = ("study_file", "replication", "stats", "status", "figures", "recovery")
#: where the criteria rules write a criterion table
CRITERION_TABLE = "resources/criteria/{table}.parquet"


def figure_inputs(study: str, config: Mapping, *, world: bool, root=".", repo=".") -> dict:
    """Rule report_figures' inputs: :data:`FIGURE_INPUTS` of :func:`~.inputs.study_inputs`, and
    ``wefat`` where the study's analysis reads a WEFAT table (``analysis.options.wefat.table``)."""
    given = study_inputs(study, config, world=world, root=root, repo=repo)
    out = {k: v for k, v in given.items() if k in FIGURE_INPUTS}
    table = wefat_table(read_study_yaml(out["study_file"])) if Path(out["study_file"]).is_file() else ""
    if table:
        out["wefat"] = _fill(CRITERION_TABLE, Path(root), Path(repo), table=table)
    return out


def wefat_table(raw: Mapping) -> str:
    """The name of the WEFAT criterion table a study's analysis reads ("" for none)."""
    spec = ((raw.get("analysis") or {}).get("options") or {}).get("wefat") or {}
    return str(spec.get("table", "")) if isinstance(spec, Mapping) else ""


def demo_vector_items(wefat: pd.DataFrame | None) -> set:
    """The items whose WEFAT score comes from seeded demo vectors, not GloVe
    (:data:`fmat_replication.criteria.DEMO_SOURCE`)."""
    if wefat is None or "source" not in wefat.columns:
        return set()
    return set(wefat.loc[wefat["source"].astype(str) == DEMO_SOURCE, "item"].astype(str))


#: the figure tables drawn by name (the rest: x/y convention, or CSV downloads on the page)
NAMED = ("criterion", "trend", "effects", "missing_years", "calibrated")
STARS = "*** p < .001, ** p < .01, * p < .05."


@dataclass
class Figure:
    """One figure: its file name (``name.svg``), title, caption and the function that draws it."""

    name: str
    title: str
    caption: str
    draw: Callable


def paper_values(replication: pd.DataFrame) -> pd.DataFrame:
    """The paper's numbers of the replication table as (study, statistic, condition, model, value)."""
    if not len(replication):
        return pd.DataFrame(columns=["study", "statistic", "condition", "model", "value"])
    cols = ["study", "statistic", "condition", "model"]
    return replication[cols].assign(value=pd.to_numeric(replication["paper_value"], errors="coerce"))


def planted_d(recovery: pd.DataFrame | None) -> dict:
    """The d the demo's world implies (its ``realised`` value, else the nominal ``planted``)
    per condition, over all models; {} without a world."""
    if recovery is None or not len(recovery):
        return {}
    r = recovery[(recovery["statistic"].astype(str) == "d") & (recovery["model"].astype(str) == "all")]
    col = "realised" if "realised" in r.columns and pd.to_numeric(r["realised"], errors="coerce").notna().any() else "planted"
    values = pd.to_numeric(r[col], errors="coerce") if col in r.columns else pd.Series(dtype=float)
    return {str(c): float(v) for c, v in zip(r["condition"], values) if not math.isnan(v)}


def _forest_caption(paper: Sequence[float], planted: Mapping, over: str) -> str:
    parts = [f"Filled: our d with its 95% CI{over}"]
    if any(not math.isnan(v) for v in paper):
        parts.append("open diamond: the paper's d")
    if planted:
        parts.append("cross: the value the demo's world planted")
    return "; ".join(parts) + "."


def effects_figure(study: str, effects: pd.DataFrame, rep: pd.DataFrame, raw: Mapping, planted: Mapping) -> Figure:
    """The forest plot of an analysis' ``effects`` table (by relation x perceiver, or by
    condition), its caption naming only the marks it draws."""
    if "relation" in effects.columns:
        conds = (effects["relation"].astype(str) + ":" + effects["perceiver"].astype(str)).tolist()
        draw = lambda: figure_attitude_forest(effects, rep, study, planted)
        over = ""
    else:
        e = effects[effects["model"].astype(str) == "all"] if "model" in effects.columns else effects
        conds = e["condition"].astype(str).tolist() if "condition" in e.columns else []
        draw = lambda: figure_stereotype_forest(effects, rep, study, pair_labels(raw), planted)
        over = " over all models"
    caption = _forest_caption(paper_d(rep, study, conds), {c: planted[c] for c in conds if c in planted}, over)
    return Figure("effects", f"Effect sizes (Study {study})", caption, draw)


def criterion_figure(study: str, table: pd.DataFrame, options: Mapping, demo_items: set = frozenset()) -> Figure:
    """Figure 3: FMAT against the criterion; the logit fit where the analysis regresses the
    logit of % male (its ``criterion.logit_column``); WEFAT's axis says how many items have
    seeded demo vectors instead of GloVe (``demo_items``)."""
    logit = bool((options.get("criterion") or {}).get("logit_column"))
    demo = int(table["item"].astype(str).isin(demo_items).sum()) if "item" in table.columns else 0
    label = f"WEFAT male ({demo} of {len(table)} items: demo vectors)" if demo else "WEFAT male (GloVe)"
    caption = (
        "Linear fitting lines (grey)"
        + (" and a logit-function fitting curve (black)" if logit else "")
        + " are displayed. FMAT = LPR, listwise standardized and averaged over models and query templates. "
        + STARS
    )
    if demo:
        caption += f" WEFAT of {demo} of the {len(table)} items comes from seeded demo vectors, not GloVe."
    return Figure("criterion", f"Figure 3 (Study {study})", caption, lambda: figure3_criterion(table, study, logit, label))


def trend_figure(study: str, trend: pd.DataFrame, gaps: pd.DataFrame | None) -> Figure:
    """Figure 4: the yearly d and its smoothed series; the caption says which years were interpolated."""
    caption = (
        "Missing values are linearly interpolated; series smoothed by a two-sided 10-year moving average with "
        "adaptive ends. Thin lines: each model; bold: the mean over models; points: the yearly mean."
    )
    if gaps is not None:
        caption += (
            " Every model has a score for every year."
            if gaps.empty
            else " Years without a score (interpolated): "
            + "; ".join(f"{m}: {len(g)}" for m, g in gaps.groupby("model", sort=False))
            + "."
        )
    return Figure("trend", f"Figure 4 (Study {study})", caption, lambda: figure4_trend(trend, study))


def icc_figure(study: str, stats: pd.DataFrame, rep: pd.DataFrame) -> Figure:
    """Figure 2's panel of one study: ICC average and single with their CIs (the paper's where it prints them)."""
    paper = paper_values(rep)
    has_paper = bool(paper["statistic"].isin(ICC_STATS).any())

    def draw():
        fig = figure2_icc(stats.assign(study=study), paper=paper, studies=[study])
        fig.set_size_inches(4.8, 3.6)
        fig.tight_layout()
        return fig

    caption = "ICC(2,k) of the models together and ICC(2,1) of one model, on the raw log probabilities, with 95% CIs"
    caption += "; open diamonds: the paper's ICCs" if has_paper else ""
    return Figure("icc", f"Figure 2 (Study {study}): agreement of the models", caption + "; dashed: .60 and .75.", draw)


def study_figures(study: str, raw: Mapping, tables: Mapping, stats, rep, recovery, wefat=None) -> list[Figure]:
    """The figures of one study, in page order, from what its files hold."""
    out = []
    options = (raw.get("analysis") or {}).get("options") or {}
    if "criterion" in tables:
        out.append(criterion_figure(study, tables["criterion"], options, demo_vector_items(wefat)))
    if "trend" in tables:
        out.append(trend_figure(study, tables["trend"], tables.get("missing_years")))
    if "effects" in tables:
        out.append(effects_figure(study, tables["effects"], rep, raw, planted_d(recovery)))
    if stats["statistic"].isin(ICC_STATS).any():
        out.append(icc_figure(study, stats, rep))
    for name, table in tables.items():
        if name not in NAMED and {"x", "y"} <= set(table.columns):
            title = f"Figure: {name.replace('_', ' ')} (Study {study})"
            out.append(Figure(name, title, "", lambda t=table, n=name: plot_figure_table(t, n)))
    return out


def write_figures(figures: Sequence[Figure], out) -> list[dict]:
    """Draw each figure to ``out/<name>.svg`` and write ``out/figures.json``; returns its items."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    items = []
    for f in figures:
        item = {"name": f.name, "file": f"{f.name}.svg", "title": f.title, "caption": f.caption}
        try:
            fig = f.draw()
        except FigureUnavailable as err:
            items.append({**item, "file": "", "missing": str(err)})
            continue
        fig.savefig(out / item["file"], format="svg", bbox_inches="tight")
        close_figure(fig)
        items.append(item)
    write_json(items, out / "figures.json")
    return items


def draw_study(study: str, inputs: Mapping, out) -> list[dict]:
    """Rule report_figures: the figures of ``study`` from its inputs (:data:`FIGURE_INPUTS`) -> ``out``."""
    status = json.loads(Path(inputs["status"]).read_text(encoding="utf-8"))
    folder = Path(inputs["figures"])
    tables = {name: read_table(folder / Path(file).name) for name, file in (status.get("figures") or {}).items()}
    rep = read_table(inputs["replication"])
    rep = rep[rep["study"].astype(str) == study]
    recovery = read_table(inputs["recovery"]) if inputs.get("recovery") else None
    wefat = read_table(inputs["wefat"]) if inputs.get("wefat") else None
    raw = read_study_yaml(inputs["study_file"])
    figures = study_figures(study, raw, tables, read_table(inputs["stats"]), rep, recovery, wefat)
    return write_figures(figures, out)


def draw_index(studies: Sequence[str], inputs: Mapping, out) -> list[dict]:
    """Rule report_figures_index: Figure 2 over every study (``stats``: one table per study,
    ``replication``: the whole table) -> ``out``."""
    stats = pd.concat([read_table(p) for p in inputs["stats"]], ignore_index=True)
    paper = paper_values(read_table(inputs["replication"]))
    has_paper = bool((paper["statistic"].isin(ICC_STATS) & paper["study"].isin(studies)).any())
    caption = (
        "ICC (two-way random, absolute agreement) of the log probabilities with the models as raters: "
        "ICC_average = the average of the models, ICC_single = one model; error bars are 95% CIs"
        + ("; open diamonds: the paper's values" if has_paper else "")
        + "; dashed: the criteria good (.60) and excellent (.75) (Cicchetti, 1994)."
    )

    def draw():
        if not len(icc_table(stats, studies)):
            raise FigureUnavailable("no study has ICC rows")
        return figure2_icc(stats, paper=paper, studies=list(studies))

    return write_figures([Figure("icc", "Figure 2: agreement among the models, per study", caption, draw)], out)
