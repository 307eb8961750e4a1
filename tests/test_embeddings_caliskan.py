"""Caliskan, Bryson & Narayanan (2017) reproduced on their GloVe 840B vectors.

Published numbers (Science 356:183, Table 1 and Figures 1-2): WEAT effect sizes 1.50
(flowers/insects), 1.53 (instruments/weapons), 1.41 (European/African American names),
1.21 (young/old names); WEFAT correlations r = .90 (50 occupations, % women, BLS 2015) and
r = .84 (50 androgynous names, % women, 1990 census). Data: data/mirror/caliskan2017 (carried by the repository).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fmat import embeddings as E


@pytest.fixture(scope="module")
def caliskan(mirror_data):
    d = mirror_data / "caliskan2017"
    lists = pd.read_csv(d / "wordlists.tsv", sep="\t")
    vectors = E.read_word2vec(d / "glove840B_items.txt", dims=300)  # all 457 words
    return d, lists, vectors


def wordlist(lists, study, category):
    rows = lists[(lists["study"] == study) & (lists["category"] == category) & (lists["status"] == "used")]
    return list(rows["word"])


WEATS = {
    # study: (S, T, A, B, published d, |S| = |T|)
    "WEAT1": ("Flowers", "Insects", "Pleasant", "Unpleasant", 1.50, 25),
    "WEAT2": ("Instruments", "Weapons", "Pleasant", "Unpleasant", 1.53, 25),
    "WEAT3": ("EuropeanAmericanNames", "AfricanAmericanNames", "Pleasant", "Unpleasant", 1.41, 32),
    "WEAT10": ("YoungNames", "OldNames", "Pleasant", "Unpleasant", 1.21, 8),
}


@pytest.mark.parametrize("study", list(WEATS))
def test_weat_effect_sizes(caliskan, study):
    _, lists, w = caliskan
    s, t, a, b, published, n = WEATS[study]
    res = E.query(w, wordlist(lists, study, s), wordlist(lists, study, t), wordlist(lists, study, a), wordlist(lists, study, b))
    assert res.method == "weat" and res.missing == {}
    assert len(res.S_words) == len(res.T_words) == n
    assert round(E.calculate_es(res), 2) == published


def test_weat_p_values(caliskan):
    _, lists, w = caliskan
    # WEAT-10 (8+8 names): exact test over C(16, 8) = 12,870 splits; Caliskan report P ~ 10^-2
    s, t, a, b, *_ = WEATS["WEAT10"]
    res = E.weat(w, *(wordlist(lists, "WEAT10", c) for c in (s, t, a, b)))
    test = E.weat_test(res)
    assert test.method.startswith("The exact") and test.n == 12870
    assert 1e-3 < test.p_value < 5e-2
    # WEAT-1 (25+25): exact is infeasible; Caliskan report 10^-7, i.e. no draw out of 9,999 beats it
    s, t, a, b, *_ = WEATS["WEAT1"]
    res = E.weat(w, *(wordlist(lists, "WEAT1", c) for c in (s, t, a, b)))
    test = E.weat_test(res, seed=2017)
    assert test.method.startswith("Resampling") and test.n == 9999 and test.p_value == 0


def pct_women_occupations(bls: pd.DataFrame, words: list[str]) -> pd.Series:
    """Caliskan's method: employment-weighted mean % women over the rows labelled with the word."""
    labels = bls[[f"label{i}" for i in range(1, 6)]].astype("str")
    out = {}
    for word in words:
        rows = bls[(labels == word).any(axis=1)]
        assert len(rows), word
        out[word] = np.average(rows["Women"], weights=rows["TotalEmployed"])
    return pd.Series(out)


def test_wefat_occupations_r_90(caliskan):
    d, lists, w = caliskan
    careers = wordlist(lists, "WEFAT1", "Careers")
    assert len(careers) == 50
    bls = pd.read_csv(d / "professionsBLS2015.tsv", sep="\t")
    women = pct_women_occupations(bls, careers)
    crit = E.wefat_criterion(
        w, careers, wordlist(lists, "WEFAT1", "MaleAttributes"), wordlist(lists, "WEFAT1", "FemaleAttributes")
    )
    assert not crit["missing"].any()
    # Caliskan's score is female-positive: s = -wefat_male
    r = np.corrcoef(-crit["wefat_male"].to_numpy(), women[careers].to_numpy())[0, 1]
    assert round(r, 2) == 0.90


def test_wefat_names_r_84(caliskan):
    d, lists, w = caliskan
    names = wordlist(lists, "WEFAT2", "AndrogynousNames")
    assert len(names) == 50
    census = pd.read_csv(d / "censusNames1990.tsv", sep="\t")
    census.index = census["Name"].astype("str").str.upper()
    # the column is (male share - female share) / (male + female) of the name's bearers
    # (e.g. WILLIE: (.302 - .097) / (.302 + .097) = .5138), so % women = (1 - x) / 2
    x = census.loc[[n.upper() for n in names], "Female-1Male1Unisex0"].to_numpy()
    women = (1 - x) / 2 * 100
    res = E.nas(w, names, wordlist(lists, "WEFAT2", "FemaleAttributes"), wordlist(lists, "WEFAT2", "MaleAttributes"))
    r = np.corrcoef(res.P.to_numpy(), women)[0, 1]
    assert round(r, 2) == 0.84


def test_wefat_male_sign_on_glove(caliskan):
    _, lists, w = caliskan
    male, female = wordlist(lists, "WEFAT1", "MaleAttributes"), wordlist(lists, "WEFAT1", "FemaleAttributes")
    crit = E.wefat_criterion(w, ["uncle", "grandfather", "aunt", "grandmother"], male, female)
    assert (crit["wefat_male"][:2] > 0).all() and (crit["wefat_male"][2:] < 0).all()


def test_fast_path_and_cache_equal_full_read(caliskan, tmp_path):
    d, _, w = caliskan
    full = E.read_word2vec(d / "glove840B_items.txt", dims=300)
    assert full.shape == (457, 300)
    pick = ["Billy", "nurse", "no-such-token", "hers"]
    fast = E.read_word2vec(d / "glove840B_items.txt", words=pick, dims=300, cache=tmp_path / "g.parquet")
    pd.testing.assert_frame_equal(fast, full.loc[["Billy", "nurse", "hers"]])
    again = E.read_word2vec(d / "glove840B_items.txt", words=pick, dims=300, cache=tmp_path / "g.parquet")
    pd.testing.assert_frame_equal(again, fast)
    # values as printed in the file (first line: "abuse -0.87152 0.40062 ...")
    assert full.loc["abuse", 0] == -0.87152 and full.loc["abuse", 1] == 0.40062
