"""fmat.tiny: tiny masked LMs of every tokenizer family load like hub models."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from tiny_arch import not_single_words

from fmat.tiny import FAMILIES, build_demo_models, build_tiny_model

torch.set_num_threads(1)

WORDS = ["man", "woman", "He", "She", "Mary", "1850", "a nurse"]


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if f.name != "fmat_tiny.json":
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return build_demo_models(tmp_path_factory.mktemp("demo"), WORDS)


def test_demo_names_and_classes(demo):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    assert set(demo) == {folder for _, folder in FAMILIES.values()}
    expected = {
        "tiny-bert-base-uncased": ("BertForMaskedLM", "BertTokenizer"),
        "tiny-bert-base-cased": ("BertForMaskedLM", "BertTokenizer"),
        "tiny-distilbert-base-uncased": ("DistilBertForMaskedLM", "BertTokenizer"),
        "tiny-roberta-base": ("RobertaForMaskedLM", "RobertaTokenizer"),
        "tiny-albert-base-v2": ("AlbertForMaskedLM", "AlbertTokenizer"),
        "tiny-bertweet-base": ("RobertaForMaskedLM", "BertweetTokenizer"),
    }
    for name, path in demo.items():
        assert (path / "model.safetensors").exists()
        model = AutoModelForMaskedLM.from_pretrained(path)
        tok = AutoTokenizer.from_pretrained(path)
        assert (type(model).__name__, type(tok).__name__) == expected[name]
        assert model.get_input_embeddings().weight.shape[0] == len(tok)
        assert not_single_words(path) == []


@pytest.mark.parametrize(
    "name,sentence,tokens",
    [
        ("tiny-bert-base-uncased", "He is a nurse", ["he", "is", "a", "nurse"]),
        ("tiny-bert-base-cased", "He is Mary", ["He", "is", "Mary"]),
        ("tiny-roberta-base", "He is a woman in 1850", ["He", "Ġis", "Ġa", "Ġwoman", "Ġin", "Ġ1850"]),
        ("tiny-albert-base-v2", "She is a man", ["▁she", "▁is", "▁a", "▁man"]),
        ("tiny-bertweet-base", "She is a man", ["She", "is", "a", "man"]),
    ],
)
def test_words_are_whole_tokens(demo, name, sentence, tokens):
    from transformers import AutoTokenizer

    assert AutoTokenizer.from_pretrained(demo[name]).tokenize(sentence) == tokens


def test_bertweet_uses_fastbpe_continuations(demo):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(demo["tiny-bertweet-base"])
    pieces = tok.tokenize("zyzzogeton")
    assert len(pieces) > 1 and all(p.endswith("@@") for p in pieces[:-1]) and not pieces[-1].endswith("@@")
    codes = (demo["tiny-bertweet-base"] / "bpe.codes").read_text().splitlines()
    assert all(len(line.split()) == 3 for line in codes[:50])  # 'a b count', as BERTweet's file


@pytest.mark.parametrize("family", ["bert-cased", "albert", "bertweet"])  # the three canonicalised trainers
def test_deterministic_and_seeded(tmp_path, family):
    # the tokenizers trainers number pieces in hash order; fmat.tiny canonicalises them
    a = build_tiny_model(tmp_path / "a", family, WORDS, seed=3)
    b = build_tiny_model(tmp_path / "b", family, WORDS, seed=3)
    assert _digest(a) == _digest(b)
    if family == "albert":
        c = build_tiny_model(tmp_path / "c", family, WORDS, seed=4)
        assert _digest(a) != _digest(c)
    meta = json.loads((a / "fmat_tiny.json").read_text())
    assert meta["family"] == family and meta["seed"] == 3


def test_not_single_words_are_reported(tmp_path):
    from fmat import tiny

    path = build_tiny_model(tmp_path / "m", "roberta", WORDS, seed=0)
    assert not_single_words(path) == []
    # a word part whose whole-word form is missing is listed
    meta = json.loads((path / "fmat_tiny.json").read_text())
    assert meta["n_words"] == len(tiny._word_parts(WORDS)) == 8  # "a nurse" -> "a", "nurse"


def test_unknown_family(tmp_path):
    with pytest.raises(ValueError, match="family"):
        build_tiny_model(tmp_path, "gpt", WORDS)


def test_short_words_stay_whole_in_a_large_sentencepiece_vocabulary(tmp_path):
    """With thousands of words the Unigram trainer keeps pieces like '▁' + 'he' and '▁me' + 'n';
    the builder must still make 'he', 'his', 'men' single tokens (the demo's Study 1 and 3 words)."""
    import itertools

    from transformers import AutoTokenizer

    years = [str(y) for y in range(1800, 2020)]
    syl = ["ba", "ke", "li", "mo", "nu", "ra", "se", "ti", "vo", "ja", "de", "fi", "go", "ha", "lu", "pe"]
    names = sorted(
        {
            (a + b + c).capitalize()
            for a, b, c in itertools.product(syl, syl, ["n", "l", "r", "s", "a", "e", "y", "ne", "la", "son"])
        }
    )[:3600]
    words = ["He", "His", "She", "Her", "men", "women", "man", "woman", "him", "her"] + years + names
    path = build_tiny_model(tmp_path / "albert", "albert", words, seed=0)
    tok = AutoTokenizer.from_pretrained(path)
    assert tok.tokenize("He") == ["▁he"]  # sentence-initial, lower-cased
    lead = len(tok.tokenize("a"))
    for word in ("men", "his", "he", "her", "woman"):
        assert tok.tokenize(f"a {word}")[lead:] == [f"▁{word}"], word
    assert not_single_words(path) == []
