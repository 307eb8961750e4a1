"""fmat.lpr.summary: FMAT's summary.fmat, against R output and hand arithmetic."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmat.design import as_query_table, query, read_r_table
from fmat.errors import InputError
from fmat.lpr import summary

R = Path(__file__).parent / "data" / "r_fmat"
R_CASES = sorted(p.stem[len("lpr_") :] for p in R.glob("lpr_*.csv"))


def r_scores(type_: str) -> pd.DataFrame:
    df = read_r_table(R / f"scores_{type_}.csv")
    df["prob"] = df["prob"].astype(float)
    df = as_query_table(df)
    df["model"] = pd.Categorical(df["model"], categories=["m1", "m2"])
    return df


def test_all_r_cases_present():
    # M: 2, MT: 4, MA: 4, MTA: 8 pairing combinations
    assert len(R_CASES) == 18


@pytest.mark.parametrize("case", R_CASES)
def test_matches_r_summary_fmat(case):
    """Columns, their order, row order, labels and LPR as FMAT 2026.1 summary.fmat (fwrite, 15 digits)."""
    type_, flags = case.rsplit("_", 1)
    expected = read_r_table(R / f"lpr_{case}.csv")
    got = summary(r_scores(type_), *(f == "T" for f in flags))
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for col in expected.columns[:-1]:
        assert got[col].astype(str).tolist() == expected[col].tolist(), col
    np.testing.assert_allclose(got["LPR"], expected["LPR"].astype(float), rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------------ hand-computed small tables


def scores_for(q: pd.DataFrame, probs: list[float], model="bert") -> pd.DataFrame:
    df = q.copy()
    df.insert(0, "model", pd.Categorical([model] * len(q)))
    df["output"] = "sentence"
    df["token"] = df["M_word"].astype(str)
    df["prob"] = probs
    # fmat's extra columns must be ignored
    df["token_id"] = range(len(df))
    df["logp"] = 99.0
    df["oov"] = False
    df["prior"] = 0.5
    df.attrs["type"] = q.attrs["type"]
    return df


L = math.log


def test_m_type_hand():
    q = query("[MASK] is a nurse.", MASK={"Male": ["he", "man"], "Female": ["she", "woman"]})
    p = [0.2, 0.05, 0.4, 0.01]  # he, man, she, woman
    s = scores_for(q, p)
    got = summary(s)
    assert list(got.columns) == ["model", "query", "MASK", "M_word", "LPR"]
    assert got["M_word"].tolist() == ["he - she", "man - woman"]
    assert got["MASK"].tolist() == ["Male - Female"] * 2
    assert got["LPR"].tolist() == pytest.approx([L(0.2) - L(0.4), L(0.05) - L(0.01)], abs=1e-14)
    raw = summary(s, mask_pair=False)
    assert list(raw.columns) == ["model", "query", "MASK", "M_word", "LPR"]
    assert raw["LPR"].tolist() == pytest.approx([L(x) for x in p], abs=1e-14)


def mt_table():
    q = query("[MASK] is {TARGET}.", MASK={"Male": ["he"], "Female": ["she"]}, TARGET={"MOcc": ["a doctor"], "FOcc": ["a nurse"]})
    # rows: doctor/he, doctor/she, nurse/he, nurse/she
    return scores_for(q, [0.3, 0.1, 0.05, 0.25])


def test_mt_all_pairings_hand():
    s = mt_table()
    dh, ds, nh, ns = L(0.3), L(0.1), L(0.05), L(0.25)
    tt = summary(s)
    assert list(tt.columns) == ["model", "query", "MASK", "M_word", "TARGET", "T_word", "LPR"]
    assert tt["TARGET"].tolist() == ["MOcc - FOcc"] and tt["T_word"].tolist() == ["a doctor - a nurse"]
    assert tt["LPR"].tolist() == pytest.approx([(dh - ds) - (nh - ns)], abs=1e-14)
    tf = summary(s, target_pair=False)
    assert list(tf.columns) == ["model", "query", "TARGET", "T_pair", "T_word", "MASK", "M_word", "LPR"]
    assert tf["LPR"].tolist() == pytest.approx([dh - ds, nh - ns], abs=1e-14)
    ft = summary(s, mask_pair=False)
    assert ft["M_word"].tolist() == ["he", "she"]
    assert ft["LPR"].tolist() == pytest.approx([dh - nh, ds - ns], abs=1e-14)
    ff = summary(s, mask_pair=False, target_pair=False)
    assert list(ff.columns) == ["model", "query", "MASK", "M_word", "TARGET", "T_pair", "T_word", "LPR"]
    assert ff["LPR"].tolist() == pytest.approx([dh, ds, nh, ns], abs=1e-14)


def test_ma_all_pairings_hand():
    q = query(
        "The [MASK] {ATTRIB}.", MASK={"Male": ["man"], "Female": ["woman"]}, ATTRIB={"Masc": ["is strong"], "Femi": ["is gentle"]}
    )
    s = scores_for(q, [0.4, 0.2, 0.1, 0.3])  # strong/man, strong/woman, gentle/man, gentle/woman
    sm, sw, gm, gw = L(0.4), L(0.2), L(0.1), L(0.3)
    assert summary(s)["LPR"].tolist() == pytest.approx([(sm - sw) - (gm - gw)], abs=1e-14)
    assert summary(s, attrib_pair=False)["LPR"].tolist() == pytest.approx([sm - sw, gm - gw], abs=1e-14)
    ft = summary(s, mask_pair=False)
    assert list(ft.columns) == ["model", "query", "MASK", "M_word", "ATTRIB", "A_word", "LPR"]
    assert ft["LPR"].tolist() == pytest.approx([sm - gm, sw - gw], abs=1e-14)
    assert summary(s, mask_pair=False, attrib_pair=False)["LPR"].tolist() == pytest.approx([sm, sw, gm, gw], abs=1e-14)
    # target_pair has no effect on MA tables
    assert summary(s, target_pair=False)["LPR"].tolist() == pytest.approx([(sm - sw) - (gm - gw)], abs=1e-14)


def mta_table():
    q = query(
        "The [MASK] {TARGET} {ATTRIB}.",
        MASK={"M": ["he"], "F": ["she"]},
        TARGET={"T1": ["x"], "T2": ["y"]},
        ATTRIB={"A1": ["a"], "A2": ["b"]},
    )
    # row order (R): T1xA1, T1xA2, T2xA1, T2xA2; inside each: he, she
    p = {
        ("x", "a", "he"): 0.30,
        ("x", "a", "she"): 0.10,
        ("x", "b", "he"): 0.05,
        ("x", "b", "she"): 0.20,
        ("y", "a", "he"): 0.15,
        ("y", "a", "she"): 0.12,
        ("y", "b", "he"): 0.07,
        ("y", "b", "she"): 0.02,
    }
    probs = [p[(t, a, m)] for t, a, m in zip(q["T_word"].astype(str), q["A_word"].astype(str), q["M_word"].astype(str))]
    return scores_for(q, probs), {k: L(v) for k, v in p.items()}


@pytest.mark.parametrize("mp", [True, False])
@pytest.mark.parametrize("tp", [True, False])
@pytest.mark.parametrize("ap", [True, False])
def test_mta_all_pairings_hand(mp, tp, ap):
    s, lp = mta_table()

    def value(t, a, m):  # the LPR of one cell after the mask step
        return lp[(t, a, "he")] - lp[(t, a, "she")] if mp else lp[(t, a, m)]

    masks = [None] if mp else ["he", "she"]
    expected = []
    for m in masks:
        cells = {(t, a): value(t, a, m) for t in "xy" for a in "ab"}
        if tp:
            cells = {("x-y", a): cells[("x", a)] - cells[("y", a)] for a in "ab"}
        if ap:
            ts = {t for t, _ in cells}
            cells = {(t, "a-b"): cells[(t, "a")] - cells[(t, "b")] for t in ts}
        expected.extend(cells.values())
    got = summary(s, mask_pair=mp, target_pair=tp, attrib_pair=ap)
    assert sorted(got["LPR"].tolist()) == pytest.approx(sorted(expected), abs=1e-14)
    assert len(got) == len(expected)
    if tp and ap:
        row = got.iloc[0]
        assert (row["TARGET"], row["T_word"], row["ATTRIB"], row["A_word"]) == ("T1 - T2", "x - y", "A1 - A2", "a - b")


def test_shuffle_and_missing_row_join_on_keys(caplog):
    """Rows are paired by their keys: shuffled input gives the same LPRs; a missing row drops
    only its own pair (with a warning) and shifts nothing."""
    s = r_scores("MT")
    ref = summary(s, target_pair=False)
    key = ["model", "query", "TARGET", "T_word", "M_word"]
    shuffled = s.sample(frac=1, random_state=7).reset_index(drop=True)
    dropped = shuffled.drop(index=5).reset_index(drop=True)
    gone = shuffled.loc[5]
    with caplog.at_level(logging.WARNING, logger="fmat.lpr"):
        got = summary(dropped, target_pair=False)
    assert "1 MASK pair(s) dropped" in caplog.text
    assert len(got) == len(ref) - 1
    merged = ref.astype({c: str for c in key}).merge(
        got.astype({c: str for c in key}), on=key, how="left", suffixes=("_ref", "_got")
    )
    lost = merged["LPR_got"].isna()
    assert lost.sum() == 1
    lost_row = merged.loc[lost].iloc[0]
    assert lost_row["T_word"] == str(gone["T_word"]) and lost_row["model"] == str(gone["model"])
    assert str(gone["M_word"]) in lost_row["M_word"].split(" - ")
    np.testing.assert_allclose(merged.loc[~lost, "LPR_got"], merged.loc[~lost, "LPR_ref"], rtol=0, atol=0)
    # target pairing after a shuffle: same values as the ordered table (matched by key)
    full = summary(s)
    sh = summary(shuffled)
    k2 = ["model", "query", "MASK", "M_word", "T_word"]
    m2 = full.astype({c: str for c in k2}).merge(sh.astype({c: str for c in k2}), on=k2)
    assert len(m2) == len(full)
    np.testing.assert_allclose(m2["LPR_x"], m2["LPR_y"], rtol=0, atol=0)


def test_nan_probability_gives_nan_lpr():
    s = mt_table()
    s.loc[0, "prob"] = np.nan
    got = summary(s, target_pair=False)
    assert math.isnan(got["LPR"].iloc[0]) and not math.isnan(got["LPR"].iloc[1])


def test_plain_string_columns_use_first_appearance():
    s = mt_table()
    plain = s.astype({c: str for c in ["model", "query", "MASK", "M_pair", "M_word", "TARGET", "T_pair", "T_word"]})
    pd.testing.assert_frame_equal(summary(plain), summary(s))


def test_output_levels_first_appearance():
    got = summary(r_scores("MA"), attrib_pair=False)
    for c in got.columns.drop("LPR"):
        assert isinstance(got[c].dtype, pd.CategoricalDtype)
        assert list(got[c].cat.categories) == list(dict.fromkeys(got[c].astype(str)))


# ------------------------------------------------------------------ errors (FMAT differs)


def test_three_mask_groups_is_an_error():
    q = query("[MASK] x.", MASK={"A": ["a"], "B": ["b"], "C": ["c"]})
    with pytest.raises(InputError, match="3 MASK groups.*first two") as err:
        summary(scores_for(q, [0.1, 0.2, 0.3]))
    assert "mask_pair=False" in str(err.value)
    assert len(summary(scores_for(q, [0.1, 0.2, 0.3]), mask_pair=False)) == 3


def test_single_group_with_pairing_is_an_error():
    q = query("[MASK] x.", MASK={"Year": ["1900", "1901"]})
    with pytest.raises(InputError, match="single MASK group.*all NA"):
        summary(scores_for(q, [0.1, 0.2]))
    q2 = query("[MASK] {TARGET}.", MASK={"A": ["a"], "B": ["b"]}, TARGET={"T": ["t1", "t2"]})
    s2 = scores_for(q2, [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(InputError, match="single TARGET group") as err:
        summary(s2)
    assert "target_pair=False" in str(err.value)
    assert len(summary(s2, target_pair=False)) == 2
    q3 = query("[MASK] {ATTRIB}.", MASK={"A": ["a"], "B": ["b"]}, ATTRIB={"G": ["g"]})
    with pytest.raises(InputError, match="single ATTRIB group"):
        summary(scores_for(q3, [0.1, 0.2]))


def test_three_target_groups_mt_is_an_error():
    q = query("[MASK] {TARGET}.", MASK={"A": ["a"], "B": ["b"]}, TARGET={"T1": ["x"], "T2": ["y"], "T3": ["z"]})
    with pytest.raises(InputError, match="3 TARGET groups"):
        summary(scores_for(q, [0.1] * 6))


def test_mta_odd_groups_and_unequal_pairs_are_errors():
    q = query(
        "[MASK] {TARGET} {ATTRIB}.",
        MASK={"A": ["a"], "B": ["b"]},
        TARGET={"T1": ["x"], "T2": ["y"], "T3": ["z"]},
        ATTRIB={"G1": ["g"], "G2": ["h"]},
    )
    with pytest.raises(InputError, match="even number"):
        summary(scores_for(q, [0.1] * len(q)))
    assert len(summary(scores_for(q, [0.1] * len(q)), target_pair=False)) == 3
    q2 = query(
        "[MASK] {TARGET} {ATTRIB}.",
        MASK={"A": ["a"], "B": ["b"]},
        TARGET={"T1": ["x", "w"], "T2": ["y"]},
        ATTRIB={"G1": ["g"], "G2": ["h"]},
    )
    with pytest.raises(InputError, match="'T1' \\(2 words\\) and 'T2' \\(1 words\\)"):
        summary(scores_for(q2, [0.1] * len(q2)))


def test_duplicate_rows_and_missing_prob_are_errors():
    s = mt_table()
    with pytest.raises(InputError, match="share the same design cell"):
        summary(pd.concat([s, s.iloc[[0]]], ignore_index=True))
    with pytest.raises(InputError, match="no 'prob' column"):
        summary(s.drop(columns="prob"))
    with pytest.raises(InputError, match="lack columns"):
        summary(s.drop(columns="T_pair"))


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(["b", "a", None, "b", "c"], name="x", index=[5, 4, 3, 2, 1]),
        pd.Series(pd.Categorical(["q", "p", np.nan, "q"], categories=["p", "q", "r"])),
        pd.Series([1, "1", 2.0, np.nan]),  # texts that collide: the per-value path
        pd.Series([2, 1, 2, 3]),
        pd.Series([np.nan, np.nan]),
    ],
)
def test_levels_in_order_of_first_appearance_as_the_per_value_loop_gives(values):
    """The factorized categorical (fast) equals the per-value definition: each value's text,
    levels in order of first appearance, missing values missing, index and name kept."""
    from fmat.lpr import _first_appearance

    texts = [None if pd.isna(v) else str(v) for v in values.tolist()]
    want = pd.Series(
        pd.Categorical(texts, categories=list(dict.fromkeys(t for t in texts if t is not None))),
        index=values.index,
        name=values.name,
    )
    pd.testing.assert_series_equal(_first_appearance(values), want)
