"""The overview's model cards (:func:`fmat.cards.model_card`, one JSON per model written by the
rule model_card) as the data of their template."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping, Sequence


def card_texts(cards: Sequence[Mapping]) -> list[dict]:
    """The cards as the data of the template ``model_cards.html.j2`` (a div.model-card each, every value escaped)."""
    return [_card_text(c) for c in cards]


def _card_text(c: Mapping) -> dict:
    """What a card shows, as text: its model, its facts as (label, text), its probes as (query,
    fills)."""
    origin = (
        f"local, sha256 {str(c.get('sha256', ''))[:16]}…"
        if c.get("source") == "local"
        else f"{c.get('revision', '')} @ {str(c.get('commit', ''))[:12]}"
    )
    facts = [
        ("architecture", f"{c.get('architecture', '')} ({c.get('model_type', '')})"),
        ("parameters", f"{int(c.get('parameters', 0)):,}"),
        ("vocabulary", f"{int(c.get('vocabulary', 0)):,} tokens"),
        ("source", origin),
        ("created on the hub", str(c.get("created") or "not recorded")),
        ("scoring", str(c.get("scoring", ""))),
    ]
    probes = [
        {
            "query": str(p.get("query", "")),
            "fills": ", ".join(f"{f.get('token_str', '')} ({float(f.get('score', 0)):.3g})" for f in p.get("fills", [])),
        }
        for p in c.get("probes", [])
    ]
    return {"model": str(c.get("model", "")), "facts": facts, "probes": probes}


def read_cards(paths: Sequence[str | os.PathLike]) -> list[dict]:
    """The cards (``results/models/{slug}.json``, the rule's inputs), in that order."""
    return [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
