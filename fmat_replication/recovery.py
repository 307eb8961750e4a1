"""Stage ``recovery`` (rules recovery_study, recovery): known truth. What the demo's world file
planted for a study (:mod:`fmat.plant`, docs/planting.md) against the statistics the workflow
computed for it: per expected statistic the planted value, the realised value
(:func:`fmat.oracle.oracle`), ours with its 95% CI, and the verdict (:func:`fmat.plant.recovery`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from fmat.io import read_table, write_table
from fmat.oracle import oracle
from fmat.plant import RECOVERY_COLUMNS, concept_values, expectation_level, load_world, recovery


def study_recovery(
    world_path,
    stats: pd.DataFrame,
    sid: str,
    study_path=None,
    models: Sequence[str] | None = None,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    crossed: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One study's recovery rows (one "nothing to check" row where the world names no
    expectation). ``models`` (the names the models were trained under) and ``study_path`` give the
    realised and concept-level values; ``crossed``: the analysis's concept-level figure table."""
    plant = load_world(world_path).plant(sid)
    if plant is None or not plant.expect:
        row = {c: "" for c in RECOVERY_COLUMNS} | {c: float("nan") for c in ("realised", "value", "ci_low", "ci_high", "p")}
        row |= {"study": sid, "verdict": "nothing to check", "reason": "the world names no expectation for this study"}
        return pd.DataFrame([row], columns=RECOVERY_COLUMNS)
    realised = oracle(study_path, plant, [str(m) for m in models], criteria) if study_path and models else None
    concept = None
    if study_path and models and any(expectation_level(e) == "concept" for e in plant.expect):
        concept = concept_values(study_path, plant, [str(m) for m in models], criteria)
    return recovery(plant, stats, realised, crossed, concept)


def recovery_stage(
    world_path,
    stats_paths,
    *,
    sid: str | None = None,
    out,
    csv=None,
    study_path=None,
    models: Sequence[str] | None = None,
    criteria_paths: Sequence = (),
    figures=None,
) -> None:
    """Rule recovery_study (``sid`` given: :func:`study_recovery` of one study's stats, with
    ``crossed.parquet`` of the folder ``figures`` where it has one) or rule recovery (the
    studies' recovery tables -> one table and a CSV)."""

    log = logging.getLogger(__name__)
    if sid is not None:
        criteria = {Path(p).stem: read_table(p) for p in criteria_paths}
        crossed_path = Path(figures) / "crossed.parquet" if figures else None
        crossed = read_table(crossed_path) if crossed_path is not None and crossed_path.is_file() else None
        table = study_recovery(world_path, read_table(stats_paths), sid, study_path, models, criteria, crossed)
    else:
        table = pd.concat([read_table(p) for p in stats_paths], ignore_index=True)
    write_table(table, out)
    if csv:
        write_table(table, csv)
    counts = table["verdict"].value_counts().to_dict()
    log.info("%s: %s", sid or "all studies", ", ".join(f"{n} {v}" for v, n in counts.items()))
    for r in table[table["verdict"] == "not recovered"].itertuples():
        log.warning("not recovered: study %s %s %s %s: %s", r.study, r.statistic, r.condition, r.model, r.reason)
