"""Scoring: the probability a masked LM gives each option word at the mask (R: ``FMAT_run``).

For every model and every row of a query table (:func:`fmat.query`): the sentence
(:func:`fill_sentences`), the option's whole-word token derived from the tokenizer
(:func:`derive_options`; ``word_rule="fmat"``: FMAT's model-name rules, :data:`PATTERN_SPECIAL`),
out-of-vocabulary words (several tokens, or the unknown token, which FMAT misses) flagged ``oov``
with ``prob`` NaN (``na_out=False``: the first piece's, as FMAT) and one :class:`OOVWarning` per
model. ``prob`` = softmax over the full vocabulary at the mask, never renormalised; ``logp`` = the
log-softmax, computed directly.

One forward pass per unique sentence, batched by length (:func:`plan_batches`), the LM head only
at the masks; how a model runs (fast head, padded batches) is checked on the model itself
(:func:`scoring_path`). Equal to the fill-mask pipeline on every masked-LM architecture
transformers builds (tests/test_architectures.py: |Δp| ≤ 1e-5). Details and speed: docs/scoring.md.
"""

from __future__ import annotations

import contextlib
import logging
import unicodedata
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import validate
from .errors import InputError, ModelError, user_stacklevel

# re-exported: fmat.scoring.PATTERN_SPECIAL, Option, fmat_word_form stay where users found them
from .tokens import (  # noqa: F401
    PATTERN_SPECIAL,
    Option,
    _tokenize_many,
    derive_options,
    fill_sentences,
    fmat_rule_options,
    fmat_word_form,
    input_embedding_matrix,
    mask_position,
)
from .validate import check_query_table

log = logging.getLogger(__name__)

SCORE_COLUMNS = ["output", "token", "prob", "token_id", "logp", "oov"]
METHODS = ("fmat", "lpbs")


class OOVWarning(UserWarning):
    """Option words that are not one whole-word token of a model.

    Examples
    --------
    >>> issubclass(OOVWarning, UserWarning)
    True
    """


# ----------------------------------------------------------------------------- model head and padding

#: the sentences every model is checked on when it is first scored (:func:`scoring_path`)
PROBE_SENTENCES = ("the {mask} is here .", "i think that the {mask} was there yesterday , and then we left .")
#: largest |Δ log p| (any vocabulary entry) between two ways of computing the same sentence that
#: still counts as the same, per unit of the logits' standard deviation (at least 1): float32
#: rounding from other matrix shapes stays near 1e-6 of it
PROBE_TOL = {"float32": 1e-5, "other": 5e-2}
#: the padding check's tolerance at every token of the probe sentences, in the same units: the
#: largest of so many values gathers more rounding than the mask's alone, and a model that reads
#: its padding moves the tokens beside it by far more (MobileBERT, ConvBERT, Funnel, FNet: 1 to 13)
PROBE_TOL_ANY_TOKEN = {"float32": 1e-3, "other": 0.25}


@dataclass(frozen=True)
class ScoringPath:
    """How :func:`mask_logp` runs a loaded model, decided on the model itself (:func:`scoring_path`).

    ``head``: "fast" (the encoder, then the MLM head ``head_modules`` only at the mask) or
    "full" (the model's own forward pass). ``padding``: "padded" or "equal-length" (a pass holds
    sentences of one length only: padding changes the model's outputs).
    ``padding_effect``/``head_error``: the largest |Δ log p| measured on :data:`PROBE_SENTENCES`.

    Examples
    --------
    >>> path = ScoringPath(head="fast", padding="padded", head_modules=("cls",), head_error=1e-7)
    >>> path.head, path.padding
    ('fast', 'padded')
    """

    head: str
    padding: str
    head_modules: tuple[str, ...] = ()
    padding_effect: float = 0.0
    head_error: float | None = None

    def describe(self) -> str:
        """The path in words (``fmat run`` logs it once per model).

        Examples
        --------
        >>> print(ScoringPath(head="full", padding="equal-length", padding_effect=0.8).describe())
        full head (the model's own forward pass); equal-length batches (padding changes its outputs by up to 0.8 in log p)
        """
        head = (
            f"fast path (MLM head {' -> '.join(self.head_modules)} at the mask only)"
            if self.head == "fast"
            else "full head (the model's own forward pass)"
        )
        pad = (
            "padded batches"
            if self.padding == "padded"
            else f"equal-length batches (padding changes its outputs by up to {self.padding_effect:.2g} in log p)"
        )
        return f"{head}; {pad}"


