"""Scoring jobs: one model loaded once for several studies (:func:`score_studies`), each study's
``score:`` options (:func:`score_options`) and a job's resources (:func:`score_resources`)."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError


def model_size(name: str) -> str:
    """"large", "base" or "small" from the model id (for memory and runtime estimates)."""
    low = name.lower()
    if "large" in low:
        return "large"
    if any(k in low for k in ("distil", "tiny", "small", "mini", "albert")):
        return "small"
    return "base"



def score_resources(name: str, attempt: int = 1, n_studies: int = 15,
                    minutes: int | None = None) -> dict[str, int]:
    """Portable resources of one model's scoring job: ``mem_mb`` and ``runtime`` (minutes),
    doubling with each retry (Snakemake's ``attempt``). ``minutes`` (config ``score_runtime``)
    replaces the first attempt's runtime, which otherwise follows the model's size."""
    mem = {"large": 8000, "base": 4000, "small": 3000}[model_size(name)]
    if minutes is None:
        minutes = {"large": 60, "base": 30, "small": 20}[model_size(name)]
        minutes = max(10, math.ceil(minutes * max(n_studies, 1) / 15))
    factor = 2 ** (max(int(attempt), 1) - 1)
    return {"mem_mb": mem * factor, "runtime": minutes * factor}



def score_options(path: str | os.PathLike) -> dict:
    """The ``score:`` block of a study file with its defaults (``method, add_tokens, na_out``),
    read without expanding the word lists (no criterion tables needed)."""
    from ..study import SCORE_DEFAULTS, read_study_yaml

    data = read_study_yaml(Path(path))
    opts = {**SCORE_DEFAULTS, **(data.get("score") or {})}
    return {k: opts[k] for k in ("method", "add_tokens", "na_out") if k in opts}



def score_studies(marker: Mapping, studies: Mapping[str, str], queries: Mapping[str, Any], *,
                  device: str | None = None, batch_size: int | None = None, max_tokens: int | None = None,
                  threads: int | None = None,
                  lock: str | os.PathLike | None = None):
    """Score several studies on ONE model, loading it once; yields ``(study id, scores)``.

    ``marker``: a download or demo marker (``name``; ``path`` of a local folder, or None for a
    cached hub model loaded offline at its locked commit). ``studies`` maps study ids to study
    files (their ``score:`` options), ``queries`` to query tables or their paths. Each table is
    what :func:`fmat.runner.run` returns for that model (``model`` = the configured name);
    :func:`fmat.models.load_masked_lm` runs once instead of once per study. The load and
    per-study scoring times are logged (docs/workflow.md).
    """
    import logging
    import time

    import pandas as pd

    from .. import scoring
    from ..io import read_table
    from ..models import load_masked_lm, model_label
    from ..runner import scorer_for

    log = logging.getLogger("fmat.workflow")
    device = None if device in (None, "auto") else device
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    name = marker["name"]
    source = marker.get("path") or name
    options = {sid: score_options(path) for sid, path in studies.items()}
    scorers = {}
    for sid, opts in options.items():
        method = opts.pop("method", "fmat")
        if method not in scoring.METHODS:
            raise InputError(f"scoring method {method!r} is not available", where=f"{studies[sid]}: score.method",
                             fix=f"use one of {', '.join(scoring.METHODS)}")
        scorers[sid] = scorer_for(method)
    t0 = time.perf_counter()
    model, tokenizer = load_masked_lm(source, device=device, lock_path=lock, progress=False)  # a log, not a terminal
    log.info("model %s loaded in %.2f s", name, time.perf_counter() - t0)
    for sid in studies:
        t1 = time.perf_counter()
        table = queries[sid]
        if not hasattr(table, "columns"):
            table = read_table(table)
        scores = scorers[sid](model, tokenizer, table, name=model_label(source), batch_size=batch_size,
                              max_tokens=max_tokens, progress=False, **options[sid])
        # as fmat.runner.run: the model column first, query columns keep their levels
        scores.insert(0, "model", pd.Categorical([name] * len(scores), categories=[name]))
        for col in table.columns:
            if isinstance(table[col].dtype, pd.CategoricalDtype):
                scores[col] = pd.Categorical(scores[col], categories=table[col].cat.categories)
        scores.attrs = dict(table.attrs)
        log.info("study %s: %d rows scored in %.2f s", sid, len(table), time.perf_counter() - t1)
        yield sid, scores
    log.info("model %s: %d studies in %.2f s (load included)", name, len(studies), time.perf_counter() - t0)
