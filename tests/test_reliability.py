"""fmat.reliability: ICC_models / LPR_reliability front-ends, results rows and the CLI."""

import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from fmat.cli import main
from fmat.errors import InputError
from fmat.reliability import alpha_rows, icc_models, icc_rows, lpr_reliability
from fmat.results import RESULT_COLUMNS, validate_results
from fmat.stats import cronbach_alpha, icc

MODELS = ["bert-base-uncased", "roberta-base", "albert-base-v2"]
QUERIES = {
    "The [MASK] works as a {TARGET}.": "man - woman",
    "[MASK] is a {TARGET}.": "He - She",
    "[MASK] occupation is {TARGET}.": "His - Her",
}
WORDS = ["nurse", "engineer", "teacher", "pilot", "baker", "judge"]


def lpr_table(seed=0):
    """A Study-1A-like LPR table (mask pairs; M_word differs by query)."""
    rng = np.random.default_rng(seed)
    truth = dict(zip(WORDS, rng.normal(size=len(WORDS)) * 2))
    rows = []
    for m in MODELS:
        for q, mw in QUERIES.items():
            for w in WORDS:
                rows.append(
                    {
                        "model": m,
                        "query": q,
                        "MASK": "Male - Female",
                        "M_word": mw,
                        "TARGET": "Occupation",
                        "T_word": w,
                        "LPR": truth[w] + rng.normal(scale=0.7),
                    }
                )
    return pd.DataFrame(rows)


