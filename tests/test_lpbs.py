"""LPBS (Kurita et al., 2019) on tiny models of every tokenizer family.

Reference values come from a direct computation in this file: the sentence tokenized by the
model's own tokenizer, the phrase located by searching its standalone tokens in the sentence
(not the code under test's diff), every phrase token replaced by the mask id, and
``AutoModelForMaskedLM`` run on the ids; log-softmax at the query's mask, read at the option's
vocabulary entry (spelled out per family below, not taken from fmat).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from tiny_arch import sharpen

from fmat.design import query
from fmat.errors import InputError
from fmat.io import read_table, write_table
from fmat.tiny import FAMILIES, build_tiny_model

torch.set_num_threads(1)

WORDS = ["man", "woman", "He", "She", "nurse", "doctor", "a", "is", "the", "likes", "said", "that"]
OOV = "zyzzogeton"

# the option's vocabulary entry, by family: (sentence start, mid-sentence)
FORMS = {
    "bert-uncased": lambda w, start: w.lower(),
    "distilbert": lambda w, start: w.lower(),
    "bert-cased": lambda w, start: w,
    "bertweet": lambda w, start: w,
    "roberta": lambda w, start: w if start else "\u0120" + w,
    "albert": lambda w, start: "\u2581" + w.lower(),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("lpbs_tiny")
    return {fam: str(sharpen(build_tiny_model(root / fam, fam, WORDS, seed=2))) for fam in FAMILIES}


@pytest.fixture(scope="module")
def loaded(models):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    out = {}
    for fam, path in models.items():
        m = AutoModelForMaskedLM.from_pretrained(path)
        m.eval()
        out[fam] = (m, AutoTokenizer.from_pretrained(path))
    return out


def _find(seq, sub):
    hits = [i for i in range(len(seq) - len(sub) + 1) if seq[i : i + len(sub)] == sub]
    assert len(hits) == 1, (seq, sub)
    return hits[0]


def direct_logp(fam, model, tok, text, phrase, word, start, mask_phrase):
    """ln P(word) at the query's mask of ``text`` ([MASK] and {P} in it), the phrase filled or masked."""
    sentence = text.replace("[MASK]", tok.mask_token).replace("{P}", phrase)
    ids = tok(sentence)["input_ids"]
    mask_pos = ids.index(tok.mask_token_id)
    if mask_phrase:
        mid = fam == "roberta" and not text.startswith("{P}")  # byte-level BPE: a space makes Ġ
        pieces = tok((" " + phrase) if mid else phrase, add_special_tokens=False)["input_ids"]
        i = _find(ids, pieces)
        ids = ids[:i] + [tok.mask_token_id] * len(pieces) + ids[i + len(pieces) :]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, mask_pos]
    token_id = tok.convert_tokens_to_ids(FORMS[fam](word, start))
    assert token_id != tok.unk_token_id
    return float(torch.log_softmax(logits.double(), -1)[token_id])


