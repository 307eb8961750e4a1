"""One self-contained HTML page for one's own study (``fmat study ... --report``).

What ``fmat study`` computed for a study file: its design, the models, the effect of its
analysis (over all models, per model, per item), the LPRs (tables and a figure) and the
reliability, titled with the study's own title. One Jinja2 template
(``fmat/templates/study_page/page.html.j2``); figures are PNGs inside the file.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__, analyses
from .formatting import cell
from .html import Page
from .io import atomic_path
from .reliability import with_item_keys
from .results import _shown_reliability, effect_rows, p_text, per_model_effects

SLOT_WORDS = (("MASK", "M_word"), ("TARGET", "T_word"), ("ATTRIB", "A_word"))
_SLOT_OF = {word: slot for slot, word in SLOT_WORDS}


def _table(df: pd.DataFrame) -> dict:
    """A table for the template: column names and rows of text (:func:`fmat.formatting.cell`: p
    columns as p, counts whole, other numbers at 3 decimals, ``NA`` when missing)."""
    columns = [str(c) for c in df.columns]
    return {
        "columns": columns,
        "rows": [[cell(c, v, na="NA") for c, v in zip(columns, row)] for row in df.itertuples(index=False, name=None)],
    }


def design(queries: pd.DataFrame) -> dict:
    """The templates and, per slot, each group's words (in order of first appearance)."""
    slots = []
    for slot, word in SLOT_WORDS:
        if slot in queries.columns:
            groups = queries.groupby(slot, observed=True, sort=False)
            words = [{"name": str(g), "words": list(dict.fromkeys(d[word].astype(str)))} for g, d in groups]
            slots.append({"slot": slot, "groups": words})
    return {
        "templates": list(dict.fromkeys(queries["query"].astype(str))),
        "slots": slots,
        "n_rows": len(queries),
        "type": queries.attrs.get("type", ""),
    }


#: the lpr option that contrasts each slot's two groups, and its default
PAIRING = {"MASK": "mask_pair", "TARGET": "target_pair", "ATTRIB": "attrib_pair"}


def _groups(queries: pd.DataFrame, slot: str) -> list[str]:
    return [str(g) for g in dict.fromkeys(queries[slot].astype(str))] if slot in queries.columns else []


def lpr_definition(queries: pd.DataFrame, lpr_options: dict | None) -> str:
    """The LPR as the study file's ``lpr`` options define it, in words (:func:`fmat.lpr.summary`:
    each contrast is the j-th word of the first group minus the j-th of the second).

    Examples
    --------
    >>> import pandas as pd
    >>> q = pd.DataFrame({"query": ["x"] * 4, "MASK": ["Male", "Male", "Female", "Female"],
    ...                   "M_word": ["men", "men", "women", "women"],
    ...                   "ATTRIB": ["Warm", "Cold"] * 2, "A_word": ["kind", "cold"] * 2})
    >>> print(lpr_definition(q, {"mask_pair": False, "attrib_pair": True}))  # doctest: +NORMALIZE_WHITESPACE
    LPR = ln P([MASK] word | the j-th ATTRIB word of Warm) − ln P(same | the j-th of Cold), for each
    [MASK] word. Not contrasted in the LPR (mask_pair: false): the MASK groups (Male, Female) are
    separate rows, kept apart in every table below and compared by the analysis.
    """
    opts = dict(lpr_options or {})
    groups = {slot: _groups(queries, slot) for slot in PAIRING if len(_groups(queries, slot)) >= 2}
    paired = [slot for slot in groups if opts.get(PAIRING[slot], True)]
    apart = [slot for slot in groups if slot not in paired]
    if "MASK" in paired:
        g = groups["MASK"]
        text = f"ln P(the j-th [MASK] word of {g[0]}) − ln P(the j-th of {g[1]})"
    else:
        text = "ln P([MASK] word)"
    for slot in (s for s in paired if s != "MASK"):
        g = groups[slot]
        if text.startswith("ln P([MASK] word)") and "|" not in text:
            text = f"ln P([MASK] word | the j-th {slot} word of {g[0]}) − ln P(same | the j-th of {g[1]})"
        else:
            text = f"[{text}] with the j-th {slot} word of {g[0]} − the same with the j-th of {g[1]}"
    out = f"LPR = {text}" + (", for each [MASK] word." if "MASK" not in paired else ".")
    for slot in apart:
        why = f"{PAIRING[slot]}: false" if not opts.get(PAIRING[slot], True) else "not paired"
        out += (
            f" Not contrasted in the LPR ({why}): the {slot} groups ({', '.join(groups[slot])}) are separate "
            "rows, kept apart in every table below and compared by the analysis."
        )
    return out


