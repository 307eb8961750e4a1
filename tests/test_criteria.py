"""Criterion data (fmat_replication.criteria): BLS occupations, SSA names, GloVe, the lock, downloads.

Reference values are hand-copied from the raw published rows (quoted in comments) and
recomputed here by plain arithmetic, not by the code under test. No real network: the
download tests use a fake opener and a local HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import csv
import http.server
import io
import math
import threading
import urllib.error
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmat.errors import FmatError, InputError, OfflineError
from fmat.io import write_table
from fmat_replication import criteria as C

REPO = Path(__file__).resolve().parents[1]
MAPPING = REPO / "config/criteria/bls2021_occupations.tsv"
WORDS = REPO / "config/criteria/wefat_words.tsv"


def _mirror_words(mirror_data, study, category):
    df = pd.read_csv(mirror_data / "caliskan2017/wordlists.tsv", sep="\t")
    return df[(df.study == study) & (df.category == category)].word.tolist()


# ----------------------------------------------------------------------------- word lists


def test_curated_word_lists_equal_caliskan_lists(mirror_data):
    w = C.read_wefat_words(WORDS)
    assert w["occupations"] == _mirror_words(mirror_data, "WEFAT1", "Careers")
    assert w["names"] == _mirror_words(mirror_data, "WEFAT2", "AndrogynousNames")
    assert w["male"] == _mirror_words(mirror_data, "WEFAT1", "MaleAttributes")
    assert w["female"] == _mirror_words(mirror_data, "WEFAT1", "FemaleAttributes")
    # the paper's Study 1A Method lists the gender words
    assert w["male"] == "male man boy brother he him his son".split()
    assert len(w["occupations"]) == 50 and len(w["names"]) == 50


# ----------------------------------------------------------------------------- BLS


@pytest.fixture(scope="module")
def bls_table(mirror_data):
    return C.read_bls_table11(mirror_data / "bls/cpsaat11_2021.xlsx")


@pytest.fixture(scope="module")
def bls_criterion(bls_table):
    mapping = C.read_occupation_mapping(MAPPING)
    items = C.read_wefat_words(WORDS)["occupations"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return C.bls_occupation_criterion(bls_table, mapping, source="test", items=items)


def test_bls_xlsx_and_tsv_read_the_same(mirror_data, bls_table):
    tsv = C.read_bls_table11(mirror_data / "bls/cpsaat11_2021.tsv")
    pd.testing.assert_frame_equal(tsv, bls_table)
    assert bls_table.iloc[0].tolist() == ["Total, 16 years and over", 152581.0, 47.0]
    # 'Legislators\t21\t–' is below the publication threshold
    assert math.isnan(bls_table.set_index("occupation").at["Legislators", "pct_women"])


def test_bls_mapping_covers_the_50_words(mirror_data, bls_criterion):
    assert bls_criterion["item"].tolist() == _mirror_words(mirror_data, "WEFAT1", "Careers")
    assert bls_criterion["pct_male"].between(0, 100).all()
    assert np.allclose(bls_criterion["pct_male"] + bls_criterion["pct_female"], 100)
    assert list(bls_criterion.columns) == ["item", "pct_male", "pct_female", "employed", "bls_rows", "source"]


def test_bls_hand_checked_values(mirror_data, bls_criterion):
    raw = (mirror_data / "bls/cpsaat11_2021.tsv").read_text(encoding="utf-8")
    for line in [
        "Pharmacists\t352\t57.8",
        "Carpenters\t1230\t3.1",
        "Cabinetmakers and bench carpenters\t67\t5.8",
        "Registered nurses\t3201\t86.7",
        "Nurse practitioners\t237\t87.4",
        "Licensed practical and licensed vocational nurses\t533\t91.3",
        "Nurse anesthetists\t35\t–",
        "Other physicians\t921\t39.7",
        "Emergency medicine physicians\t24\t–",
    ]:
        assert "\n" + line + "\t" in raw, line
    got = bls_criterion.set_index("item")
    assert got.at["pharmacist", "pct_male"] == pytest.approx(100 - 57.8)
    assert got.at["pharmacist", "employed"] == 352
    # carpenter: (1230·3.1 + 67·5.8) / 1297 = 4201.6 / 1297
    assert got.at["carpenter", "pct_female"] == pytest.approx(4201.6 / 1297)
    # nurse: RN, NP, LPN (anesthetists and midwives have no published %)
    assert got.at["nurse", "pct_female"] == pytest.approx((3201 * 86.7 + 237 * 87.4 + 533 * 91.3) / 3971)
    assert got.at["nurse", "employed"] == 3971
    assert "Nursing assistants" not in got.at["nurse", "bls_rows"]
    assert got.at["physician", "pct_male"] == pytest.approx(60.3)
    assert got.at["physician", "bls_rows"] == "Other physicians"


def test_bls_2021_agrees_with_caliskan_2015(mirror_data, bls_criterion):
    """Same method, six years apart: % women per word should correlate very highly."""
    p = pd.read_csv(mirror_data / "caliskan2017/professionsBLS2015.tsv", sep="\t")
    labels = p[[f"label{i}" for i in range(1, 6)]]
    ref = {}
    for word in bls_criterion["item"]:
        rows = p[labels.eq(word).any(axis=1)]
        ref[word] = (rows.TotalEmployed * rows.Women).sum() / rows.TotalEmployed.sum()
    r = np.corrcoef(bls_criterion["pct_female"], bls_criterion["item"].map(ref))[0, 1]
    assert r > 0.95


def test_bls_mapping_errors(bls_table, tmp_path):
    bad = tmp_path / "m.tsv"
    bad.write_text("item\tbls_rows\tnote\nnurse\tRegistered nurses | Nurses of the moon\tx\n")
    with pytest.raises(InputError, match="item nurse.*Nurses of the moon"):
        C.bls_occupation_criterion(bls_table, C.read_occupation_mapping(bad), source="t", mapping_path=str(bad))
    with pytest.raises(InputError, match="no mapping for"):
        C.bls_occupation_criterion(bls_table, C.read_occupation_mapping(bad), source="t", items=["nurse", "baker"])
    dup = tmp_path / "d.tsv"
    dup.write_text("item\tbls_rows\nbaker\tBakers\nbaker\tBakers\n")
    with pytest.raises(InputError, match="twice"):
        C.read_occupation_mapping(dup)
    nodata = tmp_path / "n.tsv"
    nodata.write_text("item\tbls_rows\nlegislator\tLegislators\n")
    with pytest.raises(InputError, match="published"):
        C.bls_occupation_criterion(bls_table, C.read_occupation_mapping(nodata), source="t")


# ----------------------------------------------------------------------------- SSA


@pytest.fixture(scope="module")
def ssa_counts(mirror_data):
    return C.read_ssa_counts(mirror_data / "ssa/ssa_national_1900_2017_by_name_sex.tsv")


def test_ssa_wefat2_hand_checked(mirror_data, ssa_counts):
    names = C.read_wefat_words(WORDS)["names"]
    t = C.ssa_names_wefat2(ssa_counts, names, source="s")
    assert t["item"].tolist() == names
    assert list(t.columns) == ["item", "n_female", "n_male", "pct_male", "logit_pct_male", "source"]
    raw = (mirror_data / "ssa/ssa_national_1900_2017_by_name_sex.tsv").read_text()
    # raw rows: name, n_female, n_male
    for line, f, m in [
        ("Kelly\t470997\t81294", 470997, 81294),
        ("Jesse\t11730\t405290", 11730, 405290),
        ("Pat\t40110\t26245", 40110, 26245),
    ]:
        assert "\n" + line + "\n" in raw
        row = t.set_index("item").loc[line.split("\t")[0]]
        assert (row.n_female, row.n_male) == (f, m)
        assert row.pct_male == pytest.approx(100 * m / (m + f))
        assert row.logit_pct_male == pytest.approx(math.log(m / f))
    assert t.set_index("item").at["Kelly", "pct_male"] == pytest.approx(14.7194, abs=1e-4)
    assert t["pct_male"].between(0, 100).all()
    # validity: agrees with Caliskan's 1990-census gender score of the same names
    census = pd.read_csv(mirror_data / "caliskan2017/censusNames1990.tsv", sep="\t")
    census["item"] = census["Name"].str.title()
    both = t.merge(census, on="item")
    assert len(both) >= 45
    assert np.corrcoef(both["pct_male"], both["Female-1Male1Unisex0"])[0, 1] > 0.8


def test_ssa_unknown_name_is_an_error(ssa_counts):
    with pytest.raises(InputError, match="case-sensitive"):
        C.ssa_names_wefat2(ssa_counts, ["kelly"], source="s")


def test_ssa_1c_names_without_glove(mirror_data, ssa_counts):
    # independent count with the csv module
    with open(mirror_data / "ssa/ssa_national_1900_2017_by_name_sex.tsv", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))[1:]
    expected = sorted(r[0] for r in rows if int(r[1]) >= 100 and int(r[2]) >= 100)
    assert len(expected) == 3832
    with pytest.warns(UserWarning, match="GloVe 840B filter was not applied"):
        t = C.ssa_names_1c(ssa_counts, source="s")
    assert t["item"].tolist() == expected
    assert t["in_glove"].isna().all() and t.attrs["glove_filter"] is False
    assert "NOT applied" in t["source"].iloc[0]
    assert ((t.n_female >= 100) & (t.n_male >= 100)).all()
    assert np.isfinite(t["logit_pct_male"]).all()


def test_ssa_1c_with_vocabulary(ssa_counts):
    vocab = {"Kelly", "Jesse", "Zzyzx"}
    t = C.ssa_names_1c(ssa_counts, vocabulary=vocab, source="s")
    assert t["item"].tolist() == ["Jesse", "Kelly"]
    assert t["in_glove"].all() and t.attrs["glove_filter"] is True


def test_parquet_keeps_the_glove_flag(ssa_counts, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = C.ssa_names_1c(ssa_counts, source="s")
    write_table(t, tmp_path / "x.parquet")
    back = pd.read_parquet(tmp_path / "x.parquet")
    assert back.attrs.get("glove_filter") is False and back["in_glove"].isna().all()


def _fake_names_zip(path, years):
    with zipfile.ZipFile(path, "w") as zf:
        for y in years:
            zf.writestr(f"yob{y}.txt", f"Mary,F,{y}\nJan,F,10\nJan,M,1\n")


def test_ssa_names_zip_sums_the_years(tmp_path):
    z = tmp_path / "names.zip"
    _fake_names_zip(z, range(1880, 2025))
    c = C.read_ssa_counts(z, years=(1900, 2017)).set_index("name")
    assert c.at["Mary", "n_female"] == sum(range(1900, 2018)) and c.at["Mary", "n_male"] == 0
    assert (c.at["Jan", "n_female"], c.at["Jan", "n_male"]) == (10 * 118, 118)
    gaps = tmp_path / "gaps.zip"
    _fake_names_zip(gaps, [1900, 1902])
    with pytest.raises(InputError, match="yob1901.txt"):
        C.read_ssa_counts(gaps, years=(1900, 1902))


# ----------------------------------------------------------------------------- sources, lock, downloads


def test_resolve_origin(mirror_data, tmp_path):
    o = C.resolve_origin("bls2021", mirror_data)
    assert o.kind == "mirror" and o.filename == "cpsaat11_2021.xlsx"
    g = C.resolve_origin("glove", mirror_data)
    assert g.filename == "glove840B_items.txt" and g.full is False
    d = C.resolve_origin("ssa", None)
    assert d.kind == "download" and d.location == "https://www.ssa.gov/oact/babynames/names.zip"
    assert d.filename == "names.zip"
    with pytest.raises(OfflineError, match="mirror_dir"):
        C.resolve_origin("ssa", tmp_path)
    with pytest.raises(InputError):
        C.resolve_origin("census", None)


def test_lock_records_and_warns_on_change(tmp_path):
    lock = tmp_path / "criteria.lock.tsv"
    f = tmp_path / "names.zip"
    f.write_bytes(b"first version")
    o = C.Origin("ssa", "download", "https://www.ssa.gov/oact/babynames/names.zip", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = C.record_retrieval(lock, o, f, now="2026-01-01T00:00:00Z")
        again = C.record_retrieval(lock, o, f, now="2026-02-01T00:00:00Z")
    import hashlib

    assert row["sha256"] == hashlib.sha256(b"first version").hexdigest()
    assert again["first_retrieved"] == "2026-01-01T00:00:00Z"
    assert again["last_retrieved"] == "2026-02-01T00:00:00Z"
    f.write_bytes(b"republished")
    with pytest.warns(C.CriterionChangedWarning, match="changed since it was first retrieved on 2026-01-01"):
        new = C.record_retrieval(lock, o, f, now="2026-03-01T00:00:00Z")
    assert new["sha256"] == hashlib.sha256(b"republished").hexdigest()
    assert new["previous_sha256"] == row["sha256"]
    # a mirror copy is recorded beside the download, not as a change
    m = C.Origin("ssa", "mirror", "/mirror/ssa/names.zip", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.record_retrieval(lock, m, f)
    lk = C.read_lock(lock)
    assert len(lk) == 2 and list(lk.columns) == C.LOCK_COLUMNS
    note = C.source_note("ssa", f, lock)
    assert note.startswith("SSA national baby-name files (downloaded from https://www.ssa.gov/")
    assert f"sha256 {new['sha256'][:12]}; retrieved 2026-03-01" in note


class _FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def test_fetch_with_a_fake_opener(tmp_path):
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w") as zf:
        zf.writestr("yob1900.txt", "Mary,F,5\n")
    seen = {}

    def opener(req, timeout):
        seen["url"], seen["ua"] = req.full_url, req.get_header("User-agent")
        return _FakeResponse(payload.getvalue())

    o = C.resolve_origin("ssa", None)
    row = C.fetch(o, tmp_path / "raw/names.zip", lock_path=tmp_path / "lock.tsv", opener=opener)
    assert seen["url"] == "https://www.ssa.gov/oact/babynames/names.zip" and "fmat" in seen["ua"]
    assert zipfile.is_zipfile(tmp_path / "raw/names.zip")
    assert row["location"] == o.location and row["kind"] == "download"

    def block_page(req, timeout):
        return _FakeResponse(b"<html>Access Denied</html>")

    with pytest.raises(FmatError, match="did not return a zip"):
        C.fetch(C.resolve_origin("bls2021", None), tmp_path / "raw/cpsaat11.xlsx", opener=block_page)
    assert not (tmp_path / "raw/cpsaat11.xlsx").exists()  # nothing half-written

    def offline(req, timeout):
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(OfflineError, match=r"(?s)Name or service not known.*ssa/names.zip.*mirror_dir"):
        C.fetch(o, tmp_path / "raw/again.zip", opener=offline)


def test_download_from_a_local_http_server(tmp_path):
    served = tmp_path / "site"
    served.mkdir()
    (served / "glove.txt").write_text("the 0.1 0.2\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(served), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        out = C.download(f"http://127.0.0.1:{port}/glove.txt", tmp_path / "got.txt", timeout=10)
        assert out.read_text() == "the 0.1 0.2\n"
        with pytest.raises(OfflineError):
            C.download(f"http://127.0.0.1:{port}/missing.zip", tmp_path / "no.zip", timeout=10)
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_copies_from_the_mirror(mirror_data, tmp_path):
    o = C.resolve_origin("bls2021", mirror_data)
    row = C.fetch(o, tmp_path / "cpsaat11_2021.xlsx", lock_path=tmp_path / "lock.tsv")
    assert row["kind"] == "mirror" and row["sha256"] == C.sha256_file(mirror_data / "bls/cpsaat11_2021.xlsx")
    assert "mirror copy of" in C.source_note("bls2021", tmp_path / "cpsaat11_2021.xlsx", tmp_path / "lock.tsv")


# ----------------------------------------------------------------------------- GloVe and WEFAT


def _glove(path):
    """GloVe as the criteria rules read it: fmat.embeddings.read_word2vec with 300 dimensions."""
    from fmat.embeddings import read_word2vec

    return read_word2vec(path, dims=C.GLOVE_DIMS)


def test_read_glove_mirror_and_zip(mirror_data, tmp_path):
    """One GloVe reader (fmat.embeddings.read_word2vec) for the mirror's extract and the official zip."""
    from fmat.embeddings import read_word2vec

    g = _glove(mirror_data / "caliskan2017/glove840B_items.txt")
    assert g.shape == (457, 300)
    words = C.read_wefat_words(WORDS)
    assert all(w in g.index for k in words for w in words[k])
    first = (mirror_data / "caliskan2017/glove840B_items.txt").read_text().split("\n", 1)[0].split(" ")
    assert g.loc[first[0]].iloc[:3].tolist() == pytest.approx([float(x) for x in first[1:4]])
    # zip streaming (no unpacked copy), a word with a space (840B has some), and word filtering
    z = tmp_path / "glove.840B.300d.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("glove.840B.300d.txt", "a 1 2 3\n. . . 4 5 6\nb 7 8 9\nb 0 0 0\n")
    assert read_word2vec(z, dims=3).index.tolist() == ["a", ". . .", "b"]  # the first b wins
    sub = read_word2vec(z, words=["b", ". . .", "c"], dims=3)
    assert sub.index.tolist() == ["b", ". . ."] and sub.loc["b"].tolist() == [7, 8, 9]
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("README", "no vectors")
    with pytest.raises(InputError, match="no .txt file inside the zip"):
        read_word2vec(empty, dims=3)


