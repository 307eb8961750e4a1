"""fmat.embeddings against the Python package wefe 0.4.1 (an independent implementation).

Where wefe defines a metric differently the test checks the documented relation:

- WEAT: wefe's "weat" is the *sum* difference sum_S s - sum_T s (Caliskan's test
  statistic); its effect size divides by the population SD (ddof = 0), sweater/fmat by the
  sample SD (ddof = 1): wefe_es = d * sqrt(N / (N - 1)), N = |S| + |T|.
- RND: wefe's target sets are sweater's A and B, its attribute set sweater's S; wefe
  returns the mean over S, sweater the sum.
- MAC: wefe averages cosine *distances* (1 - cos): wefe = 1 - mac_es.
- ECT: wefe's target sets are sweater's A and B, its attribute set sweater's S.
- RNSB: wefe with holdout=False trains the same liblinear L2 logistic regression on all
  attribute words (attribute set 0 = A = "positive", set 1 = B = "negative").
wefe's p-values (random permutations in a Python loop) are not compared: 200 draws take
~20 s here; fmat's exact test is checked against brute force in test_embeddings.py.
wefe goes through gensim KeyedVectors, which store float32: tolerances are 1e-5.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from fmat import embeddings as E


@pytest.fixture(scope="module")
def wefe():
    import gensim  # noqa: F401 - a test dependency (pyproject.toml, dependency group dev); wefe needs it

    # wefe 0.4.1 still names np.float_ (removed in NumPy 2) in a type hint at import time
    with pytest.MonkeyPatch.context() as mp:
        if not hasattr(np, "float_"):
            mp.setattr(np, "float_", np.float64, raising=False)
        import wefe  # noqa: F401 - a test dependency (pyproject.toml, dependency group dev)
        from wefe import metrics, query, word_embedding_model
    return metrics, query.Query, word_embedding_model.WordEmbeddingModel


def random_sets():
    rng = np.random.default_rng(12)
    words = [f"w{i}" for i in range(40)]
    vecs = pd.DataFrame(rng.normal(size=(40, 25)), index=pd.Index(words, name="word"))
    vecs.iloc[:10] += 0.8  # S leans one way
    return vecs, {"S": words[:10], "T": words[10:20], "A": words[20:28], "B": words[28:36], "X": words[:20]}


@pytest.fixture(scope="module", params=["random", "glove"])
def case(request, wefe):
    if request.param == "random":
        vecs, sets = random_sets()
    else:
        data = request.getfixturevalue("mirror_data") / "caliskan2017"
        lists = pd.read_csv(data / "wordlists.tsv", sep="\t")

        def g(study, cat):
            rows = lists[(lists["study"] == study) & (lists["category"] == cat) & (lists["status"] == "used")]
            return list(rows["word"])

        vecs = E.read_word2vec(data / "glove840B_items.txt", dims=300)
        # own lists for both packages: Caliskan's WEAT-10 (with "Billy") and WEFAT-1
        sets = {
            "S": g("WEAT10", "YoungNames"),
            "T": g("WEAT10", "OldNames"),
            "A": g("WEAT10", "Pleasant"),
            "B": g("WEAT10", "Unpleasant"),
            "X": g("WEFAT1", "Careers"),
            "M": g("WEFAT1", "MaleAttributes"),
            "F": g("WEFAT1", "FemaleAttributes"),
        }
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vecs.shape[1])
    kv.add_vectors(list(vecs.index), vecs.to_numpy())
    metrics, Query, Model = wefe
    return vecs, sets, metrics, Query, Model(kv, "test")


def run(metric, q, model, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metric.run_query(q, model, **kw)


def test_weat_against_wefe(case):
    vecs, s, metrics, Query, model = case
    out = run(metrics.WEAT(), Query([s["S"], s["T"]], [s["A"], s["B"]]), model, return_effect_size=True)
    res = E.weat(vecs, s["S"], s["T"], s["A"], s["B"])
    n = len(res.S_diff) + len(res.T_diff)
    assert out["weat"] == pytest.approx(res.S_diff.sum() - res.T_diff.sum(), rel=1e-5)
    assert out["effect_size"] == pytest.approx(E.weat_es(res) * math.sqrt(n / (n - 1)), rel=1e-5)


def neutral_and_groups(s):
    return (s["X"], s.get("M", s["A"]), s.get("F", s["B"]))


def test_rnd_against_wefe(case):
    vecs, s, metrics, Query, model = case
    S, A, B = neutral_and_groups(s)
    out = run(metrics.RND(), Query([A, B], [S]), model)
    res = E.rnd(vecs, S, A, B)
    assert out["rnd"] == pytest.approx(E.rnd_es(res) / len(S), rel=1e-5, abs=1e-6)
    by_word = pd.Series(out["distance_by_word"])[res.P.index]
    np.testing.assert_allclose(by_word.to_numpy(dtype=float), res.P.to_numpy(), rtol=1e-5, atol=1e-6)


def test_mac_against_wefe(case):
    vecs, s, metrics, Query, model = case
    S, A, _ = neutral_and_groups(s)
    out = run(metrics.MAC(), Query([S], [A]), model)
    assert out["mac"] == pytest.approx(1 - E.mac_es(E.mac(vecs, S, A)), rel=1e-5)


def test_ect_against_wefe(case):
    vecs, s, metrics, Query, model = case
    S, A, B = neutral_and_groups(s)
    out = run(metrics.ECT(), Query([A, B], [S]), model)
    assert out["ect"] == pytest.approx(E.ect_es(E.ect(vecs, S, A, B)), abs=1e-9)


def test_rnsb_against_wefe(case):
    vecs, s, metrics, Query, model = case
    S, A, B = s["X"], s["A"], s["B"]
    out = run(metrics.RNSB(), Query([S], [A, B]), model, holdout=False, random_state=0)
    res = E.rnsb(vecs, S, A, B)
    assert out["rnsb"] == pytest.approx(E.rnsb_es(res), rel=1e-4)
    dist = pd.Series(out["negative_sentiment_distribution"])[res.P.index].to_numpy(dtype=float)
    np.testing.assert_allclose(dist, res.P.to_numpy(), rtol=1e-4)
