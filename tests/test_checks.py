"""The checks stage (fmat_replication.checks; rules oov_study, model_checks): the numbers the
pages say of each model, made by a rule from declared files, checked against hand counts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fmat.io import read_table
from fmat_replication import checks


def _scores():
    return pd.DataFrame(
        {
            "model": ["m1"] * 4 + ["m2"] * 4,
            "M_word": ["he", "she", "zyx", "qq", "he", "she", "zyx", "qq"],
            "prob": [0.1, 0.2, np.nan, 0.3, 0.1, np.nan, np.nan, 0.2],
            "oov": [False, False, True, False, False, False, True, False],
        }
    )


def test_oov_counts_per_model_by_hand():
    t = checks.oov_summary(_scores()).set_index("model")
    assert t.loc["m1", ["rows", "oov_rows", "nan_prob_rows"]].tolist() == [4, 1, 1]
    assert t.loc["m2", ["rows", "oov_rows", "nan_prob_rows"]].tolist() == [4, 1, 2]
    assert t.loc["m1", "oov_words"] == "zyx" and t.loc["m2", "oov_words"] == "she, zyx"
    assert list(t.index) == ["m1", "m2"]  # the scores' order


def test_oov_words_are_cut_after_max_words():
    s = pd.DataFrame({"model": "m", "M_word": [f"w{i:02d}" for i in range(5)], "prob": np.nan, "oov": True})
    assert checks.oov_summary(s, max_words=2)["oov_words"].iloc[0] == "w00, w01 ... (+3)"


def test_oov_study_writes_one_table_with_the_study(tmp_path):
    paths = []
    for m, g in _scores().groupby("model"):
        g.assign(extra=1).to_parquet(tmp_path / f"{m}.parquet")
        paths.append(tmp_path / f"{m}.parquet")
    checks.oov_study(paths, tmp_path / "oov" / "S1.parquet", study="S1")
    t = read_table(tmp_path / "oov" / "S1.parquet")
    assert list(t.columns) == checks.OOV_COLUMNS and set(t["study"]) == {"S1"}
    assert t["oov_rows"].tolist() == [1, 1] and t["nan_prob_rows"].tolist() == [1, 2]


@pytest.mark.parametrize("damage", ["truncated", "not parquet"])
def test_oov_study_refuses_a_damaged_score_table_naming_it(tmp_path, damage):
    """Issue 44: a truncated score table made the oov_study job fail first, with "unexpected
    error" and a traceback; now it is the same clear message the lpr job gives (file and fix)."""
    from fmat.errors import InputError

    paths = []
    for m, g in _scores().groupby("model"):
        g.to_parquet(tmp_path / f"{m}.parquet")
        paths.append(tmp_path / f"{m}.parquet")
    data = paths[1].read_bytes()
    paths[1].write_bytes(data[: len(data) // 2] if damage == "truncated" else b"model,prob\n")
    with pytest.raises(InputError) as err:
        checks.oov_study(paths, tmp_path / "oov" / "S1.parquet", study="S1")
    assert str(paths[1]) in str(err.value) and err.value.fix
    assert not (tmp_path / "oov" / "S1.parquet").exists()


def _agreement():
    return pd.DataFrame(
        {
            "model": ["m2", "m2", "m2", "m1", "m1", "m1"],
            "construction": ["all", "simple", "across_pp", "all", "simple", "across_pp"],
            "accuracy": [0.75, 1.0, 0.5, 0.5, 0.25, 0.75],
            "n": [8, 4, 4, 8, 4, 4],
            "skipped": [0, 0, 0, 2, 1, 1],
        }
    )


def test_model_checks_by_hand():
    stats = pd.DataFrame(
        {
            "study": ["1A", "1A", "1A", "2A", "2A"],
            "statistic": ["alpha", "alpha", "alpha", "alpha", "d"],
            "condition": ["Q1", "Q2", "Q1", "all", "all"],
            "model": ["m1", "m1", "all", "m2", "all"],
            "value": [0.6, 0.8, 0.99, 0.5, 1.0],
        }
    )
    oov = pd.DataFrame(
        {"study": ["1A", "2A", "1A", "2A"], "model": ["m1", "m1", "m2", "m2"], "rows": [10, 30, 10, 30], "oov_rows": [1, 3, 0, 0]}
    )
    t = checks.model_checks_table(_agreement(), stats, oov).set_index("model")
    assert list(t.index) == ["m2", "m1"]  # the agreement table's order
    assert t.loc["m1", "agreement accuracy"] == 0.5 and t.loc["m1", "pairs skipped"] == 2
    assert t.loc["m1", "alpha 1A"] == pytest.approx(0.7)  # mean of its two conditions; not the 'all' row
    assert np.isnan(t.loc["m1", "alpha 2A"]) and t.loc["m2", "alpha 2A"] == 0.5
    assert t.loc["m1", "OOV share"] == pytest.approx(4 / 40) and t.loc["m2", "OOV share"] == 0


def test_agreement_per_construction_is_one_row_per_model():
    t = checks.agreement_by_construction(_agreement()).set_index("model")
    assert t.loc["m1", "simple"] == 0.25 and t.loc["m2", "across_pp"] == 0.5
    assert "all" not in t.columns


def test_provenance_comes_from_the_cards(tmp_path):
    cards = []
    for name, extra in (
        ("bert-base-uncased", {"source": "cache", "revision": None, "commit": "a" * 40, "created": "2018"}),
        ("mine", {"source": "local", "revision": "local", "commit": "local", "sha256": "b" * 64}),
    ):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"model": name, "architecture": "BertForMaskedLM", **extra}))
        cards.append(path)
    t = checks.provenance_table(cards)
    assert list(t.columns) == checks.PROVENANCE_COLUMNS
    assert t.loc[0].tolist() == ["bert-base-uncased", "cache", "", "a" * 40, "", "2018"]
    assert t.loc[1, "sha256"] == "b" * 64 and t.loc[1, "created"] == ""


