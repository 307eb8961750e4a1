"""Stage ``queries`` (rule queries): a study file -> its query table,
``results/queries/{study}.parquet``. Also where a study file is (:func:`study_file`) and how the
stages after it load one (:func:`load_study_file`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from fmat.analyses import check
from fmat.io import write_table
from fmat.study import load_study


def study_file(config: Mapping, study: str, root: str | os.PathLike = ".") -> Path:
    """The study file of ``study``: ``<root>/<studies_dir>/<study>.yaml``."""
    return Path(root) / config.get("studies_dir", "config/studies") / f"{study}.yaml"


def load_study_file(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """:func:`fmat.study.load_study` (criteria tables from ``criteria_dir`` when it exists), its
    ``analysis`` block checked (:func:`.analyses.check`)."""

    if criteria_dir is not None and not Path(criteria_dir).is_dir():
        criteria_dir = None
    return load_study(path, criteria_dir=criteria_dir, check_analysis=check)


def query_table(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """The query table of a study file (``load_study(...).queries``)."""
    return load_study_file(path, criteria_dir).queries


def queries(study_path: str | os.PathLike, criteria_dir: str | os.PathLike | None, out: str | os.PathLike) -> None:
    """Rule queries: the study file's query table -> ``out``."""

    write_table(query_table(study_path, criteria_dir), out)
