"""``fmat.run`` (R: ``FMAT_run``): score a query table on one or more models, loading each.

The dispatch by scoring method lives here, above the methods: :mod:`fmat.scoring` (``fmat``)
and :mod:`fmat.lpbs` (``lpbs``, which builds on scoring), and :mod:`fmat.models` for loading,
so that none of those three imports another in a circle.
"""

from __future__ import annotations

import logging
import time
from typing import Mapping, Sequence

import pandas as pd

from . import arguments, lpbs
from .errors import InputError
from .io import read_table
from .models import _as_models, check_scores, load_masked_lm, model_label
from .scoring import METHODS, _check_query_table, plan_batches, score_model


def scorer_for(method: str):
    """The function that scores one model with ``method`` (one of :data:`fmat.scoring.METHODS`,
    checked by the caller): :func:`fmat.scoring.score_model`, or :func:`fmat.lpbs.score_model`
    for ``lpbs`` (probabilities and their priors, Kurita et al. 2019).

    Examples
    --------
    >>> scorer_for("fmat").__module__, scorer_for("lpbs").__module__
    ('fmat.scoring', 'fmat.lpbs')
    """
    return lpbs.score_model if method == "lpbs" else score_model


def run(
    models,
    data: pd.DataFrame,
    device=None,
    batch_size: int | None = None,
    add_tokens: bool = False,
    na_out: bool = True,
    progress: bool = True,
    threads: int | None = None,
    dtype: str = "float32",
    method: str = "fmat",
    word_rule: str = "tokenizer",
    pattern_special: Mapping[str, str] | None = None,
    weight_decay: float = 1.0,
    cache_dir=None,
    lock_path=None,
    max_tokens: int | None = None,
) -> pd.DataFrame:
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

    Examples
    --------
    Two tiny models (:mod:`fmat.tiny`; random weights, built in a second: the numbers mean
    nothing), named by the keys of a mapping:

    >>> import fmat, tempfile, pathlib
    >>> from fmat import tiny
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> words = ["man", "woman", "nurse", "pilot"]
    >>> models = {m: str(tiny.build_tiny_model(tmp / m, "bert-uncased", words, seed=s)) for s, m in enumerate(["a", "b"])}
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = fmat.run(models, q, progress=False)
    >>> scores[["model", "M_word", "T_word", "oov"]].head(3)
      model M_word T_word    oov
    0     a    man  nurse  False
    1     a  woman  nurse  False
    2     a    man  pilot  False
    >>> bool(scores["prob"].between(0, 1).all())
    True
    """
    models = arguments.models("models", models)
    data = arguments.table("data", data)
    device = arguments.device("device", device)
    batch_size, max_tokens, threads = (
        arguments.whole(n, v, minimum=1, optional=True)
        for n, v in (("batch_size", batch_size), ("max_tokens", max_tokens), ("threads", threads))
    )
    add_tokens, na_out, progress = (
        arguments.flag(*a) for a in (("add_tokens", add_tokens), ("na_out", na_out), ("progress", progress))
    )
    if not (type(dtype).__name__ == "dtype" and type(dtype).__module__.startswith("torch")):  # or a torch.dtype
        dtype = arguments.text("dtype", dtype, choices=("float32", "bfloat16", "float16", "fp32", "bf16", "fp16"))
    method = arguments.text("method", method, choices=METHODS)
    word_rule = arguments.text("word_rule", word_rule, choices=("tokenizer", "fmat"))
    pattern_special = arguments.mapping("pattern_special", pattern_special)
    weight_decay = arguments.number("weight_decay", weight_decay, low=0, low_open=True)
    arguments.path("cache_dir", cache_dir, optional=True)
    arguments.path("lock_path", lock_path, optional=True)
    _check_query_table(data)
    plan_batches([1], batch_size, max_tokens)  # checks both before any model is loaded
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    model_map = _as_models(models)
    frames = []
    for label, src in model_map.items():
        model, tokenizer = load_masked_lm(
            src, device=device, dtype=dtype, cache_dir=cache_dir, lock_path=lock_path, progress=progress
        )
        name = model_label(src) if label == src else label
        scores = scorer_for(method)(
            model,
            tokenizer,
            data,
            name=name,
            batch_size=batch_size,
            max_tokens=max_tokens,
            add_tokens=add_tokens,
            na_out=na_out,
            progress=progress,
            word_rule=word_rule,
            pattern_special=pattern_special,
            weight_decay=weight_decay,
        )
        check_scores(src, scores)
        frames.append(label_scores(scores, label, data))
        del model
    return concat_scores(frames, models=list(model_map))


def label_scores(scores: pd.DataFrame, model: str, queries: pd.DataFrame) -> pd.DataFrame:
    """One model's scores as :func:`run` returns them: ``model`` first (categorical), the query
    columns with the query table's levels, and its ``attrs`` (the design type).

    Examples
    --------
    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> one = label_scores(q.assign(prob=0.5), "bert", q)
    >>> one.columns[0], one["model"].dtype.name, one.attrs["type"]
    ('model', 'category', 'MT')
    """
    scores = scores.copy()
    scores.insert(0, "model", pd.Categorical([model] * len(scores), categories=[model]))
    for col in queries.columns:
        if isinstance(queries[col].dtype, pd.CategoricalDtype) and col in scores:
            scores[col] = pd.Categorical(scores[col], categories=queries[col].cat.categories)
    scores.attrs = dict(queries.attrs)
    return scores


def concat_scores(tables: Sequence[pd.DataFrame], models: Sequence[str] | None = None) -> pd.DataFrame:
    """Several models' score tables as one, as :func:`run` would have returned them: rows in the
    given order, ``model`` categorical in ``models`` order (default: order of appearance), every
    categorical column with the union of the tables' levels in order of first appearance.

    Examples
    --------
    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> both = concat_scores([label_scores(q.assign(prob=0.5), m, q) for m in ("a", "b")])
    >>> len(both), both["model"].cat.categories.tolist()
    (8, ['a', 'b'])
    """
    tables = list(tables)
    if not tables:
        raise InputError("no score tables to combine", fix="score at least one model")
    out = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0].copy()
    for col in tables[0].columns:
        if col != "model" and isinstance(tables[0][col].dtype, pd.CategoricalDtype):
            levels = dict.fromkeys(level for t in tables for level in t[col].cat.categories)
            out[col] = pd.Categorical(out[col].astype(object), categories=list(levels))
    names = list(models) if models is not None else list(dict.fromkeys(out["model"].astype(str)))
    out["model"] = pd.Categorical(out["model"].astype(str), categories=names)
    out.attrs = dict(tables[0].attrs)
    return out


def read_scores(paths: Sequence) -> pd.DataFrame:
    """Score tables of several models written one per model (``fmat run -o``, the workflow's
    ``results/scores/{study}/{model}.parquet``), read and combined with :func:`concat_scores`.

    Examples
    --------
    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> import tempfile, pathlib
    >>> from fmat.io import write_table
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> paths = [write_table(label_scores(q.assign(prob=0.5), m, q), tmp / f"{m}.parquet") for m in ("a", "b")]
    >>> read_scores(paths)["model"].value_counts().to_dict()
    {'a': 4, 'b': 4}
    """
    return concat_scores([read_table(p) for p in paths])


def score_tables(
    source,
    tables: Mapping[str, pd.DataFrame],
    options: Mapping[str, Mapping] | None = None,
    *,
    name: str | None = None,
    device=None,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    threads: int | None = None,
    lock_path=None,
    progress: bool = False,
):
    """Score several query tables on ONE model, loaded once; yields ``(key, scores)`` as :func:`run` returns them.

    ``source``: a model folder or a cached hub model; ``options``: ``{key: {method, add_tokens,
    na_out}}`` (:func:`fmat.study.score_options`); ``name``: the ``model`` column (default
    ``source``). Load and table times are logged; ``progress``: a tqdm bar per table.
    """
    log = logging.getLogger(__name__)
    device = None if device in (None, "auto") else device
    options = {key: dict((options or {}).get(key) or {}) for key in tables}
    scorers = {}
    for key, opts in options.items():
        method = opts.pop("method", "fmat")
        if method not in METHODS:
            raise InputError(
                f"scoring method {method!r} is not available",
                where=f"{key}: score.method",
                fix=f"use one of {', '.join(METHODS)}",
            )
        scorers[key] = scorer_for(method)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    name = str(name or source)
    t0 = time.perf_counter()
    model, tokenizer = load_masked_lm(source, device=device, lock_path=lock_path, progress=False)  # a log
    log.info("model %s loaded in %.2f s", name, time.perf_counter() - t0)
    for key, table in tables.items():
        t1 = time.perf_counter()
        scores = scorers[key](
            model,
            tokenizer,
            table,
            name=model_label(source),
            batch_size=batch_size,
            max_tokens=max_tokens,
            progress=progress,
            **options[key],
        )
        check_scores(source, scores)
        log.info("%s: %d rows scored in %.2f s", key, len(table), time.perf_counter() - t1)
        yield key, label_scores(scores, name, table)
    log.info("model %s: %d table(s) in %.2f s (load included)", name, len(tables), time.perf_counter() - t0)
