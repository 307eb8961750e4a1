"""A study's report page (rule report_study -> ``results/reports/{study}.html``).

:func:`study_page` reads the files the rule declares (:func:`.inputs.read_study`) and fills the
template ``templates/study.html.j2`` with :func:`study_context` (one short function per section).
Every heading and sentence is in the template; nothing here names a study. Figures are the
figures rule's (:mod:`.drawing`), embedded.
"""

from __future__ import annotations

import base64
from typing import Mapping

import pandas as pd

from fmat.html import table_data
from fmat.study_page import concept_section, effect_section

from ..formats import replication_text
from .design import design_data, pair_labels
from .inputs import StudyPage, read_study
from .page import Page, page_path
from .recovery import recovery_counts, recovery_rows
from .tables import (
    csv_download,
    other_rows,
    ours_only,
    paper_table,
    table_cells,
    table_criterion,
    text_rows,
    verdict_box,
)

#: the title of every study page (``reports/study.qmd`` sets the same)
TITLE = "FMAT replication of Bao (2024): study report"
#: figure tables the figures rule draws or the page shows elsewhere (the rest are CSV downloads)
SHOWN_TABLES = ("criterion", "trend", "effects", "missing_years", "calibrated", "crossed")


def calibrated_counts(table: pd.DataFrame) -> dict:
    """The calibrated section's numbers (worded by ``calibrated_text.html.j2``): the statistics
    corrected (``[]`` for a stereotype analysis's d; ``["r"]`` or ``["r", "b"]`` for a criterion
    analysis's disattenuated table), the rows, those significant at .05 under the paper's model,
    how many stay significant under the calibrated inference and how many become so only there."""
    corrected = [s for s in ("r", "b") if "statistic" in table.columns and (table["statistic"] == s).any()]
    corrected = (corrected or ["r"]) if "value_ours" in table.columns else []
    sig, ours = (table[c].astype(bool) if len(table) else pd.Series([], dtype=bool) for c in ("significant", "significant_ours"))
    return {
        "corrected": corrected,
        "statistics": corrected or ["d"],
        "rows": len(table),
        "significant": int(sig.sum()),
        "kept": int((sig & ours).sum()),
        "new": int((~sig & ours).sum()),
    }


def figure_items(drawn: list[dict]) -> list[dict]:
    """The figures rule's figures as the template shows them: the SVG in a data URI (``src``)."""

    def src(f):
        return "data:image/svg+xml;base64," + base64.b64encode(f["svg"].encode()).decode("ascii") if f.get("svg") else ""

    return [{"missing": "", "caption": "", **f, "src": src(f)} for f in drawn]


def item_word(raw: Mapping) -> str:
    """What an item of the study is, in words: its TARGET group's name ("Occupation", "Name")."""
    for q in raw.get("queries") or []:
        spec = q.get("TARGET")
        if isinstance(spec, Mapping) and spec:
            return str(next(iter(spec)))
    return "item"


def paper_tables(data: StudyPage) -> dict:
    """The paper's table in its layout, a table of the run's other models where the layout has one
    row per model, the numbers printed in the text."""
    raw, rep, stats = data.raw, data.replication, data.stats
    layout = paper_table(
        data.study,
        data.paper,
        titles={data.study: str(raw.get("title", ""))},
        labels=pair_labels(raw),
        item=item_word(raw),
    )
    tables = [table_cells(layout, rep, study=data.study)] if layout is not None and len(rep) else []
    per_model = layout is not None and any(k[2] not in ("all", "*") for k in layout.keys())
    if per_model:
        mine = [m for m in dict.fromkeys(stats.loc[stats["statistic"] == "r", "model"].astype(str)) if m != "all"]
        mine = [m for m in mine if m not in {k[2] for k in layout.keys()}]
        if mine:
            extra = table_criterion(data.study, data.paper, models=mine, item=item_word(raw))
            tables.append(table_cells(extra, ours_only(stats), study=data.study, legend=False))
    rest = other_rows(rep, [layout] if layout is not None else []) if len(rep) else rep
    return {
        "paper_tables": tables,
        "in_the_text": text_rows(rest) if len(rest) else [],
        "has_paper_rows": bool(len(rep)),
    }


