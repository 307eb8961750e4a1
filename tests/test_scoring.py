"""fmat.run against the transformers fill-mask pipeline, on tiny models of every family.

Reference values come from ``pipeline("fill-mask", targets=[whole-word token])`` (an
independent implementation) and from a direct forward pass of a copy of the model whose
embedding matrix was enlarged by hand (add_tokens).
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from fmat.errors import InputError
from fmat.runner import run
from fmat.scoring import OOVWarning, fmat_word_form
from fmat.tiny import FAMILIES, build_tiny_model

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
    "is",
    "a",
    "Paris",
    "capital",
    "France",
    "works",
    "as",
    "the",
    "boy",
    "girl",
    "1850",
    "1990",
    "Mary",
    "John",
]
OOV = "zyzzogeton"  # not in the corpus: several pieces everywhere
UNK = "ж"  # not in the alphabet: the unknown token (WordPiece, Unigram, fastBPE)


def tiny_models(tmp_path_factory) -> dict[str, str]:
    """Tiny models of every family, built once per test session (shared by test modules)."""
    root = tmp_path_factory.getbasetemp() / "fmat_tiny_models"
    out = {}
    for fam, (_, folder) in FAMILIES.items():
        path = root / folder
        if not (path / "fmat_tiny.json").exists():
            build_tiny_model(path, fam, WORDS, seed=1)
        out[fam] = str(path)
    return out


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    return tiny_models(tmp_path_factory)


def make_query(queries, MASK, TARGET=None, ATTRIB=None):
    """A query table: fmat.query when the design module is present, else built by hand."""
    try:
        from fmat.design import query
    except ImportError:  # pragma: no cover - before fmat.design existed
        query = None
    if query is not None:
        kw = {"MASK": MASK}
        if TARGET:
            kw["TARGET"] = TARGET
        if ATTRIB:
            kw["ATTRIB"] = ATTRIB
        return query(queries, **kw)
    rows = []
    for q in [queries] if isinstance(queries, str) else queries:
        for g, ws in MASK.items():
            for j, w in enumerate(ws, 1):
                for tg, tws in (TARGET or {None: [None]}).items():
                    for tj, tw in enumerate(tws, 1):
                        r = {"query": q, "MASK": g, "M_pair": f"{'-'.join(MASK)}.{j}", "M_word": w}
                        if TARGET:
                            r.update(TARGET=tg, T_pair=f"{'-'.join(TARGET)}.{tj}", T_word=tw)
                        rows.append(r)
    return pd.DataFrame(rows).astype("category")


def pipeline_logp(path, sentence, token):
    """log(score) of ``token`` (a vocabulary entry) from the fill-mask pipeline."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path)
    pipe = pipeline("fill-mask", model=model, tokenizer=tok, device="cpu")
    res = pipe(sentence.replace("[MASK]", tok.mask_token), targets=[token], top_k=1)
    assert res[0]["token_str"] is not None
    assert res[0]["token"] == tok.convert_tokens_to_ids(token)
    return math.log(res[0]["score"])


@pytest.fixture(scope="module")
def pipelines(models):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    out = {}
    for fam, path in models.items():
        tok = AutoTokenizer.from_pretrained(path)
        out[fam] = (pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(path), tokenizer=tok, device="cpu"), tok)
    return out


