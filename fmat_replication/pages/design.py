"""A study file's design as data, for the report's Design section: :func:`design_data` gives the
query templates (:func:`template_rows`, their word lists as :func:`word_spec` data) and what the
``score``, ``lpr``, ``reliability`` and ``analysis`` options ask for, as names and flags; the
template ``templates/design.html.j2`` says it in words, not as YAML.
"""

from __future__ import annotations

from typing import Any, Mapping

from fmat.validate import as_written


def _shown(words) -> list[str]:
    """Words as the study file writes them (a number keeps its text: ``010``, not ``8``)."""
    return [str(as_written(w.get("phrase", w))) if isinstance(w, dict) else str(as_written(w)) for w in words]


def word_spec(spec: Any, first: int = 8) -> dict:
    """A word-list spec as data (the macro ``word_list`` of ``design.html.j2`` writes it): ``kind``
    ``none``, ``range`` (``start``/``end`` of a two-number range, else its ``value``), ``criterion``
    (its ``table`` and ``column``), ``groups`` (each group's ``name`` and its ``words``, a spec),
    ``words`` (their ``count``, the first ``first`` of them, whether there are ``more``) or ``text``."""
    if spec in (None, "", {}):
        return {"kind": "none"}
    if isinstance(spec, dict) and "range" in spec:
        r = spec["range"]
        if isinstance(r, (list, tuple)) and len(r) == 2:
            return {"kind": "range", "start": str(r[0]), "end": str(r[1])}
        return {"kind": "range", "value": str(r)}
    if isinstance(spec, dict) and "criterion" in spec:
        return {"kind": "criterion", "table": str(spec["criterion"]), "column": str(spec["column"]) if spec.get("column") else ""}
    if isinstance(spec, dict):
        return {"kind": "groups", "groups": [{"name": str(g), "words": _words(w, first)} for g, w in spec.items()]}
    if isinstance(spec, (list, tuple)):
        return _words(spec, first)
    return {"kind": "text", "text": str(spec)}


def _words(words, first: int) -> dict:
    """A group's words (a list, one word, or a nested spec) as :func:`word_spec` data."""
    if isinstance(words, dict):
        return word_spec(words, first)
    ws = _shown(words if isinstance(words, (list, tuple)) else [words])
    return {"kind": "words", "count": len(ws), "words": ws[:first], "more": len(ws) > first}


def template_rows(raw: Mapping) -> list[dict]:
    """One record per query template: its ``query`` and its ``mask``, ``target`` and ``attrib``
    word lists (:func:`word_spec`)."""
    slots = ("MASK", "TARGET", "ATTRIB")
    return [
        {"query": str(b.get("query", "")), **{s.lower(): word_spec(b.get(s)) for s in slots}} for b in raw.get("queries") or []
    ]


def _groups(raw: Mapping, slot: str) -> list[str]:
    for b in raw.get("queries") or []:
        spec = b.get(slot)
        if isinstance(spec, dict) and "range" not in spec and "criterion" not in spec:
            return [str(g) for g in spec]
    return []


def lpr_option(lpr: Mapping, raw: Mapping | None = None) -> dict:
    """The ``lpr`` option as data (the macro ``lpr_words``): whether the [MASK] options are
    ``paired``, the first two ``mask`` groups' names, and for TARGET and ATTRIB where the option
    names them and the study file has groups (``contrasts``): the ``slot``, its first two
    ``groups``, whether they are ``paired``."""
    raw = raw or {}
    contrasts = [
        {"slot": slot, "groups": _groups(raw, slot)[:2], "paired": bool(lpr[key])}
        for slot, key in (("TARGET", "target_pair"), ("ATTRIB", "attrib_pair"))
        if key in lpr and _groups(raw, slot)
    ]
    return {"paired": bool(lpr.get("mask_pair", True)), "mask": _groups(raw, "MASK")[:2], "contrasts": contrasts}


def reliability_option(rel: Mapping) -> dict:
    """The ``reliability`` option as data (the macro ``reliability_words``): whether it is
    ``given``, its ``item`` (None when not named) and the columns it splits ``by``."""
    by = rel.get("by") or []
    by = [by] if isinstance(by, str) else list(by)
    return {"given": bool(rel), "item": str(rel["item"]) if "item" in rel else None, "by": [str(b) for b in by]}


def score_option(score: Mapping) -> dict:
    """The ``score`` option as data (the macro ``score_words``): its ``method``, whether words not
    in a vocabulary are added (``add_tokens``) or, with ``na_out`` false, ``kept``."""
    add = bool(score.get("add_tokens"))
    return {"method": str(score.get("method", "fmat")), "add_tokens": add, "kept": not (score.get("na_out", True) or add)}


def _option_value(value) -> dict:
    if isinstance(value, dict):
        return {
            "kind": "mapping",
            "entries": [
                {"key": str(k), "terms": [str(x) for x in v] if isinstance(v, (list, tuple)) else [str(v)]}
                for k, v in value.items()
            ],
        }
    if isinstance(value, (list, tuple)) and all(isinstance(v, (list, tuple)) for v in value):
        return {"kind": "pairs", "pairs": [[str(x) for x in v] for v in value]}  # men vs. women; ...
    if isinstance(value, (list, tuple)):
        return {"kind": "list", "terms": [str(v) for v in value]}
    return {"kind": "text", "text": str(value)}


def analysis_option(analysis: Mapping) -> dict:
    """The analysis as data (the macro ``analysis_rows``): its ``name`` (None for no analysis) and
    each of its ``options``: the ``key`` and the ``value`` (``mapping``: entries of a key and its
    terms; ``pairs``; ``list``: terms; ``text``)."""
    if not analysis:
        return {"name": None, "options": []}
    options = [{"key": str(k), "value": _option_value(v)} for k, v in (analysis.get("options") or {}).items()]
    return {"name": str(analysis.get("name", "")), "options": options}


def design_data(raw: Mapping) -> dict:
    """The study file's design as the data of the template ``design.html.j2`` (which writes every
    word): the query ``templates``, then the ``score``, ``lpr``, ``reliability`` and ``analysis``
    options."""
    return {
        "templates": template_rows(raw),
        "score": score_option(raw.get("score") or {}),
        "lpr": lpr_option(raw.get("lpr") or {}, raw),
        "reliability": reliability_option(raw.get("reliability") or {}),
        "analysis": analysis_option(raw.get("analysis") or {}),
    }


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
