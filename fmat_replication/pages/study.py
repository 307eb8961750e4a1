"""A study's report page (rule report_study -> ``results/reports/{study}.html``).

:func:`study_page` builds the :class:`~fmat_replication.pages.page.Page` from the files the rule
declares: the verdict, what was planted and recovered (demo), the paper's table with ours,
the figures, reliability, the design, the out-of-vocabulary words and the notes.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..formats import replication_text
from .design import option_rows, pair_labels, rows_html, template_rows
from .figures import figure2_icc, html_table, plot_figure_table
from .inputs import read_study
from .page import Page, page_path
from .paper_figures import (
    FigureUnavailable,
    figure3_criterion,
    figure4_trend,
    figure_attitude_forest,
    figure_stereotype_forest,
    svg_img,
)
from .recovery import recovery_rows, recovery_summary
from .tables import (
    PAGE_CSS,
    csv_link,
    other_rows,
    ours_only,
    paper_table,
    table_criterion,
    table_html,
    text_rows_html,
    verdict_html,
)

#: the title of every study page (``reports/study.qmd`` sets the same)
TITLE = "FMAT replication of Bao (2024): study report"


def calibrated_summary(table: pd.DataFrame) -> str:
    """One sentence: whether each d's significance at .05 holds under the calibrated inference."""
    if not len(table):
        return "<p id='calibrated-summary'>No d to compare.</p>"
    sig = table[table["significant"].astype(bool)]
    kept = int(sig["significant_ours"].astype(bool).sum())
    new = int((~table["significant"].astype(bool) & table["significant_ours"].astype(bool)).sum())
    text = f"Of the {len(sig)} d's significant at .05 under the paper's model, {kept} stay significant"
    text += " under the calibrated inference"
    text += f"; {new} become significant only under it." if new else "."
    return f"<p id='calibrated-summary'>{html.escape(text)}</p>"


def demo_banner(planted: bool) -> str:
    """The demo's banner: its numbers come from tiny models, not the paper's."""
    return (
        "<div class='fmat-banner demo-banner'>DEMO: these numbers come from tiny demo models "
        + (
            "trained on generated text in which associations were planted (docs/planting.md): they show "
            "that the pipeline finds what is there, and not what is not. They say nothing about real BERT "
            "models, and are not expected to match the paper."
            if planted
            else "with random weights: they show that every stage runs; they are not expected to match the paper."
        )
        + "</div>"
    )