def _first(out):
    """The logits of a head module's output (a tensor, a tuple or a ModelOutput)."""
    return out if not isinstance(out, (tuple, list)) and not hasattr(out, "to_tuple") else out[0]


def _head_candidates(model):
    """Ways to apply ``model``'s MLM head to its base model's last hidden state: ``[(names, function)]``.

    DistilBERT's head (its modules are registered out of order), all non-base child modules in
    registration order (dropout and loss modules left out), then each child alone.
    """
    import torch.nn as nn

    base = getattr(model, "base_model", None)
    if base is None or base is model or getattr(model.config, "is_encoder_decoder", False):
        return []
    out = []
    if type(model).__name__.startswith("DistilBert"):

        def distil_head(h, m=model):
            return m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))

        out.append((("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"), distil_head))
    kids = [
        (n, c)
        for n, c in model.named_children()
        if c is not base and not isinstance(c, (nn.Dropout, nn.modules.loss._Loss)) and "loss" not in n.lower()
    ]
    if kids:

        def seq_head(h, mods=tuple(c for _, c in kids)):
            for m in mods:
                h = _first(m(h))
            return h

        out.append((tuple(n for n, _ in kids), seq_head))
    if len(kids) > 1:
        out += [((n,), lambda h, m=c: _first(m(h))) for n, c in kids]
    return out


def _probe_inputs(tokenizer):
    ids = _tokenize_many(tokenizer, [s.format(mask=tokenizer.mask_token) for s in PROBE_SENTENCES], special=True)
    pos = [mask_position(e, tokenizer.mask_token_id, s) for e, s in zip(ids, PROBE_SENTENCES)]
    return ids, pos


def _check_model_inputs(model, tokenizer) -> None:
    """fmat feeds a model token ids and the attention mask (token types: all 0, as the tokenizer
    gives for one sentence). A tokenizer that gives the model more per-token inputs (RoCBert's
    glyph-shape and pronunciation ids) is refused: its numbers would differ from the pipeline's."""
    enc = tokenizer(PROBE_SENTENCES[0].format(mask=tokenizer.mask_token))
    extra = [
        k
        for k in enc
        if k not in ("input_ids", "attention_mask") and not (k == "token_type_ids" and not np.any(np.asarray(enc[k])))
    ]
    if extra:
        raise ModelError(
            f"{type(model).__name__}: its tokenizer gives the model more inputs than the token ids "
            f"({', '.join(extra)}); fmat passes only the ids and the attention mask, so its "
            "probabilities would differ from the fill-mask pipeline's",
            fix="score this model with transformers' fill-mask pipeline (fmat.fill_mask_check "
            "shows its raw predictions), or choose another model",
        )


def _pad(seqs, pad_id, device):
    import torch

    L = max(len(x) for x in seqs)
    ids = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    for k, x in enumerate(seqs):
        ids[k, : len(x)] = torch.tensor(x)
        att[k, : len(x)] = 1
    return ids.to(device), att.to(device)