def test_demo_vectors_are_seeded_by_word():
    a = C.demo_vectors(["Kelly", "nurse"])
    b = C.demo_vectors(["nurse"])
    assert np.array_equal(a.loc["nurse"].to_numpy(), b.loc["nurse"].to_numpy())
    assert not np.allclose(a.loc["Kelly"].to_numpy(), a.loc["nurse"].to_numpy())


def _reference_wefat(vectors, items, male, female):
    """Caliskan (2017) s(w), sign flipped to male-positive, written out independently."""

    def cos(u, v):
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    out = []
    for w in items:
        x = vectors.loc[w].to_numpy(float)
        cm = [cos(x, vectors.loc[a].to_numpy(float)) for a in male]
        cf = [cos(x, vectors.loc[a].to_numpy(float)) for a in female]
        out.append((np.mean(cm) - np.mean(cf)) / np.std(cm + cf, ddof=1))
    return pd.DataFrame({"item": items, "wefat_male": out})


def test_wefat_table_flags_missing_and_demo_items(mirror_data):
    g = _glove(mirror_data / "caliskan2017/glove840B_items.txt")
    w = C.read_wefat_words(WORDS)
    items = ["nurse", "Zyxwv", "engineer"]
    t = C.wefat_table(g, items, w["male"], w["female"], source="GloVe", criterion=_reference_wefat)
    assert t["item"].tolist() == items and math.isnan(t.at[1, "wefat_male"])
    assert t["source"].tolist() == ["GloVe", "not in GloVe", "GloVe"] and t.attrs["missing_items"] == ["Zyxwv"]
    assert t.at[2, "wefat_male"] > 0 > t.at[0, "wefat_male"]
    d = C.wefat_table(g, items, w["male"], w["female"], source="GloVe", demo_missing=True, criterion=_reference_wefat)
    assert d.at[1, "source"] == C.DEMO_SOURCE and np.isfinite(d.at[1, "wefat_male"])
    with pytest.raises(InputError, match="attribute words"):
        C.wefat_table(g, items, ["notaword"], w["female"], source="GloVe", criterion=_reference_wefat)


