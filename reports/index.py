# %% [markdown]
# ---
# title: "FMAT replication of Bao (2024): overview"
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
# Parameters (quarto render reports/index.py -P studies:1A,2A ...; fmat report ... -P key:value)
studies = ""                          # study ids, comma-separated, in configuration order
# the page's inputs: the report rule passes its input files (fmat_replication.report.render_page);
# by hand: every one with -P NAME:PATH (docs/reports.md). A missing one is an error.
paper = ""                            # config/paper_results.tsv: the paper's numbers
replication = ""                      # results/replication.parquet
stats = ""                            # results/analysis/{study}/stats.parquet, comma-joined, in study order
study_files = ""                      # config/studies/{study}.yaml, comma-joined, in study order
scores = ""                           # results/scores/{study}/{model}.parquet, comma-joined
agreement = ""                        # results/agreement/summary.parquet
cards = ""                            # results/models/{model}.json, comma-joined, config order
models = ""                           # model slugs, comma-separated, in configuration order
demo = "false"                        # true: numbers from tiny demo models (banner)
device = ""
dtype = "float32"
config_hash = ""
lock = ""                             # resources/models.lock.tsv (provenance; none in the demo)
recovery = ""                         # results/recovery.parquet (the demo's world), empty: none

# %%
#| label: cell-setup
import datetime
import html

import pandas as pd  # noqa: E402

from fmat_replication.compare import summarise  # noqa: E402
from fmat_replication.pages.figures import (  # noqa: E402
    figure2_icc, html_table, icc_table, model_lock, oov_summary, package_versions, provenance, read_scores,
)
from fmat_replication.pages.inputs import index_page  # noqa: E402
from fmat_replication.pages.paper_figures import svg_img  # noqa: E402
from fmat_replication.pages.tables import PAGE_CSS, headlines_html, table_attitude, table_html  # noqa: E402
from fmat.report import show  # noqa: E402

DEMO = str(demo).strip().lower() in ("1", "true", "yes", "on")
PAGE = index_page(studies, paper=paper, replication=replication, stats=stats, study_files=study_files,
                  scores=scores, agreement=agreement, cards=cards, recovery=recovery)
STUDIES = PAGE.studies
SLUGS = [m for m in str(models).split(",") if m]


def show_table(df, escape=True):
    """An HTML table (fmat_replication.pages.figures.html_table): p as <.001, counts as integers, 3 decimals."""
    show(html_table(df, escape=escape))


show(f"<style>body {{max-width: 1100px}}{PAGE_CSS}</style>")
if DEMO:
    show("<div class='fmat-banner demo-banner'>DEMO: these numbers come from tiny demo models "
         + ("trained on generated text in which associations were planted (docs/planting.md): they show "
            "that the pipeline finds what is there, and not what is not. They say nothing about real BERT "
            "models, and are not expected to match the paper." if PAGE.recovery is not None else
            "with random weights: they show that every stage runs; they are not expected to match the paper.") + "</div>")

# %% [markdown]
# ## Known truth: planted and recovered
#
# Demo only: per study, how many of the numbers the world file planted (config/world.yaml)
# the workflow recovered (same sign, p < .05, size within the tolerance; the null control N0:
# nothing found). docs/planting.md says how the models were trained and the rule.

# %%
#| label: cell-recovery
if PAGE.recovery is not None:
    from fmat_replication.pages.recovery import recovery_by_study, recovery_summary

    show(recovery_summary(PAGE.recovery))
    show_table(recovery_by_study(PAGE.recovery))
else:
    show("<p id='no-recovery'>Nothing was planted: these models were not trained on a world file.</p>")

# %% [markdown]
# This page summarises the replication of the 15 studies of Bao (2024, *JPSP*), *The
# Fill-Mask Association Test (FMAT)*: how many of the paper's printed numbers each study
# replicates, the models' agreement (the paper's Figure 2), the words some models cannot
# score, and what produced these numbers. Each study has its own page (links below).
#
# ## Paper vs ours, per study
#
# Verdicts per printed number (rule and tolerances: docs/reports.md): *replicated* = same
# sign and significance at .05, and for r, d, beta, ICC, alpha and R² within the tolerance;
# *not computable* = no number of ours to compare (study not run, analysis not implemented,
# a criterion the paper cites).

