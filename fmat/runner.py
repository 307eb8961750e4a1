"""``fmat.run`` (R: ``FMAT_run``): score a query table on one or more models, loading each.

The dispatch by scoring method lives here, above the methods: :mod:`fmat.scoring` (``fmat``)
and :mod:`fmat.lpbs` (``lpbs``, which builds on scoring), and :mod:`fmat.models` for loading,
so that none of those three imports another in a circle.
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from . import lpbs
from .errors import InputError
from .models import _as_models, load_masked_lm, model_label
from .scoring import METHODS, _check_query_table, plan_batches, score_model


def scorer_for(method: str):
    """The function that scores one model with ``method`` (one of :data:`fmat.scoring.METHODS`,
    checked by the caller): :func:`fmat.scoring.score_model`, or :func:`fmat.lpbs.score_model`
    for ``lpbs`` (probabilities and their priors, Kurita et al. 2019)."""
    return lpbs.score_model if method == "lpbs" else score_model


def run(models, data: pd.DataFrame, device=None, batch_size: int | None = None, add_tokens: bool = False,
        na_out: bool = True, progress: bool = True, threads: int | None = None, dtype: str = "float32",
        method: str = "fmat", word_rule: str = "tokenizer", pattern_special: Mapping[str, str] | None = None,
        weight_decay: float = 1.0, cache_dir=None, lock_path=None, max_tokens: int | None = None) -> pd.DataFrame:
    """Score a query table on masked LMs (R: ``FMAT_run``).

    Args:
        models: a model name/folder, a list of them, or ``{label: name_or_path}``; the label
            is the ``model`` column and what ``word_rule="fmat"`` matches (a folder's base name).
        data: a query table (:func:`fmat.query`): query, MASK, M_pair, M_word, [TARGET...], [ATTRIB...].
        device: "cpu", "cuda", "cuda:1"...; default CUDA when available.
        batch_size, max_tokens: sentences / padded tokens per forward pass (:func:`plan_batches`);
            default automatic (~1,000 tokens a pass on a CPU, 8,192 on a GPU). Results do not
            depend on them beyond ~1e-6 in log probability.
        add_tokens: add OOV words (several pieces) temporarily as new tokens whose input (and
            tied output) embedding is the mean of their pieces' embeddings (``weight_decay`` d:
            weights d^i / Σ d^i); the softmax then covers the enlarged vocabulary. Model files
            are never changed; context text keeps its original tokenization.
        na_out: OOV words get prob NaN (default); False: the first piece's probability (FMAT's).
        progress: tqdm progress bar (sentences/s).
        threads: ``torch.set_num_threads(threads)`` when given.
        dtype: "float32" (default); "bfloat16"/"float16" only when asked (slower on most CPUs).
        method: "fmat" (raw probabilities); "lpbs": also each option's prior, the TARGET/ATTRIB
            phrase masked (:func:`fmat.lpbs.score_model`; columns ``prior``, ``logp_prior``).
        word_rule: "tokenizer" (derive the whole-word token from the tokenizer) or "fmat"
            (FMAT's model-name regexes, :data:`PATTERN_SPECIAL`, overridable by ``pattern_special``).

    Returns ``model`` + the query columns + ``output, token, prob, token_id, logp, oov``;
    rows in model order × query-table order.
    """
    import torch


    if method not in METHODS:
        raise InputError(f"unknown scoring method {method!r}",
                         fix="use method='fmat' or 'lpbs' (probabilities with their prior, Kurita et al. 2019)")
    if word_rule not in ("tokenizer", "fmat"):
        raise InputError(f"unknown word_rule {word_rule!r}", fix="use 'tokenizer' (default) or 'fmat'")
    _check_query_table(data)
    plan_batches([1], batch_size, max_tokens)      # checks both before any model is loaded
    if threads:
        torch.set_num_threads(int(threads))
    model_map = _as_models(models)
    frames = []
    for label, src in model_map.items():
        model, tokenizer = load_masked_lm(src, device=device, dtype=dtype, cache_dir=cache_dir, lock_path=lock_path,
                                          progress=progress)
        name = model_label(src) if label == src else label
        scorer = scorer_for(method)
        scores = scorer(model, tokenizer, data, name=name, batch_size=batch_size, max_tokens=max_tokens,
                        add_tokens=add_tokens, na_out=na_out, progress=progress, word_rule=word_rule,
                        pattern_special=pattern_special, weight_decay=weight_decay)
        scores.insert(0, "model", label)
        frames.append(scores)
        del model
    out = pd.concat(frames, ignore_index=True)
    out["model"] = pd.Categorical(out["model"], categories=list(model_map))
    for c in data.columns:
        if isinstance(data[c].dtype, pd.CategoricalDtype):
            out[c] = pd.Categorical(out[c], categories=data[c].cat.categories)
    out.attrs = dict(data.attrs)
    return out
