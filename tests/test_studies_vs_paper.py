"""The 15 study files checked against what Bao (2024, JPSP) prints.

Every EXPECTED value below was typed from the paper (Table 1, the Method section of each
study, Table 7) or, for the word lists the paper takes from Caliskan et al. (2017), is read
from the independent copy of Caliskan's lists the repository carries (data/mirror/caliskan2017/
wordlists.tsv, locked by sha256). Nothing expected is read from the study files themselves.

Two layers are tested:
- the raw YAML (always): templates, [MASK] options, TARGET/ATTRIB phrases, counts, the
  Table 1 example sentences, lpr / reliability / score / analysis keys;
- the loaded query table (when ``fmat.study.load_study`` exists): row counts and type.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
STUDIES = REPO / "config" / "studies"
IDS = ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "3A", "3B", "3C", "3D", "4A", "4B", "4C", "4D"]


# ----------------------------------------------------------------------------------------
# Expected values typed from the paper
# ----------------------------------------------------------------------------------------

# Study 1A Method, Queries 1-4 ("a/an" as printed) and their [MASK] options (male, female).
PAPER_1A = [
    ("The [MASK] works as a/an {TARGET}.", "man", "woman"),
    ("[MASK] works as a/an {TARGET}.", "He", "She"),
    ("[MASK] is a/an {TARGET}.", "He", "She"),
    ("[MASK] occupation is {TARGET}.", "His", "Her"),
]
# Study 1B Method, Queries 1-4; Study 1C: "The FMAT query design was also identical to Study 1B."
PAPER_1B = [
    ("The name of this [MASK] is {TARGET}.", "man", "woman"),
    ("The name of [MASK] is {TARGET}.", "him", "her"),
    ("[MASK] is {TARGET}.", "He", "She"),
    ("[MASK] name is {TARGET}.", "His", "Her"),
]
# Of the 50 WEFAT-1 occupation words, those that take "an" (a vowel sound), typed by hand.
AN_WORDS_1A = {
    "accountant",
    "engineer",
    "educator",
    "inspector",
    "administrator",
    "advisor",
    "investigator",
    "electrician",
    "officer",
    "instructor",
    "examiner",
    "appraiser",
    "architect",
}

# Study 2A Method, Queries 1 (personal) and 2 (societal); 2B-2D "identical to Study 2A".
PAPER_2_QUERIES = ["I [MASK] {TARGET}.", "Most people [MASK] {TARGET}."]
PAPER_2_PAIRS = [("like", "dislike"), ("notice", "ignore")]  # attitudinal; nonattitudinal

# Caliskan list per Study 2 sub-study: (wordlists.tsv study, first category, second
# category, number of words per category printed in the paper).
CALISKAN_2 = {
    "2A": ("WEAT1", "Flowers", "Insects", 25),
    "2B": ("WEAT2", "Instruments", "Weapons", 25),
    "2C": ("WEAT3", "EuropeanAmericanNames", "AfricanAmericanNames", 32),
    "2D": ("WEAT10", "YoungNames", "OldNames", 8),
}

# Table 7 (and Study 3A Method): nine career - family pairs; ’ of the print written as '.
TABLE7_3A = [
    ("prioritize career goals", "prioritize family needs"),
    ("seek to achieve professional goals", "seek to satisfy children's needs"),
    ("lead teams", "raise children"),
    ("manage employees", "care for children"),
    ("develop their career", "nurture their children"),
    ("get along with their colleagues", "get along with their children"),
    ("provide support for their colleagues", "provide support for their children"),
    ("go to office", "stay at home"),
    ("plan work projects", "prepare family meals"),
]
TABLE7_MATH = ["maths", "numbers", "algebra", "calculus", "geometry", "computation"]
TABLE7_SCIENCE = ["sciences", "technology", "astronomy", "physics", "chemistry", "experiment"]
TABLE7_ARTS = ["arts", "dance", "drama", "music", "poetry", "literature"]
TABLE7_3D = [
    ("are masculine", "are feminine"),
    ("have a masculine personality", "have a feminine personality"),
    ("have a masculine trait", "have a feminine trait"),
    ("have masculine characteristics", "have feminine characteristics"),
    ("have masculine traits", "have feminine traits"),
]
# Study 4A Method, Queries 1-3; 4B identical with "White people" vs "Asian people".
PAPER_4AB = [
    "Most {TARGET} participated in an occupation in the year [MASK].",
    "Most {TARGET} entered the workforce in the year [MASK].",
    "Most {TARGET} took a job in the year [MASK].",
]
PAPER_4CD = "Most American people {ATTRIB} in the year [MASK]."
PAPER_4C = [
    ("were individualist", "were collectivist"),
    ("were individualists", "were collectivists"),
    ("were individualistic", "were collectivistic"),
    ("valued individualism", "valued collectivism"),
    ("embraced individualism", "embraced collectivism"),
    ("emphasized individualism", "emphasized collectivism"),
    ("advocated for individualism", "advocated for collectivism"),
    ("encouraged individualistic behavior", "encouraged collectivistic behavior"),
    ("pursued individual goals", "fulfilled collective duties"),
    ("pursued individual achievements", "fulfilled collective obligations"),
]
PAPER_4D = [
    ("were allowed to have free choices", "were constrained by their societies"),
    ("were permitted to have diverse behaviors", "were supposed to abide by many social norms"),
    ("were not expected for how people should act", "were clearly expected for how people should act"),
    ("approved inappropriate behaviors", "disapproved inappropriate behaviors"),
    ("could tolerate deviant behaviors", "could not tolerate deviant behaviors"),
    ("could decide how they want to behave", "must always comply with how they should behave"),
]

# Table 1, "Example query sentence" column (bold {TARGET}/{ATTRIB} filled in).
TABLE1_EXAMPLES = {
    "1A": "The [MASK] works as a nurse.",
    "1B": "The name of this [MASK] is Jackie.",
    "2A": "I [MASK] rose.",
    "2B": "I [MASK] piano.",
    "2C": "I [MASK] Lakisha.",
    "2D": "I [MASK] Michelle.",
    "3A": "Most [MASK] prioritize career goals.",
    "3B": "Most [MASK] are interested in maths.",
    "3C": "Most [MASK] are interested in sciences.",
    "3D": "Most [MASK] people are masculine.",
    "4A": "Most women participated in an occupation in the year [MASK].",
    "4B": "Most Asian people entered the workforce in the year [MASK].",
    "4C": "Most American people were individualist in the year [MASK].",
    "4D": "Most American people were allowed to have free choices in the year [MASK].",
}

# Analysis name per study (brief of issue 6) and the population sigma of Studies 3-4.
ANALYSIS = {
    "1A": "factual_wefat",
    "1B": "factual_wefat",
    "1C": "factual_names",
    **{s: "attitude_weat" for s in ["2A", "2B", "2C", "2D"]},
    "3A": "stereotype_pairs",
    "3D": "stereotype_pairs",
    "3B": "stereotype_domains",
    "3C": "stereotype_domains",
    **{s: "change_over_time" for s in ["4A", "4B", "4C", "4D"]},
}

# Query-table rows = queries x [MASK] words x TARGET/ATTRIB words, typed from the paper's counts.
YEARS = 2019 - 1800 + 1  # "220 year tokens from 1800 to 2019"
EXPECTED_ROWS = {
    "1A": 4 * 2 * 50,
    "1B": 4 * 2 * 50,
    "2A": 2 * 4 * (25 + 25),
    "2B": 2 * 4 * (25 + 25),
    "2C": 2 * 4 * (32 + 32),
    "2D": 2 * 4 * (8 + 8),
    "3A": 1 * 4 * (9 + 9),
    "3B": 1 * 4 * (2 * 2 * 6),
    "3C": 1 * 4 * (2 * 2 * 6),
    "3D": 1 * 2 * (5 + 5),
    "4A": 3 * YEARS * 2,
    "4B": 3 * YEARS * 2,
    "4C": 1 * YEARS * (10 + 10),
    "4D": 1 * YEARS * (6 + 6),
}
EXPECTED_TYPE = {
    **{s: "MT" for s in ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "4A", "4B"]},
    **{s: "MA" for s in ["3A", "3B", "3C", "3D", "4C", "4D"]},
}


# ----------------------------------------------------------------------------------------
# Helpers: read the raw YAML without the package
# ----------------------------------------------------------------------------------------


def load_raw(sid: str) -> dict:
    return yaml.safe_load((STUDIES / f"{sid}.yaml").read_text(encoding="utf-8"))


def phrase(word) -> str:
    """The text a word puts into the sentence (a mapping has phrase + item)."""
    return word["phrase"] if isinstance(word, dict) else str(word)


def item(word) -> str:
    return str(word.get("item", word["phrase"])) if isinstance(word, dict) else str(word)


def words(spec) -> list:
    """A word list as written: a list, or {range: [a, b]} (inclusive), or a criterion ref."""
    if isinstance(spec, dict) and "range" in spec:
        a, b = spec["range"]
        return list(range(a, b + 1))
    assert isinstance(spec, list), f"unexpected word-list spec {spec!r}"
    return spec


def all_phrases(groups: dict) -> list[str]:
    return [phrase(w) for g in groups.values() for w in words(g)]


def sentences(block: dict) -> set[str]:
    """Every sentence a block yields with [MASK] left in (TARGET/ATTRIB filled)."""
    out = set()
    fills = {k: all_phrases(block[k]) for k in ("TARGET", "ATTRIB") if k in block}
    keys = list(fills)
    for combo in itertools.product(*(fills[k] for k in keys)):
        s = block["query"]
        for k, v in zip(keys, combo):
            s = s.replace("{" + k + "}", v, 1)
        out.add(s)
    return out


@pytest.fixture(scope="module")
def caliskan(request):
    """Caliskan et al. (2017) lists from the offline mirror: {(study, category): [words]} (used only)."""
    path = REPO / "data" / "mirror" / "caliskan2017" / "wordlists.tsv"
    lists: dict = {}
    dropped: dict = {}
    with path.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            target = lists if r["status"] == "used" else dropped
            target.setdefault((r["study"], r["category"]), []).append(r["word"])
    return lists, dropped


# ----------------------------------------------------------------------------------------
# Every study
# ----------------------------------------------------------------------------------------


def test_all_fifteen_files_exist_and_ids_match():
    found = sorted(p.stem for p in STUDIES.glob("*.yaml"))
    assert set(IDS) <= set(found)
    for sid in IDS:
        raw = load_raw(sid)
        assert str(raw["id"]) == sid
        assert raw["title"] and raw["source"] and raw["notes"]
        assert "Bao (2024" in raw["source"]


@pytest.mark.parametrize("sid", IDS)
def test_common_keys(sid):
    raw = load_raw(sid)
    assert raw["score"]["method"] == "fmat"
    assert raw["analysis"]["name"] == ANALYSIS[sid]
    if sid[0] in "34":
        assert raw["analysis"]["options"]["sigma"] == 1.414
    for block in raw["queries"]:
        assert block["query"].count("[MASK]") == 1
        for k in ("TARGET", "ATTRIB"):
            assert (("{" + k + "}") in block["query"]) == (k in block), (sid, block["query"], k)


@pytest.mark.parametrize("sid", sorted(TABLE1_EXAMPLES))
def test_table1_example_sentence_is_generated(sid):
    raw = load_raw(sid)
    generated = set().union(*(sentences(b) for b in raw["queries"]))
    assert TABLE1_EXAMPLES[sid] in generated


# ----------------------------------------------------------------------------------------
# Study 1
# ----------------------------------------------------------------------------------------


def test_1a_queries_masks_and_articles(caliskan):
    lists, _ = caliskan
    occupations = lists[("WEFAT1", "Careers")]
    assert len(occupations) == 50
    raw = load_raw("1A")
    assert len(raw["queries"]) == 4
    for block, (paper, male, female) in zip(raw["queries"], PAPER_1A):
        assert block["MASK"] == {"Male": [male], "Female": [female]}
        (group,) = block["TARGET"].values()
        assert [item(w) for w in group] == occupations  # Caliskan's words, Caliskan's order
        phrases = [phrase(w) for w in group]
        if "a/an" in paper:
            # The article moves from the template into each phrase: the sentences are the same.
            assert block["query"] == paper.replace("a/an {TARGET}", "{TARGET}")
            expected = [("an " if w in AN_WORDS_1A else "a ") + w for w in occupations]
            assert phrases == expected
        else:  # Query 4: no article in the paper
            assert block["query"] == paper
            assert phrases == occupations


@pytest.mark.parametrize("sid", ["1B", "1C"])
def test_1b_1c_queries_and_masks(sid):
    raw = load_raw(sid)
    assert [b["query"] for b in raw["queries"]] == [p for p, _, _ in PAPER_1B]
    for block, (_, male, female) in zip(raw["queries"], PAPER_1B):
        assert block["MASK"] == {"Male": [male], "Female": [female]}
        assert len(block["TARGET"]) == 1


def test_1b_names_are_wefat2(caliskan):
    lists, _ = caliskan
    names = lists[("WEFAT2", "AndrogynousNames")]
    assert len(names) == 50 and "Jackie" in names
    for block in load_raw("1B")["queries"]:
        (group,) = block["TARGET"].values()
        assert [phrase(w) for w in group] == names


def test_1c_targets_come_from_the_criterion_table():
    for block in load_raw("1C")["queries"]:
        (group,) = block["TARGET"].values()
        assert group == {"criterion": "ssa_names_1c", "column": "item"}


@pytest.mark.parametrize("sid", ["1A", "1B", "1C"])
def test_study1_contrasts_and_criteria(sid):
    raw = load_raw(sid)
    assert raw["lpr"]["mask_pair"] is True  # log P(male) - log P(female), per item
    assert raw["lpr"].get("target_pair") is False  # items are listwise, not paired
    assert raw["reliability"]["item"] == "query"  # alpha among the four templates
    opts = raw["analysis"]["options"]
    crit = {"1A": "bls2021_occupations", "1B": "ssa_names_wefat2", "1C": "ssa_names_1c"}[sid]
    assert opts["criterion"]["table"] == crit and opts["criterion"]["column"] == "pct_male"
    assert opts["wefat"]["table"] == f"wefat_{sid}" and opts["wefat"]["column"] == "wefat_male"
    if sid == "1C":
        assert opts["criterion"]["logit_column"] == "logit_pct_male"


# ----------------------------------------------------------------------------------------
# Study 2
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("sid", sorted(CALISKAN_2))
def test_study2_queries_masks_targets(sid, caliskan):
    lists, dropped = caliskan
    weat, g1, g2, n = CALISKAN_2[sid]
    first, second = lists[(weat, g1)], lists[(weat, g2)]
    assert len(first) == len(second) == n  # the paper's 25 + 25, 32 + 32, 8 + 8
    raw = load_raw(sid)
    assert [b["query"] for b in raw["queries"]] == PAPER_2_QUERIES
    for block in raw["queries"]:
        groups = list(block["MASK"].values())
        assert len(groups) == 2
        # word j of the first group against word j of the second: like-dislike, notice-ignore
        assert list(zip(*groups)) == PAPER_2_PAIRS
        tgroups = list(block["TARGET"].values())
        assert [[phrase(w) for w in g] for g in tgroups] == [first, second]
    if sid == "2C":  # Caliskan dropped 18 + 18 of Greenwald's names: none may be used
        used = set(all_phrases(raw["queries"][0]["TARGET"]))
        for cat in (g1, g2):
            assert len(dropped[(weat, cat)]) == 18
            assert not used & set(dropped[(weat, cat)])
    if sid == "2D":
        assert "Billy" in first
    assert raw["lpr"]["mask_pair"] is True and raw["lpr"].get("target_pair") is False
    opts = raw["analysis"]["options"]
    assert opts["target_contrast"] == list(raw["queries"][0]["TARGET"])
    assert [tuple(v) for v in opts["relations"].values()] == PAPER_2_PAIRS


# ----------------------------------------------------------------------------------------
# Study 3
# ----------------------------------------------------------------------------------------


def test_3a_table7_pairs():
    raw = load_raw("3A")
    (block,) = raw["queries"]
    assert block["query"] == "Most [MASK] {ATTRIB}."
    assert block["MASK"] == {"Male": ["men", "fathers"], "Female": ["women", "mothers"]}
    career, family = block["ATTRIB"].values()
    assert list(zip(career, family)) == TABLE7_3A
    assert len(TABLE7_3A) == 9
    assert raw["lpr"] == {"mask_pair": False, "attrib_pair": True}


@pytest.mark.parametrize("sid,domain", [("3B", TABLE7_MATH), ("3C", TABLE7_SCIENCE)])
def test_3b_3c_items_by_form(sid, domain):
    raw = load_raw(sid)
    (block,) = raw["queries"]
    assert block["query"] == "Most [MASK] {ATTRIB}."
    assert block["MASK"] == {"Male": ["men", "boys"], "Female": ["women", "girls"]}
    assert len(domain) == len(TABLE7_ARTS) == 6
    groups = block["ATTRIB"]
    forms = raw["analysis"]["options"]["forms"]
    assert set(forms) == {"interest", "talent"}
    for form, stem in [("interest", "are interested in "), ("talent", "are good at ")]:
        focal, reference = forms[form]
        assert groups[focal] == [stem + w for w in domain]
        assert groups[reference] == [stem + w for w in TABLE7_ARTS]
    assert len(groups) == 4  # 6 + 6 items x 2 forms, nothing else
    assert raw["lpr"] == {"mask_pair": False, "attrib_pair": False}


def test_3d_table7_pairs():
    raw = load_raw("3D")
    (block,) = raw["queries"]
    assert block["query"] == "Most [MASK] people {ATTRIB}."
    assert block["MASK"] == {"Black": ["Black"], "Asian": ["Asian"]}
    masc, fem = block["ATTRIB"].values()
    assert list(zip(masc, fem)) == TABLE7_3D
    assert len(TABLE7_3D) == 5
    assert raw["lpr"] == {"mask_pair": False, "attrib_pair": True}


# ----------------------------------------------------------------------------------------
# Study 4
# ----------------------------------------------------------------------------------------


def _years(block) -> list:
    (group,) = block["MASK"].values()
    return words(group)


@pytest.mark.parametrize("sid,targets", [("4A", ["men", "women"]), ("4B", ["White people", "Asian people"])])
def test_4a_4b(sid, targets):
    raw = load_raw(sid)
    assert [b["query"] for b in raw["queries"]] == PAPER_4AB
    for block in raw["queries"]:
        assert _years(block) == list(range(1800, 2020)) and len(_years(block)) == 220
        assert [[phrase(w) for w in g] for g in block["TARGET"].values()] == [[t] for t in targets]
    assert raw["lpr"]["target_pair"] is True and raw["lpr"]["mask_pair"] is False


@pytest.mark.parametrize("sid,pairs", [("4C", PAPER_4C), ("4D", PAPER_4D)])
def test_4c_4d(sid, pairs):
    assert len(PAPER_4C) == 10 and len(PAPER_4D) == 6
    raw = load_raw(sid)
    (block,) = raw["queries"]
    assert block["query"] == PAPER_4CD
    assert _years(block) == list(range(1800, 2020))
    first, second = block["ATTRIB"].values()
    assert list(zip(first, second)) == pairs
    assert raw["lpr"]["attrib_pair"] is True and raw["lpr"]["mask_pair"] is False


# ----------------------------------------------------------------------------------------
# The loaded query table (fmat.study.load_study), when it exists
# ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def load_study():
    from fmat.study import load_study

    return load_study


@pytest.mark.parametrize("sid", sorted(EXPECTED_ROWS))
def test_loaded_query_table(sid, load_study):
    study = load_study(STUDIES / f"{sid}.yaml")
    q = study.queries
    assert len(q) == EXPECTED_ROWS[sid]
    assert q.attrs["type"] == EXPECTED_TYPE[sid]
    n_queries = len(load_raw(sid)["queries"])
    assert q["query"].nunique() == n_queries
    if sid in TABLE1_EXAMPLES:
        col = "T_word" if EXPECTED_TYPE[sid] == "MT" else "A_word"
        filled = {
            s.replace("{TARGET}", str(w)).replace("{ATTRIB}", str(w)) for s, w in zip(q["query"].astype(str), q[col].astype(str))
        }
        assert TABLE1_EXAMPLES[sid] in filled


def test_loaded_study2_mask_pairs(load_study):
    q = load_study(STUDIES / "2A.yaml").queries
    pairs = q.groupby("M_pair", observed=True)["M_word"].agg(lambda s: tuple(sorted(set(map(str, s)))))
    assert sorted(pairs.tolist()) == sorted(tuple(sorted(p)) for p in PAPER_2_PAIRS)


def test_loaded_4a_years(load_study):
    q = load_study(STUDIES / "4A.yaml").queries
    years = sorted({int(str(w)) for w in q["M_word"]})
    assert years == list(range(1800, 2020))


def test_loaded_1c_with_fake_criteria(load_study, tmp_path):
    import pandas as pd

    names = ["Jackie", "Jordan", "Kelly"]
    pd.DataFrame({"item": names, "pct_male": [40.0, 70.0, 20.0], "logit_pct_male": [-0.405, 0.847, -1.386]}).to_parquet(
        tmp_path / "ssa_names_1c.parquet"
    )
    study = load_study(STUDIES / "1C.yaml", criteria_dir=tmp_path)
    q = study.queries
    assert len(q) == 4 * 2 * len(names)
    assert sorted(set(map(str, q["T_word"]))) == names
    filled = {s.replace("{TARGET}", str(w)) for s, w in zip(q["query"].astype(str), q["T_word"].astype(str))}
    assert "The name of this [MASK] is Jackie." in filled


# ----------------------------------------------------------------------------------------
# Reliability: the alpha the paper reports, per side of the contrast
# ----------------------------------------------------------------------------------------

# (item, by, the split values the paper reports alpha for), typed from each Results section:
# 3A ".96/.90 for career/family items", 3B ".97/.94 for math interest/talent, .97/.96 for arts
# interest/talent", 3D "masculine/feminine", 4A "male/female conditions", 4B "White/Asian",
# 4C "individualism/collectivism", 4D "looseness/tightness". Group names are written as the
# conditions of config/paper_results.tsv so the reliability stage's rows join the paper's.
PAPER_ALPHA_SPLITS = {
    "3A": ("A_word", "ATTRIB", ["Career", "Family"]),
    "3B": ("A_word", "ATTRIB", ["MathInterest", "ArtsInterest", "MathTalent", "ArtsTalent"]),
    "3C": ("A_word", "ATTRIB", ["ScienceInterest", "ArtsInterest", "ScienceTalent", "ArtsTalent"]),
    "3D": ("A_word", "ATTRIB", ["Masculine", "Feminine"]),
    "4A": ("query", "TARGET", ["Male", "Female"]),
    "4B": ("query", "TARGET", ["White", "Asian"]),
    "4C": ("A_word", "ATTRIB", ["Individualism", "Collectivism"]),
    "4D": ("A_word", "ATTRIB", ["Looseness", "Tightness"]),
}


@pytest.mark.parametrize("sid", sorted(PAPER_ALPHA_SPLITS))
def test_alpha_splits_are_the_papers(sid):
    item_col, by, groups = PAPER_ALPHA_SPLITS[sid]
    raw = load_raw(sid)
    rel = raw["reliability"]
    assert rel["item"] == item_col and rel["by"] == [by]
    for block in raw["queries"]:
        assert list(block[by]) == groups
    # Alpha per side needs the sides unpaired: the study's own LPR if it pairs nothing,
    # else the reliability block's own summary options.
    lpr = rel.get("lpr", raw["lpr"])
    assert lpr.get("mask_pair") is False
    assert lpr.get({"ATTRIB": "attrib_pair", "TARGET": "target_pair"}[by]) is False


@pytest.mark.parametrize("sid", ["1A", "1B", "1C"])
def test_study1_alpha_is_among_templates_per_model(sid):
    assert load_raw(sid)["reliability"] == {"item": "query", "by": ["model"]}


@pytest.mark.parametrize("sid", sorted(CALISKAN_2))
def test_study2_alpha_is_among_words_per_category(sid):
    # "the 25 items within each target category were treated as the unit of reliability
    # analysis", for each perceiver type and attribute relation type
    raw = load_raw(sid)
    rel = raw["reliability"]
    assert rel["item"] == "T_word" and rel["by"] == ["M_word", "query", "TARGET"]
    # conditions relation:perceiver:category in the paper's words, as the analysis names them
    opts = raw["analysis"]["options"]
    assert rel["names"] == {
        **{f"{a} - {b}": name for name, (a, b) in opts["relations"].items()},
        **{q: name for name, q in opts["perceivers"].items()},
    }


@pytest.mark.parametrize("sid", IDS)
def test_study_file_validates(sid):
    from fmat.study import validate_study_file

    assert validate_study_file(STUDIES / f"{sid}.yaml") == []


def test_loaded_1a_item_keys_join_articles_and_bare_words(load_study, caliskan):
    lists, _ = caliskan
    study = load_study(STUDIES / "1A.yaml")
    items = study.items[study.items["slot"] == "TARGET"]
    key = dict(zip(items["word"].astype(str), items["item"].astype(str)))
    assert key["a nurse"] == "nurse" and key["an engineer"] == "engineer" and key["nurse"] == "nurse"
    # every T_word of every query maps to one of Caliskan's 50 occupations, 50 per query
    q = study.queries
    mapped = q.assign(item=q["T_word"].astype(str).map(key))
    assert mapped["item"].notna().all()
    per_query = mapped.groupby("query", observed=True)["item"].agg(lambda s: sorted(set(s)))
    assert all(v == sorted(lists[("WEFAT1", "Careers")]) for v in per_query)