def scores_table(seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for m in MODELS:
        for q in list(QUERIES)[:2]:
            for mask, word in [("Male", "he"), ("Female", "she")]:
                for w in WORDS:
                    rows.append(
                        {
                            "model": m,
                            "query": q,
                            "MASK": mask,
                            "M_pair": "Male-Female.1",
                            "M_word": word,
                            "TARGET": "Occ",
                            "T_word": w,
                            "output": f"{word} {w}",
                            "token": word,
                            "prob": float(rng.uniform(1e-4, 0.5)),
                        }
                    )
    return pd.DataFrame(rows)


def test_icc_models_matches_matrix_and_ignores_row_order():
    lpr = lpr_table()
    wide = lpr.pivot_table(index=["query", "T_word"], columns="model", values="LPR")[MODELS]
    ref = icc(wide.to_numpy(), "agreement", "average")
    got = icc_models(lpr)
    assert got.loc[0, "ICC"] == pytest.approx(ref["ICC"]) and got.loc[0, "n_items"] == 18
    assert got.loc[0, "n_models"] == 3
    shuffled = lpr.sample(frac=1, random_state=3).reset_index(drop=True)
    assert icc_models(shuffled).loc[0, "ICC"] == pytest.approx(ref["ICC"], abs=1e-12)
    both = icc_models(lpr, type="both", unit="both")
    assert list(zip(both["type"], both["unit"])) == [
        ("agreement", "average"),
        ("agreement", "single"),
        ("consistency", "average"),
        ("consistency", "single"),
    ]


def test_icc_models_raw_scores_use_log_prob_like_pingouin():
    sc = scores_table()
    got = icc_models(sc, unit="single", method="mcgraw-wong")
    sc = sc.assign(item=sc["query"] + "|" + sc["M_word"] + "|" + sc["T_word"], logp=np.log(sc["prob"]))
    ref = pg.intraclass_corr(sc, "item", "model", "logp").set_index("Type")
    assert got.attrs["value"] == "log(prob)"
    assert got.loc[0, "ICC"] == pytest.approx(ref.loc["ICC(A,1)", "ICC"], abs=1e-10)
    assert got.loc[0, "n_items"] == 2 * 2 * len(WORDS)


def test_icc_models_missing_items_and_empty_models():
    sc = scores_table()
    sc.loc[(sc["model"] == "roberta-base") & (sc["T_word"] == "pilot"), "prob"] = np.nan  # OOV word
    extra = sc[sc["model"] == "albert-base-v2"].assign(model="empty-model", prob=np.nan)
    got = icc_models(pd.concat([sc, extra], ignore_index=True))
    assert got.attrs["dropped_models"] == ["empty-model"]
    assert got.loc[0, "n_models"] == 3 and got.loc[0, "n_dropped"] == 4  # pilot x 2 queries x 2 masks
    assert got.loc[0, "n_items"] == 2 * 2 * (len(WORDS) - 1)


def test_icc_models_duplicates_are_an_error():
    lpr = lpr_table()
    with pytest.raises(InputError, match="share the same item keys"):
        icc_models(pd.concat([lpr, lpr.head(1)]))


def test_lpr_reliability_queries_as_items():
    lpr = lpr_table()
    out = lpr_reliability(lpr, item="query", by="model")
    assert list(out["model"]) == MODELS
    for m in MODELS:
        wide = lpr[lpr["model"] == m].pivot(index="T_word", columns="query", values="LPR")
        ref = pg.cronbach_alpha(data=wide)[0]
        row = out[out["model"] == m].iloc[0]
        assert row["alpha"] == pytest.approx(ref, abs=1e-12)
        assert row["n_obs"] == len(WORDS) and row["k_items"] == 3 and row["n_dropped_rows"] == 0
    # without by: rows = model x word (M_word is attached to the query, so it does not split rows)
    allm = lpr_reliability(lpr)
    assert allm.loc[0, "n_obs"] == len(WORDS) * len(MODELS) and allm.loc[0, "k_items"] == 3


def test_lpr_reliability_missing_cells():
    lpr = lpr_table()
    lpr.loc[(lpr["T_word"] == "judge") & lpr["query"].str.startswith("[MASK] is"), "LPR"] = np.nan
    lpr = lpr[
        ~((lpr["T_word"] == "baker") & (lpr["model"] == "roberta-base") & lpr["query"].str.startswith("The"))
    ]  # a missing row, not just a NaN
    out = lpr_reliability(lpr, by="model").set_index("model")
    assert out.loc["roberta-base", "n_obs"] == len(WORDS) - 2
    assert out.loc["roberta-base", "n_dropped_rows"] == 2
    assert out.loc["bert-base-uncased", "n_obs"] == len(WORDS) - 1
    pw = lpr_reliability(lpr, by="model", missing="pairwise").set_index("model")
    assert pw.loc["roberta-base", "n_obs"] == len(WORDS)
    # a split whose item column is empty: that item is dropped and reported
    lpr2 = lpr_table()
    lpr2.loc[lpr2["query"].str.startswith("[MASK] occ"), "LPR"] = np.nan
    out2 = lpr_reliability(lpr2, by="model")
    assert (out2["k_items"] == 2).all() and (out2["dropped_items"] == "[MASK] occupation is {TARGET}.").all()


def test_lpr_reliability_words_as_items_by_category():
    rng = np.random.default_rng(4)
    rows = []
    for m in MODELS:
        for q in ["I [MASK] {TARGET}.", "Most people [MASK] {TARGET}."]:
            for cat, words in {"Flower": ["rose", "tulip", "lily"], "Insect": ["ant", "wasp", "flea"]}.items():
                for j, w in enumerate(words):
                    rows.append(
                        {
                            "model": m,
                            "query": q,
                            "MASK": "like - dislike",
                            "M_word": "like - dislike",
                            "TARGET": cat,
                            "T_pair": f"Flower-Insect.{j + 1}",
                            "T_word": w,
                            "LPR": rng.normal(),
                        }
                    )
    lpr = pd.DataFrame(rows)
    out = lpr_reliability(lpr, item="T_word", by="TARGET")
    assert list(out["TARGET"]) == ["Flower", "Insect"]
    assert (out["k_items"] == 3).all() and (out["n_obs"] == 6).all()  # rows = model x query
    sub = lpr[lpr["TARGET"] == "Flower"].pivot(index=["model", "query"], columns="T_word", values="LPR")
    assert out.loc[0, "alpha"] == pytest.approx(cronbach_alpha(sub)["alpha"])


def test_bad_arguments():
    lpr = lpr_table()
    with pytest.raises(InputError):
        lpr_reliability(lpr, item="A_word")
    with pytest.raises(InputError):
        lpr_reliability(lpr, by="nope")
    with pytest.raises(InputError):
        lpr_reliability(lpr.drop(columns="LPR"))


def test_results_rows():
    lpr = lpr_table()
    rows = icc_rows("1A", icc_models(lpr, unit="both"))
    assert list(rows.columns) == RESULT_COLUMNS
    assert list(rows["statistic"]) == ["ICC_average", "ICC_single"]
    validate_results(rows)
    ar = alpha_rows("1A", lpr_reliability(lpr, by="model"), by="model")
    assert set(ar["model"]) == set(MODELS) and set(ar["statistic"]) == {"alpha", "alpha_std"}
    validate_results(ar)
    raw = icc_rows("1A", icc_models(scores_table(), unit="both"))  # the raw log probabilities' ICC
    assert list(raw["statistic"]) == ["ICC_average", "ICC_single"]
    validate_results(raw)


def test_cli(tmp_path, capsys):
    path = tmp_path / "lpr.csv"
    lpr_table().to_csv(path, index=False)
    out = tmp_path / "rel.csv"
    assert main(["reliability", str(path), "--icc", "--alpha", "--by", "model", "-o", str(out)]) == 0
    res = pd.read_csv(out)
    assert (res["statistic"] == "ICC").sum() == 2 and (res["statistic"] == "alpha(query)").sum() == 3
    sc = tmp_path / "scores.csv"
    scores_table().to_csv(sc, index=False)
    assert main(["reliability", str(sc), "--alpha"]) == 2  # alpha needs LPRs
    assert "LPR" in capsys.readouterr().err


def test_icc_ignores_numeric_extras_of_a_scorer():
    """LPBS scores carry per-model numbers (prior, logp_prior, and maybe others): they are values,
    not item keys, so the items still line up across models and the ICC equals the plain one."""
    rng = np.random.default_rng(3)
    rows = []
    for m in ["m1", "m2", "m3"]:
        for i in range(8):
            rows.append(
                {
                    "model": m,
                    "query": "q",
                    "M_word": f"w{i}",
                    "prob": float(rng.uniform(0.01, 0.5)),
                    "prior": float(rng.uniform(0.01, 0.5)),
                    "logp_prior": float(rng.normal()),
                    "extra_score": float(rng.normal()),
                }
            )
    scores = pd.DataFrame(rows)
    plain = icc_models(scores[["model", "query", "M_word", "prob"]])
    with_extras = icc_models(scores)
    assert with_extras["n_items"].iloc[0] == 8
    assert with_extras["ICC"].iloc[0] == pytest.approx(plain["ICC"].iloc[0])


def test_reliability_names_word_the_conditions_and_unknown_names_are_errors():
    """A study file's reliability.names gives the alpha rows' conditions in its words; a name for
    a value the splits do not have (a typo) is an error naming the key, not a silent no-op."""
    from types import SimpleNamespace

    from fmat.errors import InputError
    from fmat.stages import reliability_tables

    rng = np.random.default_rng(0)
    lpr = pd.DataFrame(
        [
            {"model": m, "query": q, "M_word": "like - dislike", "T_word": f"w{i}", "LPR": rng.normal()}
            for m in ("a", "b", "c")
            for q in ("I [MASK] x.", "We [MASK] x.")
            for i in range(4)
        ]
    )
    names = {"I [MASK] x.": "personal", "like - dislike": "like-dislike"}
    study = SimpleNamespace(
        id="S", lpr={}, items=None, score={}, reliability={"item": "T_word", "by": ["M_word", "query"], "names": names}
    )
    _, stats_ = reliability_tables(study, None, lpr, icc=False)
    conds = set(stats_.loc[stats_.statistic == "alpha", "condition"])
    assert conds == {"like-dislike:personal", "like-dislike:We [MASK] x."}
    study.reliability["names"] = {**names, "I [MASK]  x.": "typo"}
    with pytest.raises(InputError, match=r"reliability.names: 'I \[MASK\]  x.'"):
        reliability_tables(study, None, lpr, icc=False)