def test_model_checks_writes_its_three_tables(tmp_path):
    _agreement().to_parquet(tmp_path / "agreement.parquet")
    card = tmp_path / "m1.json"
    card.write_text(json.dumps({"model": "m1", "source": "local"}))
    out = {k: tmp_path / "out" / f"{k}.parquet" for k in ("checks", "agreement", "provenance")}
    checks.model_checks(
        tmp_path / "agreement.parquet",
        [],
        [],
        [card],
        checks_out=out["checks"],
        agreement_out=out["agreement"],
        provenance_out=out["provenance"],
    )
    assert read_table(out["checks"])["model"].tolist() == ["m2", "m1"]
    assert read_table(out["agreement"]).shape == (2, 3)
    assert read_table(out["provenance"])["source"].tolist() == ["local"]


def test_the_scoring_jobs_record_reaches_the_oov_table_and_the_provenance(tmp_path):
    """Issue 41: package versions are the scoring job's (its distribution names: the library is
    fill-mask-association-test), carried in the score table's metadata to results/oov and the
    provenance table, per model; a table scored before this was recorded says "not recorded"."""
    from fmat_replication.score import PROVENANCE_KEY, scoring_provenance

    rec = scoring_provenance({"name": "m1", "tiny": "bert"})
    assert rec["demo"] is True and rec["model"] == "m1"
    assert rec["packages"]["fill-mask-association-test"] not in ("", "not installed")
    assert scoring_provenance({"name": "m"}, packages=["no-such-dist-xyz"])["packages"] == {"no-such-dist-xyz": "not installed"}
    paths = []
    for m, g in _scores().groupby("model"):
        g = g.reset_index(drop=True)
        if m == "m1":  # m2: scored before the record existed
            g.attrs[PROVENANCE_KEY] = {**rec, "packages": {"torch": "9.9", "fill-mask-association-test": "0.1"}}
        g.to_parquet(tmp_path / f"{m}.parquet")
        paths.append(tmp_path / f"{m}.parquet")
    checks.oov_study(paths, tmp_path / "S1.parquet", study="S1")
    oov = read_table(tmp_path / "S1.parquet").set_index("model")
    assert bool(oov.loc["m1", "demo"]) is True and pd.isna(oov.loc["m2", "demo"])
    assert json.loads(oov.loc["m1", "packages"])["torch"] == "9.9" and oov.loc["m2", "packages"] == ""
    cards = []
    for m in ("m1", "m2"):
        (tmp_path / f"{m}.json").write_text(json.dumps({"model": m, "source": "local"}), encoding="utf-8")
        cards.append(tmp_path / f"{m}.json")
    prov = checks.provenance_table(cards, oov.reset_index()).set_index("model")
    assert prov.loc["m1", "torch"] == "9.9" and prov.loc["m1", "fill-mask-association-test"] == "0.1"
    assert prov.loc["m2", "torch"] == "not recorded"