# %%
#| label: cell-summary
rep = PAGE.replication
if len(rep):
    summary = summarise(rep)
    summary["page"] = [f"<a href='{html.escape(s)}.html'>{html.escape(s)}</a>" if s in STUDIES else "not run"
                       for s in summary["study"]]
    total = summarise(rep.assign(all="all"), by=["all"]).iloc[0]
    show(f"<p class='replication-total'>All studies: <b>{int(total['replicated'])}</b> replicated, "
                 f"<b>{int(total['not replicated'])}</b> not replicated, <b>{int(total['not computable'])}</b> "
                 f"not computable (of {int(total['total'])} printed numbers).</p>")
    show_table(summary, escape=False)
    show("<h3>The paper's headline claims</h3>" + headlines_html(sorted(set(rep["study"])), rep))
    attitude = [x for x in ("2A", "2B", "2C", "2D") if x in set(rep["study"])]
    if attitude:  # Table 6 prints the four attitude studies together
        show("<h3>Table 6 of the paper, with ours</h3>" + table_html(table_attitude(attitude, PAGE.titles), rep))
else:
    show("<p><em>The paper prints no number for the studies run.</em></p>")
show("<p>Study pages: " + " · ".join(f"<a class='study-link' href='{html.escape(s)}.html'>{html.escape(s)}</a>"
                                             for s in STUDIES) + "</p>")

# %% [markdown]
# ## Figure 2: agreement among the models
#
# ICC (two-way random, absolute agreement) of the log probabilities of every uniquely filled
# sentence (items) with the models as raters: `ICC_average` = the average of the models,
# `ICC_single` = one model; error bars are 95% CIs, open diamonds the paper's values, dashed
# lines the criteria good (.60) and excellent (.75) (Cicchetti, 1994).

# %%
#| label: cell-icc
stats = PAGE.stats
paper_rows = PAGE.paper
if len(icc_table(stats, STUDIES)):
    show(svg_img(figure2_icc(stats, paper=paper_rows, studies=STUDIES), alt="Figure 2: ICCs per study"))
    show_table(icc_table(stats, STUDIES))
else:
    show("<p><em>No ICC rows found.</em></p>")

# %% [markdown]
# ## Out-of-vocabulary and dropped words, per model
#
# Rows whose [MASK] option a model's vocabulary lacks (`oov`) and rows with no probability
# (NaN, dropped from the LPRs), per model over all studies; then per study where any.

# %%
#| label: cell-oov
per_study = []
for s in STUDIES:
    if PAGE.scores.get(s):
        per_study.append(oov_summary(read_scores(PAGE.scores[s])).assign(study=s))
if per_study:
    oov = pd.concat(per_study, ignore_index=True)
    by_model = oov.groupby("model", sort=False)[["rows", "oov_rows", "nan_prob_rows"]].sum().reset_index()
    show_table(by_model)
    hit = oov[(oov["oov_rows"] > 0) | (oov["nan_prob_rows"] > 0)]
    show_table(hit[["study", "model", "rows", "oov_rows", "nan_prob_rows", "oov_words"]])
else:
    oov = pd.DataFrame()
    show("<p><em>No score tables found.</em></p>")

# %% [markdown]
# ## Can each model be trusted? Subject–verb agreement beside its FMAT results
#
# Accuracy of each model on agreement minimal pairs (Marvin & Linzen 2018, scored as Goldberg
# 2019: the verb masked, P(correct) > P(incorrect); docs/agreement.md), pairs skipped because
# a verb is not one token of that model, the share of FMAT rows its vocabulary could not score,
# and its alpha per study where the study computes one per model. A model that fails basic
# syntax deserves less trust in its associations.

# %%
#| label: cell-model-checks
from fmat_replication.pages.figures import model_checks

agreement = PAGE.agreement
checks = model_checks(agreement, PAGE.stats, oov if len(oov) else None)
show_table(checks)
per = agreement[agreement["construction"].astype(str) != "all"]
if len(per):
    show_table(per.pivot_table(index="model", columns="construction", values="accuracy", sort=False)
               .reset_index())

# %% [markdown]
# ## The models
#
# One card per model: its architecture, size and vocabulary, where it came from (the locked
# hub commit, or a local folder's weights hash) and its creation date on the hub, how fmat
# scored it (the MLM head at the mask only, or the model's full forward pass; padded or
# equal-length batches: docs/scoring.md), and its top-5 fills of three fixed sentences. A
# trained model fills "Paris is the [MASK] of France." with "capital"; a broken one shows it here.

# %%
#| label: model-cards
from fmat_replication.pages.cards import cards_html

show(cards_html(PAGE.cards))

# %% [markdown]
# ## Provenance
#
# What produced these numbers: the run's settings, the models and the revisions they were
# locked at (`resources/models.lock.tsv`), and the package versions.

# %%
#| label: cell-provenance
show_table(provenance({
    "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "studies": ", ".join(STUDIES),
    "models": ", ".join(SLUGS),
    "device": device or "auto",
    "dtype": dtype,
    "configuration hash": config_hash,
    "demo (tiny models)": "yes" if DEMO else "no",
}))
locked = model_lock(lock) if lock else None
show_table(locked if locked is not None and len(locked) else None)
show_table(package_versions())
