"""Subject–verb agreement check (fmat.agreement) on tiny models.

Reference values: the transformers fill-mask pipeline (an independent implementation) with
the good and bad verb as ``targets`` (vocabulary entries spelled out per family here), and
skipping decided from the tokenizer's own ``tokenize`` of the verb. Summary arithmetic is
checked on a hand-made table with hand-counted numbers.
"""

from __future__ import annotations

import hashlib
import io
import math
import warnings

import pandas as pd
import pytest
import torch
from tiny_arch import sharpen

from fmat import agreement as A
from fmat.errors import InputError, OfflineError
from fmat.tiny import build_tiny_model

torch.set_num_threads(1)

FAMS = ["bert-uncased", "roberta", "bertweet", "albert"]
MID = {  # the vocabulary entry of a word in mid-sentence, by family
    "bert-uncased": lambda w: w.lower(),
    "bertweet": lambda w: w,
    "roberta": lambda w: "\u0120" + w,
    "albert": lambda w: "\u2581" + w.lower(),
}
NOT_TAUGHT = {"smiles", "smile"}  # left out of the tiny vocabularies -> (likely) several pieces
OOV_VERB = "zyzzogetons"  # never in any vocabulary


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("agreement_tiny")
    words = [w for w in A.fixture_words() if w not in NOT_TAUGHT]
    return {fam: sharpen(build_tiny_model(root / fam, fam, words, seed=3)) for fam in FAMS}


@pytest.fixture(scope="module")
def results(models):
    return A.check(models, device="cpu", batch_size=7)


# --------------------------------------------------------------------------- reading


def test_fixture_pairs():
    p = A.read_pairs()
    assert len(p) == 30 and p.attrs["dropped"] == 0
    assert list(p["construction"].unique()) == ["simple_agrmt", "sent_comp", "prep_anim", "subj_rel", "obj_rel_across_anim"]
    assert (p.groupby("construction").size() == 6).all()
    first = p.iloc[0]
    assert (first["sentence"], first["good"], first["bad"]) == ("the author [MASK] .", "laughs", "laugh")
    across = p[p["construction"] == "obj_rel_across_anim"].iloc[0]
    assert across["sentence"] == "the author that the guards like [MASK] ."
    assert list(p["pair"]) == list(range(1, 31))


def test_parse_goldberg_format_and_filters():
    lines = [
        "simple_agrmt\tsing_MS_MV\tthe author laughs\tthe author laugh",
        "simple_reflexives\tsing_MS_ANPHR\tthe author hurt himself\tthe author hurt themselves",
        "vp_coord\tsing_MS_MV_MV\tthe author laughs and swims\tthe author laugh and swim",  # 2 diffs
        "npi_across_anim\tpast\tno author has ever laughed\tthe author has ever laughed\tmost author has ever laughed",
        "sent_comp\tx\tthe man said it is\tthe man said it",  # lengths differ
        "",
    ]
    sv = A.parse_pairs(lines)
    assert list(sv["construction"]) == ["simple_agrmt"]
    assert sv.attrs["dropped"] == 2
    every = A.parse_pairs(lines, constructions="all")
    assert list(every["construction"]) == ["simple_agrmt", "simple_reflexives", "npi_across_anim"]
    # five columns (NPI): the last two are the good and bad sentences, as Goldberg reads them
    npi = every.iloc[2]
    assert (npi["good"], npi["bad"]) == ("the", "most")
    with pytest.raises(InputError, match=r"pairs.tsv:2"):
        A.parse_pairs(["simple_agrmt\ta\tb\tc", "only\ttwo"], where="pairs.tsv")
    with pytest.raises(InputError, match="no pairs"):
        A.parse_pairs(lines, constructions=["subj_rel"])


# --------------------------------------------------------------------------- against the pipeline


