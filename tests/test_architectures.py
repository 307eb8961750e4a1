"""Every masked-LM architecture transformers ships, scored by fmat.run, equals the fill-mask pipeline.

The architectures are enumerated from transformers' own ``AutoModelForMaskedLM`` mapping, so a
new one cannot be missed: each is either built small by :func:`tiny_arch.build_tiny_arch` (a
tiny random model with a tokenizer of its kind, weights spread by :func:`tiny_arch.sharpen` so
that the options' probabilities differ by orders of magnitude) or listed with its reason:

* ``tiny_arch.NOT_BUILT`` -- reformer: its tokenizer has no mask token (checked below).
* ``REFUSED`` -- roc_bert: built; its tokenizer gives the model two more per-token inputs
  (glyph shape, pronunciation) that fmat does not pass, so fmat refuses it (ModelError) rather
  than give other numbers than the pipeline (checked below: the pipeline's numbers do differ).

Reference: ``pipeline("fill-mask", targets=[token])`` one sentence at a time (no padding),
on the same folder: same token id, |Δp| ≤ 1e-5, sentences starting with the mask included;
OOV words flagged. ``test_the_comparison_can_fail`` shows that the comparison catches a
wrong padding rule.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import tiny_arch
import torch

from fmat import tiny
from fmat.errors import ModelError
from fmat.runner import run
from fmat.scoring import OOVWarning, scoring_path

torch.set_num_threads(1)

WORDS = [
    "man",
    "woman",
    "He",
    "She",
    "his",
    "her",
    "doctor",
    "nurse",
    "Paris",
    "capital",
    "France",
    "works",
    "as",
    "I",
    "think",
    "is",
    "a",
    "in",
    "The",
]
OOV = "zyzzogeton"
NO_PIPELINE: dict[str, str] = {}
REFUSED = {"roc_bert": "RoCBert's tokenizer gives the model glyph-shape and pronunciation ids that fmat does not pass"}
#: architectures the fast path (MLM head at the mask only) must cover (issue 26)
FAST = ["modernbert", "deberta-v2", "electra", "xlm-roberta", "mpnet", "bert", "roberta", "albert", "distilbert"]
#: architectures whose outputs depend on padding (issue 26; FNet, YOSO and Nystromformer found by the rule)
PADDING_SENSITIVE = ["mobilebert", "convbert", "funnel", "fnet"]


def _mapping() -> dict[str, str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return dict(MODEL_FOR_MASKED_LM_MAPPING_NAMES)


COMPARED = [m for m in tiny_arch.ARCHITECTURES if m not in NO_PIPELINE and m not in REFUSED]


@pytest.fixture(scope="session")
def archs(tmp_path_factory):
    """{model_type: folder} of every built architecture, sharpened; built once per session."""
    from transformers.utils import logging as hf_logging

    root = tmp_path_factory.getbasetemp() / "fmat_tiny_archs"
    corpus = tiny.make_corpus(WORDS, seed=1)
    trained: dict = {}
    out = {}
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        for mt in tiny_arch.ARCHITECTURES:
            path = root / mt
            if not (path / tiny.META_FILE).exists():
                tiny_arch.build_tiny_arch(path, mt, WORDS, seed=1, corpus=corpus, trained=trained)
                tiny_arch.sharpen(path, std=0.4)  # wider than the default 0.3: probabilities clearly far from uniform
            out[mt] = str(path)
    finally:
        if was:
            hf_logging.enable_progress_bar()
    return out


def _query(mt):
    from fmat.design import query

    if tiny_arch.ARCHITECTURES[mt][0] in ("esm", "bytes"):  # one token per letter: letters are the words
        return query(
            ["[MASK] A G {TARGET} L .", "K [MASK] {TARGET} E E V S D L ."],
            MASK={"M": ["A", "L", "AL"], "F": ["G", "V", "GV"]},
            TARGET={"T": ["S", "E R"]},
        ), {"AL", "GV"}
    return query(
        ["[MASK] works as {TARGET}.", "The [MASK] is a {TARGET} in Paris.", "As {TARGET}, I think [MASK]"],
        MASK={"Male": ["He", "man", "his", OOV], "Female": ["She", "woman", "her", "Paris"]},
        TARGET={"Occ": ["doctor", "a nurse"]},
    ), {OOV}


def _pipeline(path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tok = AutoTokenizer.from_pretrained(path)
    return pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(path), tokenizer=tok, device="cpu"), tok


def _compare(res, pipe, tok):
    """Largest |Δp| against the pipeline, and the rows whose token id differs."""
    worst, bad = 0.0, []
    for r in res[~res["oov"]].itertuples():
        sentence = str(r.query).replace("{TARGET}", str(getattr(r, "T_word", ""))).replace("[MASK]", tok.mask_token)
        out = pipe(sentence, targets=[r.token], top_k=1)[0]
        if out["token"] != r.token_id:
            bad.append((sentence, r.token, out["token"], r.token_id))
        worst = max(worst, abs(out["score"] - r.prob))
    return worst, bad


def test_every_masked_lm_architecture_is_built_or_listed():
    mapping = _mapping()
    listed = set(tiny_arch.ARCHITECTURES) | set(tiny_arch.NOT_BUILT)
    assert set(mapping) == listed, (
        f"new in transformers (add to tiny_arch.ARCHITECTURES, tests/tools): "
        f"{sorted(set(mapping) - listed)}; "
        f"gone (remove): {sorted(listed - set(mapping))}"
    )
    assert not set(tiny_arch.ARCHITECTURES) & set(tiny_arch.NOT_BUILT)
    assert set(NO_PIPELINE) | set(REFUSED) <= set(tiny_arch.ARCHITECTURES)
    assert len(COMPARED) >= 45


@pytest.mark.parametrize("mt", COMPARED)
def test_fmat_equals_the_fill_mask_pipeline(archs, mt):
    data, oov_words = _query(mt)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", OOVWarning)
        res = run({mt: archs[mt]}, data, progress=False)  # automatic batches: sentences of several lengths
    pipe, tok = _pipeline(archs[mt])
    # OOV: exactly the words of several pieces, NaN, one warning naming them
    assert set(res.loc[res["oov"], "M_word"].astype(str)) == oov_words
    assert res.loc[res["oov"], "prob"].isna().all() and res.loc[~res["oov"], "prob"].notna().all()
    assert any(issubclass(w.category, OOVWarning) and sorted(oov_words)[0] in str(w.message) for w in rec)
    worst, bad = _compare(res, pipe, tok)
    assert not bad, bad
    assert worst <= 1e-5, (mt, worst, scoring_path(pipe.model, tok).describe())
    ok = res.loc[~res["oov"], "prob"]
    assert ok.max() / ok.min() > 10  # far from uniform: a wrong number would show
    assert res["query"].astype(str).str.startswith("[MASK]").any()
    # the scored sequence is the pipeline's for a sentence-initial mask too
    first = res[~res["oov"] & res["query"].astype(str).str.startswith("[MASK]")].iloc[0]
    sentence = str(first["query"]).replace("{TARGET}", str(first["T_word"])).replace("[MASK]", tok.mask_token)
    assert pipe(sentence, targets=[first["token"]], top_k=1)[0]["sequence"] == first["output"]


def test_batches_never_change_a_number(archs):
    """Every padding-sensitive architecture, and two that are not: batch_size 1, automatic, 64."""
    for mt in PADDING_SENSITIVE + ["bert", "roberta"]:
        data, _ = _query(mt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OOVWarning)
            a = run({mt: archs[mt]}, data, progress=False, batch_size=1)
            others = [run({mt: archs[mt]}, data, progress=False, **kw) for kw in ({}, {"batch_size": 64}, {"max_tokens": 20})]
        for b in others:
            # float32 rounding: a batch of another shape sums in another order, so a log probability
            # of -16 may move by ~1e-6 of itself (CI saw Funnel's -16.111876 vs -16.111889, 8e-7)
            np.testing.assert_allclose(a["logp"], b["logp"], atol=1e-5, rtol=1e-6, err_msg=mt)


def test_the_padding_rule_and_the_fast_path_are_decided_on_the_model(archs):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    paths = {}
    for mt in COMPARED:
        model = AutoModelForMaskedLM.from_pretrained(archs[mt]).eval()
        paths[mt] = scoring_path(model, AutoTokenizer.from_pretrained(archs[mt]))
        assert model._fmat_scoring_path is paths[mt]  # decided once per loaded model
    for mt in PADDING_SENSITIVE:
        assert paths[mt].padding == "equal-length" and paths[mt].padding_effect > 1e-5, mt
    for mt in ("bert", "roberta", "modernbert", "deberta-v2", "xlm-roberta"):
        assert paths[mt].padding == "padded", mt
    for mt in FAST:
        assert paths[mt].head == "fast", (mt, paths[mt])
    assert paths["electra"].head_modules == ("generator_predictions", "generator_lm_head")
    assert paths["modernbert"].head_modules == ("head", "decoder")
    for mt in ("bart", "mbart", "mvp"):  # encoder-decoder: the full forward pass
        assert paths[mt].head == "full", mt
    assert "equal-length" in paths["mobilebert"].describe() and "fast path" in paths["bert"].describe()


def test_the_comparison_can_fail(archs, monkeypatch):
    """With the padding rule switched off, MobileBERT, ConvBERT and Funnel differ from the
    pipeline by more than 1e-5: the equality test above would catch a broken rule."""
    import dataclasses

    from fmat import scoring

    real = scoring.scoring_path

    def always_padded(model, tokenizer):
        return dataclasses.replace(real(model, tokenizer), padding="padded")

    monkeypatch.setattr(scoring, "scoring_path", always_padded)
    for mt in ("mobilebert", "convbert", "funnel"):
        data, _ = _query(mt)
        res = run({mt: archs[mt]}, data, progress=False)
        pipe, tok = _pipeline(archs[mt])
        worst, _ = _compare(res, pipe, tok)
        assert worst > 1e-5, (mt, worst)  # the bound test_fmat_equals_the_fill_mask_pipeline holds fmat to


def test_padding_read_beside_the_padding_only_is_caught(archs):
    """A model whose padding moves only the token beside it (as MobileBERT's trigram embedding
    does first), not the probe sentences' masks, is still scored in equal-length passes: CI once
    saw a MobileBERT whose padding reached the probes' masks by 5e-5 in p and other sentences'
    masks by 0.5 in log p, and a check at the mask only took it as padding-safe."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from fmat import scoring

    tok = AutoTokenizer.from_pretrained(archs["bert"])

    def reads_its_padding(model, args, kwargs, out):
        att = kwargs.get("attention_mask")
        if att is not None and bool((att == 0).any()):
            last = att.sum(1) - 1  # each sentence's last real token
            out.logits[torch.arange(len(last)), last, tok.convert_tokens_to_ids("doctor")] += 3.0
        return out

    model = AutoModelForMaskedLM.from_pretrained(archs["bert"]).eval()
    assert scoring.scoring_path(model, tok).padding == "padded"  # bert itself reads no padding
    model = AutoModelForMaskedLM.from_pretrained(archs["bert"]).eval()
    model.register_forward_hook(reads_its_padding, with_kwargs=True)
    ids, pos = scoring._probe_inputs(tok)
    assert all(p < len(x) - 1 for x, p in zip(ids, pos))  # the masks are not beside the padding
    path = scoring.scoring_path(model, tok)
    assert path.padding == "equal-length" and path.padding_effect == pytest.approx(3.0, abs=0.5), path


