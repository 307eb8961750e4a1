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
studies = ""                          # study ids, comma-separated (default: every stats.parquet found)
results = "results"                   # the workflow's results folder
paper = "config/paper_results.tsv"    # the paper's numbers
models = ""                           # model slugs, comma-separated, in configuration order
demo = "false"                        # true: numbers from tiny demo models (banner)
device = ""
dtype = "float32"
config_hash = ""
lock = "resources/models.lock.tsv"

# %%
#| label: cell-setup
import datetime
import html
from pathlib import Path

import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from fmat.compare import summarise  # noqa: E402
from fmat.figures import (  # noqa: E402
    figure2_icc, html_table, icc_table, model_lock, oov_summary, package_versions, provenance, read_scores,
)
from fmat.paper import load_paper_results  # noqa: E402
from fmat.paper_figures import svg_img  # noqa: E402
from fmat.paper_tables import PAGE_CSS, headlines_html, table_attitude, table_html  # noqa: E402
from fmat.report import show  # noqa: E402

DEMO = str(demo).strip().lower() in ("1", "true", "yes", "on")
RES = Path(str(results))
STUDIES = [s for s in str(studies).split(",") if s] or sorted(p.parent.name for p in RES.glob("analysis/*/stats.parquet"))
SLUGS = [m for m in str(models).split(",") if m]


def show_table(df, escape=True):
    """An HTML table (fmat.figures.html_table): p as <.001, counts as integers, 3 decimals."""
    show(html_table(df, escape=escape))


show(f"<style>body {{max-width: 1100px}}{PAGE_CSS}</style>")
if DEMO:
    show("<div class='fmat-banner demo-banner'>DEMO: these numbers come from tiny demo models "
                 "(random weights, generated vocabularies). They show that every stage runs; they are "
                 "not expected to match the paper.</div>")

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
rep_path = RES / "replication.parquet"
rep = pd.read_parquet(rep_path) if rep_path.exists() else pd.DataFrame()
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
        titles = {}
        for x in attitude:
            f = Path(str(paper)).parent / "studies" / f"{x}.yaml"
            titles[x] = str((yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("title", "")) if f.exists() else ""
        show("<h3>Table 6 of the paper, with ours</h3>" + table_html(table_attitude(attitude, titles), rep))
else:
    show("<p><em>results/replication.parquet is missing: run the compare rule.</em></p>")
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
frames = [pd.read_parquet(RES / "analysis" / s / "stats.parquet") for s in STUDIES
          if (RES / "analysis" / s / "stats.parquet").exists()]
stats = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["study", "statistic", "condition", "model"])
paper_rows = load_paper_results(paper) if Path(str(paper)).exists() else None
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
    d = RES / "scores" / s
    paths = [d / f"{m}.parquet" for m in SLUGS] if SLUGS else sorted(d.glob("*.parquet"))
    paths = [p for p in paths if p.exists()]
    if paths:
        per_study.append(oov_summary(read_scores(paths)).assign(study=s))
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
from fmat.figures import model_checks

agreement_path = RES / "agreement" / "summary.parquet"
if agreement_path.exists():
    agreement = pd.read_parquet(agreement_path)
    all_stats = [pd.read_parquet(RES / "analysis" / s / "stats.parquet") for s in STUDIES
                 if (RES / "analysis" / s / "stats.parquet").exists()]
    checks = model_checks(agreement, pd.concat(all_stats, ignore_index=True) if all_stats else None,
                          oov if len(oov) else None)
    show_table(checks)
    per = agreement[agreement["construction"].astype(str) != "all"]
    if len(per):
        show_table(per.pivot_table(index="model", columns="construction", values="accuracy", sort=False)
                   .reset_index())
else:
    show("<p><em>No agreement check found (results/agreement/summary.parquet).</em></p>")

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
from fmat.cards import cards_html, read_cards

show(cards_html(read_cards(RES, SLUGS)))

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
locked = model_lock(lock)
show_table(locked if len(locked) else None)
show_table(package_versions())