def _apart(lpr: pd.DataFrame, compared=()) -> list[str]:
    """The group columns of the LPR table whose groups were not contrasted (two or more values),
    then the ``compared`` columns (:func:`compared_columns`: e.g. an attitude study's relations)."""
    slots = [slot for slot in PAIRING if slot in lpr.columns and lpr[slot].astype(str).nunique() >= 2]
    return slots + [c for c in compared if c in lpr.columns and c not in slots]


def compared_columns(lpr: pd.DataFrame, keys=()) -> list[str]:
    """The LPR columns, beside the uncontrasted groups, whose values the analysis compares (never
    averaged together on the page): the paired [MASK] words (each pair a relation, e.g. like -
    dislike) where the analysis keys its observations by them before the item (``keys``).

    Examples
    --------
    >>> import pandas as pd
    >>> lpr = pd.DataFrame({"M_word": ["like - dislike", "notice - ignore"], "T_word": ["rose", "rose"], "LPR": [1.0, 0.0]})
    >>> compared_columns(lpr, ["query", "M_word", "T_word"])
    ['M_word']
    >>> compared_columns(lpr, ["T_word"])
    []
    """
    keys = list(keys or ())
    return [c for c in keys[:-1] if c == "M_word" and c in lpr.columns and lpr[c].astype(str).nunique() >= 2]


def lpr_tables(lpr: pd.DataFrame, compared=()) -> list[dict]:
    """Mean LPR per template and per word of each slot, per model, each within the groups that
    the LPR did not contrast and the ``compared`` columns (:func:`compared_columns`)."""
    out = []
    apart = _apart(lpr, compared)
    for col, label, slot in (("query", "template", None), *((w, f"{s} word", s) for s, w in SLOT_WORDS)):
        if col not in lpr.columns or lpr[col].nunique() < 1 or (slot == "MASK" and "MASK" not in apart and col not in apart):
            continue
        keys = [g for g in apart if g != slot and g != col] + [col]
        t = _means(lpr, keys).reset_index().rename(columns={col: label})
        within = f" (within each {', '.join(g for g in keys if g != col)} group)" if len(keys) > 1 else ""
        out.append({"caption": f"Mean LPR per {label} and model{within}", **_table(t)})
    return out


def _means(lpr: pd.DataFrame, keys: list[str], in_order: bool = False) -> pd.DataFrame:
    """Mean LPR per ``keys``: a column per model (``in_order``: as they first appear) and their mean."""
    d = lpr.assign(LPR=pd.to_numeric(lpr["LPR"], errors="coerce"))
    if "model" not in d.columns:
        wide = d.groupby(keys, observed=True, sort=False)["LPR"].mean().to_frame()
    else:
        wide = d.groupby(keys + ["model"], observed=True, sort=False)["LPR"].mean().unstack("model")
        if in_order:
            wide = wide[[m for m in dict.fromkeys(d["model"]) if m in wide.columns]]
    wide["mean"] = wide.mean(axis=1)
    return wide