def scoring_path(model, tokenizer) -> ScoringPath:
    """Decide, on the loaded model, how :func:`mask_logp` runs it; cached on the model.

    Two checks on :data:`PROBE_SENTENCES` (two sentences of different lengths), both against
    the model's own forward pass on each sentence alone (what the fill-mask pipeline does):

    * **padding**: each sentence with 1 and 3 pad tokens after it (attention mask 0). A
      difference above :data:`PROBE_TOL` at the mask, or above :data:`PROBE_TOL_ANY_TOKEN` at
      any of its tokens, means the model reads its padding (MobileBERT's trigram embeddings,
      ConvBERT's convolution, Funnel's pooling): it is then scored in passes of equal-length
      sentences only, so that no sentence is ever padded.
    * **fast head**: the first of :func:`_head_candidates` whose logits at the mask equal the
      full forward pass's within :data:`PROBE_TOL`; none: the full head.

    A rule, not a list of names: a new architecture falls under it too.

    Examples
    --------
    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> path = scoring_path(model, tok)
    >>> path.head, path.padding
    ('fast', 'padded')
    """
    import torch

    cached = getattr(model, "_fmat_scoring_path", None)
    if cached is not None:
        return cached
    _check_model_inputs(model, tokenizer)
    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids, pos = _probe_inputs(tokenizer)
    with torch.inference_mode():
        alone, spread, at_mask, effect = [], 1.0, 0.0, 0.0
        for x, p in zip(ids, pos):
            for k in (0, 1, 3):  # alone, then a few pads: the kernels' shapes stay, so any change is the padding's
                i, a = _pad([x + [pad_id] * k], pad_id, device)
                a[0, len(x) :] = 0
                out = model(input_ids=i, attention_mask=a).logits[0, : len(x)].float()  # (Perceiver: more)
                got = torch.log_softmax(out, -1)
                if k == 0:
                    ref = got
                    alone.append(got[p])
                    spread = max(spread, float(out.std(-1).max()))
                else:
                    # at the mask (tol) and at every real token (tol_any): a model that reads its padding
                    # changes the tokens next to it at once (MobileBERT's trigram embedding, ConvBERT's
                    # convolution), while what reaches a probe's mask may by chance be small (CI saw a
                    # MobileBERT at 5e-5 in p at the probes' masks, 0.5 in log p at other masks)
                    diff = (got - ref).abs()
                    at_mask, effect = max(at_mask, float(diff[p].max())), max(effect, float(diff.max()))
        # float rounding grows with the logits' spread (fp32: ~1e-6 of it)
        kind = "float32" if dtype == torch.float32 else "other"
        tol, tol_any = spread * PROBE_TOL[kind], spread * PROBE_TOL_ANY_TOKEN[kind]
        padding = "padded" if at_mask <= tol and effect <= tol_any else "equal-length"
        i, a = _pad(ids, pad_id, device)
        head, names, err = "full", (), None
        base = getattr(model, "base_model", None)
        for cand_names, fn in _head_candidates(model):
            try:
                worst = 0.0
                batches = [([k], _pad([ids[k]], pad_id, device)) for k in range(len(ids))]
                if padding == "padded":
                    batches.append((list(range(len(ids))), (i, a)))
                for ks, (bi, ba) in batches:
                    hidden = base(input_ids=bi, attention_mask=ba)[0]
                    r = torch.arange(len(ks), device=device)
                    logits = fn(hidden[r, torch.tensor([pos[k] for k in ks], device=device)])
                    if logits.shape[-1] != alone[0].shape[-1]:
                        raise ValueError("vocabulary size differs")
                    lsm = torch.log_softmax(logits.float(), -1)
                    worst = max(worst, max(float((lsm[j] - alone[k]).abs().max()) for j, k in enumerate(ks)))
            except Exception as e:
                log.debug("%s: head candidate %s does not apply: %s", type(model).__name__, cand_names, e)
                continue
            if worst <= tol:
                head, names, err = "fast", cand_names, worst
                break
    path = ScoringPath(head=head, padding=padding, head_modules=names, padding_effect=effect, head_error=err)
    with contextlib.suppress(Exception):  # a model that refuses attributes is checked again next time
        model._fmat_scoring_path = path
    log.info("%s: %s", type(model).__name__, path.describe())
    return path


def _head_fn(model, path: ScoringPath):
    if path.head != "fast":
        return None
    return next((fn for names, fn in _head_candidates(model) if names == path.head_modules), None)