def downloads(data: StudyPage) -> dict:
    """The CSV downloads: paper vs ours (None without the paper's rows), all our numbers, the
    analysis' other figure tables (each with its ``name``)."""
    s, rep, stats = data.study, data.replication, data.stats
    drawn = {f["name"] for f in data.drawn}
    other = {k: v for k, v in data.figures.items() if k not in SHOWN_TABLES and k not in drawn}
    return {
        "paper_vs_ours": csv_download(replication_text(rep), f"{s}_paper_vs_ours.csv") if len(rep) else None,
        "all_numbers": csv_download(stats, f"{s}_all_our_numbers.csv"),
        "other_tables": [{**csv_download(v, f"{s}_{k}.csv"), "name": k} for k, v in other.items()],
    }


def details(data: StudyPage, device: str, config_hash: str) -> dict:
    """The analysis' effect (:func:`fmat.study_page.effect_section`), reliability, design,
    out-of-vocabulary words and notes."""
    raw, stats, status = data.raw, data.stats, data.status
    icc = stats[stats["statistic"].str.startswith("ICC")]
    alpha = stats[stats["statistic"].isin(["alpha", "alpha_std"])]
    return {
        "icc_table": table_data(icc[["statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n"]]),
        "alpha_table": table_data(alpha[["statistic", "condition", "model", "value", "n"]], max_rows=60),
        "family": str(raw.get("family", "")),
        "source": str(raw.get("source", "")),
        "study_file": page_path(data.study_file),
        "notes_text": str(raw.get("notes") or ""),
        "design": design_data(raw),
        "models": list(dict.fromkeys(data.oov["model"].astype(str))) if "model" in getattr(data.oov, "columns", ()) else [],
        "oov_table": table_data(data.oov.drop(columns=["study", "demo", "packages"], errors="ignore") if len(data.oov) else None),
        "analysis": effect_section(stats, None, status),
        "notes": [str(n) for n in status.get("notes") or []],
        "config_hash": str(config_hash or ""),
        "device": str(device or ""),
    }


def study_context(data: StudyPage, *, device: str = "", config_hash: str = "") -> dict:
    """Everything ``study.html.j2`` shows, from the page's files (:class:`.inputs.StudyPage`)."""
    calibrated = data.figures.get("calibrated")
    recovery = data.recovery
    return {
        "study": data.study,
        "title": str(data.raw.get("title", "")),
        "demo": bool(data.demo),
        "planted": recovery is not None,
        "verdict": verdict_box(data.study, data.replication),
        "recovery": None
        if recovery is None
        else {
            "counts": recovery_counts(recovery),
            "table": table_data(recovery_rows(recovery, data.replication)),
        },
        "calibrated": None
        if calibrated is None
        else {
            **calibrated_counts(calibrated),
            "table": table_data(calibrated, max_rows=60),
        },
        "concept": concept_section(data.stats, data.figures),  # None without a crossed variant
        "figures": figure_items(data.drawn),
        **paper_tables(data),
        **downloads(data),
        **details(data, device, config_hash),
    }


def study_page(study: str, inputs: Mapping, *, device: str = "", config_hash: str = "") -> Page:
    """The report page of one study (the filled template ``study.html.j2``), from the files rule
    report_study declares.

    Parameters
    ----------
    study : str
        The study id (``2A``).
    inputs : mapping
        The page's inputs by name (:data:`.inputs.STUDY_INPUTS`: the rule's, or :func:`.inputs.hand_inputs`).
    device, config_hash : str
        Provenance (the notes).

    Raises
    ------
    fmat.errors.InputError
        An input is missing or unknown (naming it).
    """
    data = read_study(study, inputs)
    return Page(TITLE, "study.html.j2", study_context(data, device=device, config_hash=config_hash))