def _score(path, data, **kw):
    from fmat.lpbs import score_model
    from fmat.models import load_masked_lm

    model, tok = load_masked_lm(path, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return score_model(model, tok, data, progress=False, **kw)


# --------------------------------------------------------------------------- against the model


MA = dict(
    query="[MASK] is {ATTRIB} .", MASK={"M": ["He"], "F": ["She"]}, ATTRIB={"A": ["a nurse", OOV], "B": ["a doctor", "the man"]}
)
MT = dict(
    query="{TARGET} likes the [MASK] .",
    MASK={"M": ["man"], "F": ["woman"]},
    TARGET={"A": ["a nurse", OOV], "B": ["a doctor", "nurse"]},
)


@pytest.mark.parametrize("fam", list(FAMILIES))
def test_prior_matches_direct_forward_pass(fam, models, loaded):
    """prob and prior of every row = the direct computation (|Δ ln p| ≤ 1e-5), every family,
    a multi-token phrase ("a nurse"), a many-piece phrase (OOV word), mask before/after the phrase."""
    model, tok = loaded[fam]
    diffs = []
    for design, slot, start in ((MA, "A_word", True), (MT, "T_word", False)):
        data = query(**design)
        text = design["query"].replace("{ATTRIB}", "{P}").replace("{TARGET}", "{P}")
        s = _score(models[fam], data)
        assert list(s.columns[-2:]) == ["prior", "logp_prior"]
        for r in s.itertuples():
            phrase = getattr(r, slot)
            want = direct_logp(fam, model, tok, text, phrase, r.M_word, start, mask_phrase=False)
            prior = direct_logp(fam, model, tok, text, phrase, r.M_word, start, mask_phrase=True)
            assert r.logp == pytest.approx(want, abs=1e-5), (fam, phrase)
            assert r.logp_prior == pytest.approx(prior, abs=1e-5), (fam, phrase)
            assert r.prior == pytest.approx(math.exp(prior), rel=1e-5)
            diffs.append(abs(want - prior))
    # the phrase matters: the prior differs from the probability (a test that can fail)
    assert np.median(diffs) > 1e-2, diffs


def test_one_mask_per_phrase_token(models, loaded):
    """The prior sentence has one mask per token of the phrase, read at the query's mask."""
    from fmat.lpbs import prior_inputs

    model, tok = loaded["bert-uncased"]
    data = query("[MASK] is {ATTRIB} .", MASK={"M": ["He"], "F": ["She"]}, ATTRIB={"A": ["a nurse"], "B": [OOV]})
    inputs, row_input, pos, n = prior_inputs(tok, data)
    n_oov = len(tok.tokenize(OOV))
    assert n_oov > 1
    assert list(n[row_input]) == [2, 2, n_oov, n_oov]
    first = tok.convert_ids_to_tokens(inputs[row_input[0]])
    assert first == ["[CLS]", "[MASK]", "is", "[MASK]", "[MASK]", ".", "[SEP]"]
    assert list(pos[row_input]) == [1, 1, 1, 1]


def test_mta_masks_both_phrases(models, loaded):
    from fmat.lpbs import prior_inputs

    model, tok = loaded["bert-uncased"]
    data = query(
        "{TARGET} said that [MASK] is {ATTRIB} .",
        MASK={"M": ["He"], "F": ["She"]},
        TARGET={"X": ["the man"], "Y": ["the woman"]},
        ATTRIB={"A": ["a nurse"], "B": ["a doctor"]},
    )
    inputs, row_input, pos, n = prior_inputs(tok, data)
    toks = tok.convert_ids_to_tokens(inputs[row_input[0]])
    assert toks == ["[CLS]", "[MASK]", "[MASK]", "said", "that", "[MASK]", "is", "[MASK]", "[MASK]", ".", "[SEP]"]
    assert pos[row_input[0]] == 5
    assert n[row_input[0]] == 4


# --------------------------------------------------------------------------- LPBS arithmetic


def _scores_table(prob, prior):
    """A hand-made MA scores table: two MASK groups (he/she) × two attributes."""
    data = query("[MASK] is {ATTRIB}.", MASK={"M": ["he"], "F": ["she"]}, ATTRIB={"A": ["a nurse"], "B": ["a doctor"]})
    data = data.copy()
    data.insert(0, "model", "m")
    data["prob"] = prob
    data["prior"] = prior
    return data


def test_lpbs_is_kurita_direction():
    """LPBS = ln(p_a/prior_a) - ln(p_b/prior_b), Kurita et al.'s ratio (not the inverted one)."""
    from fmat.lpbs import summary

    # rows: (he, nurse), (she, nurse), (he, doctor), (she, doctor)
    s = _scores_table([0.2, 0.05, 0.3, 0.1], [0.1, 0.1, 0.1, 0.2])
    out = summary(s, mask_pair=True, attrib_pair=False)
    got = dict(zip(out["A_word"].astype(str), out["LPR"]))
    assert got["a nurse"] == pytest.approx(2 * math.log(2))  # ln 2 - ln 0.5
    assert got["a doctor"] == pytest.approx(math.log(3) - math.log(0.5))
    assert out.attrs["measure"] == "LPBS"
    # attrib_pair as well: nurse minus doctor
    both = summary(s, mask_pair=True, attrib_pair=True)
    assert float(both["LPR"].iloc[0]) == pytest.approx(2 * math.log(2) - (math.log(3) - math.log(0.5)))
    # the increased log probability alone (no pairing)
    raw = summary(s, mask_pair=False, attrib_pair=False)
    assert list(raw["LPR"]) == pytest.approx([math.log(2), math.log(0.5), math.log(3), math.log(0.5)])


def test_summary_uses_logp_columns_and_labels(tmp_path):
    from fmat.lpbs import summary

    s = _scores_table([0.2, 0.05, 0.3, 0.1], [0.1, 0.1, 0.1, 0.2])
    # logp columns win over prob/prior (exact for tiny probabilities)
    s["logp"] = [-800.0, -801.0, -700.0, -700.0]
    s["logp_prior"] = [-802.0, -801.0, -700.0, -701.0]
    out = summary(s, mask_pair=True, attrib_pair=False, column="LPBS")
    assert "LPBS" in out.columns and "LPR" not in out.columns
    assert list(out["LPBS"]) == pytest.approx([2.0, -1.0])
    path = write_table(out, tmp_path / "lpbs.parquet")
    assert read_table(path).attrs["measure"] == "LPBS"


def test_summary_needs_prior():
    from fmat.lpbs import summary

    s = _scores_table([0.2, 0.05, 0.3, 0.1], [0.1, 0.1, 0.1, 0.2]).drop(columns="prior")
    with pytest.raises(InputError, match="method 'lpbs'"):
        summary(s)


def test_summary_equals_direct_lpbs(models, loaded):
    """End to end on a real (tiny) model: summary's LPBS = the direct formula per attribute."""
    from fmat.lpbs import summary

    fam = "roberta"
    model, tok = loaded[fam]
    data = query(**MA)
    s = _score(models[fam], data)
    s.insert(0, "model", "tiny")
    out = summary(s, mask_pair=True, attrib_pair=False)
    for r in out.itertuples():
        vals = []
        for w in ("He", "She"):
            lp = direct_logp(fam, model, tok, "[MASK] is {P} .", r.A_word, w, True, mask_phrase=False)
            lq = direct_logp(fam, model, tok, "[MASK] is {P} .", r.A_word, w, True, mask_phrase=True)
            vals.append(lp - lq)
        assert r.LPR == pytest.approx(vals[0] - vals[1], abs=2e-5)


# --------------------------------------------------------------------------- errors and OOV


def test_type_m_and_add_tokens_are_errors(models):
    data = query("[MASK] is here.", MASK={"M": ["He"], "F": ["She"]})
    with pytest.raises(InputError, match="TARGET"):
        _score(models["bert-uncased"], data)
    with pytest.raises(InputError, match="add_tokens"):
        _score(models["bert-uncased"], query(**MA), add_tokens=True)


def test_oov_option_gets_nan_prior(models):
    data = query("[MASK] is {ATTRIB} .", MASK={"M": ["He"], "F": [OOV]}, ATTRIB={"A": ["a nurse"], "B": ["a doctor"]})
    s = _score(models["bert-uncased"], data)
    oov = s["M_word"].astype(str) == OOV
    assert s.loc[oov, "prior"].isna().all() and s.loc[oov, "prob"].isna().all()
    assert s.loc[~oov, "prior"].notna().all()
    # na_out=False: the first piece's prior, as its prob
    s2 = _score(models["bert-uncased"], data, na_out=False)
    assert s2["prior"].notna().all()


def test_run_dispatches_lpbs(models):
    """fmat.run(..., method="lpbs") adds the prior columns."""
    from fmat import runner, scoring

    assert "lpbs" in scoring.METHODS
    data = query(**MA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = runner.run({"tiny": models["albert"]}, data, device="cpu", progress=False, method="lpbs")
    ref = _score(models["albert"], data)
    assert list(s.columns) == ["model"] + list(ref.columns)
    np.testing.assert_allclose(s["logp_prior"].to_numpy(float), ref["logp_prior"].to_numpy(float), atol=1e-6)


# --------------------------------------------------------------------------- a study file asking for LPBS


def test_study_file_with_lpbs(tmp_path, repo):
    """Study 3A's design with `score: {method: lpbs}`: loads, scores with priors, and gives
    attribute-paired LPBS = [ln(p/prior) career j] - [ln(p/prior) family j] per MASK word."""
    import yaml

    from fmat.lpbs import score_model, summary
    from fmat.models import load_masked_lm
    from fmat.study import load_study

    spec = yaml.safe_load((repo / "config" / "studies" / "3A.yaml").read_text(encoding="utf-8"))
    spec.update(id="ext_lpbs", score={"method": "lpbs", "add_tokens": False, "na_out": True})
    spec.pop("analysis", None)
    path = tmp_path / "ext_lpbs.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    study = load_study(path)
    assert study.score["method"] == "lpbs"
    data = study.queries
    words = sorted({w for col in ("M_word", "A_word") for v in data[col].astype(str) for w in v.split()})
    model_dir = sharpen(build_tiny_model(tmp_path / "m", "bert-uncased", words, seed=4))
    model, tok = load_masked_lm(model_dir, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = score_model(model, tok, data, progress=False)
    s.insert(0, "model", "tiny")
    out = summary(s, **study.lpr)
    assert len(out) == 4 * 9 and out.attrs["measure"] == "LPBS"
    ratio = s["logp"] - s["logp_prior"]
    for r in out.sample(5, random_state=0).itertuples():
        career, family = str(r.A_word).split(" - ")
        pick = lambda a, r=r: float(ratio[(s["M_word"].astype(str) == str(r.M_word)) & (s["A_word"].astype(str) == a)].iloc[0])
        assert r.LPR == pytest.approx(pick(career) - pick(family), abs=1e-9)


def test_cli_lpbs(models, tmp_path):
    from fmat.cli import main

    q = tmp_path / "q.parquet"
    write_table(query(**MA), q)
    scores, lpbs = tmp_path / "s.parquet", tmp_path / "l.parquet"
    assert (
        main(
            [
                "lpbs",
                str(q),
                "-m",
                models["bertweet"],
                "-o",
                str(scores),
                "--summary",
                str(lpbs),
                "--device",
                "cpu",
                "--no-attrib-pair",
            ]
        )
        == 0
    )
    s, out = read_table(scores), read_table(lpbs)
    assert {"prior", "logp_prior"} <= set(s.columns)
    assert out.attrs["measure"] == "LPBS" and len(out) == 4
    he = s[s["M_word"].astype(str) == "He"].set_index("A_word")
    she = s[s["M_word"].astype(str) == "She"].set_index("A_word")
    for r in out.itertuples():
        want = (he.loc[r.A_word, "logp"] - he.loc[r.A_word, "logp_prior"]) - (
            she.loc[r.A_word, "logp"] - she.loc[r.A_word, "logp_prior"]
        )
        assert r.LPR == pytest.approx(want, abs=1e-9)
    # a MASK-only design cannot have a prior: a clear error, exit status 2
    write_table(query("[MASK] is here.", MASK={"M": ["He"], "F": ["She"]}), q)
    assert main(["lpbs", str(q), "-m", models["bertweet"], "--device", "cpu"]) == 2