def _mask_logits(model, head, decoder, input_ids, attention_mask, mask_pos, extra_emb=None):
    """Logits over the vocabulary (+ added tokens) at the mask positions, shape (n, V [+k])."""
    import torch

    rows = torch.arange(input_ids.shape[0], device=input_ids.device)
    captured = {}
    hook = None
    if extra_emb is not None:
        if decoder is None:
            raise ModelError(f"add_tokens is not supported for {type(model).__name__}", fix="run without add_tokens")
        hook = decoder.register_forward_pre_hook(lambda mod, args: captured.__setitem__("x", args[0]))
    try:
        if head is not None:
            hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask)[0]
            logits = head(hidden[rows, mask_pos])
        else:
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[rows, mask_pos]
            if extra_emb is not None:
                captured["x"] = captured["x"][rows, mask_pos]
    finally:
        if hook is not None:
            hook.remove()
    logits = logits.float()
    if extra_emb is not None:
        # new tokens: output embedding = input embedding (tied), bias 0 (as resize_token_embeddings pads)
        logits = torch.cat([logits, captured["x"].float() @ extra_emb.float().T], dim=1)
    return logits


#: automatic batches (``batch_size=None``): (padded tokens, sentences) per forward pass by
#: device type. A CPU's matrix products need ~1,000 rows to run near its matmul peak
#: (benchmarks/bench_scoring.py); on an H200 4,096 tokens a pass was fastest (docs/scoring.md,
#: "On a GPU"). The sentence cap bounds the (sentences × vocabulary) logits (1,024 × 250k fp32 = 1 GB).
AUTO_BATCH = {"cpu": (1024, 256), "cuda": (4096, 1024)}


