"""Stage ``reliability`` (rule reliability): ICC among the models and alpha among the study's
items (:func:`fmat.stages.reliability_tables`, the one producer of every ICC and alpha row) ->
``results/reliability/{study}.parquet`` and the details -> ``{study}_details.parquet``."""

from __future__ import annotations

import os
from typing import Sequence

from fmat import stages
from fmat.io import read_table, write_table
from fmat.runner import read_scores

from .queries import load_study_file


def reliability(
    study_path: str | os.PathLike,
    criteria_dir,
    score_paths: Sequence,
    lpr_path,
    *,
    sid: str,
    out_stats: str | os.PathLike,
    out_details: str | os.PathLike,
) -> None:
    """Rule reliability: one study's reliability rows -> ``out_stats``, details -> ``out_details``."""

    details, stats = stages.reliability_tables(
        load_study_file(study_path, criteria_dir), read_scores(score_paths), read_table(lpr_path), sid=sid, icc=True
    )
    write_table(details, out_details)
    write_table(stats, out_stats)
