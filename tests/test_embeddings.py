"""fmat.embeddings on tiny hand-made embeddings whose answers are worked out by hand.

Each expected value below is derived in the comment next to it from the 2-d vectors, not
from the code under test.
"""

from __future__ import annotations

import gzip
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from fmat import embeddings as E
from fmat.errors import InputError


def vecs(**rows) -> pd.DataFrame:
    words = list(rows)
    return pd.DataFrame(np.array([rows[w] for w in words], dtype=float), index=pd.Index(words, name="word"))


# --------------------------------------------------------------------------------------
# read_word2vec
# --------------------------------------------------------------------------------------

TXT = "cat 1 2 3\ndog 4 5 6\nhot dog 7 8 9\nx\u00a0y 0.5 0.25 -1\n"


def test_read_without_header_and_multiword_tokens(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text(TXT, encoding="utf-8")
    w = E.read_word2vec(p, dims=3)
    # "hot dog" is one token (the vector is the last 3 fields); a non-breaking space is part
    # of a token, not a separator
    assert list(w.index) == ["cat", "dog", "hot dog", "x\u00a0y"]
    assert w.index.name == "word"
    assert w.shape == (4, 3)
    np.testing.assert_array_equal(w.loc["hot dog"].to_numpy(), [7, 8, 9])
    np.testing.assert_array_equal(w.loc["x\u00a0y"].to_numpy(), [0.5, 0.25, -1])


def test_read_with_header_is_checked(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("2 3\ncat 1 2 3\ndog 4 5 6\n")
    w = E.read_word2vec(p)
    assert list(w.index) == ["cat", "dog"] and w.shape == (2, 3)
    bad = tmp_path / "bad.txt"
    bad.write_text("3 3\ncat 1 2 3\ndog 4 5 6\n")
    with pytest.raises(InputError, match="header says 3 words"):
        E.read_word2vec(bad)
    ragged = tmp_path / "ragged.txt"
    ragged.write_text("cat 1 2 3\ndog 4 5\n")
    with pytest.raises(InputError, match="line 2"):
        E.read_word2vec(ragged)


def test_read_selected_words_gz_and_order(tmp_path):
    p = tmp_path / "v.txt.gz"
    with gzip.open(p, "wt", encoding="utf-8") as fh:
        fh.write(TXT)
    w = E.read_word2vec(p, words=["hot dog", "cat", "absent"], dims=3)
    # in the order asked for; words not in the file are absent
    assert list(w.index) == ["hot dog", "cat"]
    np.testing.assert_array_equal(w.loc["cat"].to_numpy(), [1, 2, 3])


def test_read_cache_is_used_and_refreshed(tmp_path, monkeypatch):
    p = tmp_path / "v.txt"
    p.write_text(TXT)
    cache = tmp_path / "cache" / "sel.parquet"
    w1 = E.read_word2vec(p, words=["dog", "nope"], dims=3, cache=cache)
    assert cache.exists() and (tmp_path / "cache" / "sel.parquet.json").exists()
    calls = []
    real_scan = E._scan
    monkeypatch.setattr(E, "_scan", lambda *a, **k: calls.append(a) or real_scan(*a, **k))
    # the same words (and a word already known to be absent): served from the cache
    w2 = E.read_word2vec(p, words=["dog", "nope"], dims=3, cache=cache)
    assert calls == []
    pd.testing.assert_frame_equal(w1, w2)
    # a new word: one new scan, for the union
    w3 = E.read_word2vec(p, words=["cat", "dog"], dims=3, cache=cache)
    assert len(calls) == 1 and list(w3.index) == ["cat", "dog"]
    assert set(E._read_cache(cache).index) == {"cat", "dog"}


def test_read_missing_file():
    with pytest.raises(InputError, match="not found"):
        E.read_word2vec("/nonexistent/vectors.txt")


# --------------------------------------------------------------------------------------
# WEAT
# --------------------------------------------------------------------------------------


@pytest.fixture
def toy():
    return vecs(a=(1, 0), b=(0, 1), s1=(1, 0), s2=(1, 1), t1=(0, 1), t2=(0, 2))


def test_weat_hand_computed(toy):
    r = E.weat(toy, ["s1", "s2"], ["t1", "t2"], ["a"], ["b"])
    # s(x) = cos(x, a) - cos(x, b): s1 = 1 - 0, s2 = 1/√2 - 1/√2 = 0, t1 = t2 = 0 - 1 = -1
    np.testing.assert_allclose(r.S_diff.to_numpy(), [1, 0], atol=1e-12)
    np.testing.assert_allclose(r.T_diff.to_numpy(), [-1, -1], atol=1e-12)
    # unstandardized: mean S - mean T = 0.5 - (-1) = 1.5
    assert E.weat_es(r, standardize=False) == pytest.approx(1.5)
    # sd(1, 0, -1, -1) with ddof 1: mean -0.25, SS = 1.5625 + .0625 + .5625 + .5625 = 2.75
    sd = math.sqrt(2.75 / 3)
    d = 1.5 / sd
    assert E.weat_es(r) == pytest.approx(d)
    assert E.calculate_es(r) == pytest.approx(d)
    # d -> r: d / sqrt(d^2 + (N^2 - 2N) / (n1 n2)) = d / sqrt(d^2 + 8/4)
    assert E.weat_es(r, r=True) == pytest.approx(d / math.sqrt(d * d + 2))


def weat_result(s, t):
    return E.BiasResult(
        "weat",
        [f"s{i}" for i in range(len(s))],
        [f"t{i}" for i in range(len(t))],
        S_diff=pd.Series(s, dtype=float),
        T_diff=pd.Series(t, dtype=float),
    )


def test_weat_es_unequal_sizes_pooled_sd():
    import pingouin

    s, t = [3.0, 1.0, 2.0], [0.0, 1.0]
    r = weat_result(s, t)
    # mean 2 vs 0.5; var_S = 1, var_T = 0.5; pooled = sqrt((2*1 + 1*0.5) / 3)
    assert E.weat_es(r) == pytest.approx(1.5 / math.sqrt(2.5 / 3))
    # an independent implementation of Cohen's d with the pooled SD
    assert E.weat_es(r) == pytest.approx(pingouin.compute_effsize(s, t, eftype="cohen"))
    # sweater 0.1.7's literal expression: sqrt((n1-1) var_S + (n2-1) var_T / (n1+n2+2))
    assert E.weat_es(r, pooled="sweater") == pytest.approx(1.5 / math.sqrt(2 + 0.5 / 7))


def test_weat_exact_hand_and_brute_force():
    # S = (3, 1), T = (2, 0): observed 2 - 1 = 1. The 6 splits of {3,1,2,0} into 2+2 give
    # differences 1 (observed), 2, 0, 0, -2, -1: one is greater -> p = 1/6
    t = E.weat_exact(weat_result([3, 1], [2, 0]))
    assert t.p_value == pytest.approx(1 / 6) and t.n == 6 and t.statistic == pytest.approx(1)
    # sweater's algorithm literally: every ordering of the union (8! = 40,320)
    rng = np.random.default_rng(3)
    s, u = rng.normal(0.3, 1, 4), rng.normal(0, 1, 4)
    both = np.r_[s, u]
    obs = s.mean() - u.mean()
    greater = sum(np.mean(p[:4]) - np.mean(p[4:]) > obs + 1e-12 for p in itertools.permutations(both))
    assert E.weat_exact(weat_result(s, u)).p_value == pytest.approx(greater / math.factorial(8))


def test_weat_exact_infeasible_and_resampling():
    big = weat_result(np.linspace(0, 1, 25), np.linspace(-0.5, 0.5, 25))
    with pytest.raises(InputError, match="weat_resampling"):
        E.weat_exact(big)
    # auto falls back to resampling for 25 + 25
    assert E.weat_test(big, n_resampling=200, seed=1).method.startswith("Resampling")
    # resampling approximates the exact p = 1/6 of the hand example
    r = weat_result([3, 1], [2, 0])
    n = 20000
    t1 = E.weat_resampling(r, n_resampling=n, seed=42)
    assert abs(t1.p_value - 1 / 6) < 4 * math.sqrt((1 / 6) * (5 / 6) / n)
    assert t1.n == n and t1.seed == 42
    # same seed, same answer; the null mean is about 0 (sum of all differences is 0)
    assert E.weat_resampling(r, n_resampling=n, seed=42).p_value == t1.p_value
    assert abs(t1.null_value) < 0.05
    assert E.weat_test(r).method.startswith("The exact")


# --------------------------------------------------------------------------------------
# the other methods
# --------------------------------------------------------------------------------------


def test_nas_and_wefat_criterion_hand():
    w = vecs(s=(1, 0), a1=(1, 0), a2=(0, 1), b1=(-1, 0))
    r = E.nas(w, ["s"], ["a1", "a2"], ["b1"])
    # cos: A = (1, 0), B = (-1); (mean A - mean B) = 0.5 + 1 = 1.5; sd(1, 0, -1) = 1
    assert r.P["s"] == pytest.approx(1.5)
    with pytest.raises(InputError, match="no effect size"):
        E.calculate_es(r)
    # criterion: male-positive; a word pointing at the male attributes scores > 0
    w2 = vecs(he=(1, 0), him=(0.9, 0.1), she=(0, 1), her=(0.1, 0.9), king=(1, 0.05), queen=(0.05, 1))
    with pytest.warns(E.MissingWordsWarning, match="unicorn"):
        out = E.wefat_criterion(w2, ["king", "queen", "unicorn"], ["he", "him"], ["she", "her"])
    assert list(out.columns) == ["item", "wefat_male", "missing"]
    assert list(out["item"]) == ["king", "queen", "unicorn"]
    assert out["wefat_male"][0] > 0 > out["wefat_male"][1]
    assert bool(out["missing"][2]) and np.isnan(out["wefat_male"][2])
    # equals nas with A = male, B = female
    assert out["wefat_male"][0] == pytest.approx(E.nas(w2, ["king"], ["he", "him"], ["she", "her"]).P["king"])


def test_mac_hand():
    w = vecs(a1=(1, 0), a2=(0, 1), s1=(1, 0), s2=(1, 1))
    r = E.mac(w, ["s1", "s2"], ["a1", "a2"])
    # s1: (1 + 0)/2 = 0.5; s2: (1/√2 + 1/√2)/2 = 1/√2
    np.testing.assert_allclose(r.P.to_numpy(), [0.5, 1 / math.sqrt(2)])
    assert E.mac_es(r) == pytest.approx((0.5 + 1 / math.sqrt(2)) / 2)


def test_rnd_hand():
    w = vecs(a1=(0, 0), a2=(2, 0), b1=(3, 0), s1=(3, 4), s2=(1, 0))
    r = E.rnd(w, ["s1", "s2"], ["a1", "a2"], ["b1"])
    # mean A = (1, 0), mean B = (3, 0); s1: |(2,4)| - |(0,4)| = √20 - 4; s2: 0 - 2
    np.testing.assert_allclose(r.P.to_numpy(), [math.sqrt(20) - 4, -2])
    assert E.rnd_es(r) == pytest.approx(math.sqrt(20) - 6)


def test_semaxis_hand_with_and_without_augmentation():
    w = vecs(a=(1, 0), b=(0, 1), x=(2, 1), y=(1, 3), s=(1, 1))
    r0 = E.semaxis(w, ["s", "a"], ["a"], ["b"])
    # V = a - b = (1, -1): cos(s, V) = 0; cos(a, V) = 1/√2
    np.testing.assert_allclose(r0.P.to_numpy(), [0, 1 / math.sqrt(2)], atol=1e-12)
    with pytest.raises(InputError, match="no effect size"):
        E.calculate_es(r0)
    r1 = E.semaxis(w, ["s", "x"], ["a"], ["b"], l=1)
    # nearest neighbour of a is x (cos .894 > s .707): soft(a) = (1.5, .5); of b is y
    # (cos .949): soft(b) = (.5, 2). V = (1, -1.5), |V| = √3.25
    np.testing.assert_allclose(r1.V, [1, -1.5])
    np.testing.assert_allclose(r1.P.to_numpy(), [-0.5 / (math.sqrt(2) * math.sqrt(3.25)), 0.5 / (math.sqrt(5) * math.sqrt(3.25))])


def test_ect_hand():
    w = vecs(a=(1, 0), b=(0, 1), s1=(1, 0.1), s2=(1, 1), s3=(0.1, 1))
    r = E.ect(w, ["s1", "s2", "s3"], ["a"], ["b"])
    # u_a falls and u_b rises along s1, s2, s3: Spearman = -1
    assert E.ect_es(r) == pytest.approx(-1)
    np.testing.assert_allclose(r.u_a.to_numpy(), [1 / math.sqrt(1.01), 1 / math.sqrt(2), 0.1 / math.sqrt(1.01)])


def test_rnsb_kl_hand_and_symmetry():
    from scipy.stats import entropy

    r = E.BiasResult("rnsb", ["x", "y", "z"], P=pd.Series([0.5, 0.25, 0.25], index=["x", "y", "z"]))
    # .5 ln 1.5 + .5 ln .75
    kl = 0.5 * math.log(1.5) + 0.5 * math.log(0.75)
    assert E.rnsb_es(r) == pytest.approx(kl)
    assert E.rnsb_es(r) == pytest.approx(entropy([0.5, 0.25, 0.25], [1 / 3] * 3))
    w = vecs(p1=(1, 0.1), p2=(1, -0.1), n1=(-1, 0.1), n2=(-1, -0.1), s1=(0.5, 0.3), s2=(0.5, 0.3), s3=(-0.6, 0.2))
    res = E.rnsb(w, ["s1", "s2", "s3"], ["p1", "p2"], ["n1", "n2"])
    # identical words get identical P; the word on the B (negative) side gets the largest
    assert res.P["s1"] == pytest.approx(res.P["s2"])
    assert res.P["s3"] > res.P["s1"]
    assert res.P.sum() == pytest.approx(1)
    assert E.calculate_es(res) > 0


# --------------------------------------------------------------------------------------
# front door, missing words, plots
# --------------------------------------------------------------------------------------


def test_query_guess_and_missing_words(toy):
    assert E.query(toy, ["s1"], A_words=["a"]).method == "mac"
    assert E.query(toy, ["s1"], A_words=["a"], B_words=["b"]).method == "rnd"
    with pytest.warns(E.MissingWordsWarning, match="zzz"):
        r = E.query(toy, ["s1", "s2", "zzz"], ["t1", "t2"], ["a"], ["b"])
    assert r.method == "weat"
    assert r.missing == {"S": ["zzz"]}
    assert r.S_words == ["s1", "s2"]
    assert "zzz" in repr(r)
    assert E.query(toy, ["s1"], A_words=["a"], B_words=["b"], method="ect").method == "ect"
    with pytest.raises(InputError, match="cannot guess"):
        E.query(toy, ["s1"], T_words=["t1"])
    with pytest.raises(InputError, match="needs word sets"):
        E.query(toy, ["s1"], A_words=["a"], method="weat")
    with pytest.raises(InputError, match="none of the A words"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            E.query(toy, ["s1"], A_words=["nope"])
    with pytest.raises(InputError, match="DataFrame"):
        E.query({"a": [1]}, ["s1"], A_words=["a"])


def test_plot_bias(toy, tmp_path):
    r = E.query(toy, ["s1", "s2", "t1"], A_words=["a"], B_words=["b"])
    fig = E.plot_bias(r)
    fig.savefig(tmp_path / "bias.png")
    assert (tmp_path / "bias.png").stat().st_size > 0
    # the dots are sorted by score: the y tick labels read from the lowest P up
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == list(r.P.sort_values().index)
    fig2 = E.plot_bias(E.ect(toy, ["s1", "s2", "t1"], ["a"], ["b"]))
    assert fig2.axes[0].get_xlabel().startswith("Association")
    with pytest.raises(InputError, match="not supported"):
        E.plot_bias(E.weat(toy, ["s1"], ["t1"], ["a"], ["b"]))


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def test_cli_weat_and_wefat(tmp_path, capsys):
    from fmat.cli import main
    from fmat.io import read_table

    p = tmp_path / "v.txt"
    p.write_text("a 1 0\nb 0 1\ns1 1 0\ns2 1 1\nt1 0 1\nt2 0 2\nhe 1 0\nshe 0 1\nking 1 0.05\n")
    rc = main(["weat", "--vectors", str(p), "--S", "s1,s2", "--T", "t1,t2", "--A", "a", "--B", "b"])
    out = capsys.readouterr().out
    assert rc == 0
    d = 1.5 / math.sqrt(2.75 / 3)  # the hand-computed toy WEAT above
    assert f"{d:.4f}" in out and "exact" in out.lower()
    rc = main(["weat", "--vectors", str(p), "--S", "s1,s2,t1", "--A", "a", "--B", "b", "--method", "rnd"])
    assert rc == 0 and "rnd" in capsys.readouterr().out
    items = tmp_path / "items.txt"
    items.write_text("king\nghost\n")
    outp = tmp_path / "w.parquet"
    rc = main(["wefat", "--vectors", str(p), "--items", str(items), "--male", "he", "--female", "she", "-o", str(outp)])
    assert rc == 0
    tab = read_table(outp)
    assert list(tab["item"]) == ["king", "ghost"]
    assert tab["wefat_male"][0] > 0 and bool(tab["missing"][1])
    rc = main(["weat", "--vectors", str(tmp_path / "none.txt"), "--S", "a", "--A", "b"])
    assert rc == 2


def test_missing_word_warnings_point_at_the_callers_line():
    w = vecs(he=(1, 0), she=(0, 1), king=(1, 0.05))
    for call in (lambda: E.nas(w, ["king", "zzz"], ["he"], ["she"]), lambda: E.rnd(w, ["king"], ["he", "zzz"], ["she"])):
        with pytest.warns(E.MissingWordsWarning, match="zzz") as rec:
            call()
        assert rec[0].filename == __file__  # the line that called nas/rnd, not fmat's internals