@pytest.mark.parametrize("fam", FAMS)
def test_correct_equals_pipeline_comparison(fam, models, results):
    """Per pair: correct == (pipeline score of good > of bad); skipped == a verb is several pieces."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    per_pair, summary = results
    tok = AutoTokenizer.from_pretrained(models[fam])
    pipe = pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(models[fam]), tokenizer=tok, device="cpu")
    vocab = tok.get_vocab()
    mine = per_pair[per_pair["model"] == fam].reset_index(drop=True)
    assert len(mine) == 30
    ref_correct, ref_skipped, margins = [], [], []
    for r in mine.itertuples():
        forms = [MID[fam](r.good), MID[fam](r.bad)]
        skip = not all(f in vocab for f in forms)
        ref_skipped.append(skip)
        if skip:
            ref_correct.append(None)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pipe(r.sentence.replace("[MASK]", tok.mask_token), targets=forms, top_k=2)
        score = {d["token"]: d["score"] for d in res}
        g, b = score[vocab[forms[0]]], score[vocab[forms[1]]]
        ref_correct.append(g > b)
        margins.append(abs(math.log(g) - math.log(b)))
        assert r.logp_good == pytest.approx(math.log(g), abs=1e-5)
        assert r.logp_bad == pytest.approx(math.log(b), abs=1e-5)
    assert list(mine["skipped"]) == ref_skipped
    assert any(ref_skipped) and not all(ref_skipped)
    assert min(margins) > 1e-4  # no near-ties: the comparison is well defined
    got = [None if pd.isna(v) else bool(v) for v in mine["correct"]]
    assert got == ref_correct
    # the summary's overall row from the reference decisions
    k = sum(1 for v in ref_correct if v)
    n = sum(1 for v in ref_correct if v is not None)
    row = summary[(summary["model"] == fam) & (summary["construction"] == "all")].iloc[0]
    assert (row["n"], row["n_correct"], row["skipped"], row["total"]) == (n, k, 30 - n, 30)
    assert row["accuracy"] == pytest.approx(k / n)


def test_oov_verb_is_skipped_everywhere(models):
    pairs = A.parse_pairs(
        [
            "simple_agrmt\tsing\tthe author laughs\tthe author laugh",
            f"simple_agrmt\tsing\tthe author {OOV_VERB}\tthe author laugh",
        ]
    )
    per_pair, summary = A.check({"b": models["bert-uncased"], "r": models["roberta"]}, pairs, device="cpu")
    assert list(per_pair["skipped"]) == [False, True, False, True]
    assert per_pair.loc[per_pair["skipped"], "correct"].isna().all()
    assert per_pair.loc[~per_pair["skipped"], "correct"].notna().all()
    assert list(summary["model"].astype(str)) == ["b", "b", "r", "r"]
    assert list(summary["skipped"]) == [1, 1, 1, 1] and list(summary["n"]) == [1, 1, 1, 1]


# --------------------------------------------------------------------------- summary arithmetic


def test_summary_arithmetic():
    per_pair = pd.DataFrame(
        {
            "model": pd.Categorical(["m2"] * 5 + ["m1"] * 5, categories=["m2", "m1"]),
            "construction": ["a", "a", "a", "b", "b"] * 2,
            "skipped": [False, False, True, False, False, False, True, True, True, True],
            "correct": pd.array([True, False, None, True, True, False, None, None, None, None], dtype="boolean"),
        }
    )
    s = A.summarize(per_pair)
    want = [  # model, construction, n, n_correct, accuracy, skipped, total  (counted by hand)
        ("m2", "a", 2, 1, 0.5, 1, 3),
        ("m2", "b", 2, 2, 1.0, 0, 2),
        ("m2", "all", 4, 3, 0.75, 1, 5),
        ("m1", "a", 1, 0, 0.0, 2, 3),
        ("m1", "b", 0, 0, float("nan"), 2, 2),
        ("m1", "all", 1, 0, 0.0, 4, 5),
    ]
    assert list(s.columns) == A.SUMMARY_COLUMNS
    for row, w in zip(s.itertuples(index=False), want):
        assert tuple(row)[:4] == w[:4] and tuple(row)[5:] == w[5:]
        assert (math.isnan(row.accuracy) and math.isnan(w[4])) or row.accuracy == w[4]
    with pytest.raises(InputError, match="lacks column"):
        A.summarize(per_pair.drop(columns="skipped"))


# --------------------------------------------------------------------------- download


class FakeResponse(io.BytesIO):
    pass


def fake_opener(data: bytes, calls: list):
    def opener(url, timeout=None):
        calls.append((url, timeout))
        return FakeResponse(data)

    return opener


DATA = (
    "simple_agrmt\tsing_MS_MV\tthe author laughs\tthe author laugh\n"
    "simple_reflexives\tsing_MS_ANPHR\tthe author hurt himself\tthe author hurt themselves\n"
).encode()


def test_download_checks_sha256(tmp_path):
    calls = []
    digest = hashlib.sha256(DATA).hexdigest()
    dest = A.download_pairs(tmp_path / "ml.tsv", url="https://example.org/ml.tsv", sha256=digest, opener=fake_opener(DATA, calls))
    assert dest.read_bytes() == DATA
    assert calls[0][0] == "https://example.org/ml.tsv"
    assert (tmp_path / "ml.tsv.sha256").read_text().split() == [digest, "ml.tsv"]
    assert len(A.read_pairs(dest)) == 1 and len(A.read_pairs(dest, constructions="all")) == 2
    with pytest.raises(InputError, match="sha256"):
        A.download_pairs(tmp_path / "bad.tsv", sha256="0" * 64, opener=fake_opener(DATA, []))
    assert not (tmp_path / "bad.tsv").exists()
    # unverified: accepted, the digest is recorded
    A.download_pairs(tmp_path / "u.tsv", sha256="unverified", opener=fake_opener(DATA, []))
    assert (tmp_path / "u.tsv.sha256").read_text().startswith(digest)


def test_download_errors(tmp_path):
    def broken(url, timeout=None):
        raise OSError("no network")

    with pytest.raises(OfflineError, match="agreement.pairs"):
        A.download_pairs(tmp_path / "x.tsv", opener=broken)
    with pytest.raises(InputError, match="column"):
        A.download_pairs(tmp_path / "x.tsv", sha256=None, opener=fake_opener(b"<html>not found</html>\n", []))
    assert not (tmp_path / "x.tsv").exists()
    assert A.MARVIN_LINZEN_URL.endswith("yoavg/bert-syntax/master/marvin_linzen_dataset.tsv")


# --------------------------------------------------------------------------- CLI


def test_cli(models, tmp_path, capsys):
    from fmat.cli import main
    from fmat.io import read_table

    out, summ = tmp_path / "a.parquet", tmp_path / "s.csv"
    rc = main(["agreement", "-m", models["bert-uncased"], "-o", str(out), "--summary", str(summ), "--device", "cpu"])
    assert rc == 0
    per_pair = read_table(out)
    assert len(per_pair) == 30 and {"logp_good", "logp_bad", "skipped", "correct"} <= set(per_pair.columns)
    s = read_table(summ)
    assert list(s["construction"])[-1] == "all"
    assert "obj_rel_across_anim" in capsys.readouterr().out
    assert main(["agreement", "-m", models["bert-uncased"], "--pairs", str(tmp_path / "missing.tsv")]) == 2
