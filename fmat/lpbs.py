"""Log probability bias score (LPBS; Kurita et al., 2019): option probabilities over their prior.

Kurita, Vyas, Pareek, Black & Tsvetkov (2019), *Measuring bias in contextualized word
representations* (https://arxiv.org/abs/1906.07337), correct a masked LM's probability of a
target word for how likely the model finds that word in the template anyway:

    p_tgt   = P(he | "[MASK] is a nurse.")
    p_prior = P(he | "[MASK] is [MASK] [MASK].")       # the attribute phrase masked
    increased log probability  = log(p_tgt / p_prior)
    LPBS = log(p_tgt,a / p_prior,a) - log(p_tgt,b / p_prior,b)     (a = "he", b = "she")

The option is the ``MASK`` word, read at the query's own mask; every token of the row's
``{TARGET}``/``{ATTRIB}`` phrase is masked in the prior sentence. :func:`score_model` adds
``prior`` and ``logp_prior`` to :func:`fmat.scoring.score_model`'s columns; :func:`summary`
forms LPBS contrasts with :func:`fmat.lpr.summary`'s pairing rules. Rules and direction: docs/lpbs.md.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from .errors import InputError
from .lpr import summary as lpr_summary
from .scoring import mask_logp
from .scoring import score_model as _score
from .tokens import _diff_span, _tokenize_many, fill_sentences, mask_position

#: the columns :func:`score_model` adds after fmat.scoring's ``SCORE_COLUMNS``
PRIOR_COLUMNS = ["prior", "logp_prior"]
#: the name of the measure in ``attrs["measure"]`` of :func:`summary`'s table
MEASURE = "LPBS"
_SLOTS = (("{TARGET}", "T_word"), ("{ATTRIB}", "A_word"))


def _slot_columns(data: pd.DataFrame) -> list[tuple[str, str]]:
    return [(ph, col) for ph, col in _SLOTS if col in data.columns]


def _check_lpbs_table(data: pd.DataFrame) -> None:
    if not _slot_columns(data):
        raise InputError(
            "method 'lpbs' needs a {TARGET} or {ATTRIB} phrase to mask for the prior, but the query table has neither (type M)",
            where="score.method",
            fix="use method 'fmat' for MASK-only designs, or add TARGET/ATTRIB words (e.g. '[MASK] is {ATTRIB}.')",
        )


def prior_inputs(tokenizer, data: pd.DataFrame) -> tuple[list[list[int]], np.ndarray, np.ndarray, np.ndarray]:
    """The prior sentence of every row, as token ids.

    Returns ``(inputs, row_input, mask_pos, n_masked)``: the unique prior id sequences (with
    special tokens), for each row the index of its sequence, the position of the query's own
    mask in it, and how many phrase tokens were masked. See the module docstring.

    Examples
    --------
    >>> from fmat.tiny import doc_tokenizer
    >>> tok = doc_tokenizer(["the", "man", "is", "a", "nurse", "pilot", "."])  # ids 0-4 special, then 5, 6, ...
    >>> import fmat
    >>> q = fmat.query("the [MASK] is a {TARGET} .", MASK={"Male": ["man"], "Female": ["nurse"]}, TARGET={"Job": ["pilot"]})
    >>> inputs, row_input, mask_pos, n_masked = prior_inputs(tok, q)
    >>> tok.convert_ids_to_tokens(inputs[0]), row_input.tolist(), mask_pos.tolist(), n_masked.tolist()
    (['[CLS]', 'the', '[MASK]', 'is', 'a', '[MASK]', '.', '[SEP]'], [0, 0], [2], [1])
    """
    _check_lpbs_table(data)
    mask, mask_id = tokenizer.mask_token, tokenizer.mask_token_id
    slots = _slot_columns(data)
    cols = ["query"] + [col for _, col in slots]
    keys = list(zip(*(data[c].astype(str).to_numpy() for c in cols)))
    uniq = list(dict.fromkeys(keys))
    key_index = {k: i for i, k in enumerate(uniq)}
    # the full sentence (all slots filled) and, per slot, the sentence with that slot's phrase
    # as one mask token (the other slots filled)
    full = list(fill_sentences(pd.DataFrame(uniq, columns=cols), mask))

    def with_slot_masked(k, s):
        text = k[0]
        for (ph, _), w in zip(slots, k[1:]):
            text = text.replace(ph, mask if ph == s else w, 1)
        return text.replace("[MASK]", mask)

    enc_full = _tokenize_many(tokenizer, full, special=True)
    masked_by_slot = {}
    for ph, _ in slots:
        todo = [i for i, k in enumerate(uniq) if ph in k[0]]
        enc = _tokenize_many(tokenizer, [with_slot_masked(uniq[i], ph) for i in todo], special=True)
        masked_by_slot[ph] = dict(zip(todo, enc))
    inputs, pos, nmask = [], [], []
    for i, k in enumerate(uniq):
        ids = list(enc_full[i])
        m = mask_position(ids, mask_id, full[i])
        spans = [_diff_span(ids, list(masked_by_slot[ph][i])) for ph, _ in slots if i in masked_by_slot[ph]]
        if not spans:
            raise InputError(
                f"query {k[0]!r} has no {{TARGET}} or {{ATTRIB}} placeholder to mask for the prior",
                where="query table",
                fix="use method 'fmat' for this query, or add the placeholder",
            )
        if any(a <= m < b for a, b in spans):  # pragma: no cover - the phrase's tokens never include the query's mask
            raise InputError(
                f"cannot separate the phrase from the mask in {full[i]!r}",
                where="query table",
                fix="put a space between [MASK] and {TARGET}/{ATTRIB}",
            )
        masked = {p for a, b in spans for p in range(a, b) if ids[p] != mask_id}
        inputs.append([mask_id if p in masked else t for p, t in enumerate(ids)])
        pos.append(m)
        nmask.append(len(masked))
    row_input = np.array([key_index[k] for k in keys], dtype=np.int64)
    return inputs, row_input, np.array(pos, dtype=np.int64), np.array(nmask, dtype=np.int64)


def prior_logp(
    model,
    tokenizer,
    inputs: list[list[int]],
    mask_pos: np.ndarray,
    row_input: np.ndarray,
    token_ids: np.ndarray,
    batch_size: int | None = None,
    max_tokens: int | None = None,
) -> np.ndarray:
    """ln P(token_ids[r] | prior sentence of row r) at the query's mask position (natural log).

    fmat.scoring's forward pass (:func:`fmat.scoring.mask_logp`): sequences sorted by length
    and batched, the MLM head at ``mask_pos`` only, full-vocabulary log-softmax.

    Examples
    --------
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> import fmat
    >>> q = fmat.query("the [MASK] is a {TARGET} .", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Job": ["nurse"]})
    >>> inputs, row_input, mask_pos, _ = prior_inputs(tok, q)
    >>> token_ids = np.array(tok.convert_tokens_to_ids(q["M_word"].astype(str).tolist()))
    >>> lp = prior_logp(model, tok, inputs, mask_pos, row_input, token_ids)
    >>> lp.shape, bool((lp < 0).all())
    ((2,), True)
    """
    return mask_logp(model, tokenizer, inputs, mask_pos, row_input, token_ids, batch_size=batch_size, max_tokens=max_tokens)


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
    pattern_special: Mapping[str, str] | None = None,
    weight_decay: float = 1.0,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """:func:`fmat.scoring.score_model` plus each option's prior (Kurita et al., 2019).

    Returns the query columns, ``output, token, prob, token_id, logp, oov`` (the ordinary
    scores) and ``prior`` (P(option) at the query's mask with the TARGET/ATTRIB phrase's tokens
    all masked) and ``logp_prior`` (its natural log). NaN prior where ``prob`` is NaN.

    ``add_tokens`` is not supported (InputError): the prior would need the temporary tokens.

    Examples
    --------
    Kurita et al.'s (2019) scores (probabilities and their priors) of one model, here a tiny random one:

    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> import fmat
    >>> q = fmat.query("the [MASK] is a {TARGET} .", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Job": ["nurse"]})
    >>> scores = score_model(model, tok, q, progress=False)
    >>> scores[["M_word", "T_word", "oov"]].assign(has_prior=scores["prior"].between(0, 1))
      M_word T_word    oov  has_prior
    0    man  nurse  False       True
    1  woman  nurse  False       True
    """
    if add_tokens:
        raise InputError(
            "add_tokens cannot be combined with method 'lpbs'",
            where="score.add_tokens",
            fix="set add_tokens: false (out-of-vocabulary words then get NaN), or use method 'fmat'",
        )
    _check_lpbs_table(data)
    out = _score(
        model,
        tokenizer,
        data,
        name=name,
        batch_size=batch_size,
        max_tokens=max_tokens,
        add_tokens=False,
        na_out=na_out,
        progress=progress,
        word_rule=word_rule,
        pattern_special=pattern_special,
        weight_decay=weight_decay,
    )
    inputs, row_input, mpos, _ = prior_inputs(tokenizer, data)
    lp = prior_logp(
        model,
        tokenizer,
        inputs,
        mpos,
        row_input,
        out["token_id"].to_numpy(dtype=np.int64),
        batch_size=batch_size,
        max_tokens=max_tokens,
    )
    lp[np.isnan(out["logp"].to_numpy(dtype=float))] = np.nan
    out["prior"] = np.exp(lp)
    out["logp_prior"] = lp
    return out


# ----------------------------------------------------------------------------- summary


def increased_logp(scores: pd.DataFrame) -> np.ndarray:
    """ln(p_tgt / p_prior) per row (Kurita et al.'s "increased log probability"), natural log.

    From ``logp - logp_prior`` when both are there (exact for tiny probabilities), else from
    ``log(prob) - log(prior)``.

    Examples
    --------
    >>> import pandas as pd
    >>> scores = pd.DataFrame({"prob": [0.2, 0.05], "prior": [0.1, 0.1]})
    >>> increased_logp(scores).round(3)
    array([ 0.693, -0.693])
    """

    def col(name: str) -> np.ndarray:
        return pd.to_numeric(scores[name], errors="coerce").to_numpy(dtype=float)

    if {"logp", "logp_prior"} <= set(scores.columns):
        return col("logp") - col("logp_prior")
    if "prior" not in scores.columns:
        raise InputError(
            "scores have no 'prior' column, so LPBS cannot be computed",
            where="scores",
            fix="score with method 'lpbs' (study file: score: {method: lpbs}; Python: fmat.run(..., method='lpbs'))",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(col("prob")) - np.log(col("prior"))


def summary(
    scores: pd.DataFrame, mask_pair: bool = True, target_pair: bool = True, attrib_pair: bool = True, column: str = "LPR"
) -> pd.DataFrame:
    """LPBS contrasts (Kurita et al., 2019) with :func:`fmat.lpr.summary`'s pairing rules.

    Each row's value is ln(p_tgt / p_prior) (:func:`increased_logp`) instead of ln(p), then
    contrasted as :func:`fmat.lpr.summary` contrasts ln(p): with ``mask_pair=True`` (he - she)
    it is Kurita et al.'s LPBS = ln(p_a / prior_a) - ln(p_b / prior_b). The value column is
    ``column`` (default ``"LPR"``, which the later stages read); ``attrs["measure"]`` says "LPBS".

    Examples
    --------
    Kurita et al.'s (2019) log probability bias score, paired as R FMAT's ``summary()`` pairs LPRs:

    >>> import numpy as np, fmat
    >>> q = fmat.query("[MASK] is a {TARGET}.", MASK={"Male": ["he"], "Female": ["she"]}, TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = q.assign(model="m", prob=[0.1, 0.3, 0.4, 0.2], prior=[0.2, 0.2, 0.4, 0.4])
    >>> out = summary(scores, target_pair=False)
    >>> out[["M_word", "T_word", "LPR"]].round(3)
         M_word T_word    LPR
    0  he - she  nurse -1.099
    1  he - she  pilot  0.693
    >>> out.attrs["measure"]
    'LPBS'
    """
    if not isinstance(scores, pd.DataFrame):
        raise InputError(
            "scores must be a table (DataFrame)", where="scores", fix="pass the output of fmat.run(..., method='lpbs')"
        )
    ratio = increased_logp(scores)
    # fmat.lpr.summary takes ln(prob): give it exp(ln(p/prior)), whose log is the ratio again
    # (exact to ~1e-16 relative for ratios in double range)
    tmp = scores.copy()
    with np.errstate(over="ignore"):
        tmp["prob"] = np.exp(ratio)
    out = lpr_summary(tmp, mask_pair=mask_pair, target_pair=target_pair, attrib_pair=attrib_pair)
    if column != "LPR":
        out = out.rename(columns={"LPR": column})
    out.attrs["measure"] = MEASURE
    return out