def test_wefat_with_the_package_criterion_matches_caliskan(mirror_data):
    """r(WEFAT_male, % men 2015) for the 50 occupations: Caliskan et al. report .90."""
    g = _glove(mirror_data / "caliskan2017/glove840B_items.txt")
    w = C.read_wefat_words(WORDS)
    t = C.wefat_table(g, w["occupations"], w["male"], w["female"], source="GloVe")
    ref = _reference_wefat(g, w["occupations"], w["male"], w["female"])
    assert np.allclose(t["wefat_male"], ref["wefat_male"], atol=1e-5)
    p = pd.read_csv(mirror_data / "caliskan2017/professionsBLS2015.tsv", sep="\t")
    labels = p[[f"label{i}" for i in range(1, 6)]]
    women = [((r := p[labels.eq(o).any(axis=1)]).TotalEmployed * r.Women).sum() / r.TotalEmployed.sum() for o in w["occupations"]]
    assert np.corrcoef(t["wefat_male"], women)[0, 1] == pytest.approx(-0.90, abs=0.02)


def test_wefat_against_the_paper_with_2021_and_ssa_criteria(mirror_data, bls_criterion, ssa_counts):
    """Bao (2024): WEFAT's correlation with % male is .89 (1A, BLS 2021) and .84 (1B, SSA)."""
    g = _glove(mirror_data / "caliskan2017/glove840B_items.txt")
    w = C.read_wefat_words(WORDS)
    occ = C.wefat_table(g, w["occupations"], w["male"], w["female"], source="GloVe")
    r1a = np.corrcoef(occ["wefat_male"], bls_criterion["pct_male"])[0, 1]
    assert r1a == pytest.approx(0.89, abs=0.02)
    names = C.wefat_table(g, w["names"], w["male"], w["female"], source="GloVe")
    ssa = C.ssa_names_wefat2(ssa_counts, w["names"], source="s")
    r1b = np.corrcoef(names["wefat_male"], ssa["pct_male"])[0, 1]
    assert r1b == pytest.approx(0.84, abs=0.02)
