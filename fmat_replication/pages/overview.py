"""The overview page (rule report_index -> ``results/reports/index.html``).

:func:`overview_page` builds the :class:`~fmat_replication.pages.page.Page` from the files the
rule declares: what was planted and recovered (demo), paper vs ours per study, Figure 2, the
out-of-vocabulary words, the models' agreement check, the model cards and the provenance.
"""

from __future__ import annotations

import datetime
import html
from pathlib import Path
from typing import Sequence

from ..compare import summarise
from .cards import cards_html
from .figures import figure2_icc, html_table, icc_table, package_versions, run_settings
from .inputs import read_index
from .page import Page
from .paper_figures import svg_img
from .recovery import expectation_coverage, recovery_by_study, recovery_summary
from .study import demo_banner
from .tables import PAGE_CSS, headlines_html, table_attitude, table_html

#: the title of the overview (``reports/index.qmd`` sets the same)
TITLE = "FMAT replication of Bao (2024): overview"


def overview_page(
    studies: Sequence[str],
    *,
    paper: str | Path,
    replication: str | Path,
    stats: Sequence[str | Path],
    study_files: Sequence[str | Path],
    oov: Sequence[str | Path],
    checks: str | Path,
    agreement: str | Path,
    provenance: str | Path,
    cards: Sequence[str | Path],
    recovery: str | Path | None = None,
    models: Sequence[str] = (),
    demo: bool = False,
    device: str = "",
    dtype: str = "float32",
    config_hash: str = "",
) -> Page:
    """The overview page, from the files rule report_index declares.

    Parameters
    ----------
    studies : list of str
        The study ids, in the configuration's order.
    paper, replication : path
        ``config/paper_results.tsv``, ``results/replication.parquet``.
    stats, study_files, oov : list of paths
        Each study's ``stats.parquet``, study file and ``results/oov/{study}.parquet``, in the
        order of ``studies``.
    checks, agreement, provenance : path
        ``results/models/checks.parquet``, ``agreement.parquet`` and ``provenance.parquet``
        (rule model_checks): each model's agreement check beside its FMAT results, its
        agreement accuracy per construction, where it came from.
    cards : list of paths
        ``results/models/{model}.json``, in the configuration's order.
    recovery : path or None
        ``results/recovery.parquet`` (a demo with a world file), else None.
    models : list of str
        The model slugs, in the configuration's order (provenance).
    demo : bool
        Numbers of the tiny demo models: the page carries a banner.
    device, dtype, config_hash : str
        Provenance.

    Returns
    -------
    Page
    """

    data = read_index(
        studies,
        paper=paper,
        replication=replication,
        stats=stats,
        study_files=study_files,
        oov=oov,
        checks=checks,
        agreement=agreement,
        provenance=provenance,
        cards=cards,
        recovery=recovery,
    )
    ids = data.studies
    page = Page(TITLE)
    page.show(f"<style>body {{max-width: 1100px}}{PAGE_CSS}</style>")
    if demo:
        page.show(demo_banner(data.recovery is not None))

    page.heading("Known truth: planted and recovered", "known-truth-planted-and-recovered")
    page.text(
        "Demo only: per study, how many of the numbers the world file planted (config/world.yaml) "
        "the workflow recovered (same sign, p < .05, our 95% CI covering the value the world implies "
        "for these items and models; where nothing was planted: nothing found beyond what the world "
        "holds). docs/planting.md says how the models were trained and the rule."
    )
    if data.recovery is not None:
        page.show(recovery_summary(data.recovery))
        page.show(html_table(recovery_by_study(data.recovery)))
        page.text(
            "The paper's sign-bearing numbers (d, t, r, b, beta; model all) per study: printed, "
            "computable by the workflow, and checked by an expectation of the world."
        )
        page.show(html_table(expectation_coverage(data.recovery, data.replication)))
    else:
        page.show("<p id='no-recovery'>Nothing was planted: these models were not trained on a world file.</p>")
    page.text(
        "This page summarises the replication of the 15 studies of Bao (2024, *JPSP*), *The "
        "Fill-Mask Association Test (FMAT)*: how many of the paper's printed numbers each study "
        "replicates, the models' agreement (the paper's Figure 2), the words some models cannot "
        "score, and what produced these numbers. Each study has its own page (links below)."
    )

    page.heading("Paper vs ours, per study", "paper-vs-ours-per-study")
    page.text(
        "Verdicts per printed number (rule and tolerances: docs/reports.md): *replicated* = same "
        "sign and significance at .05, and for r, d, beta, ICC, alpha and R² within the tolerance; "
        "*not computable* = no number of ours to compare (study not run, analysis not implemented, "
        "a criterion the paper cites)."
    )
    rep = data.replication
    if len(rep):
        summary = summarise(rep)
        summary["page"] = [
            f"<a href='{html.escape(s)}.html'>{html.escape(s)}</a>" if s in ids else "not run" for s in summary["study"]
        ]
        total = summarise(rep.assign(all="all"), by=["all"]).iloc[0]
        page.show(
            f"<p class='replication-total'>All studies: <b>{int(total['replicated'])}</b> replicated, "
            f"<b>{int(total['not replicated'])}</b> not replicated, <b>{int(total['not computable'])}</b> "
            f"not computable (of {int(total['total'])} printed numbers).</p>"
        )
        page.show(html_table(summary, escape=False))
        page.show("<h3>The paper's headline claims</h3>" + headlines_html(sorted(set(rep["study"])), rep))
        attitude = [x for x in ("2A", "2B", "2C", "2D") if x in set(rep["study"])]
        if attitude:  # Table 6 prints the four attitude studies together
            page.show("<h3>Table 6 of the paper, with ours</h3>" + table_html(table_attitude(attitude, data.titles), rep))
    else:
        page.show("<p><em>The paper prints no number for the studies run.</em></p>")
    page.show(
        "<p>Study pages: "
        + " · ".join(f"<a class='study-link' href='{html.escape(s)}.html'>{html.escape(s)}</a>" for s in ids)
        + "</p>"
    )

    page.heading("Figure 2: agreement among the models", "figure-2-agreement-among-the-models")
    page.text(
        "ICC (two-way random, absolute agreement) of the log probabilities of every uniquely filled "
        "sentence (items) with the models as raters: `ICC_average` = the average of the models, "
        "`ICC_single` = one model; error bars are 95% CIs, open diamonds the paper's values, dashed "
        "lines the criteria good (.60) and excellent (.75) (Cicchetti, 1994)."
    )
    if len(icc_table(data.stats, ids)):
        page.show(svg_img(figure2_icc(data.stats, paper=data.paper, studies=ids), alt="Figure 2: ICCs per study"))
        page.show(html_table(icc_table(data.stats, ids)))
    else:
        page.show("<p><em>No ICC rows found.</em></p>")

    page.heading("Out-of-vocabulary and dropped words, per model", "out-of-vocabulary-and-dropped-words-per-model")
    page.text(
        "Rows whose [MASK] option a model's vocabulary lacks (`oov`) and rows with no probability "
        "(NaN, dropped from the LPRs), per model over all studies; then per study where any."
    )
    oov = data.oov
    if len(oov):
        by_model = oov.groupby("model", sort=False)[["rows", "oov_rows", "nan_prob_rows"]].sum().reset_index()
        page.show(html_table(by_model))
        hit = oov[(oov["oov_rows"] > 0) | (oov["nan_prob_rows"] > 0)]
        page.show(html_table(hit[["study", "model", "rows", "oov_rows", "nan_prob_rows", "oov_words"]]))
    else:
        page.show("<p><em>No score tables found.</em></p>")

    page.heading("Can each model be trusted? Subject–verb agreement beside its FMAT results", "can-each-model-be-trusted")
    page.text(
        "Accuracy of each model on agreement minimal pairs (Marvin & Linzen 2018, scored as Goldberg "
        "2019: the verb masked, P(correct) > P(incorrect); docs/agreement.md), pairs skipped because "
        "a verb is not one token of that model, the share of FMAT rows its vocabulary could not score, "
        "and its alpha per study where the study computes one per model. A model that fails basic "
        "syntax deserves less trust in its associations."
    )
    page.show(html_table(data.checks))
    if len(data.agreement) and len(data.agreement.columns) > 1:
        page.show(html_table(data.agreement))

    page.heading("The models", "the-models")
    page.text(
        "One card per model: its architecture, size and vocabulary, where it came from (the locked "
        "hub commit, or a local folder's weights hash) and its creation date on the hub, how fmat "
        "scored it (the MLM head at the mask only, or the model's full forward pass; padded or "
        "equal-length batches: docs/scoring.md), and its top-5 fills of three fixed sentences. A "
        'trained model fills "Paris is the [MASK] of France." with "capital"; a broken one shows it here.'
    )
    page.show(cards_html(data.cards))

    page.heading("Provenance", "provenance")
    page.text(
        "What produced these numbers: the run's settings, where each model came from (the hub "
        "commit it was locked at, or a local folder's weights hash) and the package versions."
    )
    page.show(
        html_table(
            run_settings(
                {
                    "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                    "studies": ", ".join(ids),
                    "models": ", ".join(models),
                    "device": device or "auto",
                    "dtype": dtype,
                    "configuration hash": config_hash,
                    "demo (tiny models)": "yes" if demo else "no",
                }
            )
        )
    )
    page.show(html_table(data.provenance if len(data.provenance) else None))
    page.show(html_table(package_versions()))
    return page