@pytest.mark.parametrize("family", list(FAMILIES))
def test_prob_equals_pipeline(models, pipelines, family):
    data = make_query(
        ["[MASK] works as {TARGET}.", "The [MASK] is a {TARGET} in Paris.", "As {TARGET}, I think [MASK]"],
        MASK={"Male": ["He", "man", "his"], "Female": ["She", "woman", "her"]},
        TARGET={"Occ": ["doctor", "nurse"]},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", OOVWarning)  # every word is in the vocabulary
        res = run({family: models[family]}, data, progress=False, batch_size=4)
    pipe, tok = pipelines[family]
    assert not res["oov"].any()
    for r in res.itertuples():
        sentence = str(r.query).replace("{TARGET}", str(r.T_word)).replace("[MASK]", tok.mask_token)
        out = pipe(sentence, targets=[r.token], top_k=1)[0]
        assert out["token"] == r.token_id, (family, sentence, r.token)
        assert abs(math.log(out["score"]) - r.logp) <= 1e-5, (family, sentence, r.token)
        assert abs(out["score"] - r.prob) <= 1e-6 * max(1.0, out["score"]) + 1e-12
        assert r.output == out["sequence"]


@pytest.mark.parametrize(
    "family,sentence,word,expected",
    [
        ("bert-uncased", "[MASK] is here.", "He", "he"),
        ("bert-cased", "[MASK] is here.", "He", "He"),
        ("distilbert", "the [MASK] is here.", "Man", "man"),
        ("roberta", "[MASK] is here.", "He", "He"),  # sentence start: no space prefix
        ("roberta", "The [MASK] is here.", "man", "Ġman"),
        ("albert", "[MASK] is here.", "He", "▁he"),
        ("albert", "The [MASK] is here.", "man", "▁man"),
        ("bertweet", "The [MASK].", "man", "man"),  # not 'man@@' glued to the period
    ],
)
def test_whole_word_token_is_derived_from_tokenizer(models, family, sentence, word, expected):
    data = make_query(sentence, MASK={"G": [word]})
    res = run({family: models[family]}, data, progress=False)
    assert res["token"].tolist() == [expected]
    assert not res["oov"].iloc[0]


def test_fmat_word_rule_matches_fmat_regexes():
    assert fmat_word_form("He", "bert-base-uncased", "[MASK] is.") == "he"
    assert fmat_word_form("He", "albert-base-v2", "The [MASK] is.") == "\u2581he"
    assert fmat_word_form("man", "roberta-base", "The [MASK] is.") == " man"
    assert fmat_word_form("He", "roberta-base", "[MASK] is.") == "He"
    assert fmat_word_form("man", "xlm-roberta-base", "The [MASK].") == "\u2581man"  # xlm- excluded from ' '
    assert fmat_word_form("man", "vinai/bertweet-base", "The [MASK].") == "man"
    assert fmat_word_form("man", "my-model", "The [MASK].", {"uncased": "my"}) == "man"


@pytest.mark.parametrize("family", ["bert-uncased", "roberta", "albert"])
def test_fmat_word_rule_gives_same_ids_for_named_models(models, family):
    data = make_query(["[MASK] works as a doctor.", "The [MASK] is here."], MASK={"A": ["He", "man"], "B": ["She", "woman"]})
    a = run({FAMILIES[family][1]: models[family]}, data, progress=False)
    b = run({FAMILIES[family][1]: models[family]}, data, progress=False, word_rule="fmat")
    assert a["token_id"].tolist() == b["token_id"].tolist()
    np.testing.assert_allclose(a["logp"], b["logp"], atol=1e-6)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_oov_words_are_nan_and_warned(models, family):
    data = make_query("The [MASK] is here.", MASK={"A": ["man", OOV], "B": ["woman", UNK]})
    with pytest.warns(OOVWarning, match=OOV) as rec:
        res = run({family: models[family]}, data, progress=False)
    assert len([w for w in rec if issubclass(w.category, OOVWarning)]) == 1
    by = res.set_index(res["M_word"].astype(str))
    assert by.loc[OOV, "oov"] and math.isnan(by.loc[OOV, "prob"])
    assert by.loc[OOV, "token"].endswith("(out-of-vocabulary)")
    assert by.loc[UNK, "oov"] and math.isnan(by.loc[UNK, "prob"])  # FMAT misses the [UNK] case
    assert not by.loc["man", "oov"] and by.loc["man", "prob"] > 0
    with pytest.warns(OOVWarning, match="FIRST piece"):
        res2 = run({family: models[family]}, data, progress=False, na_out=False)
    assert not math.isnan(res2.set_index(res2["M_word"].astype(str)).loc[OOV, "prob"])


def test_unk_token_is_flagged_for_wordpiece(models):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models["bert-uncased"])
    assert tok(UNK, add_special_tokens=False)["input_ids"] == [tok.unk_token_id]  # the premise
    data = make_query("The [MASK] is here.", MASK={"A": [UNK]})
    with pytest.warns(OOVWarning, match="unknown token"):
        res = run({"b": models["bert-uncased"]}, data, progress=False)
    assert res["oov"].iloc[0] and math.isnan(res["prob"].iloc[0])


