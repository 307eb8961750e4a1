"""Study files as the workflow reads them: where they are (:func:`study_file`), which criterion
tables they need (:func:`study_criteria`), their option blocks and query tables."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def study_file(config: Mapping, study: str, root: str | os.PathLike = ".") -> Path:
    """The study file of ``study``: ``<root>/<studies_dir>/<study>.yaml``."""
    return Path(root) / config.get("studies_dir", "config/studies") / f"{study}.yaml"



def _yaml_load(path: Path) -> Any:
    """A study file through the project's loader (fmat.study.read_study_yaml), as every read does."""
    from ..study import read_study_yaml

    return read_study_yaml(path)



def study_criteria(path: str | os.PathLike) -> list[str]:
    """Names of the criterion tables a study file's word lists read (``{criterion: NAME, ...}``),
    in order of first appearance; the queries rule needs ``resources/criteria/<NAME>.parquet``."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            name = node.get("criterion")
            if isinstance(name, str) and name not in found:
                found.append(name)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk((_yaml_load(Path(path)) or {}).get("queries"))
    return found



def study_options(study: Any, key: str) -> dict:
    """The study file's ``lpr`` / ``reliability`` / ``score`` block as a dict ({} when absent)."""
    value = getattr(study, key, None)
    if value is None and isinstance(getattr(study, "spec", None), Mapping):
        value = study.spec.get(key)
    if value is None and isinstance(study, Mapping):
        value = study.get(key)
    if value is None:
        return {}
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        value = asdict(value)
    return dict(value)



def load_study_file(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """:func:`fmat.study.load_study` (criteria tables from ``criteria_dir`` when it exists)."""
    from ..study import load_study

    if criteria_dir is not None and not Path(criteria_dir).is_dir():
        criteria_dir = None
    return load_study(path, criteria_dir=criteria_dir)



def query_table(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """The query table of a study file (``load_study(...).queries``)."""
    return load_study_file(path, criteria_dir).queries
