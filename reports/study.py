# %% [markdown]
# ---
# title: "FMAT replication of Bao (2024): study report"
# format:
#   html:
#     embed-resources: true
#     toc: true
#     toc-location: body
#     page-layout: full
#     html-table-processing: none
# jupyter: python3
# execute:
#   echo: false
#   warning: false
# ---

# %%
#| tags: [parameters]
# Parameters (quarto render reports/study.py -P study:2A ...; fmat report ... -P key:value)
study = "1A"                          # study id
# the page's inputs: the report rule passes its input files (fmat_replication.report.render_page);
# by hand: every one with -P NAME:PATH (docs/reports.md). A missing one is an error.
study_file = ""                       # config/studies/{study}.yaml
paper = ""                            # config/paper_results.tsv: the paper's numbers
replication = ""                      # results/replication/{study}.parquet
stats = ""                            # results/analysis/{study}/stats.parquet
status = ""                           # results/analysis/{study}/status.json
figures = ""                          # results/analysis/{study}/figures (folder of figure tables)
scores = ""                           # results/scores/{study}/{model}.parquet, comma-joined, config order
recovery = ""                         # results/recovery/{study}.parquet (the demo's world), empty: none
demo = "false"                        # true: numbers from tiny demo models (banner)
device = ""
config_hash = ""
models = ""                           # model slugs, comma-separated, in configuration order
lock = ""

# %%
#| label: cell-setup
import html

import pandas as pd  # noqa: E402

from fmat_replication.formats import replication_text as format_replication  # noqa: E402
from fmat_replication.pages.figures import (  # noqa: E402
    figure2_icc, html_table, oov_summary, plot_figure_table, read_scores,
)
from fmat_replication.pages.paper_figures import (  # noqa: E402
    FigureUnavailable, figure3_criterion, figure4_trend, figure_attitude_forest, figure_stereotype_forest, svg_img,
)
from fmat_replication.pages.tables import (  # noqa: E402
    PAGE_CSS, csv_link, other_rows, ours_only, paper_table, table_criterion, table_html, text_rows_html, verdict_html,
)
from fmat.report import page_path, show  # noqa: E402
from fmat_replication.pages.design import option_rows, pair_labels, rows_html, template_rows  # noqa: E402
from fmat_replication.pages.inputs import study_page  # noqa: E402

PAGE = study_page(study, study_file=study_file, paper=paper, replication=replication, stats=stats,
                  status=status, figures=figures, scores=scores, recovery=recovery)
study = PAGE.study
DEMO = str(demo).strip().lower() in ("1", "true", "yes", "on")
raw = PAGE.raw
PAPER = PAGE.paper
rep = PAGE.replication
stats = PAGE.stats

def show_table(df, max_rows=None):
    """An HTML table (fmat_replication.pages.figures.html_table): p as <.001, counts as integers, 3 decimals."""
    show(html_table(df, max_rows=max_rows))


show(f"<style>body {{max-width: 1100px}}{PAGE_CSS}</style>")
show(f"<h1 id='study-{html.escape(study)}'>Study {html.escape(study)}: {html.escape(str(raw.get('title', '')))}</h1>")
if DEMO:
    show("<div class='fmat-banner demo-banner'>DEMO: these numbers come from tiny demo models "
         + ("trained on generated text in which associations were planted (docs/planting.md): they show "
            "that the pipeline finds what is there, and not what is not. They say nothing about real BERT "
            "models, and are not expected to match the paper." if PAGE.recovery is not None else
            "with random weights: they show that every stage runs; they are not expected to match the paper.") + "</div>")

# %% [markdown]
# ## The verdict

# %%
#| label: cell-verdict
show(verdict_html(study, rep))  # the rule named as docs/reports.md, no link: a page holds no local path

# %% [markdown]
# ## Planted and recovered
#
# Demo only: what the world file planted for this study, the paper's number, ours, and whether
# the planted number was recovered (same sign, p < .05 and the size within the tolerance; for
# nothing planted, p >= .05: docs/planting.md, "The recovery rule").

# %%
#| label: cell-recovery
if PAGE.recovery is not None:
    from fmat_replication.pages.recovery import recovery_rows, recovery_summary

    show(recovery_summary(PAGE.recovery))
    show_table(recovery_rows(PAGE.recovery, rep))