def item_table(lpr: pd.DataFrame, keys) -> dict | None:
    """Mean LPR per item and model (and over the models), the item keyed by ``keys``
    (:func:`fmat.analyses.item_columns`, the last the item) within each group that the LPR did
    not contrast; None when no key column is in the table.

    Examples
    --------
    >>> import pandas as pd
    >>> lpr = pd.DataFrame({"model": ["m1", "m2"] * 4, "query": ["q1"] * 4 + ["q2"] * 4,
    ...                     "MASK": ["Male", "Male", "Female", "Female"] * 2,
    ...                     "A_word": ["kind - rude"] * 8, "LPR": [1.0, 2.0, -1.0, -2.0] * 2})
    >>> t = item_table(lpr, ["A_word"])
    >>> t["columns"]
    ['MASK', 'A_word', 'm1', 'm2', 'mean']
    >>> t["rows"]
    [['Male', 'kind - rude', '1.000', '2.000', '1.500'], ['Female', 'kind - rude', '-1.000', '-2.000', '-1.500']]
    """
    keys = [k for k in dict.fromkeys(keys or ()) if k in lpr.columns]
    if not keys:
        return None
    item_slot = _SLOT_OF.get(keys[-1])
    groups = [g for g in _apart(lpr) if g not in keys and g != item_slot] + keys
    wide = _means(lpr, groups, in_order=True)
    wide.columns = [str(c) for c in wide.columns]
    t = _table(wide.reset_index())
    within = [g for g in groups if g not in keys]
    caption = f"Mean LPR per item ({', '.join(keys)}) and model" + (f", within each {', '.join(within)} group" if within else "")
    return {"caption": caption, "keys": keys, **t}


