"""Stage ``lpr`` (rule lpr): every model's scores of a study -> its LPR table,
``results/lpr/{study}.parquet`` (:func:`fmat.stages.lpr_table`)."""

from __future__ import annotations

import os
from typing import Sequence

from fmat import stages
from fmat.io import write_table
from fmat.runner import read_scores

from .queries import load_study_file


def lpr(study_path: str | os.PathLike, criteria_dir, score_paths: Sequence, out: str | os.PathLike) -> None:
    """Rule lpr: the LPRs of one study -> ``out``."""

    write_table(stages.lpr_table(load_study_file(study_path, criteria_dir), read_scores(score_paths)), out)
