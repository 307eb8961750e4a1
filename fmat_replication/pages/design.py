"""A study file's design in words, for the report's Design section.

:func:`template_rows` gives one row per query template with its [MASK] options, TARGET and
ATTRIB words and their counts; :func:`option_rows` says in words what the ``lpr``,
``reliability``, ``score`` and ``analysis`` options ask for ("LPR = log P(like) − log
P(dislike), per [MASK] pair"), not as YAML.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from fmat.validate import as_written


def _shown(words) -> list[str]:
    """Words as the study file writes them (a number keeps its text: ``010``, not ``8``)."""

    return [str(as_written(w.get("phrase", w))) if isinstance(w, dict) else str(as_written(w)) for w in words]


def word_list(spec: Any, first: int = 8) -> str:
    """A word-list spec in words: each group, its count and its first ``first`` words; a range
    or a criterion table described."""
    if spec in (None, "", {}):
        return ""
    if isinstance(spec, dict) and "range" in spec:
        r = spec["range"]
        return f"the numbers {r[0]} to {r[1]}" if isinstance(r, (list, tuple)) and len(r) == 2 else f"range {r}"
    if isinstance(spec, dict) and "criterion" in spec:
        return f"the words of the criterion table {spec['criterion']!r}" + (
            f" (column {spec['column']!r})" if spec.get("column") else ""
        )
    if isinstance(spec, dict):
        parts = []
        for group, words in spec.items():
            if isinstance(words, dict):
                parts.append(f"{group}: {word_list(words, first)}")
                continue
            ws = _shown(words if isinstance(words, (list, tuple)) else [words])
            more = ", …" if len(ws) > first else ""
            parts.append(f"{group} ({len(ws)}): {', '.join(ws[:first])}{more}")
        return "; ".join(parts)
    if isinstance(spec, (list, tuple)):
        ws = _shown(spec)
        return f"({len(ws)}): {', '.join(ws[:first])}" + (", …" if len(ws) > first else "")
    return str(spec)


def template_rows(raw: Mapping) -> pd.DataFrame:
    """One row per query template: query, [MASK] options, TARGET words, ATTRIB words (in words)."""
    rows = [
        {
            "": f"Q{i}",
            "query template": str(b.get("query", "")),
            "[MASK] options": word_list(b.get("MASK")),
            "TARGET": word_list(b.get("TARGET")),
            "ATTRIB": word_list(b.get("ATTRIB")),
        }
        for i, b in enumerate(raw.get("queries") or [], 1)
    ]
    return pd.DataFrame(rows, columns=["", "query template", "[MASK] options", "TARGET", "ATTRIB"])


def _groups(raw: Mapping, slot: str) -> list[str]:
    for b in raw.get("queries") or []:
        spec = b.get(slot)
        if isinstance(spec, dict) and "range" not in spec and "criterion" not in spec:
            return [str(g) for g in spec]
    return []


def lpr_words(lpr: Mapping, raw: Mapping | None = None) -> str:
    """The LPR option in words."""
    raw = raw or {}
    mask = _groups(raw, "MASK")
    g1, g2 = (mask + ["group 1", "group 2"])[:2] if len(mask) != 1 else (mask[0], "")
    if lpr.get("mask_pair", True):
        text = f"LPR = log P([MASK] = {g1} word) − log P([MASK] = {g2} word), per [MASK] pair"
    else:
        text = "LPR = log P([MASK] word) of each [MASK] option, not paired"
    for slot, key in (("TARGET", "target_pair"), ("ATTRIB", "attrib_pair")):
        if key in lpr and _groups(raw, slot):
            groups = " − ".join(_groups(raw, slot)[:2])
            text += (
                f"; then contrasted between the {slot} groups pair by pair ({groups})"
                if lpr[key]
                else f"; {slot} groups ({groups}) kept apart"
            )
    return text


def reliability_words(rel: Mapping) -> str:
    if not rel:
        return "ICC of the models only"
    by = rel.get("by") or []
    by = [by] if isinstance(by, str) else list(by)
    return f"ICC of the models as raters; Cronbach's α over the {rel.get('item', '?')} items" + (
        f", separately per {', '.join(map(str, by))}" if by else ""
    )


def score_words(score: Mapping) -> str:
    method = str(score.get("method", "fmat"))
    text = (
        "probability of each [MASK] option from the fill-mask head (FMAT)"
        if method == "fmat"
        else "log probability corrected for the [MASK] word's prior (LPBS)"
        if method == "lpbs"
        else method
    )
    text += "; words not in a model's vocabulary are " + (
        "added as new tokens" if score.get("add_tokens") else "left out (NA), not split"
    )
    return text if score.get("na_out", True) or score.get("add_tokens") else text + " (kept)"


def analysis_words(analysis: Mapping) -> list[tuple[str, str]]:
    """The analysis and each of its options as (option, value in words)."""
    if not analysis:
        return [("analysis", "none (reliability only)")]
    out = [("analysis", str(analysis.get("name", "")))]
    for key, value in (analysis.get("options") or {}).items():
        if isinstance(value, dict):
            text = "; ".join(f"{k}: {' vs. '.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in value.items())
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (list, tuple)) for v in value):
            text = "; ".join(" vs. ".join(map(str, v)) for v in value)  # pairs: men vs. women; ...
        elif isinstance(value, (list, tuple)):
            text = ", ".join(map(str, value))
        else:
            text = str(value)
        out.append((str(key).replace("_", " "), text))
    return out


def option_rows(raw: Mapping) -> pd.DataFrame:
    """The study file's options in words: scoring, LPR, reliability, then the analysis."""
    rows = [
        ("scoring", score_words(raw.get("score") or {})),
        ("LPR", lpr_words(raw.get("lpr") or {}, raw)),
        ("reliability", reliability_words(raw.get("reliability") or {})),
    ]
    rows += analysis_words(raw.get("analysis") or {})
    return pd.DataFrame(rows, columns=["option", "what it does"])


def rows_data(df: pd.DataFrame) -> dict:
    """``df`` as the data of the template ``design_table.html.j2``: every header and value as text."""
    return {"columns": [str(c) for c in df.columns], "rows": [[str(v) for v in r] for r in df.itertuples(index=False)]}


def pair_labels(raw: Mapping, slot: str = "ATTRIB") -> dict[str, str]:
    """``{"pair1": "a_1 – b_1", ...}`` from the first query whose ``slot`` has two word groups of
    the same length (Studies 3A and 3D name their attribute pairs so); {} otherwise."""
    for b in raw.get("queries") or []:
        spec = b.get(slot)
        if isinstance(spec, dict) and len(spec) == 2 and all(isinstance(v, (list, tuple)) for v in spec.values()):
            a, c = (_shown(v) for v in spec.values())
            if len(a) == len(c):
                return {f"pair{j}": f"{x} – {y}" for j, (x, y) in enumerate(zip(a, c), 1)}
    return {}
