"""One self-contained HTML page for one's own study (``fmat study ... --report``).

The page shows what ``fmat study`` computed for a study file: its title and description, the
design (templates, the MASK/TARGET/ATTRIB groups and their words), the models, the LPRs (mean
per model and per word, and a figure), the reliability (ICC among the models, alpha among the
items) and every statistic in the :mod:`fmat.results` shape. It is titled with the study's own
title and says nothing about the paper: the replication's pages (``fmat_replication.pages``)
are the paper's. One Jinja2 template (``fmat/templates/study_page/page.html.j2``), every value
escaped; figures are PNGs inside the file; nothing is fetched when it is opened.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import pandas as pd

from . import __version__
from .io import atomic_path
from .reliability import with_item_keys

TEMPLATES = Path(__file__).with_name("templates") / "study_page"
SLOT_WORDS = (("MASK", "M_word"), ("TARGET", "T_word"), ("ATTRIB", "A_word"))


def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def _table(df: pd.DataFrame, digits: int = 3) -> dict:
    """A table for the template: column names and rows of text (numbers rounded)."""

    def cell(v) -> str:
        if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)):
            return "NA"
        if isinstance(v, float):
            return f"{v:.{digits}f}"
        return str(v)

    return {
        "columns": [str(c) for c in df.columns],
        "rows": [[cell(v) for v in row] for row in df.itertuples(index=False, name=None)],
    }


def design(queries: pd.DataFrame) -> dict:
    """The templates and, per slot, each group's words (in order of first appearance)."""
    slots = []
    for slot, word in SLOT_WORDS:
        if slot not in queries.columns:
            continue
        groups = []
        for g, d in queries.groupby(slot, observed=True, sort=False):
            groups.append({"name": str(g), "words": list(dict.fromkeys(d[word].astype(str)))})
        slots.append({"slot": slot, "groups": groups})
    return {
        "templates": list(dict.fromkeys(queries["query"].astype(str))),
        "slots": slots,
        "n_rows": len(queries),
        "type": queries.attrs.get("type", ""),
    }


def lpr_tables(lpr: pd.DataFrame) -> list[dict]:
    """Mean LPR per model and per word of each slot that varies (T_word, A_word), and per template."""
    out = []
    value = pd.to_numeric(lpr["LPR"], errors="coerce")
    d = lpr.assign(LPR=value)
    for col, label in (("query", "template"), ("T_word", "TARGET word"), ("A_word", "ATTRIB word")):
        if col not in d.columns or d[col].nunique() < 1:
            continue
        wide = (
            d.groupby([col, "model"], observed=True, sort=False)["LPR"].mean().unstack("model")
            if "model" in d.columns
            else d.groupby(col, observed=True, sort=False)["LPR"].mean().to_frame()
        )
        wide["mean"] = wide.mean(axis=1)
        t = wide.reset_index().rename(columns={col: label})
        out.append({"caption": f"Mean LPR per {label} and model", **_table(t)})
    return out


def lpr_figure(lpr: pd.DataFrame) -> str | None:
    """A PNG (data: URI): each model's LPRs by word (dots) and their mean (bar), or None."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    col = next((c for c in ("T_word", "A_word", "query") if c in lpr.columns), None)
    if col is None:
        return None
    d = lpr.assign(LPR=pd.to_numeric(lpr["LPR"], errors="coerce")).dropna(subset=["LPR"])
    if d.empty:
        return None
    words = list(dict.fromkeys(d[col].astype(str)))[:40]
    models = list(dict.fromkeys(d["model"].astype(str))) if "model" in d.columns else ["all"]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(words) + 2), 3.6), dpi=100)
    width = 0.8 / max(1, len(models))
    for k, m in enumerate(models):
        sub = d[d["model"].astype(str) == m] if "model" in d.columns else d
        means = sub.groupby(sub[col].astype(str))["LPR"].mean().reindex(words)
        x = [i + (k - (len(models) - 1) / 2) * width for i in range(len(words))]
        ax.bar(x, means.to_numpy(), width=width * 0.9, label=m)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(words)))
    ax.set_xticklabels(words, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("mean LPR")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def render_study_page(
    study: Any, queries: pd.DataFrame, lpr: pd.DataFrame, stats: pd.DataFrame, models: list[str] | None = None
) -> str:
    """The page's HTML. ``study``: a :class:`fmat.study.Study` (title, id, source, notes, lpr,
    reliability, score blocks); ``stats``: the :mod:`fmat.results` rows of its reliability."""

    def opt(key):
        value = getattr(study, key, None)
        return ", ".join(f"{k}: {v}" for k, v in dict(value or {}).items())

    lpr = with_item_keys(lpr, getattr(study, "items", None))  # "a nurse" and "nurse": one item, as alpha sees it
    rel = stats.copy()
    if "n" in rel.columns:
        rel["n"] = pd.to_numeric(rel["n"], errors="coerce").astype("Int64")
    keep = [c for c in ("statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n") if c in rel.columns]
    context = {
        "title": str(getattr(study, "title", "") or getattr(study, "id", "")),
        "sid": str(getattr(study, "id", "")),
        "source": str(getattr(study, "source", "") or ""),
        "notes": str(getattr(study, "notes", "") or ""),
        "file": str(getattr(study, "path", "") or ""),
        "options": [("lpr", opt("lpr")), ("reliability", opt("reliability")), ("score", opt("score"))],
        "models": models or (list(dict.fromkeys(lpr["model"].astype(str))) if "model" in lpr.columns else []),
        "design": design(queries),
        "lpr_tables": lpr_tables(lpr),
        "figure": lpr_figure(lpr),
        "reliability": _table(rel[keep]) if len(rel) else None,
        "generated": f"fmat {_version()}",
    }
    return _environment().get_template("page.html.j2").render(**context)


def write_study_page(
    path: str | os.PathLike,
    study: Any,
    queries: pd.DataFrame,
    lpr: pd.DataFrame,
    stats: pd.DataFrame,
    models: list[str] | None = None,
) -> Path:
    """Write :func:`render_study_page` to ``path`` atomically; returns the path."""

    path = Path(path)
    text = render_study_page(study, queries, lpr, stats, models)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return path


def _version() -> str:

    return __version__