def study_page(
    study: str,
    *,
    study_file: str | Path,
    paper: str | Path,
    replication: str | Path,
    stats: str | Path,
    status: str | Path,
    figures: str | Path,
    oov: str | Path,
    recovery: str | Path | None = None,
    demo: bool = False,
    device: str = "",
    config_hash: str = "",
) -> Page:
    """The report page of one study, from the files rule report_study declares.

    Parameters
    ----------
    study : str
        The study id (``2A``).
    study_file, paper, replication, stats, status : path
        The study file, ``config/paper_results.tsv``, ``results/replication/{study}.parquet``,
        ``results/analysis/{study}/stats.parquet`` and ``status.json``.
    figures : path
        The folder of the analysis' figure tables (``results/analysis/{study}/figures``).
    oov : path
        ``results/oov/{study}.parquet`` (rule oov_study): per model, the rows scored and those
        out of its vocabulary or without a probability.
    recovery : path or None
        ``results/recovery/{study}.parquet`` (a demo with a world file), else None.
    demo : bool
        Numbers of the tiny demo models: the page carries a banner.
    device, config_hash : str
        Provenance (the notes).

    Returns
    -------
    Page

    Raises
    ------
    fmat.errors.InputError
        An input is missing (naming it, :mod:`fmat_replication.pages.inputs`).
    """

    data = read_study(
        study,
        study_file=study_file,
        paper=paper,
        replication=replication,
        stats=stats,
        status=status,
        figures=figures,
        oov=oov,
        recovery=recovery,
    )
    study, raw, rep, stats_df = data.study, data.raw, data.replication, data.stats
    page = Page(TITLE)
    page.show(f"<style>body {{max-width: 1100px}}{PAGE_CSS}</style>")
    page.show(f"<h1 id='study-{html.escape(study)}'>Study {html.escape(study)}: {html.escape(str(raw.get('title', '')))}</h1>")
    if demo:
        page.show(demo_banner(data.recovery is not None))

    page.heading("The verdict", "the-verdict")
    page.show(verdict_html(study, rep))  # the rule named as docs/reports.md, no link: a page holds no local path

    page.heading("Planted and recovered", "planted-and-recovered")
    page.text(
        "Demo only: what the world file planted for this study (nominal), the value its world implies "
        "for these items and models (realised), the paper's number and ours, and whether the planted "
        "number was recovered (same sign, p < .05 and our 95% CI covering the realised value; for nothing "
        "planted, our CI covering what the world holds). About 1 in 20 calibrated CIs miss by chance: "
        'docs/planting.md, "The recovery rule".'
    )
    if data.recovery is not None:
        page.show(recovery_summary(data.recovery))
        page.show(html_table(recovery_rows(data.recovery, rep)))
    else:
        page.show("<p id='no-recovery'>Nothing was planted: these models were not trained on a world file.</p>")

    page.heading("The paper's table, with ours", "the-papers-table-with-ours")
    page.text(
        "The numbers Bao (2024) prints for this study, laid out as the paper prints them; each cell "
        "holds the paper's number (top) and ours (bottom). The numbers the paper prints only in its "
        "text follow. Every row, with our p, CI and the reason of each verdict, is in the CSV files."
    )
    layout = paper_table(study, data.paper, titles={study: str(raw.get("title", ""))}, labels=pair_labels(raw))
    if layout is not None and len(rep):
        page.show(table_html(layout, rep, study=study))
    if layout is not None and study in ("1A", "1B"):
        mine = [
            m
            for m in dict.fromkeys(stats_df.loc[stats_df["statistic"] == "r", "model"].astype(str))
            if m != "all" and m not in {k[2] for k in layout.keys()}
        ]
        if mine:
            page.show(table_html(table_criterion(study, data.paper, models=mine), ours_only(stats_df), study=study, legend=False))
    rest = other_rows(rep, [layout] if layout is not None else []) if len(rep) else rep
    if len(rest):
        page.show("<h3 id='in-the-text'>Printed in the text</h3>" + text_rows_html(rest))
    if not len(rep):
        page.show("<p id='no-paper-table'>The paper prints no number for this study, so there is nothing to set beside ours.</p>")
    links = []
    if len(rep):
        links.append(
            csv_link(
                replication_text(rep),
                f"{study}_paper_vs_ours.csv",
                f"paper vs ours, every row with its reason ({len(rep)} rows, CSV)",
            )
        )
    links.append(csv_link(stats_df, f"{study}_all_our_numbers.csv", f"all our numbers ({len(stats_df)} rows, CSV)"))
    page.show("<p class='downloads'>Download: " + " · ".join(links) + "</p>")

    calibrated = data.figures.get("calibrated")
    if calibrated is not None:
        page.heading("Calibrated inference (ours)", "calibrated-inference")
        page.text(
            "Ours, not the paper's: the paper's mixed model counts the two [MASK] groups' rows of one "
            "sentence as independent observations, which they are not (the options share one "
            "probability distribution), so its SE can be too small. The calibrated variant "
            "(`inference: sentence`) takes each sentence's contrast as one observation: the same d, "
            "its own p and 95% CI (docs/calibration.md)."
        )
        page.show(calibrated_summary(calibrated))
        page.show(html_table(calibrated, max_rows=60))

    page.heading("Figures", "figures")
    _figures(page, study, raw, data.figures, data.paper, stats_df)

    page.heading("Reliability", "reliability")
    page.text(
        "ICC: the models as raters of every uniquely filled sentence (two-way random, absolute "
        "agreement; condition `all` = raw log probabilities, as the paper's Figure 2; `LPR` = on the "
        "LPRs). Alpha: internal consistency of the items the study file's `reliability` names."
    )
    icc = stats_df[stats_df["statistic"].str.startswith("ICC")]
    page.show(html_table(icc[["statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n"]]))
    alpha = stats_df[stats_df["statistic"].isin(["alpha", "alpha_std"])]
    page.show(html_table(alpha[["statistic", "condition", "model", "value", "n"]], max_rows=60))

    page.heading("Design", "design")
    page.text(
        "What the study file asks for: the query templates with their [MASK] options and word lists "
        "(counts in brackets), then what each stage does."
    )
    page.show(
        f"<p><b>Family:</b> {html.escape(str(raw.get('family', '')))}<br>"
        f"<b>Source:</b> {html.escape(str(raw.get('source', '')))}<br>"
        f"<b>Study file:</b> <code>{html.escape(page_path(data.study_file))}</code></p>"
    )
    if raw.get("notes"):
        page.show(f"<p><b>Notes:</b> {html.escape(str(raw['notes']))}</p>")
    page.show(rows_html(template_rows(raw)))
    page.show(rows_html(option_rows(raw)))

    page.heading("Out-of-vocabulary and dropped words", "out-of-vocabulary-and-dropped-words")
    page.text(
        "Per model: rows scored, rows whose [MASK] option is out of the model's vocabulary (`oov`), "
        "rows with no probability (NaN, dropped from the LPRs), and the words concerned."
    )
    page.show(html_table(data.oov.drop(columns="study") if len(data.oov) else None))

    page.heading("Notes", "notes")
    notes = list(data.status.get("notes") or [])
    notes.insert(
        0,
        f"analysis: {data.status.get('analysis')!r} "
        f"({'registered' if data.status.get('implemented') else 'no analysis of that name is registered'})",
    )
    if config_hash:
        notes.append(f"configuration hash {config_hash}; device {device or 'auto'}")
    page.show("<ul>" + "".join(f"<li>{html.escape(str(n))}</li>" for n in notes) + "</ul>")
    page.show("<p><a href='index.html'>Back to the overview</a></p>")
    return page


