"""Stage ``analysis`` (rule analysis): one study's analysis, the one its study file names
(``analysis: {name, options}``, registered in :mod:`fmat.analyses`), fed with every
model's scores, the LPRs, the reliability rows and the criterion tables it asks for.

Outputs (all declared by the rule): ``results/analysis/{study}/stats.parquet`` (the reliability
rows + the analysis' own rows, results shape: each statistic has one producer),
``status.json`` (whether the analysis is implemented and ran, its notes, its figure tables) and
the folder ``figures/`` with one ``<name>.parquet`` per figure table. Where the analysis declares
the concept-level variant (``inference: crossed``, :func:`fmat.analyses.crossed_variant`), the
stage runs it too and writes its rows as the figure table ``crossed`` (results shape), which the
study page sets beside the paper's inference.

What the stage computes is the library's (:func:`fmat.stages.analyse`, which
:func:`fmat.run_study` and ``fmat pilot`` run as well); this module only reads the rule's
files and writes its outputs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Mapping, Sequence

from fmat import stages
from fmat.analyses import analysis_stage
from fmat.io import atomic_path, read_table, write_table
from fmat.runner import read_scores

from .queries import load_study_file

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
    """The analysis' status record as JSON, written atomically."""

    with atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(dict(status), indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
