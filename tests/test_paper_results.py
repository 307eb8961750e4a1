"""config/paper_results.tsv: schema, counts per study and table, and values typed by hand
from Bao (2024, JPSP) -- never read from the file under test."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.results import KEY, RESULT_COLUMNS, STATISTICS, model_slug
from fmat_replication.paper import (
    PAPER_COLUMNS,
    PAPER_FILE,
    STUDIES,
    conditions,
    is_pattern,
    load_paper_results,
    matching_rows,
    stars_for,
    to_results,
    within_rounding,
)

MODELS = [
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-large-cased",
    "distilbert-base-uncased",
    "distilbert-base-cased",
    "albert-base-v1",
    "albert-base-v2",
    "roberta-base",
    "distilroberta-base",
    "vinai__bertweet-base",
    "vinai__bertweet-large",
]


@pytest.fixture(scope="module")
def paper() -> pd.DataFrame:
    return load_paper_results()


def one(paper, study, statistic, condition, model="all") -> pd.Series:
    sub = paper[(paper.study == study) & (paper.statistic == statistic) & (paper.condition == condition) & (paper.model == model)]
    assert len(sub) == 1, (study, statistic, condition, model, len(sub))
    return sub.iloc[0]


# ------------------------------------------------------------------------------- schema
def test_schema(paper):
    assert list(paper.columns) == PAPER_COLUMNS + ["digits"]
    assert PAPER_COLUMNS[: len(RESULT_COLUMNS)] == RESULT_COLUMNS
    for col in ["value", "se", "df", "df2", "p", "ci_low", "ci_high", "n", "value_low", "value_high", "df_corrected"]:
        assert paper[col].dtype == float, col
    assert set(paper.statistic) <= set(STATISTICS)
    assert set(paper.condition) <= set(conditions().condition)
    assert not paper.duplicated(KEY).any()
    assert set(paper.study) == set(STUDIES)
    assert set(paper.model) == {"all", "*"} | set(MODELS)
    assert to_results(paper).columns.tolist() == RESULT_COLUMNS


def test_conditions_file_documents_each_value_once(repo):
    voc = conditions()
    assert list(voc.columns) == ["condition", "meaning"]
    assert not voc.condition.duplicated().any()
    assert (voc.meaning.str.len() > 10).all()
    doc = (repo / "docs" / "results.md").read_text()
    missing = [c for c in voc.condition if f"`{c}`" not in doc]
    assert not missing, f"docs/results.md lacks {missing}"
    for stat in STATISTICS:
        assert f"`{stat}`" in doc, stat


def test_rows_per_study(paper):
    # counted from the paper: 1A/1B = Table 3/4 (13 rows x (alpha + 8 r) + 2 mean-index r) + 2 ICC
    #   + alpha range + r(WEFAT, % male) + Williams t;  1C = 2 ICC + alpha range + 3 r + Williams t
    #   + 2 LMM x (b, R2m) + Table 5 (7 b, 3 R2, 2 Delta R2) + F;  Study 2 = 2 ICC + alpha bound
    #   + 2 relations x (3 d + 3 t + difference d) + 3 cited criteria;  3A = 2 ICC + 2 alpha + R2m
    #   + 2 F + d, t overall + 9 pairs + d, t ranges + 3 cited;  3B/3C = 2 ICC + 4 alpha + R2m + 2 F
    #   + d overall + 2 forms x (d, t) + 3 cited;  3D = 2 + 2 + 1 + 2 + 2 + 5 + 2 + 3;
    #   Study 4 = 2 ICC + 2 alpha + b + beta + R2m + 2 century d
    expected = {
        "1A": 124,
        "1B": 124,
        "1C": 24,
        "2A": 20,
        "2B": 20,
        "2C": 20,
        "2D": 20,
        "3A": 23,
        "3B": 17,
        "3C": 17,
        "3D": 19,
        "4A": 9,
        "4B": 9,
        "4C": 9,
        "4D": 9,
    }
    assert paper.study.value_counts().to_dict() == expected


def test_rows_per_table(paper):
    def n(pattern):
        return int(paper.source.str.contains(pattern, regex=True).sum())

    assert n(r"^Table 3, ") == 13 * 9
    assert n(r"^Table 3 \(mean standardized index") == 2
    assert n(r"^Table 4, ") == 13 * 9
    assert n(r"^Table 4 \(mean standardized index") == 2
    assert n(r"^Table 5, ") == 7 + 3 + 2
    assert n(r"^Table 6, ") == 4 * 6
    assert n(r"^Table 6 note") == 4 * 3
    assert n(r"^Table 7, ") == (1 + 9) + (1 + 2) + (1 + 2) + (1 + 5)
    assert n(r"^Table 7 note") == 3 * 3 + 3
    for st in STUDIES:  # every study reports ICC_average and ICC_single (Figure 2)
        assert one(paper, st, "ICC_average", "all").value > one(paper, st, "ICC_single", "all").value
    for stat in ("alpha", "r"):
        for table, st in (("Table 3", "1A"), ("Table 4", "1B")):
            sub = paper[(paper.study == st) & (paper.statistic == stat) & paper.source.str.startswith(table + ",")]
            assert set(sub.model) == {"all"} | set(MODELS)


# ----------------------------------------------------------------- values typed from the paper
# key -> {column: value}; read off the PDF text of Bao (2024) by hand.
HAND = {
    # ICCs (Results sections; Figure 2)
    ("1A", "ICC_average", "all", "all"): {"value": 0.82},
    ("1A", "ICC_single", "all", "all"): {"value": 0.28},
    ("1B", "ICC_average", "all", "all"): {"value": 0.93},
    ("1C", "ICC_single", "all", "all"): {"value": 0.59},
    ("2B", "ICC_single", "all", "all"): {"value": 0.69},
    ("3D", "ICC_average", "all", "all"): {"value": 0.74},
    ("4C", "ICC_single", "all", "all"): {"value": 0.14},
    ("4D", "ICC_average", "all", "all"): {"value": 0.78},
    # Table 3 (1A)
    ("1A", "alpha", "all", "all"): {"value": 0.83},
    ("1A", "alpha", "all", "bert-base-uncased"): {"value": 0.98},
    ("1A", "alpha", "all", "vinai__bertweet-large"): {"value": 0.80},
    ("1A", "r", "fmat~pct_male:Q1", "all"): {"value": 0.75, "stars": "***", "n": 50},
    ("1A", "r", "fmat~pct_male:Q3", "distilbert-base-cased"): {"value": 0.37, "stars": "**"},
    ("1A", "r", "fmat~wefat:Q3", "distilbert-base-cased"): {"value": 0.45, "stars": "**"},
    ("1A", "r", "fmat~pct_male:Q4", "albert-base-v1"): {"value": 0.37, "stars": "**"},
    ("1A", "r", "fmat~wefat:Q1", "roberta-base"): {"value": 0.84, "stars": "***"},
    ("1A", "r", "fmat~wefat:Q4", "distilroberta-base"): {"value": 0.63},
    ("1A", "r", "fmat~pct_male:Q2", "vinai__bertweet-base"): {"value": 0.63},
    ("1A", "r", "fmat~pct_male", "all"): {"value": 0.74, "p": 0.001, "bound": "<", "ci_low": 0.59, "ci_high": 0.85},
    ("1A", "r", "fmat~wefat", "all"): {"value": 0.86, "ci_low": 0.76, "ci_high": 0.92},
    ("1A", "r", "wefat~pct_male", "all"): {"value": 0.89},
    ("1A", "t_williams", "fmat-vs-wefat~pct_male", "all"): {"value": -3.92, "df": 47, "p": 0.001, "bound": "<"},
    ("1A", "alpha", "all", "*"): {"value_low": 0.80, "value_high": 0.98},
    # Table 4 (1B)
    ("1B", "alpha", "all", "albert-base-v1"): {"value": 0.98},
    ("1B", "r", "fmat~pct_male:Q3", "distilbert-base-cased"): {"value": 0.45, "stars": "**"},
    ("1B", "r", "fmat~wefat:Q3", "vinai__bertweet-base"): {"value": 0.45, "stars": "***"},
    ("1B", "r", "fmat~wefat:Q1", "vinai__bertweet-large"): {"value": 0.92},
    ("1B", "r", "fmat~pct_male:Q4", "all"): {"value": 0.83},
    ("1B", "r", "fmat~wefat", "all"): {"value": 0.94, "ci_low": 0.89, "ci_high": 0.97, "stars": "***"},
    ("1B", "t_williams", "fmat-vs-wefat~pct_male", "all"): {"value": -0.78, "df": 47, "p": 0.44},
    ("1B", "alpha", "all", "*"): {"value_low": 0.87, "value_high": 0.98},
    # 1C text and Table 5
    ("1C", "alpha", "all", "*"): {"value_low": 0.88, "value_high": 0.98},
    ("1C", "r", "fmat~pct_male", "all"): {"value": 0.78, "ci_low": 0.77, "ci_high": 0.79, "n": 3644},
    ("1C", "r", "wefat~pct_male", "all"): {"value": 0.77},
    ("1C", "t_williams", "fmat-vs-wefat~pct_male", "all"): {"value": 0.24, "df": 47, "df_corrected": 3641, "p": 0.81},
    ("1C", "b", "lmm:logit_male~fmat:fmat", "all"): {"value": 2.363, "se": 0.005},
    ("1C", "R2m", "lmm:wefat~fmat", "all"): {"value": 0.429},
    ("1C", "b", "logit_male~wefat:intercept", "all"): {"value": 0.344, "se": 0.033, "stars": "***"},
    ("1C", "b", "logit_male~fmat:intercept", "all"): {"value": 0.060, "se": 0.028, "stars": "*"},
    ("1C", "b", "logit_male~fmat:fmat", "all"): {"value": 3.375, "se": 0.034},
    ("1C", "b", "logit_male~wefat+fmat:wefat", "all"): {"value": 1.302, "se": 0.051},
    ("1C", "R2", "logit_male~wefat", "all"): {"value": 0.635, "stars": "***"},
    ("1C", "R2", "logit_male~wefat+fmat", "all"): {"value": 0.776},
    ("1C", "R2_delta", "logit_male~wefat+fmat:fmat", "all"): {"value": 0.141},
    ("1C", "F", "logit_male~wefat+fmat:fmat=wefat", "all"): {"value": 128.23, "df": 1, "df2": 3641},
    # Study 2 text and Table 6
    ("2A", "alpha", "*", "all"): {"value": 0.96, "value_bound": ">"},
    ("2A", "d", "like-dislike:personal", "all"): {"value": 0.38, "stars": "***", "df": 2381},
    ("2A", "t", "like-dislike:average", "all"): {"value": 6.55, "df": 2381, "p": 0.001, "bound": "<"},
    ("2A", "d", "notice-ignore:personal-societal", "all"): {"value": -0.27, "stars": "*"},
    ("2A", "t", "notice-ignore:societal", "all"): {"value": 2.70, "p": 0.007},
    ("2A", "d", "ref:iat", "all"): {"value": 1.35, "stars": "***"},
    ("2B", "d", "like-dislike:personal-societal", "all"): {"value": 0.36, "stars": "**"},
    ("2B", "t", "like-dislike:societal", "all"): {"value": 3.08, "p": 0.002},
    ("2B", "t", "notice-ignore:average", "all"): {"value": 1, "value_bound": "abs<", "p": 0.33, "bound": ">"},
    ("2B", "d", "ref:weat_word2vec", "all"): {"value": 1.63},
    ("2C", "d", "notice-ignore:societal", "all"): {"value": -0.65, "stars": "***"},
    ("2C", "t", "notice-ignore:average", "all"): {"value": -12.23, "df": 3053},
    ("2C", "d", "ref:weat_word2vec", "all"): {"value": 0.58, "stars": "**"},
    ("2C", "alpha", "*", "all"): {"value": 0.99, "value_bound": ">"},
    ("2D", "d", "notice-ignore:personal-societal", "all"): {"value": -0.67, "stars": "***"},
    ("2D", "d", "notice-ignore:societal", "all"): {"value": 0.05, "stars": "ns", "p": 0.72},
    ("2D", "t", "like-dislike:average", "all"): {"value": 7.22, "df": 749},
    ("2D", "d", "ref:weat_word2vec", "all"): {"value": -0.08, "stars": "ns"},
    # Study 3 text and Table 7
    ("3A", "d", "all", "all"): {"value": 1.02, "stars": "***"},
    ("3A", "t", "all", "all"): {"value": 10.41, "df": 385},
    ("3A", "F", "gender", "all"): {"value": 108.32, "df": 1, "df2": 385},
    ("3A", "F", "gender_x_*", "all"): {"p": 0.86, "bound": ">"},
    ("3A", "R2m", "all", "all"): {"value": 0.695},
    ("3A", "alpha", "Family", "all"): {"value": 0.90},
    ("3A", "d", "pair3", "all"): {"value": 1.32, "stars": "***"},
    ("3A", "d", "pair6", "all"): {"value": 0.81, "stars": "**"},
    ("3A", "t", "pair*", "all"): {"value_low": 2.74, "value_high": 4.46, "p": 0.01, "bound": "<"},
    ("3A", "d", "ref:iat", "all"): {"value": 0.72, "stars": "**"},
    ("3B", "t", "interest", "all"): {"value": 5.53, "df": 77},
    ("3B", "d", "talent", "all"): {"value": 0.39, "stars": "***"},
    ("3B", "d", "all", "all"): {"value": 0.44, "stars": "***"},
    ("3B", "alpha", "MathTalent", "all"): {"value": 0.94},
    ("3B", "F", "gender", "all"): {"value": 50.13, "df2": 77},
    ("3B", "d", "ref:weat_glove", "all"): {"value": 1.06, "stars": "*"},
    ("3C", "R2m", "all", "all"): {"value": 0.471},
    ("3C", "F", "gender_x_*", "all"): {"p": 0.60, "bound": ">"},
    ("3C", "t", "talent", "all"): {"value": 5.62},
    ("3C", "alpha", "ScienceInterest", "all"): {"value": 0.98},
    ("3C", "d", "all", "all"): {"value": 0.32, "stars": "***"},
    ("3D", "F", "race", "all"): {"value": 83.74, "df": 1, "df2": 99},
    ("3D", "F", "race_x_pair", "all"): {"p": 0.62},
    ("3D", "d", "pair1", "all"): {"value": 0.48},
    ("3D", "d", "pair5", "all"): {"value": 0.30},
    ("3D", "t", "all", "all"): {"value": 9.15, "df": 99},
    ("3D", "d", "ref:explicit", "all"): {"value": 2.02, "stars": "***"},
    ("3D", "d", "ref:implicit_feminine", "all"): {"value": 0.77, "stars": "*"},
    # Study 4 text
    ("4A", "b", "year", "all"): {"value": -0.587, "se": 0.009, "ci_low": -0.605, "ci_high": -0.569},
    ("4A", "d", "1900vs1800", "all"): {"value": -0.07, "p": 0.72},
    ("4A", "alpha", "Female", "all"): {"value": 0.96},
    ("4B", "beta", "year", "all"): {"value": -0.723},
    ("4B", "d", "2000vs1900", "all"): {"value": -0.96, "p": 0.001, "bound": "<"},
    ("4B", "alpha", "White", "all"): {"value": 0.94},
    ("4C", "b", "year", "all"): {"value": 0.259, "se": 0.008, "ci_low": 0.243, "ci_high": 0.275},
    ("4C", "R2m", "year", "all"): {"value": 0.176},
    ("4D", "beta", "year", "all"): {"value": 0.770},
    ("4D", "d", "1900vs1800", "all"): {"value": 0.03, "p": 0.82},
    ("4D", "alpha", "Tightness", "all"): {"value": 0.92},
}


def test_hand_typed_sample_is_broad():
    assert len(HAND) >= 40
    assert {k[0] for k in HAND} == set(STUDIES)


@pytest.mark.parametrize("key", list(HAND), ids=["/".join(k) for k in HAND])
def test_value_typed_from_paper(paper, key):
    row = one(paper, *key)
    for col, want in HAND[key].items():
        got = row[col]
        if isinstance(want, str):
            assert got == want, (key, col, got, want)
        else:
            assert got == pytest.approx(want, abs=1e-9), (key, col, got, want)


# ----------------------------------------------------------------- internal consistency
def test_text_ranges_equal_table_extremes(paper):
    for st in ("1A", "1B"):
        models = paper[(paper.study == st) & (paper.statistic == "alpha") & paper.model.isin(MODELS)]
        rng = one(paper, st, "alpha", "all", "*")
        assert (models.value.min(), models.value.max()) == (rng.value_low, rng.value_high)
        assert len(matching_rows(rng, paper)) == 12
    for st in ("3A", "3D"):
        rng = one(paper, st, "d", "pair*")
        pairs = matching_rows(rng, paper)
        assert len(pairs) == (9 if st == "3A" else 5)
        assert (pairs.value.min(), pairs.value.max()) == (rng.value_low, rng.value_high)


def test_table6_differences_match_within_rounding(paper):
    for st in ("2A", "2B", "2C", "2D"):
        for rel in ("like-dislike", "notice-ignore"):
            diff = one(paper, st, "d", f"{rel}:personal-societal").value
            per = one(paper, st, "d", f"{rel}:personal").value
            soc = one(paper, st, "d", f"{rel}:societal").value
            assert abs((per - soc) - diff) <= 0.015 + 1e-9, (st, rel)


def test_stars_agree_with_printed_p(paper):
    both = paper[(paper.stars != "") & paper.p.notna()]
    assert len(both) > 20
    for _, r in both.iterrows():
        if r.bound == "<" and r.p == 0.001:
            assert r.stars == "***", r.to_dict()
        elif r.bound == "":
            assert r.stars == stars_for(r.p), r.to_dict()


def test_d_and_t_rows_pair_up(paper):
    """Each printed t has its d row with the same condition, df and p (the documented choice)."""
    t = paper[(paper.statistic == "t") & paper.study.str.match(r"[23]")]
    assert len(t) > 20
    for _, r in t.iterrows():
        d = one(paper, r.study, "d", r.condition)
        assert (d.df, d.p, d.bound) == (r.df, r.p, r.bound) or (math.isnan(d.df) and math.isnan(r.df))


def test_typo_is_flagged_not_fixed(paper):
    r = one(paper, "1C", "t_williams", "fmat-vs-wefat~pct_male")
    assert r.df == 47 and r.df_corrected == 3641 and "TYPO" in r.note
    assert paper.df_corrected.notna().sum() == 1


def test_digits_follow_print(paper):
    assert one(paper, "4A", "b", "year").digits == 3
    assert one(paper, "1A", "ICC_average", "all").digits == 2
    assert one(paper, "1A", "alpha", "all", "*").digits == 2


# ----------------------------------------------------------------- helpers and bad input
def test_helpers():
    assert model_slug("vinai/bertweet-base") == "vinai__bertweet-base"
    for bad in ("a/../b", "a b", "", "a/b/c"):  # one validating slug (fmat.results), no second copy
        with pytest.raises(InputError, match="cannot be made into a file name"):
            model_slug(bad)
    assert is_pattern("pair*") and is_pattern("*") and not is_pattern("fmat~pct_male:Q1")
    assert [stars_for(p) for p in (0.0004, 0.004, 0.04, 0.4)] == ["***", "**", "*", "ns"]
    assert within_rounding(0.82, 2, 0.8249) and not within_rounding(0.82, 2, 0.8251)
    assert within_rounding(-0.587, 3, -0.5874) and not within_rounding(-0.587, 3, -0.5884)


def test_matching_rows_over_models_and_conditions(paper):
    computed = pd.DataFrame({"study": "1A", "statistic": "alpha", "condition": "all", "model": ["all"] + MODELS})
    rng = one(paper, "1A", "alpha", "all", "*")
    assert matching_rows(rng, computed).model.tolist() == MODELS
    computed = pd.DataFrame(
        {"study": "3A", "statistic": "F", "condition": ["gender", "gender_x_wording", "gender_x_pair", "gender_x_wording_x_pair"]}
    )
    computed["model"] = "all"
    assert len(matching_rows(one(paper, "3A", "F", "gender_x_*"), computed)) == 3


def _edit(tmp_path, fn):
    df = pd.read_csv(PAPER_FILE, sep="\t", dtype=str, keep_default_na=False)
    df = fn(df)
    path = tmp_path / "paper_results.tsv"
    df.to_csv(path, sep="\t", index=False)
    return path


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda d: d.assign(statistic=d.statistic.where(d.index != 3, "rho")), "unknown statistic"),
        (lambda d: d.assign(condition=d.condition.where(d.index != 3, "Q9")), "condition not in the vocabulary"),
        (lambda d: pd.concat([d, d.iloc[[5]]]), "share a key"),
        (lambda d: d.assign(bound=d.bound.where(d.index != 3, "<=")), "bad bound"),
        (lambda d: d.assign(value=d.value.where(d.index != 3, ".8O")), "not a number"),
        (lambda d: d.drop(columns=["stars"]), "columns differ"),
        (lambda d: d.assign(model=d.model.where(d.index != 3, "vinai/bertweet-base")), "model with '/'"),
    ],
)
def test_bad_file_is_a_clear_error(tmp_path, fn, message):
    path = _edit(tmp_path, fn)
    with pytest.raises(InputError, match=message) as err:
        load_paper_results(path)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_paper_results(tmp_path / "nope.tsv")


def test_pattern_matches_computed_conditions_with_glob_characters(paper):
    # Study 2's computed alpha conditions carry the query text, "[MASK]" included
    computed = pd.DataFrame(
        {
            "study": "2A",
            "statistic": "alpha",
            "model": "all",
            "condition": ["I [MASK] {TARGET}.:like:Flowers", "Most people [MASK] {TARGET}.:ignore:Insects"],
        }
    )
    assert len(matching_rows(one(paper, "2A", "alpha", "*"), computed)) == 2


def test_reliability_stage_emits_the_paper_keys(paper):
    """The join key agrees with what fmat.reliability writes (alpha splits, ICC condition)."""
    rel = pytest.importorskip("fmat.reliability")
    alpha = pd.DataFrame(
        {
            "ATTRIB": ["MathInterest", "MathTalent", "ArtsInterest", "ArtsTalent"],
            "n_obs": 24,
            "k_items": 6,
            "alpha": 0.9,
            "alpha_std": 0.9,
        }
    )
    rows = rel.alpha_rows("3B", alpha, by=["ATTRIB"])
    ours = set(rows.loc[rows.statistic == "alpha", "condition"])
    assert ours == set(paper.loc[(paper.study == "3B") & (paper.statistic == "alpha"), "condition"])
    per_model = pd.DataFrame({"model": MODELS, "n_obs": 50, "k_items": 4, "alpha": 0.9, "alpha_std": 0.9})
    rows = rel.alpha_rows("1A", per_model, by=["model"])
    keys = set(map(tuple, rows.loc[rows.statistic == "alpha", KEY].to_numpy().tolist()))
    want = set(
        map(
            tuple,
            paper.loc[(paper.study == "1A") & (paper.statistic == "alpha") & paper.model.isin(MODELS), KEY].to_numpy().tolist(),
        )
    )
    assert keys == want
    icc = pd.DataFrame(
        {
            "type": ["agreement", "agreement"],
            "unit": ["average", "single"],
            "ICC": [0.8, 0.3],
            "df1": 49.0,
            "df2": 539.0,
            "p": 0.0,
            "ci_low": 0.7,
            "ci_high": 0.9,
            "n_items": 50,
        }
    )
    rows = rel.icc_rows("1A", icc)
    assert set(map(tuple, rows[KEY].to_numpy().tolist())) == {
        ("1A", "ICC_average", "all", "all"),
        ("1A", "ICC_single", "all", "all"),
    }