def plan_batches(
    lengths, batch_size: int | None = None, max_tokens: int | None = None, device_type: str = "cpu", equal_length: bool = False
) -> list[np.ndarray]:
    """Length-sorted batches (longest first) of indices into ``lengths`` (token counts).

    ``batch_size`` caps the sentences of a pass, ``max_tokens`` its padded tokens (sentences ×
    the longest one's length; a longer sentence gets a pass of its own). Neither given: the
    device's :data:`AUTO_BATCH`. Only ``batch_size`` given: exactly that many per pass (FMAT's
    fixed batches). Only ``max_tokens``: the token cap with the device's sentence cap.
    With a token cap, a last pass of less than half its size shares the sentences of the pass
    before it evenly. Sorting by length keeps padding small. ``equal_length``: a pass never
    mixes lengths (no padding at all), for models whose outputs depend on padding
    (:func:`scoring_path`); with that rule results do not depend on the batches (tested on every
    architecture).

    Examples
    --------
    >>> [b.tolist() for b in plan_batches([5, 9, 7, 5], batch_size=2)]
    [[1, 2], [0, 3]]
    >>> [b.tolist() for b in plan_batches([5, 9, 7, 5], max_tokens=20)]
    [[1, 2], [0, 3]]
    >>> [b.tolist() for b in plan_batches([5, 9, 7, 5], batch_size=4, equal_length=True)]
    [[1], [2], [0, 3]]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    for arg, v in (("batch_size", batch_size), ("max_tokens", max_tokens)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise InputError(
                f"{arg} must be a whole number of at least 1 (got {v!r})",
                fix=f"e.g. {arg}={'64' if arg == 'batch_size' else '1024'}, or leave it unset (automatic)",
            )
    auto_tokens, auto_sents = AUTO_BATCH.get(device_type, AUTO_BATCH["cpu"])
    by_tokens = batch_size is None
    if batch_size is None:
        batch_size = auto_sents
        if max_tokens is None:
            max_tokens = auto_tokens

    def cap(first: int) -> int:
        """Sentences in a pass that starts (longest first) with sentence ``first``."""
        if max_tokens is None:
            return batch_size
        return min(batch_size, max(1, max_tokens // max(1, int(lengths[first]))))

    order = np.argsort(-lengths, kind="stable")
    out, b0 = [], 0
    while b0 < len(order):
        n = cap(order[b0])
        if equal_length:  # stop at the first shorter sentence
            same = np.nonzero(lengths[order[b0 : b0 + n]] != lengths[order[b0]])[0]
            n = int(same[0]) if len(same) else n
        out.append(order[b0 : b0 + n])
        b0 += n
    if by_tokens and len(out) >= 2 and not equal_length:
        # a short last pass runs the dense layers on few rows: the last two passes share their
        # sentences evenly instead, where both halves keep within their caps
        both = np.concatenate(out[-2:])
        half = (len(both) + 1) // 2
        if 2 * len(out[-1]) < cap(out[-1][0]) and half <= cap(both[0]) and len(both) - half <= cap(both[half]):
            out[-2:] = [both[:half], both[half:]]
    return out


def mask_logp(
    model,
    tokenizer,
    inputs,
    mask_pos,
    row_input,
    token_ids,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    extra_emb=None,
    bar=None,
    name: str | None = None,
) -> np.ndarray:
    """ln P(``token_ids[r]`` | sequence ``inputs[row_input[r]]``) at its ``mask_pos`` (natural log), per row r.

    ``inputs``: token-id sequences with special tokens; one forward pass each however many rows
    read it, in :func:`plan_batches` batches, run as :func:`scoring_path` decides; the rows'
    entries come back as float64. ``extra_emb``: temporary added tokens (:func:`score_model`'s
    ``add_tokens``). ``bar``: a tqdm bar advanced by sequences. Logits that are not finite
    (broken weights) stop with a ModelError naming the model (``name``).

    Examples
    --------
    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> import numpy as np
    >>> ids = [tok("the [MASK] is here .")["input_ids"]]
    >>> logp = mask_logp(model, tok, ids, np.array([2]), np.array([0, 0]), np.array([6, 7]))
    >>> logp.shape, bool((logp < 0).all())
    ((2,), True)
    """
    import torch

    lengths = np.fromiter((len(e) for e in inputs), dtype=np.int64, count=len(inputs))
    mask_pos = np.asarray(mask_pos, dtype=np.int64)
    row_input = np.asarray(row_input, dtype=np.int64)
    token_ids = np.asarray(token_ids, dtype=np.int64)
    device = next(model.parameters()).device
    rows_by_input = np.argsort(row_input, kind="stable")
    starts = np.searchsorted(row_input[rows_by_input], np.arange(len(inputs) + 1))
    out = np.full(len(row_input), np.nan, dtype=np.float64)
    path = scoring_path(model, tokenizer)
    head = _head_fn(model, path)
    decoder = model.get_output_embeddings()
    decoder = decoder if isinstance(decoder, torch.nn.Linear) else None
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with torch.inference_mode():
        for idx in plan_batches(lengths, batch_size, max_tokens, device.type, equal_length=path.padding != "padded"):
            ids, att = _pad([inputs[s] for s in idx], pad_id, device)
            logits = _mask_logits(model, head, decoder, ids, att, torch.from_numpy(mask_pos[idx]).to(device), extra_emb)
            if not bool(torch.isfinite(logits).all()):
                bad = int((~torch.isfinite(logits).all(dim=1)).sum())
                raise ModelError(
                    f"model {name or type(model).__name__} gives non-finite logits (NaN or inf) at the "
                    f"mask of {bad} of {len(idx)} sentence(s): its weights are broken",
                    fix="replace the weights: download a hub model again (`fmat download NAME`); copy a "
                    "local folder again from where it came from, or save it again with save_pretrained()",
                )
            n_rows = starts[idx + 1] - starts[idx]
            rows = np.concatenate([rows_by_input[starts[s] : starts[s + 1]] for s in idx])
            k = torch.from_numpy(np.repeat(np.arange(len(idx)), n_rows)).to(device)
            lsm = torch.log_softmax(logits, dim=-1)
            out[rows] = lsm[k, torch.from_numpy(token_ids[rows]).to(device)].double().cpu().numpy()
            if bar is not None:
                bar.update(len(idx))
    return out


# ----------------------------------------------------------------------------- run


def _check_query_table(data: pd.DataFrame) -> None:
    missing = [c for c in ("query", "M_word") if c not in data.columns]
    if missing:
        raise InputError(f"query table lacks column(s) {missing}", fix="build it with fmat.query()")
    if len(data) == 0:
        raise InputError("the query table has no rows", fix="give at least one query and MASK word")
    check_query_table(data)


def score_model(
    model,
    tokenizer,
    data: pd.DataFrame,
    name: str = "model",
    batch_size: int | None = None,
    add_tokens: bool = False,
    na_out: bool = True,
    progress: bool = True,
    word_rule: str = "tokenizer",
    pattern_special=None,
    weight_decay: float = 1.0,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """Score ``data`` on one loaded model; returns the query columns + :data:`SCORE_COLUMNS`.

    ``batch_size``/``max_tokens``: see :func:`plan_batches`.

    Examples
    --------
    What R FMAT's ``FMAT_run()`` returns for one model (here a tiny random one):

    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model(["the", "man", "woman", "is", "here", "."])  # a one-layer BERT, random weights (seed 0)
    >>> import fmat
    >>> q = fmat.query("the [MASK] is here .", MASK={"Male": ["man"], "Female": ["woman"]})
    >>> scores = score_model(model, tok, q, name="tiny", progress=False)
    >>> list(scores.columns)
    ['query', 'MASK', 'M_pair', 'M_word', 'output', 'token', 'prob', 'token_id', 'logp', 'oov']
    >>> bool(scores["prob"].between(0, 1).all()), scores["oov"].tolist()
    (True, [False, False])
    """
    from tqdm.auto import tqdm

    sentences = fill_sentences(data, tokenizer.mask_token)
    words = data["M_word"].astype(str).to_numpy()
    if word_rule == "fmat":
        opts = fmat_rule_options(tokenizer, name, data["query"].astype(str).to_numpy(), words, pattern_special)
    else:
        opts = derive_options(tokenizer, sentences, words)
    oov_words = list(dict.fromkeys(w for w, o in zip(words, opts) if o.oov))
    unk_words = list(dict.fromkeys(w for w, o in zip(words, opts) if o.unk))

    extra_ids, extra_emb = _added_tokens(model, opts, weight_decay) if add_tokens else ({}, None)
    if oov_words:
        _warn_oov(tokenizer, name, oov_words, unk_words, add_tokens=add_tokens, na_out=na_out, added=len(extra_ids))
    row_ids, row_nan = _row_ids(tokenizer, opts, extra_ids, add_tokens=add_tokens, na_out=na_out)
    uniq, row_sent = np.unique(sentences.astype(str), return_inverse=True)
    enc = _tokenize_many(tokenizer, list(uniq), special=True)
    _check_lengths(model, tokenizer, enc, uniq, row_sent, data, name)
    mask_id = tokenizer.mask_token_id
    mpos = np.array([mask_position(e, mask_id, uniq[s], name) for s, e in enumerate(enc)], dtype=np.int64)
    bar = tqdm(total=len(uniq), desc=f"{name}", unit="sent", leave=False) if progress else None
    try:
        logp = mask_logp(
            model,
            tokenizer,
            enc,
            mpos,
            row_sent,
            row_ids,
            batch_size=batch_size,
            max_tokens=max_tokens,
            extra_emb=extra_emb,
            bar=bar,
            name=name,
        )
    finally:
        if bar is not None:
            bar.close()

    logp[row_nan] = np.nan
    out = data.reset_index(drop=True).copy()
    out["output"] = _outputs(tokenizer, enc, row_sent, opts, row_ids, extra_ids, mask_id)
    out["token"] = _token_labels(tokenizer, opts, row_ids, extra_ids, add_tokens)
    out["prob"] = np.exp(logp)
    out["token_id"] = row_ids
    out["logp"] = logp
    out["oov"] = np.array([o.oov for o in opts], dtype=bool)
    return out


def _added_tokens(model, opts, weight_decay: float):
    """``(extra_ids, extra_emb)``: one temporary new token id per distinct piece sequence of an
    OOV option word (not the unknown token), its embedding the weighted mean of its pieces'
    (weights ``weight_decay**i``, normalised); ``extra_emb`` None where there is none."""
    import torch

    emb = input_embedding_matrix(model)
    V = emb.shape[0]
    extra_ids: dict[tuple, int] = {}
    vecs = []
    for o in opts:
        if o.oov and not o.unk and len(o.pieces) > 1 and tuple(o.pieces) not in extra_ids:
            extra_ids[tuple(o.pieces)] = V + len(extra_ids)
            w = torch.tensor([weight_decay**i for i in range(len(o.pieces))], dtype=torch.float32)
            w = (w / w.sum()).to(emb.device)
            vecs.append((w[:, None] * emb[torch.tensor(o.pieces, device=emb.device)].float()).sum(0))
    return extra_ids, (torch.stack(vecs).detach() if vecs else None)


def _warn_oov(tokenizer, name: str, oov_words, unk_words, *, add_tokens: bool, na_out: bool, added: int) -> None:
    """One :class:`OOVWarning` per model: the option words that are not one whole-word token,
    and what their probability will be."""
    parts = [
        f"model {name}: {len(oov_words)} option word(s) are not one whole-word token: "
        + ", ".join(oov_words[:30])
        + (" ..." if len(oov_words) > 30 else "")
    ]
    if unk_words:
        parts.append(f"(the unknown token for: {', '.join(unk_words[:30])})")
    alike = look_alikes(tokenizer, oov_words)
    if alike:
        parts.append("(" + "; ".join(alike) + ": a different text that only looks the same)")
    if add_tokens:
        parts.append(f"-> added temporarily as {added} new token(s)" + ("; unknown-token words stay NaN" if unk_words else ""))
    elif na_out:
        parts.append("-> prob NaN (na_out=True); consider add_tokens=True or other words")
    else:
        parts.append("-> prob of the FIRST piece (na_out=False)")
    warnings.warn(" ".join(parts), OOVWarning, stacklevel=user_stacklevel())


def _row_ids(tokenizer, opts, extra_ids: dict, *, add_tokens: bool, na_out: bool):
    """``(row_ids, row_nan)``: the token id each row's probability is read from, and the rows
    whose probability is NaN (an OOV word with ``na_out``)."""
    row_ids = np.empty(len(opts), dtype=np.int64)
    row_nan = np.zeros(len(opts), dtype=bool)
    for i, o in enumerate(opts):
        if not o.oov:
            row_ids[i] = o.pieces[0]
        elif add_tokens and tuple(o.pieces) in extra_ids:
            row_ids[i] = extra_ids[tuple(o.pieces)]
        else:
            row_ids[i] = o.pieces[0] if o.pieces else (tokenizer.unk_token_id if tokenizer.unk_token_id is not None else 0)
            row_nan[i] = na_out
    return row_ids, row_nan


def max_sequence_length(model, tokenizer) -> int | None:
    """The most tokens (special tokens included) ``model`` reads in one sentence.

    Examples
    --------
    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model(["the", "man", "woman", "is", "here", "."])  # a one-layer BERT, random weights (seed 0)
    >>> max_sequence_length(model, tok)
    32
    """
    limits = []
    if 0 < (tokenizer.model_max_length or 0) < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    cfg = getattr(model, "config", None)
    n = getattr(cfg, "max_position_embeddings", None)
    if n:
        if "roberta" in str(getattr(cfg, "model_type", "")) or getattr(cfg, "model_type", "") == "camembert":
            n -= (getattr(cfg, "pad_token_id", None) or 0) + 1  # positions start after the padding index
        limits.append(int(n))
    return min(limits) if limits else None


def _check_lengths(model, tokenizer, enc, uniq, row_sent, data: pd.DataFrame, name: str) -> None:
    """Every sentence fits the model (BERT would silently cut it, RoBERTa crash): an InputError
    naming the longest word of the first sentence that does not, before any forward pass."""

    limit = max_sequence_length(model, tokenizer)
    if limit is None:
        return
    lengths = np.fromiter((len(e) for e in enc), dtype=np.int64, count=len(enc))
    over = np.nonzero(lengths > limit)[0]
    if not len(over):
        return
    s = int(over[0])
    row = int(np.nonzero(row_sent == s)[0][0])
    cols = [c for c in ("T_word", "A_word", "M_word") if c in data.columns]
    words = {c: str(data[c].iloc[row]) for c in cols}
    validate.too_long(str(uniq[s]), int(lengths[s]), limit, name, words, len(over))


def _outputs(tokenizer, enc, row_sent, opts, row_ids, extra_ids, mask_id) -> list[str]:
    """The sentence with the option in place, decoded (the pipeline's ``sequence``); OOV: all pieces."""
    keys = [(int(row_sent[i]), tuple(o.pieces) if o.oov else (int(row_ids[i]),)) for i, o in enumerate(opts)]
    seqs = {}
    for s, fill in dict.fromkeys(keys):
        p = enc[s].index(mask_id)
        seqs[s, fill] = list(enc[s][:p]) + list(fill) + list(enc[s][p + 1 :])
    decoded = dict(zip(seqs, tokenizer.batch_decode(list(seqs.values()), skip_special_tokens=True)))
    return [decoded[k] for k in keys]


def _token_labels(tokenizer, opts, row_ids, extra_ids, add_tokens) -> list[str]:
    out = []
    for i, o in enumerate(opts):
        if not o.oov:
            out.append(tokenizer.convert_ids_to_tokens(int(row_ids[i])))
        elif add_tokens and tuple(o.pieces) in extra_ids:
            out.append(tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(o.pieces)).strip() + " (added)")
        else:
            first = tokenizer.convert_ids_to_tokens(o.pieces[0]) if o.pieces else str(tokenizer.unk_token)
            out.append(f"{first} (out-of-vocabulary)")
    return out


