"""Scoring: the probability a masked LM gives each option word at the mask (R: ``FMAT_run``).

For every model and every row of a query table (:func:`fmat.query`):

1. **Sentence.** ``{TARGET}`` and ``{ATTRIB}`` are replaced (first occurrence) by ``T_word``
   and ``A_word``; ``[MASK]`` by the tokenizer's mask token (``<mask>`` for RoBERTa).
2. **Option token.** The whole-word token of ``M_word`` is *derived from the tokenizer*: the
   sentence is tokenized with the word in place of the mask and the token(s) at that
   position are taken (``man`` for uncased WordPiece, ``Ġman`` for byte-level BPE, but
   ``He`` at the start of a RoBERTa sentence, ``▁man`` for SentencePiece, ``man`` for
   BERTweet's fastBPE). ``word_rule="fmat"`` applies FMAT's model-name rules instead
   (:data:`PATTERN_SPECIAL`). See docs/scoring.md.
3. **Out-of-vocabulary.** A word that is several tokens, or the unknown token, is OOV:
   ``oov`` True, ``prob`` NaN (``na_out=True``; with ``na_out=False`` the first piece's
   probability, as FMAT does), and one warning per model names the words. FMAT misses the
   unknown-token case; fmat does not.
4. **Probability.** ``prob`` = softmax over the full vocabulary at the mask, read at the
   option's token id; never renormalised. ``logp`` = the log-softmax (natural log),
   computed directly (more precise than ``log(prob)`` for tiny probabilities).

Speed: one forward pass per unique sentence, every option read from it; sentences sorted by
length and batched by padded tokens (:func:`plan_batches`); the vocabulary projection (the
LM head) applied only at the mask positions; ``torch.inference_mode``. Equal to the
fill-mask pipeline (tests: |Δ log p| ≤ 1e-5), 7-9.5× faster on a 2-core CPU, at 64-71% of
its fp32 matmul peak (benchmarks/bench_scoring.py, docs/scoring.md).
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd

from .errors import InputError, ModelError
# re-exported: fmat.scoring.PATTERN_SPECIAL, Option, fmat_word_form stay where users found them
from .tokens import (PATTERN_SPECIAL, Option, _tokenize_many, derive_options, fill_sentences,  # noqa: F401
                     fmat_rule_options, fmat_word_form, mask_position)

log = logging.getLogger(__name__)

SCORE_COLUMNS = ["output", "token", "prob", "token_id", "logp", "oov"]
METHODS = ("fmat", "lpbs")


class OOVWarning(UserWarning):
    """Option words that are not one whole-word token of a model."""


# ----------------------------------------------------------------------------- sentences


# ----------------------------------------------------------------------------- option tokens


# ----------------------------------------------------------------------------- model head

def _encoder_and_head(model):
    """(encoder(input_ids, attention_mask) -> hidden, head(hidden at masks) -> logits, decoder Linear).

    The head is the model's own MLM head modules applied to the mask hidden states only.
    Unknown architectures fall back to the full forward pass (head=None).
    """
    import torch.nn as nn

    name = type(model).__name__
    base = getattr(model, "base_model", None)
    head = None
    if hasattr(model, "cls") and hasattr(model.cls, "predictions"):            # BERT family
        head = model.cls
    elif hasattr(model, "lm_head") and name.startswith(("Roberta", "XLMRoberta", "Camembert")):
        head = model.lm_head
    elif hasattr(model, "predictions") and name.startswith("Albert"):
        head = model.predictions
    elif name.startswith("DistilBert"):
        def distil_head(h, m=model):
            return m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))

        head = distil_head
    if base is None or base is model:
        head = None
    decoder = model.get_output_embeddings()
    if not isinstance(decoder, nn.Linear):
        decoder = None
    return base, head, decoder


def _mask_logits(model, base, head, decoder, input_ids, attention_mask, mask_pos, extra_emb=None):
    """Logits over the vocabulary (+ added tokens) at the mask positions, shape (n, V [+k])."""
    import torch

    rows = torch.arange(input_ids.shape[0], device=input_ids.device)
    captured = {}
    hook = None
    if extra_emb is not None:
        if decoder is None:
            raise ModelError(f"add_tokens is not supported for {type(model).__name__}",
                             fix="run without add_tokens")
        hook = decoder.register_forward_pre_hook(lambda mod, args: captured.__setitem__("x", args[0]))
    try:
        if head is not None:
            hidden = base(input_ids=input_ids, attention_mask=attention_mask)[0]
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
#: device type. On a CPU the encoder's matrix products need ~1,000 rows to run near the
#: machine's matmul peak: 32 sentences of ~9 tokens (288 rows) reach ~65% of it, 1,024 tokens
#: ~75% (benchmarks/bench_scoring.py). On a GPU bigger passes keep the device busy; the
#: sentence cap bounds the (sentences × vocabulary) logits (512 × 250k fp32 = 0.5 GB).
AUTO_BATCH = {"cpu": (1024, 256), "cuda": (8192, 512)}


def plan_batches(lengths, batch_size: int | None = None, max_tokens: int | None = None,
                 device_type: str = "cpu") -> list[np.ndarray]:
    """Length-sorted batches (longest first) of indices into ``lengths`` (token counts).

    ``batch_size`` caps the sentences of a pass, ``max_tokens`` its padded tokens (sentences ×
    the longest one's length; a longer sentence gets a pass of its own). Neither given: the
    device's :data:`AUTO_BATCH`. Only ``batch_size`` given: exactly that many per pass (FMAT's
    fixed batches). Only ``max_tokens``: the token cap with the device's sentence cap.
    With a token cap, a last pass of less than half its size shares the sentences of the pass
    before it evenly. Sorting by length keeps padding small; results do not depend on the
    batches (tested).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    for arg, v in (("batch_size", batch_size), ("max_tokens", max_tokens)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise InputError(f"{arg} must be a whole number of at least 1 (got {v!r})",
                             fix=f"e.g. {arg}={'64' if arg == 'batch_size' else '1024'}, or leave it unset (automatic)")
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
        out.append(order[b0:b0 + n])
        b0 += n
    if by_tokens and len(out) >= 2:
        # a short last pass runs the dense layers on few rows: the last two passes share their
        # sentences evenly instead, where both halves keep within their caps
        both = np.concatenate(out[-2:])
        half = (len(both) + 1) // 2
        if 2 * len(out[-1]) < cap(out[-1][0]) and half <= cap(both[0]) and len(both) - half <= cap(both[half]):
            out[-2:] = [both[:half], both[half:]]
    return out


def mask_logp(model, tokenizer, inputs, mask_pos, row_input, token_ids, batch_size: int | None = None,
              max_tokens: int | None = None, extra_emb=None, bar=None) -> np.ndarray:
    """ln P(``token_ids[r]`` | sequence ``inputs[row_input[r]]``) at its ``mask_pos`` (natural log), per row r.

    ``inputs`` are token-id sequences with special tokens, each read at one position. One
    forward pass per sequence however many rows read it, in :func:`plan_batches` batches; the
    MLM head only at the read positions; the full-vocabulary log-softmax on the model's device,
    of which only the rows' entries come back (float64). ``extra_emb``: temporary added tokens
    (:func:`score_model`'s ``add_tokens``). ``bar``: a tqdm bar advanced by sequences.
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
    base, head, decoder = _encoder_and_head(model)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with torch.inference_mode():
        for idx in plan_batches(lengths, batch_size, max_tokens, device.type):
            L = int(lengths[idx].max())
            ids = np.full((len(idx), L), pad_id, dtype=np.int64)
            att = np.zeros((len(idx), L), dtype=np.int64)
            for k, s in enumerate(idx):
                ids[k, :lengths[s]] = inputs[s]
                att[k, :lengths[s]] = 1
            logits = _mask_logits(model, base, head, decoder, torch.from_numpy(ids).to(device),
                                  torch.from_numpy(att).to(device), torch.from_numpy(mask_pos[idx]).to(device),
                                  extra_emb)
            n_rows = starts[idx + 1] - starts[idx]
            rows = np.concatenate([rows_by_input[starts[s]:starts[s + 1]] for s in idx])
            k = torch.from_numpy(np.repeat(np.arange(len(idx)), n_rows)).to(device)
            lsm = torch.log_softmax(logits, dim=-1)
            out[rows] = lsm[k, torch.from_numpy(token_ids[rows]).to(device)].double().cpu().numpy()
            if bar is not None:
                bar.update(len(idx))
    return out


# ----------------------------------------------------------------------------- run


def _check_query_table(data) -> None:
    if not isinstance(data, pd.DataFrame):
        raise InputError("data must be a query table (pandas DataFrame)", fix="build it with fmat.query()")
    missing = [c for c in ("query", "M_word") if c not in data.columns]
    if missing:
        raise InputError(f"query table lacks column(s) {missing}", fix="build it with fmat.query()")
    if len(data) == 0:
        raise InputError("the query table has no rows", fix="give at least one query and MASK word")
    from .validate import check_query_table

    check_query_table(data)


def score_model(model, tokenizer, data: pd.DataFrame, name: str = "model", batch_size: int | None = None,
                add_tokens: bool = False, na_out: bool = True, progress: bool = True,
                word_rule: str = "tokenizer", pattern_special=None, weight_decay: float = 1.0,
                max_tokens: int | None = None) -> pd.DataFrame:
    """Score ``data`` on one loaded model; returns the query columns + :data:`SCORE_COLUMNS`.

    ``batch_size``/``max_tokens``: see :func:`plan_batches`.
    """
    import torch

    sentences = fill_sentences(data, tokenizer.mask_token)
    words = data["M_word"].astype(str).to_numpy()
    if word_rule == "fmat":
        opts = fmat_rule_options(tokenizer, name, data["query"].astype(str).to_numpy(), words, pattern_special)
    else:
        opts = derive_options(tokenizer, sentences, words)

    # OOV report: one warning per model
    oov_words = list(dict.fromkeys(w for w, o in zip(words, opts) if o.oov))
    unk_words = list(dict.fromkeys(w for w, o in zip(words, opts) if o.unk))

    # added tokens (temporary): one new id per distinct piece sequence
    V = model.get_input_embeddings().weight.shape[0]
    extra_ids: dict[tuple, int] = {}
    extra_emb = None
    if add_tokens:
        emb = model.get_input_embeddings().weight
        vecs = []
        for o in opts:
            if o.oov and not o.unk and len(o.pieces) > 1 and tuple(o.pieces) not in extra_ids:
                extra_ids[tuple(o.pieces)] = V + len(extra_ids)
                w = torch.tensor([weight_decay ** i for i in range(len(o.pieces))], dtype=torch.float32)
                w = (w / w.sum()).to(emb.device)
                vecs.append((w[:, None] * emb[torch.tensor(o.pieces, device=emb.device)].float()).sum(0))
        if vecs:
            extra_emb = torch.stack(vecs).detach()
    if oov_words:
        parts = [f"model {name}: {len(oov_words)} option word(s) are not one whole-word token: "
                 + ", ".join(oov_words[:30]) + (" ..." if len(oov_words) > 30 else "")]
        if unk_words:
            parts.append(f"(the unknown token for: {', '.join(unk_words[:30])})")
        if add_tokens:
            parts.append(f"-> added temporarily as {len(extra_ids)} new token(s)"
                         + ("; unknown-token words stay NaN" if unk_words else ""))
        elif na_out:
            parts.append("-> prob NaN (na_out=True); consider add_tokens=True or other words")
        else:
            parts.append("-> prob of the FIRST piece (na_out=False)")
        warnings.warn(" ".join(parts), OOVWarning, stacklevel=3)

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

    # unique sentences → forward passes
    uniq, row_sent = np.unique(sentences.astype(str), return_inverse=True)
    enc = _tokenize_many(tokenizer, list(uniq), special=True)
    _check_lengths(model, tokenizer, enc, uniq, row_sent, data, name)
    mask_id = tokenizer.mask_token_id
    mpos = np.array([mask_position(e, mask_id, uniq[s], name) for s, e in enumerate(enc)], dtype=np.int64)
    bar = _progress(len(uniq), name) if progress else None
    try:
        logp = mask_logp(model, tokenizer, enc, mpos, row_sent, row_ids, batch_size=batch_size,
                         max_tokens=max_tokens, extra_emb=extra_emb, bar=bar)
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


def max_sequence_length(model, tokenizer) -> int | None:
    """The most tokens (special tokens included) ``model`` reads in one sentence."""
    limits = []
    if 0 < (tokenizer.model_max_length or 0) < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    cfg = getattr(model, "config", None)
    n = getattr(cfg, "max_position_embeddings", None)
    if n:
        if "roberta" in str(getattr(cfg, "model_type", "")) or getattr(cfg, "model_type", "") == "camembert":
            n -= (getattr(cfg, "pad_token_id", None) or 0) + 1   # positions start after the padding index
        limits.append(int(n))
    return min(limits) if limits else None


def _check_lengths(model, tokenizer, enc, uniq, row_sent, data: pd.DataFrame, name: str) -> None:
    """Every sentence fits the model (BERT would silently cut it, RoBERTa crash): an InputError
    naming the longest word of the first sentence that does not, before any forward pass."""
    from . import validate

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
    seqs, cache, keys = [], {}, []
    for i, o in enumerate(opts):
        fill = tuple(o.pieces) if o.oov else (int(row_ids[i]),)
        key = (int(row_sent[i]), fill)
        if key not in cache:
            e = enc[row_sent[i]]
            p = e.index(mask_id)
            cache[key] = len(seqs)
            seqs.append(list(e[:p]) + list(fill) + list(e[p + 1:]))
        keys.append(cache[key])
    decoded = tokenizer.batch_decode(seqs, skip_special_tokens=True)
    return [decoded[k] for k in keys]


def _token_labels(tokenizer, opts, row_ids, extra_ids, add_tokens) -> list[str]:
    out = []
    for i, o in enumerate(opts):
        if not o.oov:
            out.append(tokenizer.convert_ids_to_tokens(int(row_ids[i])))
        elif add_tokens and tuple(o.pieces) in extra_ids:
            out.append(tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(o.pieces)).strip()
                       + " (added)")
        else:
            first = tokenizer.convert_ids_to_tokens(o.pieces[0]) if o.pieces else str(tokenizer.unk_token)
            out.append(f"{first} (out-of-vocabulary)")
    return out


def _progress(total: int, name: str):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc=f"{name}", unit="sent", leave=False)