else:
    show("<p id='no-recovery'>Nothing was planted: these models were not trained on a world file.</p>")

# %% [markdown]
# ## The paper's table, with ours
#
# The numbers Bao (2024) prints for this study, laid out as the paper prints them; each cell
# holds the paper's number (top) and ours (bottom). The numbers the paper prints only in its
# text follow. Every row, with our p, CI and the reason of each verdict, is in the CSV files.

# %%
#| label: cell-paper-table
layout = paper_table(study, PAPER, titles={study: str(raw.get("title", ""))}, labels=pair_labels(raw))
if layout is not None and len(rep):
    show(table_html(layout, rep, study=study))
if layout is not None and study in ("1A", "1B"):
    mine = [m for m in dict.fromkeys(stats.loc[stats["statistic"] == "r", "model"].astype(str))
            if m != "all" and m not in {k[2] for k in layout.keys()}]
    if mine:
        show(table_html(table_criterion(study, PAPER, models=mine), ours_only(stats), study=study, legend=False))
rest = other_rows(rep, [layout] if layout is not None else []) if len(rep) else rep
if len(rest):
    show("<h3 id='in-the-text'>Printed in the text</h3>" + text_rows_html(rest))
if not len(rep):
    show("<p id='no-paper-table'>The paper prints no number for this study, "
         "so there is nothing to set beside ours.</p>")
links = []
if len(rep):
    links.append(csv_link(format_replication(rep), f"{study}_paper_vs_ours.csv",
                          f"paper vs ours, every row with its reason ({len(rep)} rows, CSV)"))
links.append(csv_link(stats, f"{study}_all_our_numbers.csv", f"all our numbers ({len(stats)} rows, CSV)"))
show("<p class='downloads'>Download: " + " · ".join(links) + "</p>")

# %% [markdown]
# ## Figures

# %%
#| label: cell-figures
figures = PAGE.figures
drawn = 0


def plot_table(table, name):
    """fmat_replication.pages.figures.plot_figure_table, its ValueError as a plain reason."""
    if not pd.api.types.is_numeric_dtype(table["y"]):
        raise FigureUnavailable(f"the values of the table '{name}' to draw (its y column) are not numbers")
    try:
        return plot_figure_table(table, name)
    except ValueError as err:
        raise FigureUnavailable(str(err)) from None


def small(fig, size=(4.8, 3.6)):
    """A one-study Figure 2 at half width."""
    fig.set_size_inches(*size)
    fig.tight_layout()
    return fig


def draw(title, make, note=""):
    """Draw one figure (SVG); a figure that cannot be drawn says why in words."""
    global drawn
    show(f"<h3 class='figure-title'>{html.escape(title)}</h3>")
    try:
        show(svg_img(make(), alt=title) + (f"<p class='figure-note'>{html.escape(note)}</p>" if note else ""))
        drawn += 1
    except FigureUnavailable as err:
        show(f"<p class='figure-missing'><em>This figure cannot be drawn: {html.escape(str(err))}.</em></p>")


if "criterion" in figures:
    draw(f"Figure 3 (Study {study})", lambda: figure3_criterion(figures["criterion"], study),
         "Note. Linear fitting lines (grey)" + (" and a logit-function fitting curve (black)" if study == "1C" else "")
         + " are displayed. FMAT = LPR, listwise standardized and averaged over models and query templates. "
         "*** p < .001, ** p < .01, * p < .05.")
if "trend" in figures:
    draw(f"Figure 4 (Study {study})", lambda: figure4_trend(figures["trend"], study),
         "Note. Missing values are linearly interpolated. Time series are smoothed using a two-sided 10-year "
         "moving average, with adaptive smoothing at the two ends using the nearest (diminishing) available "
         "years. Thin lines: each model; bold: the mean over models; points: the yearly mean.")
    gaps = figures.get("missing_years")
    if gaps is not None:
        show("<p class='figure-note'>" + ("Every model has a score for every year." if gaps.empty else
             html.escape("Years without a score (interpolated): " + "; ".join(
                 f"{m}: {len(g)} year(s)" for m, g in gaps.groupby("model", sort=False)))) + "</p>")
