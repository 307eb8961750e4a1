"""fmat.design: FMAT_query / FMAT_query_bind, checked against tables written by R (tests/data/r_fmat)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fmat.design import parse_r_csv, query, query_bind, read_query_table, write_query_table
from fmat.errors import InputError

R = Path(__file__).parent / "data" / "r_fmat"

# the designs of tests/data/r_fmat/make_fixtures.R, written again in Python
MT_QUERIES = ["[MASK] is {TARGET}.", "[MASK] works as {TARGET}."]
MT_MASK = {"Male": ["He", "Man"], "Female": ["She", "Woman"]}
MT_TARGET = {"MaleOcc": ["a doctor", "an engineer"], "FemaleOcc": ["a nurse", "a teacher"]}
DESIGNS = {
    "query_M": lambda: query("[MASK] is a nurse.", MASK={"Male": ["He", "Man"], "Female": ["She", "Woman"]}),
    "query_MT": lambda: query(MT_QUERIES, MASK=MT_MASK, TARGET=MT_TARGET),
    "query_MT_fwrite": lambda: query(MT_QUERIES, MASK=MT_MASK, TARGET=MT_TARGET),
    "query_MA": lambda: query(
        "The [MASK] {ATTRIB}.",
        MASK={"Male": ["man", "boy"], "Female": ["woman", "girl"]},
        ATTRIB={"Masc": ["is masculine", 'says "hi, there"'], "Femi": ["is feminine", "has a feminine personality"]},
    ),
    "query_MTA": lambda: query(
        ["The [MASK] {TARGET} {ATTRIB}.", "A [MASK] {TARGET} {ATTRIB}."],
        MASK={"Male": ["man", "boy"], "Female": ["woman", "girl"]},
        TARGET={"T1": ["x1", "x2"], "T2": ["y1", "y2", "y3"]},
        ATTRIB={"A1": ["a", "b"], "A2": ["c"]},
    ),
    "query_MT_years": lambda: query(
        "In {TARGET}, [MASK] was rich.", MASK={"Male": "he", "Female": "she"}, TARGET={"Year": [1998, 1999, 2000]}
    ),
    "query_bind_MT": lambda: query_bind(
        query(
            "[MASK] is {TARGET}.",
            MASK={"Male": ["He"], "Female": ["She"]},
            TARGET={"Occupation": ["a doctor", "a nurse", "an artist"]},
        ),
        query(
            "[MASK] occupation is {TARGET}.",
            MASK={"Male": ["His"], "Female": ["Her"]},
            TARGET={"Occupation": ["doctor", "nurse", "artist"]},
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_matches_r_fmat_query_output(name):
    """Same columns, order, values, factor levels and type as R FMAT_query (write.csv / fwrite)."""
    expected = read_query_table(R / f"{name}.csv")
    got = DESIGNS[name]()
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs["type"] == expected.attrs["type"]


def test_r_csv_is_what_r_wrote():
    """The fixture really is R write.csv output: quoted header with an empty row-names field."""
    text = (R / "query_MT.csv").read_text()
    assert text.splitlines()[0] == '"","qid","query","MASK","M_pair","M_word","TARGET","T_pair","T_word"'
    assert text.splitlines()[1] == ('"1","1","[MASK] is {TARGET}.","Male","1","He","MaleOcc","MaleOcc-FemaleOcc.1","a doctor"')


def test_row_order_mask_varies_fastest():
    df = DESIGNS["query_MT"]()
    first = df.head(5)[["MASK", "M_word", "T_word"]].astype(str).values.tolist()
    assert first == [
        ["Male", "He", "a doctor"],
        ["Male", "Man", "a doctor"],
        ["Female", "She", "a doctor"],
        ["Female", "Woman", "a doctor"],
        ["Male", "He", "an engineer"],
    ]
    assert df["qid"].astype(str).tolist() == ["1"] * 16 + ["2"] * 16
    assert list(df["T_pair"].cat.categories) == ["MaleOcc-FemaleOcc.1", "MaleOcc-FemaleOcc.2"]


def test_types_columns_and_levels():
    m = query("[mask] is here.", MASK={"A": ["x"], "B": ["y"]})
    assert m.attrs["type"] == "M" and list(m.columns) == ["query", "MASK", "M_pair", "M_word"]
    assert m["query"].iloc[0] == "[MASK] is here."  # [mask] upper-cased
    mt = query("[MASK] {TARGET}", MASK={"A": ["x"], "B": ["y"]}, TARGET={"T": ["t1"]})
    ma = query("[MASK] {ATTRIB}", MASK={"A": ["x"], "B": ["y"]}, ATTRIB={"G": ["a1"]})
    mta = query("[MASK] {TARGET} {ATTRIB}", MASK={"A": ["x"], "B": ["y"]}, TARGET={"T": ["t1"]}, ATTRIB={"G": ["a1", "a2"]})
    assert (mt.attrs["type"], ma.attrs["type"], mta.attrs["type"]) == ("MT", "MA", "MTA")
    assert "A_pair" in ma.columns and "T_pair" not in mta.columns and "A_pair" not in mta.columns
    assert len(mta) == 2 * 1 * 2
    for df in (m, mt, ma, mta):
        assert all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in df.columns)
        assert "qid" not in df.columns
    # levels in order of first appearance, not sorted
    z = query("[MASK].", MASK={"Zed": ["zz", "aa"], "Alpha": ["bb", "cc"]})
    assert list(z["MASK"].cat.categories) == ["Zed", "Alpha"]
    assert list(z["M_word"].cat.categories) == ["zz", "aa", "bb", "cc"]
    assert list(z["M_pair"].astype(str)) == ["1", "2", "1", "2"]


def test_query_bind_renumbers_and_checks_types():
    a = query(["q1 [MASK].", "q2 [MASK]."], MASK={"A": ["x"], "B": ["y"]})
    b = query("q3 [MASK].", MASK={"A": ["x"], "B": ["y"]})
    bound = query_bind(a, b)
    assert bound["qid"].astype(str).tolist() == ["1", "1", "2", "2", "3", "3"]
    assert list(bound.columns)[0] == "qid" and bound.attrs["type"] == "M"
    c = query("q4 [MASK] {TARGET}.", MASK={"A": ["x"], "B": ["y"]}, TARGET={"T": ["t"]})
    with pytest.raises(InputError, match="different types"):
        query_bind(a, c)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(query="no mask here", MASK={"A": ["x"]}), "has no \\[MASK\\]"),
        (dict(query="[MASK] and [MASK]", MASK={"A": ["x"]}), "2 \\[MASK\\] tokens"),
        (dict(query="[MASK] x", MASK=None), "no MASK groups"),
        (dict(query="[MASK] x", MASK={}), "no MASK groups"),
        (dict(query="[MASK] {TARGET}", MASK={"A": ["x"]}), "has \\{TARGET\\} but no TARGET groups"),
        (dict(query="[MASK] x", MASK={"A": ["x"]}, TARGET={"T": ["t"]}), "has no \\{TARGET\\}"),
        (dict(query="[MASK] {ATTRIB}", MASK={"A": ["x"]}), "has \\{ATTRIB\\} but no ATTRIB groups"),
        (dict(query="[MASK] x", MASK={"A": ["x"]}, ATTRIB={"G": ["a"]}), "has no \\{ATTRIB\\}"),
        (dict(query="[MASK] {TARGET} {TARGET}", MASK={"A": ["x"]}, TARGET={"T": ["t"]}), "2 times"),
        (dict(query="[MASK] x", MASK={"A": ["x", "y", "x"]}), "lists 'x' more than once"),
        (dict(query="[MASK] {TARGET}", MASK={"A": ["x"]}, TARGET={"T": ["t", "t"]}), "more than once"),
        (dict(query="[MASK] x", MASK={"A": []}), "group 'A' is empty"),
        (dict(query="[MASK] x", MASK={"A": ["x", "y"], "B": ["z"]}), "A has 2, B has 1"),
        (
            dict(query="[MASK] {TARGET}", MASK={"A": ["x"]}, TARGET={"T1": ["a", "b"], "T2": ["c"]}),
            "TARGET groups have unequal.*T1 has 2, T2 has 1",
        ),
        (
            dict(query="[MASK] {ATTRIB}", MASK={"A": ["x"]}, ATTRIB={"G1": ["a"], "G2": ["c", "d"]}),
            "ATTRIB groups have unequal.*G1 has 1, G2 has 2",
        ),
        (dict(query=["[MASK] x", "[MASK] x"], MASK={"A": ["x"]}), "listed twice"),
        (dict(query="[MASK] x", MASK={"A": [True]}), "not a word"),
        (dict(query="[MASK] x", MASK={"A": [""]}), "is empty"),
        (dict(query=[], MASK={"A": ["x"]}), "no query given"),
        (dict(query=3, MASK={"A": ["x"]}), "must be a string"),
        (dict(query="[MASK] x", MASK=["x"]), "must be a mapping"),
    ],
)
def test_design_errors(kwargs, match):
    with pytest.raises(InputError, match=match) as err:
        query(**kwargs)
    assert "fix:" in str(err.value)


def test_error_names_location():
    with pytest.raises(InputError) as err:
        query("[MASK] x", MASK={"A": ["x", "y"], "B": ["z"]}, where="config/studies/9Z.yaml: queries[1]")
    assert str(err.value).startswith("config/studies/9Z.yaml: queries[1].MASK: ")


def test_mta_allows_unequal_group_sizes():
    df = DESIGNS["query_MTA"]()
    # 2 queries x (2x2 + 2x1 + 3x2 + 3x1 = 15 target-attribute combinations) x 4 mask rows
    assert len(df) == 2 * 15 * 4


def test_parse_r_csv_quoting_and_na():
    text = '"","a","b"\r\n"1","NA",NA\r\n"2","x ""q"", y",\n"3","",7\n'
    rows = parse_r_csv(text)
    assert rows == [["", "a", "b"], ["1", "NA", None], ["2", 'x "q", y', None], ["3", "", "7"]]
    with pytest.raises(InputError, match="unexpected"):
        parse_r_csv('a,b\nx"y,1\n')


def test_readr_style_csv_without_row_names(tmp_path):
    """readr::write_csv / fwrite style: no row names, quotes only where needed, NA unquoted."""
    p = tmp_path / "q.csv"
    p.write_text('query,MASK,M_pair,M_word\n"[MASK], yes.",Male,1,he\n"[MASK], yes.",Female,1,she\n')
    df = read_query_table(p)
    pd.testing.assert_frame_equal(df, query("[MASK], yes.", MASK={"Male": ["he"], "Female": ["she"]}))


def test_read_errors(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_query_table(tmp_path / "missing.csv")
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="not a query table"):
        read_query_table(p)
    p.write_text("query,MASK,M_pair,M_word\nx\n")
    with pytest.raises(InputError, match="1 fields"):
        read_query_table(p)


@pytest.mark.parametrize("ext", ["parquet", "csv", "tsv"])
def test_write_read_round_trip(tmp_path, ext):
    df = DESIGNS["query_MA"]()
    path = write_query_table(df, tmp_path / f"q.{ext}")
    back = read_query_table(path)
    pd.testing.assert_frame_equal(back, df)
    assert back.attrs["type"] == "MA"
