"""Model cards: what each model is and whether it works, one card per model in the overview
(``fmat_replication.pages.cards``): its architecture, size, origin, how fmat scored it and its
top-5 fills of :data:`PROBES` (a trained model fills "Paris is the [MASK] of France." with
"capital"; a broken one does not).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .lockfile import sha256_file
from .models import created_date, load_masked_lm, read_lock, top_fills, weights_path
from .scoring import scoring_path
from .tokens import input_embedding_matrix

#: the fixed probe sentences of every card (one [MASK] each)
PROBES = ("Paris is the [MASK] of France.", "The doctor asked the nurse to [MASK] the patient.", "[MASK] is a very good idea.")

CARD_KEYS = (
    "model",
    "architecture",
    "model_type",
    "parameters",
    "vocabulary",
    "source",
    "revision",
    "commit",
    "sha256",
    "created",
    "head",
    "padding",
    "scoring",
    "probes",
)


def model_card(
    name: str, source: str | os.PathLike | None = None, lock_path=None, device=None, probes: Sequence[str] = PROBES, top: int = 5
) -> dict:
    """The card of model ``name`` (loaded from ``source``, a folder, or by name from the cache): a
    dict of :data:`CARD_KEYS`; ``commit`` is the locked one (``local`` for a folder), ``probes``
    ``[{query, fills: [{token_str, score}]}]``."""
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
    return {
        "model": name,
        "architecture": type(model).__name__,
        "model_type": model.config.model_type,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "vocabulary": int(input_embedding_matrix(model).shape[0]),
        "source": "local" if local else "hub",
        "revision": revision,
        "commit": commit,
        "sha256": sha256_file(wpath) if wpath else "",
        "created": "" if local else created_date(name, lock_path),
        "head": path.head,
        "padding": path.padding,
        "scoring": path.describe(),
        "probes": [
            {"query": q, "fills": [{"token_str": f["token_str"], "score": f["score"]} for f in top_fills(model, tok, q, top)]}
            for q in probes
        ],
    }
