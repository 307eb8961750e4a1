# %% [markdown]
# ---
# title: "FMAT replication of Bao (2024): study report"
# format:
#   html:
#     embed-resources: true
#     toc: true
# execute:
#   echo: false
#   warning: false
# ---

# %% tags=["parameters"]
# Parameters (quarto render reports/study.py -P study:2A ...; fmat report ... -P key:value)
study = "1A"                          # study id
results = "results"                   # the workflow's results folder
study_file = ""                       # default: config/studies/{study}.yaml
paper = "config/paper_results.tsv"    # the paper's numbers
criteria = "resources/criteria"       # criterion tables (for studies whose words come from one)
models = ""                           # model slugs, comma-separated, in configuration order
demo = "false"                        # true: numbers from tiny demo models (banner)
device = ""
config_hash = ""
lock = "resources/models.lock.tsv"

# %%
#| label: setup
import html
import json
from pathlib import Path

import pandas as pd  # noqa: E402
import yaml  # noqa: E402
from IPython.display import HTML, Image, display  # noqa: E402

from fmat.compare import format_replication, summarise  # noqa: E402
from fmat.figures import (  # noqa: E402
    figure_png, html_table, oov_summary, plot_figure_table, read_figure_tables, read_scores,
)

study = str(study)
DEMO = str(demo).strip().lower() in ("1", "true", "yes", "on")
RES = Path(str(results))
ADIR = RES / "analysis" / study
SFILE = Path(str(study_file) or f"config/studies/{study}.yaml")


def show_table(df, max_rows=None):
    """An HTML table (fmat.figures.html_table): p as <.001, counts as integers, 3 decimals."""
    display(HTML(html_table(df, max_rows=max_rows)))


display(HTML("""<style>
.fmat-table {border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em 0}
.fmat-table th, .fmat-table td {border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left}
.fmat-banner {background: #fff3cd; border: 2px solid #e0a800; padding: 0.8em; margin: 1em 0; font-weight: bold}
.v-replicated {color: #1a7f37} .v-not {color: #cf222e} .v-nc {color: #6e7781}
</style>"""))
display(HTML(f"<h1 id='study-{html.escape(study)}'>Study {html.escape(study)}</h1>"))
if DEMO:
    display(HTML("<div class='fmat-banner demo-banner'>DEMO: these numbers come from tiny demo models "
                 "(random weights, generated vocabularies). They show that every stage runs; they are "
                 "not expected to match the paper.</div>"))

# %% [markdown]
# ## Design
#
# What the study file asks for: the query templates, the [MASK] options and the
# TARGET / ATTRIB words, and the options of each stage.

# %%
#| label: design
raw = yaml.safe_load(SFILE.read_text(encoding="utf-8")) if SFILE.exists() else {}
display(HTML(f"<h3>{html.escape(str(raw.get('title', study)))}</h3>"
             f"<p><b>Family:</b> {html.escape(str(raw.get('family', '')))}<br>"
             f"<b>Source:</b> {html.escape(str(raw.get('source', '')))}<br>"
             f"<b>Study file:</b> <code>{html.escape(str(SFILE))}</code></p>"))
if raw.get("notes"):
    display(HTML(f"<p><b>Notes:</b> {html.escape(str(raw['notes']))}</p>"))


def _words(spec):
    """A word-list spec as short text: groups with their first words and counts."""
    if isinstance(spec, dict) and ("range" in spec or "criterion" in spec):
        return html.escape(json.dumps(spec))
    if isinstance(spec, dict):
        parts = []
        for group, words in spec.items():
            if isinstance(words, dict):
                parts.append(f"<b>{html.escape(str(group))}</b>: {html.escape(json.dumps(words))}")
                continue
            shown = [w.get("phrase", w) if isinstance(w, dict) else w for w in words]
            more = f" ... ({len(shown)} in all)" if len(shown) > 8 else ""
            parts.append(f"<b>{html.escape(str(group))}</b>: {html.escape(', '.join(map(str, shown[:8])))}{more}")
        return "<br>".join(parts)
    return html.escape(str(spec))


rows = []
for i, block in enumerate(raw.get("queries") or [], 1):
    rows.append(f"<tr><td>Q{i}</td><td>{html.escape(str(block.get('query', '')))}</td>"
                f"<td>{_words(block.get('MASK', ''))}</td><td>{_words(block.get('TARGET', ''))}</td>"
                f"<td>{_words(block.get('ATTRIB', ''))}</td></tr>")
display(HTML("<table class='fmat-table'><tr><th></th><th>query</th><th>[MASK]</th><th>TARGET</th>"
             "<th>ATTRIB</th></tr>" + "".join(rows) + "</table>"))
opts = {k: raw[k] for k in ("lpr", "reliability", "score", "analysis") if k in raw}
display(HTML("<pre>" + html.escape(yaml.safe_dump(opts, sort_keys=False, allow_unicode=True)) + "</pre>"))