def _figures(page: Page, study: str, raw: dict, figures: dict, paper: pd.DataFrame, stats: pd.DataFrame) -> None:
    """The section Figures: the paper's figures this study's tables draw, Figure 2, other figure
    tables (drawn when they have x and y, else as CSV downloads); a figure that cannot be drawn
    says why in words."""

    drawn = 0

    def small(fig, size=(4.8, 3.6)):
        fig.set_size_inches(*size)
        fig.tight_layout()
        return fig

    def draw(title, make, note=""):
        nonlocal drawn
        page.show(f"<h3 class='figure-title'>{html.escape(title)}</h3>")
        try:
            page.show(svg_img(make(), alt=title) + (f"<p class='figure-note'>{html.escape(note)}</p>" if note else ""))
            drawn += 1
        except FigureUnavailable as err:
            page.show(f"<p class='figure-missing'><em>This figure cannot be drawn: {html.escape(str(err))}.</em></p>")

    if "criterion" in figures:
        draw(
            f"Figure 3 (Study {study})",
            lambda: figure3_criterion(figures["criterion"], study),
            "Note. Linear fitting lines (grey)"
            + (" and a logit-function fitting curve (black)" if study == "1C" else "")
            + " are displayed. FMAT = LPR, listwise standardized and averaged over models and query templates. "
            "*** p < .001, ** p < .01, * p < .05.",
        )
    if "trend" in figures:
        draw(
            f"Figure 4 (Study {study})",
            lambda: figure4_trend(figures["trend"], study),
            "Note. Missing values are linearly interpolated. Time series are smoothed using a two-sided 10-year "
            "moving average, with adaptive smoothing at the two ends using the nearest (diminishing) available "
            "years. Thin lines: each model; bold: the mean over models; points: the yearly mean.",
        )
        gaps = figures.get("missing_years")
        if gaps is not None:
            page.show(
                "<p class='figure-note'>"
                + (
                    "Every model has a score for every year."
                    if gaps.empty
                    else html.escape(
                        "Years without a score (interpolated): "
                        + "; ".join(f"{m}: {len(g)} year(s)" for m, g in gaps.groupby("model", sort=False))
                    )
                )
                + "</p>"
            )
    effects = figures.get("effects")
    if effects is not None and "relation" in effects.columns:
        draw(
            f"Effect sizes (Study {study})",
            lambda: figure_attitude_forest(effects, paper, study),
            "Filled: our d with its 95% CI; open diamond: the paper's d (Table 6 and text).",
        )
    elif effects is not None and "condition" in effects.columns:
        draw(
            f"Effect sizes (Study {study})",
            lambda: figure_stereotype_forest(effects, paper, study, pair_labels(raw)),
            "Filled: our d with its 95% CI over all models; open diamond: the paper's d (Table 7).",
        )
    icc = stats[stats["statistic"].isin(["ICC_average", "ICC_single"])]
    if len(icc):
        draw(
            f"Figure 2 (Study {study}): agreement of the models",
            lambda: small(figure2_icc(stats.assign(study=study), paper=paper, studies=[study])),
            "ICC(2,k) of the models together and ICC(2,1) of one model, on the raw log probabilities, with 95% CIs; "
            "Cicchetti's (1994) criteria .60 (good) and .75 (excellent).",
        )
    tables = {k: v for k, v in figures.items() if k not in ("criterion", "trend", "effects", "calibrated")}
    for name, table in list(tables.items()):  # another analysis' table in the x/y convention (pages.figures)
        if {"x", "y"} <= set(table.columns):
            draw(
                f"Figure: {name.replace('_', ' ')} (Study {study})", lambda table=table, name=name: plot_figure_table(table, name)
            )
            tables.pop(name)
    if tables:
        page.show(
            "<p class='downloads'>The analysis' other figure tables: "
            + " · ".join(csv_link(v, f"{study}_{k}.csv", f"{k} ({len(v)} rows, CSV)") for k, v in tables.items())
            + "</p>"
        )
    if not figures and not drawn:
        page.show("<p><em>This study's analysis writes no figure table.</em></p>")
