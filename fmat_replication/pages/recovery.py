"""The "planted and recovered" part of the demo's pages: what the world file planted for a study
(docs/planting.md), beside the paper's number and ours, with the verdict of the recovery rule
(rows of ``results/recovery/{study}.parquet``, made by :func:`fmat.plant.recovery`)."""

from __future__ import annotations

import html

import pandas as pd

from fmat.results import KEY

#: what the recovery table shows, in order
COLUMNS = ["statistic", "condition", "model", "paper", "planted", "ours", "p", "verdict", "reason"]


def recovery_rows(recovery: pd.DataFrame, replication: pd.DataFrame | None = None) -> pd.DataFrame:
    """The recovery rows with the paper's printed value beside them (joined on the results key;
    empty where the paper prints no such number)."""
    rows = recovery.rename(columns={"value": "ours"}).copy()
    rows["paper"] = ""
    if replication is not None and len(replication) and len(rows):
        paper = {
            tuple(str(x) for x in k): v
            for k, v in zip(replication[KEY].itertuples(index=False, name=None), replication["paper_value"])
        }
        rows["paper"] = [
            paper.get((str(r.study), str(r.statistic), str(r.condition), str(r.model)), "") for r in rows.itertuples()
        ]
        rows["paper"] = [f"{v:.2f}" if isinstance(v, float) and pd.notna(v) else "" for v in rows["paper"]]
    return rows[COLUMNS]


def recovery_summary(recovery: pd.DataFrame) -> str:
    """One sentence: how many planted numbers were recovered (HTML, escaped)."""
    judged = recovery[recovery["verdict"].isin(["recovered", "not recovered"])]
    if not len(judged):
        return "<p class='recovery-summary'>Nothing was planted for this study, so there is nothing to recover.</p>"
    ok = int((judged["verdict"] == "recovered").sum())
    klass = "recovery-summary all-recovered" if ok == len(judged) else "recovery-summary not-all-recovered"
    return (
        f"<p class='{klass}'><b>{ok} of {len(judged)}</b> planted number{'s' if len(judged) != 1 else ''} "
        f"recovered{'' if ok == len(judged) else html.escape(': see the reasons below')}.</p>"
    )


def recovery_by_study(recovery: pd.DataFrame) -> pd.DataFrame:
    """The overview's table: per study, the planted numbers checked and recovered.

    Every study of the recovery table has a row, one with nothing planted included (0 checked):
    counted with plain integers, so that a run in which no study has a judged number (a study of
    one's own that the world file does not plant) gives a table of zeros, not an error."""
    rows = []
    for study, verdicts in recovery.groupby("study", sort=False)["verdict"]:
        recovered = int((verdicts == "recovered").sum())
        missed = int((verdicts == "not recovered").sum())
        rows.append({"study": study, "checked": recovered + missed, "recovered": recovered, "not recovered": missed})
    return pd.DataFrame(rows, columns=["study", "checked", "recovered", "not recovered"])