# %% [markdown]
# ## Reliability
#
# ICC: the models as raters of every uniquely filled sentence (two-way random, absolute
# agreement; condition `all` = raw log probabilities, as the paper's Figure 2; `LPR` = on the
# LPRs). Alpha: internal consistency of the items the study file's `reliability` names.

# %%
#| label: reliability
stats_path = ADIR / "stats.parquet"
stats = pd.read_parquet(stats_path) if stats_path.exists() else pd.DataFrame(
    columns=["study", "statistic", "condition", "model", "value", "se", "df", "df2", "p", "ci_low", "ci_high", "n"])
icc = stats[stats["statistic"].str.startswith("ICC")]
show_table(icc[["statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n"]])
alpha = stats[stats["statistic"].isin(["alpha", "alpha_std"])]
show_table(alpha[["statistic", "condition", "model", "value", "n"]], max_rows=60)

# %% [markdown]
# ## Paper vs ours
#
# Each number the paper prints for this study, next to ours, with the verdict of the
# replication rule (docs/reports.md): same sign and same significance at .05; for r, d, beta,
# ICC, alpha and R² also |ours − paper| within a tolerance; ranges, bounds and `*` patterns
# compared over all matched rows. "as printed": ours rounds to the printed number.

# %%
#| label: replication
rep_path = RES / "replication.parquet"
rep = pd.read_parquet(rep_path) if rep_path.exists() else pd.DataFrame()
rep = rep[rep["study"] == study] if len(rep) else rep
if len(rep):
    counts = summarise(rep).iloc[0]
    display(HTML(f"<p class='replication-summary'><b>{int(counts['replicated'])}</b> replicated, "
                 f"<b>{int(counts['not replicated'])}</b> not replicated, "
                 f"<b>{int(counts['not computable'])}</b> not computable "
                 f"(of {int(counts['total'])} numbers printed in the paper).</p>"))
    t = format_replication(rep).drop(columns=["study"])
    klass = {"replicated": "v-replicated", "not replicated": "v-not", "not computable": "v-nc"}

    def _cell(col, value):
        cls = f" class='{klass.get(value, '')}'" if col == "verdict" else ""
        return f"<td{cls}>{html.escape(str(value))}</td>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in t.columns)
    body = "".join("<tr>" + "".join(_cell(c, r[c]) for c in t.columns) + "</tr>" for r in t.to_dict("records"))
    display(HTML(f"<table class='fmat-table replication'><tr>{head}</tr>{body}</table>"))
else:
    display(HTML("<p><em>No replication table for this study (results/replication.parquet missing).</em></p>"))

# %% [markdown]
# ### All our numbers
#
# Every row of `results/analysis/<study>/stats.parquet` (the reliability rows and the
# analysis rows), including those the paper does not print.

# %%
#| label: all-stats
show_table(stats.drop(columns=["study"]), max_rows=200)

# %% [markdown]
# ## Figures

# %%
#| label: figures
figures = read_figure_tables(ADIR) if ADIR.exists() else {}
if not figures:
    display(HTML("<p><em>No figure tables for this study (its analysis writes none, or is not "
                 "implemented yet).</em></p>"))
for name, table in figures.items():
    display(HTML(f"<h3 class='figure-title'>Figure: {html.escape(name)}</h3>"))
    try:
        display(Image(data=figure_png(plot_figure_table(table, name))))
    except ValueError as err:
        display(HTML(f"<p><em>figure_{html.escape(name)}: {html.escape(str(err))}; its first rows:</em></p>"))
        show_table(table, max_rows=10)

# %% [markdown]
# ## Out-of-vocabulary and dropped words
#
# Per model: rows scored, rows whose [MASK] option is out of the model's vocabulary (`oov`),
# rows with no probability (NaN, dropped from the LPRs), and the words concerned.

# %%
#| label: oov
slugs = [m for m in str(models).split(",") if m]
score_dir = RES / "scores" / study
paths = [score_dir / f"{m}.parquet" for m in slugs] if slugs else sorted(score_dir.glob("*.parquet"))
paths = [p for p in paths if p.exists()]
show_table(oov_summary(read_scores(paths)) if paths else None)

# %% [markdown]
# ## Notes

# %%
#| label: notes
listing = ADIR / "figures.json"
status = json.loads(listing.read_text(encoding="utf-8")) if listing.exists() else {}
notes = list(status.get("notes") or [])
if status:
    notes.insert(0, f"analysis: {status.get('analysis')!r} "
                    f"({'implemented' if status.get('implemented') else 'not implemented yet'})")
if config_hash:
    notes.append(f"configuration hash {config_hash}; device {device or 'auto'}")
display(HTML("<ul>" + "".join(f"<li>{html.escape(str(n))}</li>" for n in notes) + "</ul>" if notes
             else "<p><em>(no notes)</em></p>"))
display(HTML("<p><a href='index.html'>Back to the overview</a></p>"))
