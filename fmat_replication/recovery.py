"""Stage ``recovery`` (rules recovery_study, recovery): known truth. What the demo's world file
planted for a study (:mod:`fmat.plant`, docs/planting.md) against the statistics the workflow
computed for it (``results/analysis/{study}/stats.parquet``): one row per expected statistic,
with the planted value, ours and the verdict (:func:`fmat.plant.recovery`)."""

from __future__ import annotations

import logging
import os
from typing import Sequence

import pandas as pd

from fmat.io import read_table, write_table
from fmat.plant import RECOVERY_COLUMNS, load_world, recovery


def study_recovery(world_path, stats: pd.DataFrame, sid: str) -> pd.DataFrame:
    """One study's recovery rows; a study the world does not name has nothing planted and no
    expectation, which is said in one row."""

    plant = load_world(world_path).plant(sid)
    if plant is None or not plant.expect:
        return pd.DataFrame(
            [
                [
                    sid,
                    "",
                    "",
                    "",
                    "",
                    "",
                    float("nan"),
                    float("nan"),
                    "nothing to check",
                    "the world names no expectation for this study",
                ]
            ],
            columns=RECOVERY_COLUMNS,
        )
    return recovery(plant, stats)


def recovery_stage(world_path, stats_paths, *, sid: str | None = None, out, csv=None) -> None:
    """Rule recovery_study (``sid`` given: one study's stats -> its rows) or rule recovery (the
    studies' recovery tables -> one table and a CSV)."""

    log = logging.getLogger(__name__)
    if sid is not None:
        table = study_recovery(world_path, read_table(stats_paths), sid)
    else:
        paths: Sequence[str | os.PathLike] = stats_paths
        table = pd.concat([read_table(p) for p in paths], ignore_index=True)
    write_table(table, out)
    if csv:
        write_table(table, csv)
    counts = table["verdict"].value_counts().to_dict()
    log.info("%s: %s", sid or "all studies", ", ".join(f"{n} {v}" for v, n in counts.items()))
    for r in table[table["verdict"] == "not recovered"].itertuples():
        log.warning("not recovered: study %s %s %s %s: %s", r.study, r.statistic, r.condition, r.model, r.reason)
