"""Stage ``analysis`` (rule analysis): the analysis a study file names, run by the library
(:func:`fmat.stages.analyse`) on the rule's files -> ``stats.parquet`` (the reliability rows + the
analysis' own), ``status.json`` and one ``figures/<name>.parquet`` per figure table (the
concept-level variant as ``crossed``).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Mapping, Sequence

from fmat import stages
from fmat.analyses import analysis_stage
from fmat.io import read_table, write_table
from fmat.runner import read_scores

from .queries import load_study_file
from .scripts import write_json

__all__ = ["analysis", "analysis_stage", "write_status"]


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
    scores, lpr = read_scores(score_paths), read_table(lpr_path)
    stats, figures, status = stages.analyse(study, scores, lpr, read_table(reliability_path), criteria, sid=sid, crossed=True)
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
    """The analysis' status record as JSON, written atomically (:func:`.scripts.write_json`)."""
    write_json(dict(status), path)
