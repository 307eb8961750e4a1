"""Stage ``checks`` (rules oov_study, model_checks): what the pages say of each model: per study
and model the rows whose [MASK] option the model's vocabulary lacks (:func:`oov_study`), and per
model its subject-verb agreement beside its FMAT results and where it came from (:func:`model_checks`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from fmat.io import read_table, write_table

from .score import PROVENANCE_KEY

#: the columns of ``results/oov/{study}.parquet``: the counts, then what the scoring job recorded
#: (``demo``: a tiny demo model; ``packages``: JSON of the distributions' versions in that job)
OOV_COLUMNS = ["study", "model", "rows", "oov_rows", "nan_prob_rows", "oov_words", "demo", "packages"]
#: the columns of ``results/models/provenance.parquet`` (from each model's card)
PROVENANCE_COLUMNS = ["model", "source", "revision", "commit", "sha256", "created"]


def read_scores(paths: Iterable[str | Path], columns: Sequence[str] = ("model", "M_word", "prob", "oov")) -> pd.DataFrame:
    """Score tables stacked, reading only ``columns`` (those present): enough for the OOV counts."""
    parts = [read_table(path, columns=columns) for path in paths]  # checked: a damaged table names its file
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(columns))


def oov_summary(scores: pd.DataFrame, word: str = "M_word", max_words: int = 30) -> pd.DataFrame:
    """Per model: rows scored, out-of-vocabulary rows, rows with NaN ``prob`` (dropped from the
    LPRs), and the first ``max_words`` distinct [MASK] words affected (``oov_words``)."""
    cols = ["model", "rows", "oov_rows", "nan_prob_rows", "oov_words"]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    d = pd.DataFrame(
        {
            "model": scores["model"].astype(str).to_numpy(),
            "oov": scores["oov"].astype(bool).to_numpy() if "oov" in scores else False,
            "nan": scores["prob"].isna().to_numpy() if "prob" in scores else False,
            "word": scores[word].astype(str).to_numpy() if word in scores else "",
        }
    )
    rows = []
    for model, g in d.groupby("model", sort=False):
        words = sorted(set(g.loc[g["oov"] | g["nan"], "word"])) if word in scores else []
        more = f" ... (+{len(words) - max_words})" if len(words) > max_words else ""
        rows.append([model, len(g), int(g["oov"].sum()), int(g["nan"].sum()), ", ".join(words[:max_words]) + more])
    return pd.DataFrame(rows, columns=cols)


def scoring_records(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Per model, what its scoring job recorded (:func:`fmat_replication.score.scoring_provenance`):
    ``model``, ``demo`` (NA where nothing was recorded) and ``packages`` (JSON; "" where none)."""
    rows = []
    for path in paths:
        table = read_table(path, columns=["model"])
        rec = table.attrs.get(PROVENANCE_KEY) or {}
        model = str(table["model"].iloc[0]) if len(table) else str(rec.get("model", ""))
        packages = json.dumps(rec.get("packages") or {}, sort_keys=True) if rec else ""
        rows.append([model, rec["demo"] if "demo" in rec else pd.NA, packages])
    return pd.DataFrame(rows, columns=["model", "demo", "packages"]).drop_duplicates("model")


def oov_study(score_paths: Sequence, out, *, study: str) -> pd.DataFrame:
    """Rule oov_study: the OOV counts of one study's score tables (one per model), each model's
    row with what its scoring job recorded (:func:`scoring_records`) -> ``out``."""
    counts = oov_summary(read_scores(score_paths)).assign(study=str(study))
    table = counts.merge(scoring_records(score_paths), on="model", how="left")[OOV_COLUMNS]
    table["demo"] = table["demo"].astype("boolean")
    write_table(table, out)
    return table


def model_checks_table(
    agreement: pd.DataFrame, stats: pd.DataFrame | None = None, oov: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per model (in the agreement table's order): its subject-verb agreement check
    beside its FMAT results.

    ``agreement``: :func:`fmat.agreement.summarize` output; ``stats``: results rows, whose
    per-model alpha rows become ``alpha <study>`` columns (mean over conditions); ``oov``: per
    study and model ``rows``/``oov_rows``, summed into the ``OOV share``.
    """
    a = agreement[agreement["construction"].astype(str) == "all"][["model", "accuracy", "n", "skipped"]].copy()
    a["model"] = a["model"].astype(str)
    a = a.rename(columns={"accuracy": "agreement accuracy", "n": "pairs scored", "skipped": "pairs skipped"})
    if stats is not None and len(stats):
        al = stats[(stats["statistic"] == "alpha") & (stats["model"].astype(str) != "all")]
        if len(al):
            wide = al.groupby(["model", "study"], sort=False)["value"].mean().unstack("study").add_prefix("alpha ")
            wide = wide.reset_index()
            wide["model"] = wide["model"].astype(str)
            a = a.merge(wide, on="model", how="left")
    if oov is not None and len(oov):
        o = oov.groupby(oov["model"].astype(str), sort=False)[["rows", "oov_rows"]].sum()
        a = a.merge((o["oov_rows"] / o["rows"]).rename("OOV share").reset_index(), on="model", how="left")
    return a.reset_index(drop=True)


def agreement_by_construction(agreement: pd.DataFrame) -> pd.DataFrame:
    """The agreement accuracy of each model (rows) in each construction (columns)."""
    per = agreement[agreement["construction"].astype(str) != "all"]
    if per.empty:
        return pd.DataFrame(columns=["model"])
    wide = per.pivot_table(index="model", columns="construction", values="accuracy", sort=False).reset_index()
    wide.columns.name = None
    return wide


def provenance_table(cards: Sequence, oov: pd.DataFrame | None = None) -> pd.DataFrame:
    """Where each model came from, from its card (:data:`PROVENANCE_COLUMNS`), then from ``oov``
    (the studies' ``results/oov/{study}.parquet``) the version of each package in its scoring job
    (one column per distribution, "not recorded" where the job recorded none)."""
    rows = []
    for path in cards:
        card = json.loads(Path(path).read_text(encoding="utf-8"))
        rows.append({c: "" if card.get(c) is None else str(card.get(c)) for c in PROVENANCE_COLUMNS})
    table = pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)
    if oov is None or "packages" not in oov.columns:
        return table
    recorded = oov[oov["packages"].astype(str) != ""].drop_duplicates("model")
    versions = pd.DataFrame([{"model": m, **json.loads(p)} for m, p in zip(recorded["model"].astype(str), recorded["packages"])])
    if versions.empty:
        return table
    table = table.merge(versions, on="model", how="left")
    return table.fillna({c: "not recorded" for c in versions.columns if c != "model"})


def model_checks(
    agreement_path, stats_paths: Sequence, oov_paths: Sequence, card_paths: Sequence, *, checks_out, agreement_out, provenance_out
) -> None:
    """Rule model_checks: :func:`model_checks_table`, :func:`agreement_by_construction` and
    :func:`provenance_table` of the run's files, each to its declared output."""
    agreement = read_table(agreement_path)
    stats = pd.concat([read_table(p) for p in stats_paths], ignore_index=True) if stats_paths else None
    oov = pd.concat([read_table(p) for p in oov_paths], ignore_index=True) if oov_paths else None
    write_table(model_checks_table(agreement, stats, oov), checks_out)
    write_table(agreement_by_construction(agreement), agreement_out)
    write_table(provenance_table(card_paths, oov), provenance_out)