@pytest.mark.parametrize("family", ["bert-uncased", "roberta", "albert", "distilbert"])
@pytest.mark.parametrize("decay", [1.0, 0.5])
def test_add_tokens_equals_enlarged_embedding(models, family, decay):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = models[family]
    data = make_query("The [MASK] is a doctor.", MASK={"A": ["man", OOV], "B": ["woman", "nurse"]})
    with pytest.warns(OOVWarning, match="added temporarily"):
        res = run({family: path}, data, progress=False, add_tokens=True, weight_decay=decay)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sentence = "The [MASK] is a doctor.".replace("[MASK]", tok.mask_token)
    pieces = tok(f"The {OOV} is a doctor.", add_special_tokens=False)["input_ids"]
    ref_pieces = tok(sentence, add_special_tokens=False)["input_ids"]
    pieces = pieces[1 : len(pieces) - (len(ref_pieces) - 2)]  # 'The' ... 'is a doctor .'
    # direct computation: a copy with one more embedding row = weighted mean of the pieces
    big = copy.deepcopy(model)
    V = big.get_input_embeddings().weight.shape[0]
    big.resize_token_embeddings(V + 1, mean_resizing=False)
    w = torch.tensor([decay**i for i in range(len(pieces))])
    w = w / w.sum()
    with torch.no_grad():
        big.get_input_embeddings().weight[V] = (w[:, None] * model.get_input_embeddings().weight[pieces]).sum(0)
        out_emb = big.get_output_embeddings()
        if getattr(out_emb, "bias", None) is not None:
            out_emb.bias[V] = 0.0
    enc = tok(sentence, return_tensors="pt")
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
    with torch.no_grad():
        lsm = torch.log_softmax(big(**enc).logits[0, pos].double(), -1)
    by = res.set_index(res["M_word"].astype(str))
    assert by.loc[OOV, "token_id"] == V and by.loc[OOV, "oov"]
    assert abs(by.loc[OOV, "logp"] - lsm[V].item()) <= 1e-5
    for wd in ["man", "woman", "nurse"]:
        assert abs(by.loc[wd, "logp"] - lsm[by.loc[wd, "token_id"]].item()) <= 1e-5
    for k, v in model.state_dict().items():  # the loaded model is untouched
        assert torch.equal(v, before[k])


def test_batch_size_invariance_and_row_order(models):
    data = make_query(
        ["[MASK] works as {TARGET}.", "I saw the [MASK] with {TARGET} yesterday in Paris.", "[MASK] is {TARGET}."],
        MASK={"M": ["He", "man", "boy"], "F": ["She", "woman", "girl"]},
        TARGET={"T": ["a doctor", "a nurse", "the capital of France"]},
    )
    mods = {"bert": models["bert-uncased"], "rob": models["roberta"]}
    a = run(mods, data, progress=False, batch_size=1)
    b = run(mods, data, progress=False, batch_size=64)
    c = run(mods, data, progress=False)  # automatic: by tokens
    d = run(mods, data, progress=False, max_tokens=20)  # a few sentences a pass, one for the longest
    for other in (b, c, d):
        np.testing.assert_allclose(a["logp"], other["logp"], atol=1e-5, rtol=0)
    # row order = model order x query-table order; query columns unchanged
    assert a["model"].astype(str).tolist() == ["bert"] * len(data) + ["rob"] * len(data)
    for c in data.columns:
        assert a[c].astype(str).tolist() == data[c].astype(str).tolist() * 2
        assert isinstance(a[c].dtype, pd.CategoricalDtype)
    assert list(a.columns) == ["model"] + list(data.columns) + ["output", "token", "prob", "token_id", "logp", "oov"]
    np.testing.assert_allclose(np.exp(a["logp"]), a["prob"], rtol=1e-12)