def _pyplot():
    """matplotlib.pyplot on the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    _pyplot().close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def lpr_figure(lpr: pd.DataFrame, compared=()) -> str | None:
    """A PNG (data: URI), or None: each model's mean LPR by word (a word of each group that the LPR
    did not contrast is its own bar), one panel per value of the ``compared`` columns."""
    plt = _pyplot()
    col = next((c for c in ("T_word", "A_word", "query") if c in lpr.columns), None)
    if col is None:
        return None
    d = lpr.assign(LPR=pd.to_numeric(lpr["LPR"], errors="coerce")).dropna(subset=["LPR"])
    if d.empty:
        return None
    panel_cols = [c for c in compared if c in d.columns and c != col]
    apart = [g for g in _apart(d) if (col, g) not in (("T_word", "TARGET"), ("A_word", "ATTRIB")) and g not in panel_cols]
    key = d[col].astype(str)
    for g in apart:
        key = key + " (" + d[g].astype(str) + ")"
    panel = d[panel_cols].astype(str).agg(" / ".join, axis=1) if panel_cols else pd.Series("", index=d.index)
    d = d.assign(_key=key, _panel=panel)
    panels = list(dict.fromkeys(d["_panel"]))[:6]
    words = list(dict.fromkeys(d["_key"]))[:60]
    models = list(dict.fromkeys(d["model"].astype(str))) if "model" in d.columns else ["all"]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(max(5.0, 0.35 * len(words) + 2), 3.6 * len(panels)), dpi=100, squeeze=False, sharey=True
    )
    width = 0.8 / max(1, len(models))
    for ax, name in zip(axes[:, 0], panels):
        part = d[d["_panel"] == name]
        for k, m in enumerate(models):
            sub = part[part["model"].astype(str) == m] if "model" in part.columns else part
            means = sub.groupby("_key")["LPR"].mean().reindex(words)
            x = [i + (k - (len(models) - 1) / 2) * width for i in range(len(words))]
            ax.bar(x, means.to_numpy(), width=width * 0.9, label=m)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(words)), words, rotation=60, ha="right", fontsize=8)
        ax.set_ylabel("mean LPR")
        if name:
            ax.set_title(f"{', '.join(panel_cols)}: {name}", fontsize=9)
    axes[0, 0].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return _png(fig)


def trend_figure(yearly: pd.DataFrame, stats: pd.DataFrame | None = None, year_scale: float = 100) -> str | None:
    """A PNG (data: URI) of a trend study's effect, or None: each model's yearly d (``yearly``:
    ``model, year, d``) with its fitted OLS line, and the slope b per ``year_scale`` years."""
    plt = _pyplot()
    if not isinstance(yearly, pd.DataFrame) or not {"model", "year", "d"} <= set(yearly.columns) or yearly.empty:
        return None
    y = yearly.assign(year=pd.to_numeric(yearly["year"], errors="coerce"), d=pd.to_numeric(yearly["d"], errors="coerce"))
    y = y.dropna(subset=["year", "d"])
    if y.empty:
        return None
    b = {}
    if stats is not None and len(stats):
        rows = stats[(stats["statistic"].astype(str) == "b") & (stats["condition"].astype(str) == "year")]
        b = {str(r.model): float(r.value) for r in rows.itertuples()}
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=100)
    for m, g in y.groupby(y["model"].astype(str), sort=False):
        g = g.sort_values("year")
        pts = ax.plot(g["year"], g["d"], marker=".", ms=3, lw=0.6, alpha=0.6)[0]
        if len(g) >= 2 and g["year"].nunique() >= 2:
            slope, icpt = np.polyfit(g["year"].to_numpy(float), g["d"].to_numpy(float), 1)
            xs = np.array([g["year"].min(), g["year"].max()], dtype=float)
            shown = b.get(m, slope * year_scale)
            ax.plot(xs, icpt + slope * xs, color=pts.get_color(), lw=2, label=f"{m}: b = {shown:.3f}")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("year")
    ax.set_ylabel("effect size d (mean LPR / sigma)")
    overall = f"; all models (LMM): b = {b['all']:.3f} per {year_scale:g} years" if "all" in b else ""
    ax.set_title(f"The change over time: each model's yearly d and its fitted line{overall}", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title=f"b per {year_scale:g} years")
    fig.tight_layout()
    return _png(fig)


def reliability_view(rel: pd.DataFrame) -> pd.DataFrame:
    """The reliability rows as the page shows them: a value that is undefined or meaningless
    (:func:`fmat.results.reliability_note`) as NA with the reason in column ``note``.

    Examples
    --------
    >>> import pandas as pd
    >>> rel = pd.DataFrame({"statistic": ["ICC_average", "alpha"], "condition": "all", "model": "all",
    ...                     "value": [0.9, -4.2], "p": [1e-9, float("nan")], "n": [40, 3]})
    >>> reliability_view(rel)[["statistic", "value", "p", "note"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['ICC_average', '0.900', '< .001', ''],
     ['alpha', 'NA', 'NA', 'NA: alpha over 3 rows (fewer than 4): each covariance of two items rests on 3 points']]
    """
    out, notes = _shown_reliability(rel, ("statistic", "condition", "model", "value", "ci_low", "ci_high", "p", "n"))
    if "p" in out.columns:
        out["p"] = ["NA" if note else p_text(v) for v, note in zip(rel["p"], notes)]
    if "n" in out.columns:
        out["n"] = ["NA" if pd.isna(v) else str(int(float(v))) for v in rel["n"]]
    return out.assign(note=notes)


def effect_section(stats: pd.DataFrame, figures: dict | None, status: dict | None, items: dict | None = None) -> dict:
    """The analysis' part of the page: its name and notes, the effects over all models (d, b,
    beta or r with CI and p), per model, and its tables (per cell, per item; at most 60 rows each)."""
    status = dict(status or {})
    eff = effect_rows(stats)
    per_model = per_model_effects(stats)
    tables = [
        {"caption": f"{name} ({len(t)} rows{', first 60' if len(t) > 60 else ''})", **_table(t.head(60))}
        for name, t in dict(figures or {}).items()
        if name != "crossed" and isinstance(t, pd.DataFrame) and len(t)  # crossed: concept_section
    ]
    return {
        "name": str(status.get("analysis") or ""),
        "implemented": bool(status.get("implemented")),
        "run": bool(status.get("run", True)),
        "notes": [str(n) for n in status.get("notes", [])],
        "effect": _table(eff) if len(eff) else None,
        "per_model": _table(per_model) if len(per_model) else None,
        "tables": tables,
        "items": items,
    }


def concept_section(stats: pd.DataFrame, figures: dict | None) -> dict | None:
    """The paper's inference beside the concept-level one (:func:`fmat.analyses.concept_side_by_side`):
    the rows with their verdicts, and the counts; None where the analysis has no crossed variant."""
    crossed = dict(figures or {}).get("crossed")
    if crossed is None:
        return None
    both = analyses.concept_side_by_side(stats, crossed)
    counts = {v: int((both["verdict"] == v).sum()) for v in analyses.CONCEPT_VERDICTS}
    counts["paper_significant"] = counts["holds"] + counts["lost"]
    counts["total"] = len(both)
    rows = [
        {
            "statistic": str(r.statistic),
            "condition": str(r.condition),
            "value": r.value,
            "paper": (r.ci_low, r.ci_high, r.p),
            "crossed": (r.ci_low_crossed, r.ci_high_crossed, r.p_crossed),
            "verdict": str(r.verdict),
        }
        for r in both.itertuples(index=False)
    ]
    return {"rows": rows, "counts": counts}


def render_study_page(
    study: Any,
    queries: pd.DataFrame,
    lpr: pd.DataFrame,
    stats: pd.DataFrame,
    models: list[str] | None = None,
    figures: dict | None = None,
    status: dict | None = None,
) -> str:
    """The page's HTML: ``study`` a :class:`fmat.study.Study`, ``stats`` its :mod:`fmat.results`
    rows, ``figures``/``status`` the analysis' (:func:`fmat.analyses.analysis_stage`)."""

    def opt(key):
        value = getattr(study, key, None)
        return ", ".join(f"{k}: {v}" for k, v in dict(value or {}).items())

    lpr = with_item_keys(lpr, getattr(study, "items", None))  # "a nurse" and "nurse": one item, as alpha sees it
    block = getattr(study, "analysis", None)
    block = block if isinstance(block, dict) else {}  # the analysis the study file names; else the status'
    keys = analyses.item_columns(str(block.get("name") or dict(status or {}).get("analysis") or ""))
    compared = compared_columns(lpr, keys)
    is_rel = stats["statistic"].astype(str).str.startswith(("ICC", "alpha")) if len(stats) else pd.Series([], dtype=bool)
    rel = stats[is_rel].copy()
    year_scale = float(dict(block.get("options") or {}).get("year_scale", 100))
    context = {
        "title": str(getattr(study, "title", "") or getattr(study, "id", "")),
        "sid": str(getattr(study, "id", "")),
        "source": str(getattr(study, "source", "") or ""),
        "notes": str(getattr(study, "notes", "") or ""),
        "file": str(getattr(study, "path", "") or ""),
        "options": [("lpr", opt("lpr")), ("reliability", opt("reliability")), ("score", opt("score"))],
        "models": models or (list(dict.fromkeys(lpr["model"].astype(str))) if "model" in lpr.columns else []),
        "design": design(queries),
        "lpr_definition": lpr_definition(queries, dict(getattr(study, "lpr", None) or {})),
        "analysis": effect_section(stats, figures, status, item_table(lpr, keys)),
        "concept": concept_section(stats, figures),
        "trend": trend_figure(dict(figures or {}).get("yearly"), stats, year_scale),
        "compared": [str(c) for c in compared],
        "lpr_tables": lpr_tables(lpr, compared),
        "figure": lpr_figure(lpr, compared),
        "reliability": _table(reliability_view(rel)) if len(rel) else None,
        "generated": f"fmat {__version__}",
    }
    return Page(context["title"], "study_page/page.html.j2", context).html()


def write_study_page(
    path: str | os.PathLike,
    study: Any,
    queries: pd.DataFrame,
    lpr: pd.DataFrame,
    stats: pd.DataFrame,
    models: list[str] | None = None,
    figures: dict | None = None,
    status: dict | None = None,
) -> Path:
    """Write :func:`render_study_page` to ``path`` atomically; returns the path."""
    path = Path(path)
    text = render_study_page(study, queries, lpr, stats, models, figures, status)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return path
