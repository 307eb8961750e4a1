"""Stage ``analysis`` (rule analysis): one study's analysis, the one its study file names
(``analysis: {name, options}``, registered in :mod:`fmat.analyses`), fed with every
model's scores, the LPRs, the reliability rows and the criterion tables it asks for.

Outputs (all declared by the rule): ``results/analysis/{study}/stats.parquet`` (the reliability
rows + the analysis' own rows, results shape: each statistic has one producer),
``status.json`` (whether the analysis is implemented and ran, its notes, its figure tables) and
the folder ``figures/`` with one ``<name>.parquet`` per figure table.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from fmat import analyses
from fmat.errors import FmatError, InputError
from fmat.io import atomic_path, read_table, write_table
from fmat.results import KEY, RESULT_COLUMNS, results_frame, validate_results
from fmat.runner import read_scores

from .queries import load_study_file


def check_results_table(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """``df`` in the results shape (exactly :data:`fmat.results.RESULT_COLUMNS`), or a clear error."""

    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"not a results table: columns {missing} are missing (has {list(df.columns)[:8]}...)",
            where=where,
            fix="the reliability stage must write rows in the fmat.results shape "
            "(fmat.pipeline.reliability_tables / fmat.results.results_frame)",
        )
    return validate_results(results_frame(df[RESULT_COLUMNS]), where=where)


def _one_producer(reliability: pd.DataFrame, analysis: pd.DataFrame, name: str, sid: str) -> None:
    """Every statistic has one producer: an analysis must not emit a row the reliability stage
    already made (ICC, alpha). A clash is a bug of the analysis, reported as such."""

    both = reliability[KEY].merge(analysis[KEY], on=KEY)
    if len(both):
        keys = ", ".join(f"{r.statistic}:{r.condition}:{r.model}" for r in both.head(6).itertuples())
        raise FmatError(
            f"analysis {name!r} of study {sid} emits {len(both)} row(s) that the reliability stage already produced: {keys}",
            fix="leave ICC and alpha to the reliability stage (the study file's reliability "
            "block); an analysis adds only its own statistics",
        )


def analysis_stage(
    study,
    scores: pd.DataFrame,
    lpr: pd.DataFrame,
    reliability: pd.DataFrame,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    *,
    sid: str | None = None,
):
    """One study's analysis stage -> ``(stats, figures, status)``.

    Runs the analysis the study file names (``study.analysis["name"]``) when it is registered
    (:func:`fmat.analyses.available`), else notes that no analysis of that name is registered. ``stats`` =
    the reliability rows + the analysis rows (validated: known statistics, unique keys);
    ``figures`` = ``{name: table}``; ``status`` = the record written to ``status.json``
    (``study, analysis, implemented, run, notes, figures``; figures filled by the caller).
    """

    sid = str(sid or getattr(study, "id", ""))
    spec = dict(getattr(study, "analysis", None) or {})
    name, options = str(spec.get("name") or ""), dict(spec.get("options") or {})
    reliability = check_results_table(reliability, where=f"reliability rows of study {sid}")
    status = {"study": sid, "analysis": name, "implemented": False, "run": True, "notes": [], "figures": {}}
    figures: dict[str, pd.DataFrame] = {}
    parts = [reliability]
    if name and name in analyses.available():
        out = analyses.run_analysis(
            name, analyses.AnalysisInput(study=study, scores=scores, lpr=lpr, criteria=dict(criteria or {})), options
        )
        _one_producer(reliability, out.stats, name, sid)
        parts = [reliability, out.stats]
        figures = dict(out.figures or {})
        status["implemented"] = True
        status["notes"] = [str(n) for n in (out.notes or [])]
    else:
        status["notes"] = [
            f"no analysis named {name!r} is registered (fmat.analyses.available()): only the reliability rows are reported"
        ]
    stats = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else reliability
    stats = validate_results(stats[RESULT_COLUMNS], where=f"results/analysis/{sid}/stats.parquet")
    return stats.reset_index(drop=True), figures, status


def analysis(
    study_path,
    criteria_dir,
    score_paths: Sequence,
    lpr_path,
    reliability_path,
    criteria_paths: Sequence,
    *,
    sid: str,
    out_stats,
    out_status,
    out_figures,
) -> None:
    """Rule analysis: run the study's analysis -> ``out_stats``, ``out_status`` (JSON) and the
    figure tables in the folder ``out_figures`` (made anew: no table of an earlier run stays)."""

    log = logging.getLogger(__name__)
    study = load_study_file(study_path, criteria_dir)
    criteria = {Path(p).stem: read_table(p) for p in criteria_paths}
    stats, figures, status = analysis_stage(
        study, read_scores(score_paths), read_table(lpr_path), read_table(reliability_path), criteria, sid=sid
    )
    folder = Path(out_figures)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, table in figures.items():
        write_table(table, folder / f"{name}.parquet")
        status["figures"][name] = f"{name}.parquet"
    write_table(stats, out_stats)
    write_status(status, out_status)
    for note in status["notes"]:
        log.info("study %s: %s", sid, note)
    log.info("study %s: %d result rows, %d figure table(s)", sid, len(stats), len(figures))


def write_status(status: Mapping, path: str | os.PathLike) -> None:
    """The analysis' status record as JSON, written atomically."""

    with atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(dict(status), indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
