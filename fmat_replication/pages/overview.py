"""The overview page (rule report_index -> ``results/reports/index.html``).

:func:`overview_page` reads the files the rule declares (:func:`.inputs.read_index`) and fills the
template ``templates/overview.html.j2`` with :func:`overview_context` (one short function per
part). Every heading and sentence is in the template; no study is named here.
"""

from __future__ import annotations

import datetime
from typing import Mapping, Sequence

from fmat.html import table_data

from ..compare import summarise
from .cards import card_texts
from .concept import VERDICTS, concept_counts, concept_rows
from .figures import icc_table, run_settings
from .inputs import IndexPage, read_index
from .page import Page
from .recovery import expectation_coverage, recovery_by_study, recovery_counts
from .study import figure_items
from .tables import headline_rows, table_attitude, table_cells, table_number

#: the title of the overview (``reports/index.qmd`` sets the same)
TITLE = "FMAT replication of Bao (2024): overview"
#: the paper's tables that print several studies together, by number (Table 6: the attitude studies)
JOINT_TABLES = {"6": table_attitude}


def verdicts(data: IndexPage) -> dict:
    """The verdict counts per study (linked to its page), in all, the headline claims and the
    tables the paper prints for several studies together."""
    rep = data.replication
    if not len(rep):
        return {"total": None}
    summary = summarise(rep)
    summary["page"] = summary["study"]  # the template links a study that has a page, else "not run"
    t = summarise(rep.assign(all="all"), by=["all"]).iloc[0]
    joint = []
    for number, layout in JOINT_TABLES.items():
        ids = [s for s in data.studies if table_number(data.paper, s) == number and s in set(rep["study"])]
        if ids:
            joint.append({"number": number, "table": table_cells(layout(ids, data.titles), rep)})
    return {
        "total": {k.replace(" ", "_"): int(t[k]) for k in ("replicated", "not replicated", "not computable", "total")},
        "summary_table": table_data(summary),
        "headlines": headline_rows(sorted(set(rep["study"])), rep),
        "joint_tables": joint,
    }


def concept(data: IndexPage) -> dict | None:
    """Per study with a concept-level variant (figure table ``crossed``), its verdicts counted
    (:func:`.concept.concept_counts`), and the sums; None where no study has one."""
    rows = [
        {"study": s, **concept_counts(concept_rows(data.stats[data.stats["study"].astype(str) == s], data.crossed[s]))}
        for s in data.studies
        if s in data.crossed
    ]
    if not rows:
        return None
    total = {k: sum(int(r[k]) for r in rows) for k in (*VERDICTS, "paper_significant", "total")}
    return {"rows": rows, "total": total}


def model_tables(data: IndexPage) -> dict:
    """Out-of-vocabulary rows per model and per study, the agreement check, the cards."""
    oov = data.oov
    oov_tables = []
    if len(oov):
        by_model = oov.groupby("model", sort=False)[["rows", "oov_rows", "nan_prob_rows"]].sum().reset_index()
        hit = oov[(oov["oov_rows"] > 0) | (oov["nan_prob_rows"] > 0)]
        oov_tables = [table_data(by_model), table_data(hit[["study", "model", "rows", "oov_rows", "nan_prob_rows", "oov_words"]])]
    agreement = data.agreement
    return {
        "oov_tables": oov_tables,
        "checks_table": table_data(data.checks),
        "agreement_table": table_data(agreement) if len(agreement) and len(agreement.columns) > 1 else None,
        "cards": card_texts(data.cards),
    }


def provenance(data: IndexPage, settings: Mapping) -> dict:
    """The run's settings (demo as the scoring jobs recorded it) and where each model came from
    with the package versions of the job that scored it (``results/models/provenance.parquet``)."""
    demo = {True: "yes", False: "no", None: "not recorded by the scoring jobs"}[data.demo]
    rows = {
        "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "studies": ", ".join(data.studies),
        **settings,
        "demo (tiny models)": demo,
    }
    return {
        "settings_table": table_data(run_settings(rows)),
        "provenance_table": table_data(short_hashes(data.provenance) if len(data.provenance) else None),
    }


def short_hashes(provenance, lengths: Mapping[str, int] = {"commit": 12, "sha256": 16}):
    """The provenance table with a commit and a weights hash cut to their first characters (the
    full ones are in ``results/models/provenance.parquet``), so that it fits the page's width."""
    out = provenance.copy()
    for column, n in lengths.items():
        if column in out.columns:
            out[column] = [t if len(str(t)) <= n else f"{str(t)[:n]}…" for t in out[column].astype(str)]
    return out


def overview_context(data: IndexPage, settings: Mapping) -> dict:
    """Everything ``overview.html.j2`` shows, from the overview's files (:class:`.inputs.IndexPage`)."""
    recovery = data.recovery
    return {
        "demo": bool(data.demo),
        "planted": recovery is not None,
        "recovery": None
        if recovery is None
        else {
            "counts": recovery_counts(recovery),
            "by_study": table_data(recovery_by_study(recovery)),
            "coverage": table_data(expectation_coverage(recovery, data.replication)),
        },
        "studies": data.studies,
        "figures": figure_items(data.drawn),
        "icc_table": table_data(icc_table(data.stats, data.studies)),
        "concept": concept(data),
        **verdicts(data),
        **model_tables(data),
        **provenance(data, settings),
    }


def overview_page(
    studies: Sequence[str],
    inputs: Mapping,
    *,
    models: Sequence[str] = (),
    device: str = "",
    dtype: str = "float32",
    config_hash: str = "",
) -> Page:
    """The overview page (the filled template ``overview.html.j2``), from the files rule
    report_index declares.

    Parameters
    ----------
    studies : list of str
        The study ids, in the configuration's order.
    inputs : mapping
        The overview's inputs by name (:data:`.inputs.INDEX_INPUTS`: the rule's, or
        :func:`.inputs.hand_inputs`); per-study lists in the order of ``studies``.
    models : list of str
        The model slugs, in the configuration's order (provenance).
    device, dtype, config_hash : str
        Provenance.
    """
    data = read_index(studies, inputs)
    settings = {"models": ", ".join(models), "device": device or "auto", "dtype": dtype, "configuration hash": config_hash}
    return Page(TITLE, "overview.html.j2", overview_context(data, settings))
