"""Model cards: what each model is and whether it works, one card per model in the overview.

:func:`model_card` loads one model (the checks of :func:`fmat.models.load_masked_lm` included)
and records what a reader needs to see at once that a model is what it claims and is not
broken: its architecture, parameters and vocabulary size, where it came from (the locked hub
commit, or ``local`` and the sha256 of its weights) and its creation date on the hub (recorded
at download), how fmat scored it (the fast path or the full head; padded or equal-length
batches: :func:`fmat.scoring.scoring_path`), and its top-5 fills of three fixed probe
sentences (:data:`PROBES`, the fill-mask pipeline as :func:`fmat.fill_mask_check`): a trained
model fills "Paris is the [MASK] of France." with "capital"; a broken one does not.
:func:`cards_html` renders the cards for the report (every value escaped).
"""
from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Mapping, Sequence

#: the fixed probe sentences of every card (one [MASK] each)
PROBES = ("Paris is the [MASK] of France.", "The doctor asked the nurse to [MASK] the patient.",
          "[MASK] is a very good idea.")

CARD_KEYS = ("model", "architecture", "model_type", "parameters", "vocabulary", "source", "revision", "commit",
             "sha256", "created", "head", "padding", "scoring", "probes")


def model_card(name: str, source: str | os.PathLike | None = None, lock_path=None, device=None,
               probes: Sequence[str] = PROBES, top: int = 5) -> dict:
    """The card of model ``name`` (loaded from ``source``, a folder, or by name from the cache).

    Keys (:data:`CARD_KEYS`): model, architecture (the transformers class), model_type,
    parameters, vocabulary (rows of the input embedding), source ("hub" or "local"), revision,
    commit (hub: the locked commit; local: "local"), sha256 (of the weights file loaded),
    created (the hub creation date recorded at download, or ""), head ("fast"/"full"), padding
    ("padded"/"equal-length"), scoring (in words), probes (``[{query, fills: [{token_str, score}]}]``).
    """
    from .lockfile import sha256_file
    from .models import created_date, load_masked_lm, read_lock, top_fills, weights_path
    from .scoring import scoring_path
    from .tokens import input_embedding_matrix

    src = str(source or name)
    local = Path(src).exists()
    model, tok = load_masked_lm(src, device=device, lock_path=lock_path, progress=False)
    wpath = weights_path(src, lock_path=lock_path)
    path = scoring_path(model, tok)
    revision, commit = "local", "local"
    if not local:
        lock = read_lock(lock_path) if lock_path and Path(lock_path).exists() else None
        hit = lock[lock["model"] == name] if lock is not None else []
        revision = str(hit["revision"].iloc[-1]) if len(hit) else "main"
        commit = str(hit["commit"].iloc[-1]) if len(hit) else (wpath.parent.name if wpath else "")
    card = {
        "model": name, "architecture": type(model).__name__, "model_type": model.config.model_type,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "vocabulary": int(input_embedding_matrix(model).shape[0]),
        "source": "local" if local else "hub", "revision": revision, "commit": commit,
        "sha256": sha256_file(wpath) if wpath else "", "created": "" if local else created_date(name, lock_path),
        "head": path.head, "padding": path.padding, "scoring": path.describe(),
        "probes": [{"query": q, "fills": [{"token_str": f["token_str"], "score": f["score"]}
                                          for f in top_fills(model, tok, q, top)]} for q in probes],
    }
    return card


def cards_html(cards: Sequence[Mapping]) -> str:
    """The cards as HTML (one ``<div class="model-card">`` each, every value escaped)."""
    if not cards:
        return "<p><em>No model cards found (results/models/*.json): run the model_card rule.</em></p>"
    e = html.escape
    out = ["<style>.model-cards{display:flex;flex-wrap:wrap;gap:12px}"
           ".model-card{border:1px solid #ccc;border-radius:6px;padding:8px 12px;width:360px;font-size:90%}"
           ".model-card h4{margin:0 0 4px 0}.model-card table{border-collapse:collapse;margin:2px 0}"
           ".model-card td{padding:1px 6px 1px 0;vertical-align:top;text-align:left !important}.model-card .fills{font-size:92%}"
           "</style><div class='model-cards'>"]
    for c in cards:
        origin = (f"local, sha256 {e(str(c.get('sha256', ''))[:16])}…" if c.get("source") == "local"
                  else f"{e(str(c.get('revision', '')))} @ {e(str(c.get('commit', ''))[:12])}")
        rows = [("architecture", f"{e(str(c.get('architecture', '')))} ({e(str(c.get('model_type', '')))})"),
                ("parameters", f"{int(c.get('parameters', 0)):,}"),
                ("vocabulary", f"{int(c.get('vocabulary', 0)):,} tokens"),
                ("source", origin),
                ("created on the hub", e(str(c.get("created") or "not recorded"))),
                ("scoring", e(str(c.get("scoring", ""))))]
        body = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in rows)
        probes = "".join(
            f"<tr><td>{e(str(p.get('query', '')))}</td><td class='fills'>"
            + ", ".join(f"{e(str(f.get('token_str', '')))} ({float(f.get('score', 0)):.3g})" for f in p.get("fills", []))
            + "</td></tr>" for p in c.get("probes", []))
        out.append(f"<div class='model-card'><h4>{e(str(c.get('model', '')))}</h4><table>{body}</table>"
                   f"<p style='margin:4px 0 0 0'><b>Top-5 fills</b></p><table>{probes}</table></div>")
    out.append("</div>")
    return "".join(out)


def read_cards(results: str | os.PathLike, slugs: Sequence[str]) -> list[dict]:
    """The cards ``results/models/{slug}.json`` of ``slugs`` that exist, in that order."""
    import json

    out = []
    for s in slugs:
        p = Path(results) / "models" / f"{s}.json"
        if p.exists():
            out.append(json.loads(p.read_text(encoding="utf-8")))
    return out
