"""The paper's tables in the paper's layout, each cell the paper's number and ours.

A report shows every number Bao (2024) prints for a study where the paper prints it: Tables 3-7
in their layouts and the Study 4 statistics of its text; the rest (ICCs, t, F, the cited
criteria, ...) in a short "also in the text" table, so that each of the paper's rows appears
exactly once. All of it is plain data (:class:`PaperTable`) read from the replication table.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from fmat_replication.compare import NOT_COMPUTABLE, NOT_REPLICATED, REPLICATED, VERDICTS, summarise
from fmat_replication.formats import missing, p_text
from fmat_replication.formats import ours_cell as ours_text
from fmat_replication.formats import paper_cell as paper_text

#: (statistic, condition, model): one row of the paper's file
Key = tuple[str, str, str]

#: CSS class of a cell per verdict
VERDICT_CLASS = {REPLICATED: "v-replicated", NOT_REPLICATED: "v-not", NOT_COMPUTABLE: "v-nc"}


def table_number(paper: pd.DataFrame, study: str) -> str:
    """The number of the paper's table that prints a study's numbers, read from the ``source``
    column of its rows in the paper's file ("Table 3, alpha_query column" -> "3"); "" when the
    rows name no table."""
    if "source" not in paper.columns:
        return ""
    found = paper.loc[paper["study"] == study, "source"].astype(str).str.extract(r"\bTable (\d+)")[0].dropna()
    return str(found.mode().iloc[0]) if len(found) else ""


#: statistics shown with their Greek / typographic name
STAT_NAMES = {
    "alpha": "α",
    "alpha_std": "α (standardized)",
    "beta": "β",
    "R2": "R²",
    "R2m": "R²marginal",
    "R2_delta": "ΔR²",
    "ICC_average": "ICC average",
    "ICC_single": "ICC single",
    "t_williams": "Williams' t",
}


@dataclass
class PaperTable:
    """A table as the paper lays it out: ``rows`` of (label, [key or None per column]).

    ``groups``: spanning headers over the columns, as (text, number of columns). ``caption``: the
    name of a caption of the template ``paper_table.html.j2`` (else the text), of ``study``."""

    title: str
    caption: str
    columns: list[str]
    rows: list[tuple[str, list[Key | None]]]
    groups: list[tuple[str, int]] = field(default_factory=list)
    note: str = ""
    study: str = ""

    def keys(self) -> set[Key]:
        return {k for _, cells in self.rows for k in cells if k is not None}


def _models_in(paper: pd.DataFrame, study: str, statistic: str = "alpha") -> list[str]:
    """The models of a study's per-model rows, in the paper file's order ('all', '*' left out)."""
    m = paper.loc[(paper["study"] == study) & (paper["statistic"] == statistic), "model"].astype(str)
    return [x for x in dict.fromkeys(m) if x not in ("all", "*")]


def table_criterion(
    study: str, paper: pd.DataFrame, queries: int = 4, models: Sequence[str] | None = None, item: str = "item"
) -> PaperTable:
    """Tables 3 (1A) and 4 (1B): one row per BERT model (first ``Overall``), alpha among the
    query templates, then the correlation of each query's FMAT score with the criterion
    (% male) and with WEFAT; a last row with the mean standardized index. ``models``: other
    model rows (e.g. the models of a run that are not the paper's; no Overall/index rows).
    ``item``: what an item is, in words (the study file's TARGET group: "occupation", "name")."""
    qs = [f"Q{i}" for i in range(1, queries + 1)]

    def cells(model):
        return (
            [("alpha", "all", model)]
            + [("r", f"fmat~pct_male:{q}", model) for q in qs]
            + [("r", f"fmat~wefat:{q}", model) for q in qs]
        )

    rows = [(m.replace("__", "/"), cells(m)) for m in (models if models is not None else _models_in(paper, study))]
    number = table_number(paper, study)
    if models is not None:
        return PaperTable(
            title=f"Table {number}, our models".replace("Table , ", ""),
            caption="ours",
            study=study,
            columns=["α query"] + qs + qs,
            rows=rows,
            groups=[("", 1), ("r with % male", queries), ("r with WEFAT", queries)],
        )
    index = [None] * (1 + 2 * queries)
    index[1], index[1 + queries] = ("r", "fmat~pct_male", "all"), ("r", "fmat~wefat", "all")
    what = item.lower()
    return PaperTable(
        title=f"Table {number}".strip(),
        caption="criterion",
        study=study,
        columns=["α query"] + qs + qs,
        rows=[("Overall", cells("all")), *rows, ("Mean standardized index (models × queries)", index)],
        groups=[("", 1), (f"r with % male of the {what}", queries), (f"r with WEFAT male of the {what}", queries)],
        note="Model rows are the paper's 12 BERT models; a run on other models has no number for them.",
    )


def table_regression(study: str, paper: pd.DataFrame | None = None) -> PaperTable:
    """Table 5 (1C): the logit of the male percentage regressed on WEFAT (Model 1), FMAT
    (Model 2) and both (Model 3): b per predictor, R² per model, ΔR² of each predictor."""
    m1, m2, m3 = "logit_male~wefat", "logit_male~fmat", "logit_male~wefat+fmat"
    rows = [
        ("Intercept", [("b", f"{m}:intercept", "all") for m in (m1, m2, m3)]),
        ("WEFAT male", [("b", f"{m1}:wefat", "all"), None, ("b", f"{m3}:wefat", "all")]),
        ("FMAT male", [None, ("b", f"{m2}:fmat", "all"), ("b", f"{m3}:fmat", "all")]),
        ("R² (generalizability and criterion-related validity)", [("R2", m, "all") for m in (m1, m2, m3)]),
        ("ΔR² (incremental validity) of WEFAT", [None, None, ("R2_delta", f"{m3}:wefat", "all")]),
        ("ΔR² (incremental validity) of FMAT", [None, None, ("R2_delta", f"{m3}:fmat", "all")]),
    ]
    return PaperTable(
        title=f"Table {table_number(paper, study)}".strip() if paper is not None else "Table",
        caption="regression",
        study=study,
        columns=["Model 1", "Model 2", "Model 3"],
        rows=rows,
        groups=[("Logit of male percentage of name", 3)],
    )


#: Table 6's relations: (condition prefix, header)
RELATIONS = (
    ("like-dislike", "Attitudinal [MASK] contrast (like vs. dislike)"),
    ("notice-ignore", "Nonattitudinal [MASK] contrast (notice vs. ignore)"),
)


def table_attitude(studies: Sequence[str], titles: Mapping[str, str] | None = None) -> PaperTable:
    """Table 6 (2A-2D): one row per study, d of the personal and the societal perceiver and
    their difference, for the attitudinal and the nonattitudinal relation."""
    titles = titles or {}
    parts = ("personal", "societal", "personal-societal")
    rows = [
        (f"Study {s}: {titles.get(s, '')}".rstrip(": "), [("d", f"{rel}:{p}", "all") for rel, _ in RELATIONS for p in parts])
        for s in studies
    ]
    return PaperTable(
        title="Table 6",
        caption="attitude",
        columns=["Personal", "Societal", "Difference (personal – societal)"] * 2,
        rows=rows,
        groups=[(h, 3) for _, h in RELATIONS],
    )


def table_stereotype(study: str, paper: pd.DataFrame, labels: Mapping[str, str] | None = None) -> PaperTable:
    """Table 7 (3A-3D): the overall d, then the d of each attribute pair (3A, 3D) or
    stereotype form (3B, 3C), in the paper file's order."""
    labels = labels or {}
    conds = paper.loc[(paper["study"] == study) & (paper["statistic"] == "d"), "condition"].astype(str)
    parts = [c for c in dict.fromkeys(conds) if c != "all" and not c.startswith("ref:") and "*" not in c]
    rows = [("Overall", [("d", "all", "all")])] + [(labels.get(c, c), [("d", c, "all")]) for c in parts]
    return PaperTable(title="Table 7", caption="stereotype", columns=["FMAT d"], rows=rows, study=study)


def table_change(study: str) -> PaperTable:
    """Study 4 (no table in the paper): the statistics its text prints, one row each."""
    rows = [
        ("Change per century, b (LMM)", [("b", "year", "all")]),
        ("Standardized β", [("beta", "year", "all")]),
        ("R² marginal", [("R2m", "year", "all")]),
        ("d 2000 vs. 1900", [("d", "2000vs1900", "all")]),
        ("d 1900 vs. 1800", [("d", "1900vs1800", "all")]),
    ]
    return PaperTable(
        title="Study 4 statistics",
        caption="change",
        study=study,
        columns=["value"],
        rows=rows,
    )


def paper_table(
    study: str,
    paper: pd.DataFrame,
    titles: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    item: str = "item",
) -> PaperTable | None:
    """The paper's layout of a study's table, chosen by the paper's table that prints the study
    (:func:`table_number`, from the paper file's ``source``); Study 4's statistics, which the
    paper prints in its text only, where the paper prints a slope on year; None for a study the
    paper prints no table of (a study of one's own)."""
    layouts = {
        "3": lambda: table_criterion(study, paper, item=item),
        "4": lambda: table_criterion(study, paper, item=item),
        "5": lambda: table_regression(study, paper),
        "6": lambda: table_attitude([study], titles),
        "7": lambda: table_stereotype(study, paper, labels),
    }
    make = layouts.get(table_number(paper, study))
    if make is not None:
        return make()
    mine = paper[paper["study"] == study]
    return table_change(study) if ((mine["statistic"] == "b") & (mine["condition"] == "year")).any() else None


def _index(rep: pd.DataFrame) -> dict[Key, dict]:
    return {(str(r["statistic"]), str(r["condition"]), str(r["model"])): r for r in rep.to_dict("records")}


def _cell_text(r: Mapping | None) -> dict | None:
    """What a cell shows, as text (None for an empty cell)."""
    if r is None:
        return None
    if r["verdict"] == "ours only":
        return {"ours_only": True, "ours": ours_text(r)}
    return {"ours_only": False, **_texts(r), "tip": f"{r['verdict']}: {r['reason']}" if r.get("reason") else str(r["verdict"])}


def table_cells(table: PaperTable, rep: pd.DataFrame, study: str | None = None, legend: bool = True) -> dict:
    """The table as the data of the template ``paper_table.html.j2``: each cell the paper's number
    (top) and ours (bottom), coloured by verdict. ``rep``: the replication rows (of ``study`` when
    given; all when the table spans studies, its row labels starting with "Study <id>")."""
    rows = []
    for label, keys in table.rows:
        s = study or (label.split(":")[0].replace("Study ", "").strip())
        idx = _index(rep[rep["study"] == s]) if "study" in rep.columns else _index(rep)
        rows.append({"label": label, "cells": [_cell_text(idx.get(k) if k else None) for k in keys]})
    groups = table.groups if table.groups and any(g for g, _ in table.groups) else []
    return {**vars(table), "groups": groups, "rows": rows, "legend": legend}  # title, caption, columns, note as they are


def ours_only(stats: pd.DataFrame) -> pd.DataFrame:
    """Our results rows shaped like replication rows with no paper number (verdict "ours
    only"), for tables of numbers the paper does not print."""
    out = stats[["study", "statistic", "condition", "model", "value", "p"]].rename(columns={"value": "ours_value", "p": "ours_p"})
    return out.assign(n_matched=1, verdict="ours only", reason="the paper prints no number for this")


def other_rows(rep: pd.DataFrame, tables: Iterable[PaperTable]) -> pd.DataFrame:
    """The replication rows no table shows (printed in the text), in the paper file's order."""
    shown: set[Key] = set().union(*(t.keys() for t in tables))
    keys = list(zip(rep["statistic"].astype(str), rep["condition"].astype(str), rep["model"].astype(str)))
    return rep[[k not in shown for k in keys]]


def calibrated_text(r: Mapping) -> str:
    """The verdict a row gets under the calibrated inference (ours, docs/calibration.md) and its
    p, e.g. ``"not replicated (p = .21)"``; empty where the analysis has no calibrated variant."""
    verdict = str(r.get("verdict_calibrated") or "")
    if not verdict or verdict == "nan":
        return ""
    p = r.get("calibrated_p")
    return verdict if missing(p) else f"{verdict} ({p_text(p)})"


def _texts(r: Mapping) -> dict:
    """A replication row's paper and our numbers, its verdict (and CSS class), its calibrated verdict, as text."""
    v = r["verdict"]
    return dict(paper=paper_text(r), ours=ours_text(r), verdict=v, calibrated=calibrated_text(r), klass=VERDICT_CLASS.get(v, ""))


def text_rows(rows: pd.DataFrame) -> list[dict]:
    """The numbers printed in the text as the data of the template ``text_numbers.html.j2`` (a
    short table): what, paper, ours, verdict with its reason, the calibrated verdict."""
    lines = []
    for r in rows.to_dict("records"):
        what = STAT_NAMES.get(r["statistic"], r["statistic"])
        cond = "" if r["condition"] in ("all", "") else f" ({r['condition']})"
        model = {"all": "", "": "", "*": ", range over the models"}.get(r["model"], f", {r['model']}")
        lines.append({"what": what + cond + model, **_texts(r), "reason": str(r.get("reason") or "")})
    return lines


#: the paper's headline claims (study, statistic, condition, model, claim): data about the paper
HEADLINES_FILE = Path(__file__).resolve().parents[1] / "data" / "paper_headlines.tsv"


@lru_cache(maxsize=1)
def headlines() -> pd.DataFrame:
    """The paper's headline claims per study (:data:`HEADLINES_FILE`), in the file's order."""
    return pd.read_csv(HEADLINES_FILE, sep="\t", comment="#", dtype=str, keep_default_na=False)


def headline_lines(study: str, rep: pd.DataFrame) -> list[dict]:
    """One line per headline claim of the study: claim, statistic, paper's and our text, verdict and its class."""
    idx = _index(rep[rep["study"] == study]) if len(rep) else {}
    claims = headlines()
    claims = claims.loc[claims["study"] == study, ["statistic", "condition", "model", "claim"]]
    return [
        {"claim": claim, "statistic": STAT_NAMES.get(stat, stat), **_texts(r), "reason": r.get("reason") or ""}
        for stat, cond, model, claim in claims.itertuples(index=False)
        if (r := idx.get((stat, cond, model))) is not None
    ]


def headline_rows(studies: Sequence[str], rep: pd.DataFrame) -> list[dict]:
    """The overview's table of every study's headline claims (study, claim, paper, ours, verdict)
    as the data of the template ``headlines.html.j2``."""
    return [{**h, "study": s} for s in studies for h in headline_lines(s, rep)]


def verdict_box(study: str, rep: pd.DataFrame, rule_doc: str = "docs/reports.md", rule_href: str = "") -> dict:
    """The box a study page opens with, as the data of the template ``verdict_box.html.j2``: the
    verdict counts (none where the paper prints no number for the study), the rule (``rule_href``:
    where ``rule_doc`` is, a link; plain text without it), one line per headline claim."""
    rows = rep[rep["study"] == study] if len(rep) else rep
    if not len(rows):
        return {"counts": []}
    c = summarise(rows).iloc[0]
    counts = [{"klass": VERDICT_CLASS[v], "n": int(c[v]), "verdict": v} for v in VERDICTS]
    lines = headline_lines(study, rep)
    return dict(counts=counts, total=int(c["total"]), study=study, rule_doc=rule_doc, rule_href=rule_href, lines=lines)


def csv_download(df: pd.DataFrame, filename: str) -> dict:
    """A download of ``df`` as CSV in a data URI (the page stays one file), as the data of the
    template ``csv_link.html.j2``: its filename, the base64 data and its number of rows."""
    data = base64.b64encode(df.to_csv(index=False).encode("utf-8")).decode("ascii")
    return {"filename": filename, "data": data, "rows": len(df)}
