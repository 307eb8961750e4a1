"""The "planted and recovered" part of the demo's pages: what the world file planted for a study
(docs/planting.md), beside the paper's number and ours, with the verdict of the recovery rule
(rows of ``results/recovery/{study}.parquet``, made by :func:`fmat.plant.recovery`)."""

from __future__ import annotations

import pandas as pd

from fmat.plant import JUDGED, NOTHING_FOUND
from fmat.results import KEY

#: statistics whose printed number has a sign a world can fix (the expectations' domain)
SIGN_BEARING = ("d", "t", "r", "b", "beta", "t_williams")

#: what the recovery table shows, in order: the level the row is judged at (words: the paper's
#: inference against the realised value; concept: the concept-level test against the planted
#: effect), the paper's number, the nominal plant, the target (realised), ours and its 95% CI
COLUMNS = ["statistic", "condition", "model", "level", "paper", "planted", "realised", "ours", "95% CI", "p", "verdict", "reason"]


def _ci_text(low, high) -> str:
    return f"[{low:.2f}, {high:.2f}]" if pd.notna(low) and pd.notna(high) else ""


def recovery_rows(recovery: pd.DataFrame, replication: pd.DataFrame | None = None) -> pd.DataFrame:
    """The recovery rows with the paper's printed value beside them (joined on the results key;
    empty where the paper prints no such number), the realised value and our CI (empty in a
    table written before they were recorded)."""
    rows = recovery.rename(columns={"value": "ours"})
    rows = rows.assign(**{c: float("nan") for c in ("realised", "ci_low", "ci_high") if c not in rows.columns})
    rows["level"] = rows["level"].fillna("words") if "level" in rows.columns else "words"  # a table from before levels
    rows["95% CI"] = [_ci_text(lo, hi) for lo, hi in zip(rows["ci_low"], rows["ci_high"])]
    rows["paper"] = ""
    if replication is not None and len(replication) and len(rows):
        paper = dict(zip(replication[KEY].astype(str).itertuples(index=False, name=None), replication["paper_value"]))
        found = (paper.get(k, "") for k in rows[KEY].astype(str).itertuples(index=False, name=None))
        rows["paper"] = [f"{v:.2f}" if isinstance(v, float) and pd.notna(v) else "" for v in found]
    return rows[COLUMNS]


def expectation_coverage(recovery: pd.DataFrame, replication: pd.DataFrame) -> pd.DataFrame:
    """The overview's count per study of the paper's sign-bearing numbers (model ``all``;
    :data:`SIGN_BEARING`): ``printed`` (in config/paper_results.tsv with a value), ``computable``
    (the workflow computed the row: the paper check's verdict is not "not computable") and
    ``checked`` (of those, the rows a world expectation judged), with a total row."""
    rep = replication[
        replication["statistic"].astype(str).isin(SIGN_BEARING)
        & (replication["model"].astype(str) == "all")
        & pd.to_numeric(replication["paper_value"], errors="coerce").notna()
    ]
    judged = recovery[recovery["verdict"].isin(JUDGED)]
    keys = set(judged[KEY].astype(str).itertuples(index=False, name=None))
    rows = []
    for sid, g in rep.groupby("study", sort=False):
        comp = g[g["verdict"].astype(str) != "not computable"]
        checked = sum(tuple(k) in keys for k in comp[KEY].astype(str).itertuples(index=False, name=None))
        rows.append({"study": str(sid), "printed": len(g), "computable": len(comp), "checked": int(checked)})
    out = pd.DataFrame(rows, columns=["study", "printed", "computable", "checked"])
    total = {"study": "all", **{c: int(out[c].sum()) for c in ("printed", "computable", "checked")}}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def recovery_counts(recovery: pd.DataFrame) -> dict:
    """How many planted numbers there are (n) and were recovered (ok), how many concept-level
    controls (controls) found nothing (nothing): the data of ``recovery_summary.html.j2``."""
    judged = recovery[recovery["verdict"].isin(JUDGED)]
    control = _concept_controls(judged)
    return {
        "n": int((~control).sum()),
        "ok": int((judged.loc[~control, "verdict"] == "recovered").sum()),
        "controls": int(control.sum()),
        "nothing": int((judged.loc[control, "verdict"] == NOTHING_FOUND).sum()),
    }


def _concept_controls(rows: pd.DataFrame) -> pd.Series:
    """The rows that judge a concept-level control (``absent: true, level: concept``)."""
    if "level" not in rows.columns or "planted" not in rows.columns:
        return pd.Series(False, index=rows.index)
    return (rows["level"].astype(str) == "concept") & rows["planted"].astype(str).str.startswith("0")


def recovery_by_study(recovery: pd.DataFrame) -> pd.DataFrame:
    """The overview's table: per study, the planted numbers checked and recovered (and the
    concept-level controls that found nothing), in plain integers: a study with nothing planted,
    or a run with no judged number, gives zeros, not an error."""
    rows = []
    for study, verdicts in recovery.groupby("study", sort=False)["verdict"]:
        counts = {v: int((verdicts == v).sum()) for v in JUDGED}
        rows.append({"study": study, "checked": sum(counts.values()), **counts})
    return pd.DataFrame(rows, columns=["study", "checked", "recovered", NOTHING_FOUND, "not recovered"])