def code_points(text: str) -> str:
    """``U+006E U+0061 ...``: the characters of ``text``, to tell look-alikes apart.

    Examples
    --------
    >>> code_points("naïve")
    'U+006E U+0061 U+00EF U+0076 U+0065'
    """
    return " ".join(f"U+{ord(c):04X}" for c in text)


def look_alikes(tokenizer, words, limit: int = 10) -> list[str]:
    """For out-of-vocabulary ``words`` that only LOOK like a vocabulary entry (equal once both
    are in Unicode form NFKC, whole-word markers Ġ ▁ ## aside: a decomposed accent, a
    full-width letter, a ligature), a note with the code points of both.

    Examples
    --------
    >>> from fmat.tiny import doc_tokenizer
    >>> tok = doc_tokenizer(["the", "man", "is", "a", "nurse", "pilot", "."])  # ids 0-4 special, then 5, 6, ...
    >>> look_alikes(tok, ["ｎｕｒｓｅ", "nurse", "doctor"])
    ["'ｎｕｒｓｅ' is U+FF4E U+FF55 U+FF52 U+FF53 U+FF45 but the vocabulary's 'nurse' is U+006E U+0075 U+0072 U+0073 U+0065"]
    """

    try:
        vocab = tokenizer.get_vocab()
    except Exception:  # pragma: no cover - a tokenizer without a vocabulary
        return []

    def bare(token: str) -> str:
        return token[2:] if token.startswith("##") else token.lstrip("\u0120\u2581")

    folded: dict[str, str] = {}
    for token in vocab:
        folded.setdefault(unicodedata.normalize("NFKC", bare(str(token))), str(token))
    out = []
    for w in words:
        token = folded.get(unicodedata.normalize("NFKC", str(w)))
        if token is not None and bare(token) != str(w):
            out.append(f"{w!r} is {code_points(str(w))} but the vocabulary's {token!r} is {code_points(bare(token))}")
            if len(out) >= limit:
                break
    return out
