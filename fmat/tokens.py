"""Option tokens: which token(s) of a model's vocabulary an option word is at the mask.

The sentence of a query row (:func:`fill_sentences`), the whole-word token derived from the
tokenizer (:func:`derive_options`) or from FMAT's model-name rules (:func:`fmat_rule_options`,
:data:`PATTERN_SPECIAL`), and the mask's position. Needs only a tokenizer: :mod:`fmat.models`
(``vocab``) and :mod:`fmat.scoring` both build on it, and it imports neither. Also the model's
token embedding matrix (:func:`input_embedding_matrix`: the vocabulary's rows), which both need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import InputError

#: FMAT's model-name rules (R FMAT_run's ``pattern.special``, plus ModernBERT from 2026.1)
PATTERN_SPECIAL = {
    "uncased": r"uncased|albert|electra|muhtasham",
    "prefix_u2581": r"albert|xlm-roberta|xlnet",
    "prefix_u2581_excl": r"chinese",
    "prefix_u0120": r"roberta|bart|deberta|bertweet-large|ModernBERT",
    "prefix_u0120_excl": r"chinese|xlm-|kornosk/",
}


def fill_sentences(data: pd.DataFrame, mask_token: str = "[MASK]") -> np.ndarray:
    """The sentence of every row: {TARGET}/{ATTRIB} filled (first occurrence), [MASK] → ``mask_token``.

    Examples
    --------
    >>> import pandas as pd
    >>> q = pd.DataFrame({"query": ["[MASK] is a {TARGET}."] * 2, "T_word": ["nurse", "pilot"]})
    >>> fill_sentences(q, mask_token="<mask>").tolist()
    ['<mask> is a nurse.', '<mask> is a pilot.']
    """
    slots = [(ph, c) for ph, c in (("{TARGET}", "T_word"), ("{ATTRIB}", "A_word")) if c in data]
    q = data["query"].astype(str).to_numpy()
    cache: dict = {}
    out = np.empty(len(q), dtype=object)
    for i, key in enumerate(zip(q, *(data[c].astype(str).to_numpy() for _, c in slots))):
        if key not in cache:
            s = key[0]
            for (ph, _), word in zip(slots, key[1:]):
                s = s.replace(ph, word, 1)
            if s.count("[MASK]") != 1:
                raise InputError(
                    f"query {key[0]!r} must contain exactly one [MASK]",
                    where=f"query table row {i + 1}",
                    fix="build the table with fmat.query(), one [MASK] per query",
                )
            cache[key] = s.replace("[MASK]", mask_token)
        out[i] = cache[key]
    return out


@dataclass
class Option:
    """How one option word reads in one sentence context of one model.

    Examples
    --------
    >>> Option(pieces=[2158]).oov, Option(pieces=[101, 102]).oov, Option(pieces=[100], unk=True).oov
    (False, True, True)
    """

    pieces: list[int]  # token ids of the word at the mask position
    unk: bool = False  # (one of) the pieces is the unknown token

    @property
    def oov(self) -> bool:
        return len(self.pieces) != 1 or self.unk


def _tokenize_many(tokenizer, texts: Sequence[str], special: bool = False) -> list[list[int]]:
    """Token ids of ``texts`` (with the model's special tokens when ``special``); the ids only:
    building attention masks and token types that nobody reads made tokenizing 4× slower."""
    if not texts:
        return []
    try:
        return tokenizer(list(texts), add_special_tokens=special, return_attention_mask=False, return_token_type_ids=False)[
            "input_ids"
        ]
    except ValueError:  # TAPAS's tokenizer insists on building its token types
        return tokenizer(list(texts), add_special_tokens=special)["input_ids"]


def _diff_span(a: list[int], b: list[int]) -> tuple[int, int]:
    """[start, end) of the tokens of ``a`` that differ from ``b`` (common head and tail removed)."""
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    j = next((k for k in range(n - i) if a[-1 - k] != b[-1 - k]), n - i)
    return i, len(a) - j


def mask_position(ids: Sequence[int], mask_id: int, sentence: str, model: str | None = None) -> int:
    """The position of the one mask token in ``ids`` (the tokens of ``sentence``); InputError otherwise.

    Examples
    --------
    >>> mask_position([101, 1996, 103, 2003, 102], mask_id=103, sentence="The [MASK] is")
    2
    """
    where = [p for p, t in enumerate(ids) if t == mask_id]
    if len(where) != 1:
        raise InputError(
            f"sentence {str(sentence)!r} has {len(where)} mask tokens" + (f" for model {model}" if model else ""),
            where="query table",
            fix="each query needs exactly one [MASK]; TARGET/ATTRIB words must not contain it",
        )
    return where[0]


def derive_options(tokenizer, contexts: Sequence[str], words: Sequence[str]) -> list[Option]:
    """Whole-word token ids of ``words[i]`` in sentence ``contexts[i]`` (mask token in place).

    Tokenizes ``prefix + word + sep + suffix`` and ``prefix + <mask> + sep + suffix`` and takes
    the tokens where they differ (common leading and trailing tokens removed). ``sep`` is a
    space when the suffix starts with a non-space character (e.g. ``[MASK].``), so that a
    tokenizer that splits on whitespace only (BERTweet's fastBPE) sees the word as a word, as
    in its training text; tokenizers that split punctuation give the same word tokens either way.

    Examples
    --------
    >>> from fmat.tiny import doc_tokenizer
    >>> tok = doc_tokenizer(["the", "man", "is", "a", "nurse", "pilot", "."])  # ids 0-4 special, then 5, 6, ...
    >>> opts = derive_options(tok, ["the [MASK] is here .", "the [MASK] is here ."], ["nurse", "doctor"])
    >>> [(o.pieces, o.oov) for o in opts]
    [([9], False), ([1], True)]
    """
    mask = tokenizer.mask_token
    unk_id = tokenizer.unk_token_id
    refs: dict[str, int] = {}
    filled, ref_of = [], []
    for ctx, w in zip(contexts, words):
        pre, _, suf = ctx.partition(mask)
        sep = " " if suf and not suf[0].isspace() else ""
        ref = pre + mask + sep + suf
        ref_of.append(refs.setdefault(ref, len(refs)))
        filled.append(pre + str(w) + sep + suf)
    uniq_filled = list(dict.fromkeys(filled))
    tok_filled = dict(zip(uniq_filled, _tokenize_many(tokenizer, uniq_filled)))
    tok_ref = _tokenize_many(tokenizer, list(refs))
    out = []
    for f, r in zip(filled, ref_of):
        a = tok_filled[f]
        start, end = _diff_span(a, tok_ref[r])
        pieces = list(a[start:end])
        out.append(Option(pieces=pieces, unk=unk_id is not None and unk_id in pieces))
    return out


def fmat_word_form(word: str, model_name: str, query: str, pattern_special: Mapping[str, str] | None = None) -> str:
    """FMAT's option-word processing by model-name regex (R ``FMAT_run``'s ``pattern.special``).

    names matching ``uncased`` → lower-case; ``prefix_u2581`` (not ``..._excl``) → prefix ▁;
    ``prefix_u0120`` (not ``..._excl``) → prefix a space, unless the query starts with [MASK].

    Examples
    --------
    As R FMAT's ``FMAT_run()`` with its default ``pattern.special``:

    >>> fmat_word_form("Man", "bert-base-uncased", "The [MASK] is here.")
    'man'
    >>> fmat_word_form("man", "roberta-base", "The [MASK] is here."), fmat_word_form("man", "roberta-base", "[MASK] is here.")
    (' man', 'man')
    >>> fmat_word_form("man", "albert-base-v2", "The [MASK] is here.")
    '▁man'
    """
    p = dict(PATTERN_SPECIAL, **(pattern_special or {}))

    def hit(key):
        return bool(p.get(key)) and re.search(p[key], model_name, flags=re.IGNORECASE) is not None

    w = str(word)
    if hit("uncased"):
        w = w.lower()
    if hit("prefix_u2581") and not hit("prefix_u2581_excl"):
        w = "\u2581" + w
    if hit("prefix_u0120") and not hit("prefix_u0120_excl") and not str(query).lstrip().startswith("[MASK]"):
        w = " " + w
    return w


def fmat_rule_options(
    tokenizer, model_name: str, queries: Sequence[str], words: Sequence[str], pattern_special=None
) -> list[Option]:
    """Option ids by FMAT's rule: exact vocabulary lookup of the processed word, else its encoding.

    Examples
    --------
    As R FMAT's ``FMAT_run()`` finds an option's token:

    >>> from fmat.tiny import doc_tokenizer
    >>> tok = doc_tokenizer(["the", "man", "is", "a", "nurse", "pilot", "."])  # ids 0-4 special, then 5, 6, ...
    >>> opts = fmat_rule_options(tok, "bert-base-uncased", ["the [MASK] is here ."] * 2, ["Nurse", "doctor"])
    >>> [(o.pieces, o.oov) for o in opts]
    [([9], False), ([1], True)]
    """
    vocab = tokenizer.get_vocab()
    unk_id = tokenizer.unk_token_id
    cache: dict = {}
    out = []
    for q, w in zip(queries, words):
        form = fmat_word_form(w, model_name, q, pattern_special)
        if form not in cache:
            if form in vocab:
                ids = [vocab[form]]
            elif form.startswith(" ") and ("Ġ" + form[1:]) in vocab:
                ids = [vocab["Ġ" + form[1:]]]
            else:
                ids = _tokenize_many(tokenizer, [form])[0]
            cache[form] = Option(pieces=list(ids), unk=unk_id is not None and unk_id in ids)
        out.append(cache[form])
    return out


def input_embedding_matrix(model):
    """The token embedding matrix (vocabulary × width) of ``model``: the weight of its input
    embedding module. Where that is not the vocabulary's (Perceiver's ``get_input_embeddings``
    returns its latent array), the embedding module with ``config.vocab_size`` rows.

    Examples
    --------
    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model(["the", "man", "woman", "is", "here", "."])  # a one-layer BERT, random weights (seed 0)
    >>> tuple(input_embedding_matrix(model).shape)
    (11, 8)
    """
    import torch.nn as nn

    emb = model.get_input_embeddings()
    weight = getattr(emb, "weight", emb)
    cfg = model.config
    vocab = getattr(cfg, "vocab_size", None) or getattr(getattr(cfg, "text_config", None), "vocab_size", None)
    if vocab and weight.shape[0] != vocab:
        for m in model.modules():
            if isinstance(m, nn.Embedding) and m.num_embeddings == vocab:
                return m.weight
    return weight