def test_plan_batches_caps_sentences_and_padded_tokens():
    from fmat.scoring import AUTO_BATCH, plan_batches

    lengths = np.array([5, 12, 7, 12, 30, 3, 9, 9, 9, 4])
    # fixed sentence count (FMAT's batches), longest first, every index exactly once
    got = plan_batches(lengths, batch_size=3)
    assert [list(b) for b in got] == [[4, 1, 3], [6, 7, 8], [2, 0, 9], [5]]
    # token cap: sentences x the batch's longest length <= max_tokens; a 30-token sentence alone
    got = plan_batches(lengths, max_tokens=27)
    # (the short last pass [5] shares the pass before it evenly)
    assert [list(b) for b in got] == [[4], [1, 3], [6, 7, 8], [2, 0], [9, 5]]
    for b in got[1:]:
        assert len(b) * lengths[b].max() <= 27
    # 150 sentences of 9 tokens: 113 + 37 would leave a small pass; 75 + 75 instead
    assert [len(b) for b in plan_batches(np.full(150, 9), max_tokens=1024)] == [75, 75]
    assert [len(b) for b in plan_batches(np.full(113 + 60, 9), max_tokens=1024)] == [113, 60]
    # both caps
    assert [len(b) for b in plan_batches(lengths, batch_size=2, max_tokens=27)] == [1, 2, 2, 2, 2, 1]
    assert [len(b) for b in plan_batches(np.full(7, 9), batch_size=3)] == [3, 3, 1]  # fixed: no sharing
    # automatic: the device's token and sentence caps
    many = np.full(5000, 8)
    tok, sent = AUTO_BATCH["cpu"]
    auto = plan_batches(many)
    assert max(len(b) for b in auto) == min(sent, tok // 8)
    assert max(len(b) for b in plan_batches(many, device_type="cuda")) == min(AUTO_BATCH["cuda"][1], AUTO_BATCH["cuda"][0] // 8)
    assert sorted(np.concatenate(auto).tolist()) == list(range(5000))
    rng = np.random.default_rng(3)
    for _ in range(200):  # any lengths: every sentence once, caps kept, longest first
        ls = rng.integers(3, 60, size=rng.integers(1, 400))
        mt = int(rng.integers(20, 2000))
        plan = plan_batches(ls, max_tokens=mt)
        assert sorted(np.concatenate(plan).tolist()) == list(range(len(ls)))
        assert all(len(b) == 1 or len(b) * ls[b].max() <= mt for b in plan)
        assert all(len(b) <= AUTO_BATCH["cpu"][1] for b in plan)
        firsts = [ls[b].max() for b in plan]
        assert firsts == sorted(firsts, reverse=True)
    for bad in (0, -1, 2.5, "32", True):
        with pytest.raises(InputError, match="batch_size"):
            plan_batches(lengths, batch_size=bad)
    with pytest.raises(InputError, match="max_tokens"):
        plan_batches(lengths, max_tokens=0)


def test_a_word_holding_the_mask_token_is_an_input_error(models):
    # RoBERTa's mask is <mask>: a TARGET word "<mask>" passes the [MASK] count of the query but
    # gives the sentence two mask tokens; the error names the sentence and the model
    data = make_query("[MASK] works as {TARGET}.", MASK={"A": ["He"], "B": ["She"]}, TARGET={"T": ["<mask>"]})
    for method in ("fmat", "lpbs"):
        with pytest.raises(InputError, match=r"'<mask> works as <mask>\.' has 2 mask tokens for model rob"):
            run({"rob": models["roberta"]}, data, progress=False, method=method)


def test_method_and_inputs_are_checked(models):
    data = make_query("The [MASK] is here.", MASK={"A": ["man"]})
    with pytest.raises(InputError, match="lpbs"):
        run(models["bert-uncased"], data, method="lpbs", progress=False)
    with pytest.raises(InputError, match="exactly one"):
        run(models["bert-uncased"], pd.DataFrame({"query": ["no mask"], "M_word": ["x"]}), progress=False)
    with pytest.raises(InputError):
        run(models["bert-uncased"], data, word_rule="guess", progress=False)


def test_model_label_from_folder(models):
    data = make_query("The [MASK] is here.", MASK={"A": ["man"]})
    res = run([models["roberta"]], data, progress=False, word_rule="fmat")
    # folder name tiny-roberta-base matches FMAT's roberta rule -> space prefix -> Ġman
    assert res["token"].tolist() == ["Ġman"]


def test_progress_false_prints_no_bars(models, capfd):
    data = make_query("The [MASK] is here.", MASK={"A": ["man"], "B": ["woman"]})
    capfd.readouterr()
    run(models["bert-uncased"], data, progress=False)
    assert capfd.readouterr().err == ""  # not even transformers' "Loading weights"
    run(models["bert-uncased"], data, progress=True)
    err = capfd.readouterr().err
    assert "Loading weights" in err  # the bars are there when asked for
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()  # the global setting is restored


@pytest.mark.parametrize("family", ["bert-uncased", "roberta"])
def test_too_long_word_named_before_scoring(models, family):
    """Issue 22: a sentence longer than the model reads is an InputError naming the word
    (BERT would cut it silently, RoBERTa crash), raised before any forward pass."""
    from fmat.design import query

    long_word = " ".join(["a"] * 200)  # under the 500-character cap, over the tiny models' 128 tokens
    q = query("The [MASK] works as a {TARGET}.", MASK={"M": ["man"], "F": ["woman"]}, TARGET={"Occ": [long_word]})
    with pytest.raises(InputError) as err:
        run([models[family]], q, progress=False)
    assert "T_word" in str(err.value) and "reads at most" in str(err.value)
