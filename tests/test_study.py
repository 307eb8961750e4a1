"""fmat.study: study-file schema, loading, word-list forms, defaults and error locations."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from fmat.design import query, query_bind
from fmat.errors import InputError
from fmat.study import LPR_DEFAULTS, SCORE_DEFAULTS, Study, load_study, schema, validate_study_file

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]

BASE = """\
id: T1
title: Test study
queries:
  - query: "The [MASK] is {TARGET}."
    MASK: {Male: [man], Female: [woman]}
    TARGET: {Occ: [nurse, engineer]}
"""


def write(tmp_path: Path, text: str, name: str = "T1") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_schema_is_valid_draft_2020_12_and_closed():
    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"].endswith("2020-12/schema")

    def closed(node, path="$"):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, path
            for k, v in node.items():
                closed(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                closed(v, f"{path}[{i}]")

    closed(s)


def test_complete_example_and_defaults():
    study = load_study(DATA / "studies" / "EX1.yaml")
    assert isinstance(study, Study)
    assert (study.id, study.title, study.family, study.type) == ("EX1", "Gender-occupation example", "factual", "MT")
    expected = query_bind(
        query(
            "The [MASK] works as {TARGET}.",
            MASK={"Male": ["man"], "Female": ["woman"]},
            TARGET={"Occupation": ["a nurse", "an engineer"]},
        ),
        query(
            ["[MASK] is {TARGET}.", "[MASK] became {TARGET}."],
            MASK={"Male": ["He"], "Female": ["She"]},
            TARGET={"Occupation": ["nurse", "engineer"]},
        ),
    )
    pd.testing.assert_frame_equal(study.queries, expected)
    assert study.queries["qid"].astype(str).unique().tolist() == ["1", "2", "3"]
    items = study.items.set_index(["slot", "word"])["item"]
    assert items[("TARGET", "a nurse")] == "nurse" and items[("TARGET", "nurse")] == "nurse"
    assert items[("MASK", "He")] == "He"
    assert list(study.items.columns) == ["slot", "word", "item"]
    assert study.lpr == {"mask_pair": True, "target_pair": False, "attrib_pair": True}
    assert study.reliability == {"item": "query", "by": ["model"], "lpr": study.lpr}
    assert study.score == SCORE_DEFAULTS
    assert study.analysis == {
        "name": "factual_wefat",
        "options": {
            "criterion": {"table": "bls2021_occupations", "item": "item", "column": "pct_male"},
            "standardize_within": ["model", "query"],
        },
    }
    assert study.raw["id"] == "EX1" and study.path.name == "EX1.yaml"


def test_minimal_file_gets_documented_defaults(tmp_path):
    study = load_study(write(tmp_path, BASE + "lpr: {target_pair: false}\n"))
    assert study.family is None and study.source == "" and study.notes == ""
    assert study.lpr == {**LPR_DEFAULTS, "target_pair": False}
    assert study.reliability == {"item": "query", "by": [], "lpr": study.lpr}
    assert study.score == {"method": "fmat", "add_tokens": False, "na_out": True}
    assert study.analysis == {"name": None, "options": {}}
    assert "qid" not in study.queries.columns  # one block, one query
    # every documented default in the schema matches the loader's
    props = schema()["properties"]
    assert {k: v["default"] for k, v in props["score"]["properties"].items()} == SCORE_DEFAULTS
    assert {k: v["default"] for k, v in schema()["$defs"]["lpr"]["properties"].items()} == LPR_DEFAULTS


def test_range_numbers_and_phrases(tmp_path):
    path = write(
        tmp_path,
        """\
        id: T1
        title: Years
        queries:
          - query: "{TARGET} entered the workforce in [MASK]."
            MASK: {Year: {range: [1998, 2001]}}
            TARGET: {Women: [{phrase: Most women, item: women}, 7]}
        lpr: {mask_pair: false, target_pair: false}
        """,
    )
    study = load_study(path)
    assert study.queries["M_word"].cat.categories.tolist() == ["1998", "1999", "2000", "2001"]
    assert study.queries["T_word"].cat.categories.tolist() == ["Most women", "7"]
    items = dict(zip(study.items["word"], study.items["item"]))
    assert items["Most women"] == "women" and items["7"] == "7" and items["1999"] == "1999"


def test_criterion_word_lists(tmp_path):
    crit = tmp_path / "criteria"
    crit.mkdir()
    pd.DataFrame({"item": ["Mary", "John", "Anna"], "pct_male": [1.0, 99.0, 2.0]}).to_parquet(crit / "names.parquet")
    path = write(
        tmp_path,
        """\
        id: T1
        title: Names
        queries:
          - query: "[MASK] name is {TARGET}."
            MASK: {Male: [His], Female: [Her]}
            TARGET: {Name: {criterion: names, column: item}}
        lpr: {target_pair: false}
        """,
    )
    study = load_study(path, criteria_dir=crit)
    assert study.queries["T_word"].cat.categories.tolist() == ["Mary", "John", "Anna"]
    with pytest.raises(InputError, match="no criteria folder") as err:
        load_study(path)
    assert "queries[0].TARGET.Name" in str(err.value)
    with pytest.raises(InputError, match="does not exist") as err:
        load_study(path, criteria_dir=tmp_path / "elsewhere")
    assert "queries[0].TARGET.Name" in str(err.value)
    path.write_text(path.read_text().replace("column: item", "column: nope"))
    with pytest.raises(InputError, match="no column 'nope'.*item, pct_male"):
        load_study(path, criteria_dir=crit)
    # validation without criteria checks the rest of the file
    assert validate_study_file(path) == []


@pytest.mark.parametrize(
    "extra, where, allowed",
    [
        ("colour: red\n", "T1.yaml: colour: unknown key 'colour'", "allowed keys here: id, title, family"),
        (
            "lpr: {mask_pairs: true}\n",
            "lpr.mask_pairs: unknown key 'mask_pairs'",
            "allowed keys here: mask_pair, target_pair, attrib_pair",
        ),
        ("score: {method: fmat, batch: 3}\n", "score.batch: unknown key 'batch'", "method, add_tokens, na_out"),
        ("reliability: {item: query, split: [model]}\n", "reliability.split: unknown key 'split'", "item, by, lpr"),
    ],
)
def test_unknown_keys_are_named_with_allowed_keys(tmp_path, extra, where, allowed):
    path = write(tmp_path, BASE + extra)
    with pytest.raises(InputError) as err:
        load_study(path)
    assert where in str(err.value) and allowed in str(err.value)


def test_unknown_key_in_block_and_word(tmp_path):
    text = BASE.replace(
        "    TARGET: {Occ: [nurse, engineer]}", "    TARGET: {Occ: [{phrase: a nurse, key: nurse}, engineer]}\n    MASKS: {}"
    )
    problems = validate_study_file(write(tmp_path, text))
    joined = "\n".join(problems)
    assert "queries[0].MASKS: unknown key 'MASKS'; allowed keys here: query, MASK, TARGET, ATTRIB" in joined
    assert "queries[0].TARGET.Occ[0].key: unknown key 'key'; allowed keys here: phrase, item" in joined
    assert len(problems) == 2


@pytest.mark.parametrize(
    "text, match",
    [
        (BASE.replace("id: T1", "id: OTHER"), "T1.yaml: id: id 'OTHER' differs from the file name stem 'T1'"),
        (BASE.replace("title: Test study\n", ""), "T1.yaml: title: required key 'title' is missing"),
        (BASE + "lpr: {mask_pair: yes please}\n", "lpr.mask_pair: 'yes please' is text, expected boolean"),
        (BASE + "score: {method: magic}\n", "score.method: 'magic' is not one of"),
        (BASE.replace("[nurse, engineer]", "{range: [3, 1]}"), "queries[0].TARGET.Occ: range [3, 1] is empty"),
        (BASE.replace("[nurse, engineer]", "{range: [1, 2], step: 2}"), "queries[0].TARGET.Occ.step: unknown key 'step'"),
        (BASE.replace("[nurse, engineer]", "[nurse, nurse]"), "queries[0].TARGET.Occ: group 'Occ' lists 'nurse' more than once"),
        (
            BASE.replace("Female: [woman]", "Female: [woman, girl]"),
            "queries[0].MASK: MASK groups have unequal numbers of words (Male has 1, Female has 2)",
        ),
        (BASE.replace("is {TARGET}", "is here"), "queries[0].query: TARGET groups are given but query"),
        (BASE.replace("The [MASK]", "The"), "queries[0].query: query 'The is {TARGET}.' has no [MASK]"),
        (BASE.replace("[nurse, engineer]", "[nurse, yes]"), "queries[0].TARGET.Occ[1]: True is not valid here; expected a word"),
        (BASE.replace("Occ: [nurse, engineer]", "Occ: []"), "queries[0].TARGET.Occ: [] should be non-empty"),
        (
            BASE + "lpr: {target_pair: true}\n",
            "lpr.target_pair: target_pair is on but query 'The [MASK] is {TARGET}.' has 1 TARGET group",
        ),
        (
            BASE.replace("{Male: [man], Female: [woman]}", "{Male: [man]}") + "lpr: {target_pair: false}\n",
            "lpr.mask_pair: mask_pair is on but query",
        ),
        (
            BASE + "lpr: {target_pair: false}\nreliability: {lpr: {target_pair: true}}\n",
            "reliability.lpr.target_pair: target_pair is on",
        ),
        (
            BASE + "lpr: {target_pair: false}\nreliability: {item: A_word}\n",
            "reliability.item: reliability item 'A_word' but the design (MT) has no ATTRIB",
        ),
        (BASE + "lpr: {target_pair: false}\nreliability: {by: [colour]}\n", "reliability.by: reliability.by names 'colour'"),
        (
            BASE + '  - query: "[MASK] x."\n    MASK: {A: [a], B: [b]}\nlpr: {target_pair: false}\n',
            "queries: query blocks have different types (queries[0] is MT, queries[1] is M)",
        ),
        (
            BASE + '  - query: "The [MASK] is {TARGET}."\n    MASK: {Male: [man], Female: [woman]}\n'
            "    TARGET: {Occ: [nurse]}\nlpr: {target_pair: false}\n",
            "rows appear in more than one block",
        ),
        (
            BASE + '  - query: "A [MASK] is {TARGET}."\n    MASK: {Male: [man], Female: [woman]}\n'
            "    TARGET: {Occ: [{phrase: nurse, item: nurses}]}\nlpr: {target_pair: false}\n",
            "TARGET phrase 'nurse' has different item keys",
        ),
        (BASE.replace("TARGET: {Occ:", "TARGET: {Occ: [a], Occ:"), "key 'Occ' appears twice"),
        ("id: T1\ntitle: [unclosed\n", "not valid YAML"),
        ("- just a list\n", "must be a mapping"),
    ],
)
def test_errors_name_file_and_field(tmp_path, text, match):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_study(path)
    assert match in str(err.value), str(err.value)
    assert str(path) in str(err.value)
    problems = validate_study_file(path)
    assert problems and any(match in p for p in problems)


def test_validate_lists_all_schema_problems(tmp_path):
    path = write(tmp_path, BASE + "colour: red\nscore: {method: magic}\n")
    problems = validate_study_file(path)
    assert len(problems) == 2
    assert validate_study_file(tmp_path / "missing.yaml")[0].startswith("study file not found")
    with pytest.raises(InputError, match="and 1 more problem"):
        load_study(path)


def test_loader_imports_no_torch():
    code = (
        "import sys; from fmat.study import load_study; "
        f"load_study({str(DATA / 'studies' / 'EX1.yaml')!r}); "
        "import fmat.lpr, fmat.design; assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_schema_file_is_packaged():
    import fmat

    assert (Path(fmat.__file__).parent / "schemas" / "study.schema.json").exists()
    json.loads((Path(fmat.__file__).parent / "schemas" / "study.schema.json").read_text())


def test_repository_study_files_validate():
    """The project's own study files (config/studies) pass the schema and the semantic checks."""
    files = sorted((REPO / "config" / "studies").glob("*.yaml"))
    if not files:
        pytest.skip("no study files yet")
    problems = {f.name: validate_study_file(f) for f in files}
    assert {k: v for k, v in problems.items() if v} == {}


def test_docs_example_is_the_tested_file():
    """docs/study-files.md shows tests/data/studies/EX1.yaml verbatim (minus its first comment)."""
    doc = (REPO / "docs" / "study-files.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    text = (DATA / "studies" / "EX1.yaml").read_text()
    assert block == text.split("\n", 1)[1]