def test_a_wrong_head_is_not_taken(archs, monkeypatch):
    """A head candidate that does not reproduce the model's logits falls back to the full head."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from fmat import scoring

    model = AutoModelForMaskedLM.from_pretrained(archs["electra"]).eval()
    # runs and has the right shape, but is not the model's head (its logits are scaled; a head
    # without its final bias would be as wrong)
    wrong = [
        (
            ("generator_predictions", "generator_lm_head"),
            lambda h, m=model: 1.01 * m.generator_lm_head(m.generator_predictions(h)),
        )
    ]
    monkeypatch.setattr(scoring, "_head_candidates", lambda m: wrong)
    path = scoring.scoring_path(model, AutoTokenizer.from_pretrained(archs["electra"]))
    assert path.head == "full" and path.head_modules == ()
    # the right one is taken
    model = AutoModelForMaskedLM.from_pretrained(archs["electra"]).eval()
    right = [(("generator_predictions", "generator_lm_head"), lambda h, m=model: m.generator_lm_head(m.generator_predictions(h)))]
    monkeypatch.setattr(scoring, "_head_candidates", lambda m: right)
    assert scoring.scoring_path(model, AutoTokenizer.from_pretrained(archs["electra"])).head == "fast"


def test_reformer_has_no_mask_token():
    from transformers import ReformerTokenizer

    assert "reformer" in tiny_arch.NOT_BUILT and ReformerTokenizer().mask_token is None
    with pytest.raises(ValueError, match="reformer"):
        tiny_arch.build_tiny_arch("unused", "reformer", WORDS)


def test_roc_bert_is_refused_because_its_numbers_would_differ(archs):
    data, _ = _query("roc_bert")
    with pytest.raises(ModelError, match="input_shape_ids"):
        run({"rocbert": archs["roc_bert"]}, data, progress=False)
    # what fmat would get from ids alone differs from the pipeline (which passes the extra ids)
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(archs["roc_bert"])
    model = AutoModelForMaskedLM.from_pretrained(archs["roc_bert"]).eval()
    enc = tok(f"The {tok.mask_token} is here.", return_tensors="pt")
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0])
    with torch.inference_mode():
        full = torch.log_softmax(model(**enc).logits[0, pos], -1)
        ids_only = torch.log_softmax(model(input_ids=enc["input_ids"]).logits[0, pos], -1)
    assert float((full - ids_only).abs().max()) > 1e-3
    assert math.isfinite(float(full.max()))


#: FMAT's model-name rules (word_rule="fmat") against the tokenizer, with the hub name of a real
#: model of each architecture: (name, query, the tokenizer's whole-word token of "man" there,
#: the token FMAT's rule picks). docs/scoring.md has the table.
MID, START = ["The [MASK] is here.", "I think the [MASK] is in Paris."], ["[MASK] is here.", "[MASK] works in Paris."]
NAME_RULE_DIFFERS = {
    "deberta-v2": ("microsoft/deberta-v3-base", START, "▁man", "man"),  # SentencePiece under a byte-level BPE rule
    "camembert": ("camembert-base", MID, "▁man", "man"),
    "xmod": ("facebook/xmod-base", MID, "▁man", "man"),
    "rembert": ("google/rembert", MID, "▁man", "man"),
    "longformer": ("allenai/longformer-base-4096", MID, "Ġman", "man"),
    "data2vec-text": ("facebook/data2vec-text-base", MID, "Ġman", "man"),
    "luke": ("studio-ousia/luke-base", MID, "Ġman", "man"),
    "eurobert": ("EuroBERT/EuroBERT-210m", MID, "Ġman", "man"),
    "xlm": ("FacebookAI/xlm-mlm-en-2048", MID, "man</w>", "man"),
}
NAME_RULE_SAME = {
    "deberta": "microsoft/deberta-base",
    "modernbert": "answerdotai/ModernBERT-base",
    "electra": "google/electra-small-generator",
    "xlm-roberta": "xlm-roberta-base",
    "mpnet": "microsoft/mpnet-base",
    "bart": "facebook/bart-base",
}


@pytest.mark.parametrize("mt", list(NAME_RULE_DIFFERS))
def test_fmat_name_rules_pick_another_token_where_the_name_says_nothing(archs, mt):
    """No FMAT rule matches these names, so FMAT looks the bare word up; the vocabulary has it
    as a word-INTERNAL piece ('man' of 'wo|man'), and that piece's probability is what FMAT
    reports. fmat's default (the tokenizer's whole-word token) differs; word_rule='fmat'
    reproduces FMAT, and both equal the pipeline for the token each names."""
    from fmat.design import query

    name, queries, word_token, rule_token = NAME_RULE_DIFFERS[mt]
    pipe, tok = _pipeline(archs[mt])
    assert rule_token in tok.get_vocab()  # the word-internal piece exists
    data = query(queries, MASK={"A": ["man"], "B": ["woman"]})
    ours = run({name: archs[mt]}, data, progress=False)
    fmat_rule = run({name: archs[mt]}, data, progress=False, word_rule="fmat")
    man = ours["M_word"].astype(str) == "man"
    assert set(ours.loc[man, "token"]) == {word_token} and set(fmat_rule.loc[man, "token"]) == {rule_token}
    assert not fmat_rule["oov"].any()
    for res in (ours, fmat_rule):
        worst, bad = _compare(res, pipe, tok)
        assert worst <= 1e-5 and not bad
    assert (ours.loc[man, "prob"].to_numpy() != fmat_rule.loc[man, "prob"].to_numpy()).all()


@pytest.mark.parametrize("mt", list(NAME_RULE_SAME))
def test_fmat_name_rules_agree_with_the_tokenizer_on_the_common_models(archs, mt):
    from fmat.design import query

    name = NAME_RULE_SAME[mt]
    data = query(MID + START, MASK={"A": ["man", "He"], "B": ["woman", "She"]})
    a = run({name: archs[mt]}, data, progress=False)
    b = run({name: archs[mt]}, data, progress=False, word_rule="fmat")
    assert a["token_id"].tolist() == b["token_id"].tolist()