effects = figures.get("effects")
if effects is not None and "relation" in effects.columns:
    draw(f"Effect sizes (Study {study})", lambda: figure_attitude_forest(effects, PAPER, study),
         "Filled: our d with its 95% CI; open diamond: the paper's d (Table 6 and text).")
elif effects is not None and "condition" in effects.columns:
    draw(f"Effect sizes (Study {study})", lambda: figure_stereotype_forest(effects, PAPER, study, pair_labels(raw)),
         "Filled: our d with its 95% CI over all models; open diamond: the paper's d (Table 7).")
icc = stats[stats["statistic"].isin(["ICC_average", "ICC_single"])]
if len(icc):
    draw(f"Figure 2 (Study {study}): agreement of the models",
         lambda: small(figure2_icc(stats.assign(study=study), paper=PAPER, studies=[study])),
         "ICC(2,k) of the models together and ICC(2,1) of one model, on the raw log probabilities, with 95% CIs; "
         "Cicchetti's (1994) criteria .60 (good) and .75 (excellent).")
tables = {k: v for k, v in figures.items() if k not in ("criterion", "trend", "effects")}
for name, table in list(tables.items()):  # another analysis' table in the x/y convention (fmat_replication.pages.figures)
    if {"x", "y"} <= set(table.columns):
        draw(f"Figure: {name.replace('_', ' ')} (Study {study})", lambda table=table, name=name: plot_table(table, name))
        tables.pop(name)
if tables:
    show("<p class='downloads'>The analysis' other figure tables: " + " · ".join(
        csv_link(v, f"{study}_{k}.csv", f"{k} ({len(v)} rows, CSV)") for k, v in tables.items()) + "</p>")
if not figures and not drawn:
    show("<p><em>This study's analysis writes no figure table.</em></p>")

# %% [markdown]
# ## Reliability
#
# ICC: the models as raters of every uniquely filled sentence (two-way random, absolute
# agreement; condition `all` = raw log probabilities, as the paper's Figure 2; `LPR` = on the
# LPRs). Alpha: internal consistency of the items the study file's `reliability` names.

# %%
#| label: cell-reliability
icc = stats[stats["statistic"].str.startswith("ICC")]
show_table(icc[["statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n"]])
alpha = stats[stats["statistic"].isin(["alpha", "alpha_std"])]
show_table(alpha[["statistic", "condition", "model", "value", "n"]], max_rows=60)

# %% [markdown]
# ## Design
#
# What the study file asks for: the query templates with their [MASK] options and word lists
# (counts in brackets), then what each stage does.

# %%
#| label: cell-design
show(f"<p><b>Family:</b> {html.escape(str(raw.get('family', '')))}<br>"
     f"<b>Source:</b> {html.escape(str(raw.get('source', '')))}<br>"
     f"<b>Study file:</b> <code>{html.escape(page_path(PAGE.study_file))}</code></p>")
if raw.get("notes"):
    show(f"<p><b>Notes:</b> {html.escape(str(raw['notes']))}</p>")
show(rows_html(template_rows(raw)))
show(rows_html(option_rows(raw)))

# %% [markdown]
# ## Out-of-vocabulary and dropped words
#
# Per model: rows scored, rows whose [MASK] option is out of the model's vocabulary (`oov`),
# rows with no probability (NaN, dropped from the LPRs), and the words concerned.

# %%
#| label: cell-oov
show_table(oov_summary(read_scores(PAGE.scores)) if PAGE.scores else None)

# %% [markdown]
# ## Notes

# %%
#| label: cell-notes
notes = list(PAGE.status.get("notes") or [])
notes.insert(0, f"analysis: {PAGE.status.get('analysis')!r} "
                f"({'registered' if PAGE.status.get('implemented') else 'no analysis of that name is registered'})")
if config_hash:
    notes.append(f"configuration hash {config_hash}; device {device or 'auto'}")
show("<ul>" + "".join(f"<li>{html.escape(str(n))}</li>" for n in notes) + "</ul>" if notes
             else "<p><em>(no notes)</em></p>")
show("<p><a href='index.html'>Back to the overview</a></p>")
