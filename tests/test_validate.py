"""Bad input (issue 22): every class is rejected with exit 2, the file and field named, before
any model loads (no model is given a reachable path: a model load would fail differently)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from fmat.cli import main

HEAD = "id: {sid}\ntitle: t\nqueries:\n"
BLOCK = '  - query: "{query}"\n    MASK: {{Male: {male}, Female: {female}}}\n    TARGET: {{Occ: {occ}}}\n'


def study(
    tmp_path,
    sid="S",
    query="The [MASK] works as a {TARGET}.",
    male="[man, he]",
    female="[woman, she]",
    occ="[nurse, engineer]",
    extra="",
) -> Path:
    extra = "lpr: {target_pair: false}\n" + extra
    p = tmp_path / f"{sid}.yaml"
    p.write_text(HEAD.format(sid=sid) + BLOCK.format(query=query, male=male, female=female, occ=occ) + extra, encoding="utf-8")
    return p


def fmat(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr().err


def rejected(path, capsys, *fields, check=True):
    for args in ([["query", "--study", str(path), "--check"]] if check else []) + [
        ["study", str(path), "-m", "no/such-model", "-o", str(Path(path).parent / "out")]
    ]:
        rc, err = fmat(args, capsys)
        assert rc == 2, err
        assert "unexpected error" not in err
        assert str(path) in err, err
        for f in fields:
            assert f in err, (f, err)
    return err


# ---------------------------------------------------------------- class 1: accepted, then wrong numbers


def test_shared_contrast_word(tmp_path, capsys):
    err = rejected(study(tmp_path, male="[man, he]", female="[woman, he]"), capsys, "MASK", "'he'")
    assert "more than one MASK group" in err


def test_shared_target_phrase(tmp_path, capsys):
    p = tmp_path / "S.yaml"
    p.write_text(
        HEAD.format(sid="S") + '  - query: "The [MASK] is {TARGET}."\n    MASK: {Male: [he], '
        "Female: [she]}\n    TARGET: {A: [kind, tall], B: [warm, kind]}\n",
        encoding="utf-8",
    )
    rejected(p, capsys, "TARGET", "'kind'")


@pytest.mark.parametrize(
    "query,shown",
    [
        ("The [MASK] works as a {target}.", "write {TARGET}"),
        ("The [MASK] works as a {TARGET} {ATRIB}.", "did you mean {ATTRIB}"),
        ("The [MASK] works as a {TARGET} }.", "unmatched brace"),
    ],
)
def test_unfilled_placeholder(tmp_path, capsys, query, shown):
    rejected(study(tmp_path, query=query), capsys, "query", shown)


def test_placeholder_inside_word(tmp_path, capsys):
    rejected(study(tmp_path, occ="['{TARGET}', nurse]"), capsys, "TARGET", "brace")


@pytest.mark.parametrize("word", ["010", "0x1F", "1_000", ".inf", "1e3"])
def test_yaml_numbers_stay_as_written(tmp_path, word):
    from fmat.study import load_study

    s = load_study(study(tmp_path, occ=f"[{word}, nurse]"))
    assert word in set(s.queries["T_word"].astype(str))


@pytest.mark.parametrize(
    "word,code", [("nur\u200bse", "U+200B"), ("nurse\u00a0x", "U+00A0"), ("n\tx", "U+0009"), ("\u0441at", "CYRILLIC")]
)
def test_invisible_and_lookalike_characters(tmp_path, capsys, word, code):
    import json

    rejected(study(tmp_path, occ=json.dumps([word, "nurse"])), capsys, "TARGET", code)


@pytest.mark.parametrize("left, right", [("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u00ab", "\u00bb"), ("\u2018", "\u2019")])
def test_a_template_in_typographic_quotes_is_refused(tmp_path, capsys, left, right):
    """Issue 42: quotes a word processor typed around a template were scored as part of the
    sentence. The file is refused before any model loads, with the sentence to write instead."""
    path = tmp_path / "S.yaml"
    block = BLOCK.replace('"{query}"', "{query}").format(
        query=f"{left}The [MASK] works as a {{TARGET}}.{right}", male="[man]", female="[woman]", occ="[nurse]"
    )
    path.write_text(HEAD.format(sid="S") + block + "lpr: {target_pair: false}\n", encoding="utf-8")
    err = rejected(path, capsys, "queries[0].query", f"wrapped in the quotation marks {left}...{right}")
    assert 'query: "The [MASK] works as a {TARGET}."' in err


def test_quotes_inside_a_template_stay(tmp_path, capsys):
    rc, err = fmat(
        ["query", "--study", str(study(tmp_path, query="He said \\u201c[MASK]\\u201d about the {TARGET}.")), "--check"], capsys
    )
    assert rc == 0, err


def test_a_tab_in_yaml_is_named_as_a_tab(tmp_path, capsys):
    """Issue 42: a tab in a study file was reported as "found character that cannot start any token"."""
    path = study(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("    MASK:", "\tMASK:"), encoding="utf-8")
    err = rejected(path, capsys, "line 5: a tab on line 5 (column 1)", "replace the tab by spaces")
    assert "cannot start any token" not in err


@pytest.mark.parametrize(
    "study_id, old, new, field, said",
    [
        ("X1", "mask_contrast: [Male, Female]", "mask_contrast: [Male, Femal]", "analysis.options.mask_contrast[1]",
         "'Femal' is not a group of the study's MASK (did you mean 'Female'?)"),
        ("X1", "attrib_contrast: [Agentic, Communal]", "attrib_contrast: [Agentic, Comunal]",
         "analysis.options.attrib_contrast[1]", "did you mean 'Communal'?"),
        ("3A", "[[men, women], [fathers, mothers]]", "[[men, women], [fathers, mother]]",
         "analysis.options.mask_wordings[1][1]", "'mother' is not a word of the study's MASK (did you mean 'mothers'?)"),
        ("2A", "target_contrast: [Flowers, Insects]", "target_contrast: [Flower, Insects]",
         "analysis.options.target_contrast[0]", "did you mean 'Flowers'?"),
        ("3B", "interest: [MathInterest, ArtsInterest]", "interest: [MathInterest, ArtInterest]",
         "analysis.options.forms.interest[1]", "did you mean 'ArtsInterest'?"),
    ],
)  # fmt: skip
def test_analysis_options_name_the_studys_groups_before_any_model_loads(tmp_path, capsys, study_id, old, new, field, said):
    """Issue 42: a typo in analysis.options.mask_contrast passed --check and `snakemake -n` and
    failed only after every model was scored. Now every check that reads the study file names it,
    with the nearest group or word the design has."""
    repo = Path(__file__).resolve().parents[1]
    text = (repo / "config" / "studies" / f"{study_id}.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{study_id}.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    rejected(path, capsys, field, said)


def test_leading_space(tmp_path, capsys):
    rejected(study(tmp_path, occ="[' nurse', engineer]"), capsys, "TARGET", "leading or trailing")


def test_very_long_word(tmp_path, capsys):
    rejected(study(tmp_path, occ="[" + "x" * 100_000 + ", nurse]"), capsys, "TARGET", "characters long")


def test_unknown_analysis_and_options(tmp_path):
    """Which analyses exist is the replication's business: the workflow's study check (run by the
    configuration check before any job) refuses an unknown name or option, naming the file."""
    from fmat.errors import InputError
    from fmat_replication.config import check_study

    for extra, fields in (
        ("analysis: {name: no_such}\n", ("analysis.name", "attitude_weat")),
        ("analysis: {name: change_over_time, options: {bogus: 1}}\n", ("analysis.options", "'bogus'")),
    ):
        path = study(tmp_path, extra=extra)
        with pytest.raises(InputError) as err:
            check_study(path)
        assert str(path) in str(err.value) and all(f in str(err.value) for f in fields), err.value


def test_the_library_refuses_an_analysis_name_the_workflow_does_not_know(tmp_path, capsys):
    """fmat (the library) knows the analyses it registers (fmat.analyses): fmat query --check and fmat study
    refuse a misspelt name, with the nearest one and the list, and a block of the wrong shape."""
    err = rejected(
        study(tmp_path, extra="analysis: {name: factual_wefta}\n"),
        capsys,
        "analysis.name",
        "did you mean 'factual_wefat'",
        "stereotype_pairs",
    )
    assert "unknown analysis 'factual_wefta'" in err
    rejected(study(tmp_path, extra="analysis: {name: my_own}\n"), capsys, "analysis.name", "attitude_weat")
    # the options are checked against the analysis' function (the library runs it): a missing one is named
    rejected(study(tmp_path, extra="analysis: {name: factual_wefat}\n"), capsys, "analysis.options", "'criterion'")
    # a known analysis that the design cannot feed (no ATTRIB slot) is refused, naming those that fit
    wrong = "analysis: {name: stereotype_pairs, options: {inference: sentence}}\n"
    rejected(
        study(tmp_path, extra=wrong), capsys, "analysis.name", "'ATTRIB'", "the analyses that fit this design", "factual_names"
    )
    assert fmat(["query", "--study", str(study(tmp_path)), "--check"], capsys)[0] == 0
    rejected(study(tmp_path, extra="analysis: {name: 3, options: []}\n"), capsys, "analysis")


# ---------------------------------------------------------------- class 2: escaped errors


@pytest.mark.parametrize(
    "data,shown",
    [
        ("id: S\ntitle: caf\u00e9\nqueries: []\n".encode("latin-1"), "byte 16"),
        ("id: S\n".encode("utf-16"), "UTF-16"),
        (b"\x00\x01\x02PK\x03\x04", "binary"),
    ],
)
def test_not_utf8(tmp_path, capsys, data, shown):
    p = tmp_path / "S.yaml"
    p.write_bytes(data)
    rejected(p, capsys, shown)


def test_directory_and_deep_nesting(tmp_path, capsys):
    d = tmp_path / "S.yaml"
    d.mkdir()
    rc, err = fmat(["query", "--study", str(d), "--check"], capsys)
    assert rc == 2 and "folder" in err and "unexpected" not in err
    p = tmp_path / "T.yaml"
    p.write_text("id: T\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    rejected(p, capsys, "nested too deeply")


@pytest.mark.parametrize(
    "name,data,shown",
    [
        ("q.xlsx", b"PK\x03\x04", ".xlsx"),
        ("q.csv.gz", b"\x1f\x8b", ".gz"),
        ("q.parquet", b"PAR1\x00\x00", "truncated"),
        ("q.parquet", b"query,M_word\n", "not a parquet"),
    ],
)
def test_table_format_by_extension_and_content(tmp_path, capsys, name, data, shown):
    p = tmp_path / name
    p.write_bytes(data)
    rc, err = fmat(["run", str(p), "-m", "no/such-model"], capsys)
    assert rc == 2 and str(p) in err and shown in err and "unexpected" not in err, err


def test_write_xlsx_is_an_error(tmp_path, capsys):
    out = tmp_path / "q.xlsx"
    rc, err = fmat(["query", "[MASK] is here.", "--mask", "A=he", "--mask", "B=she", "-o", str(out)], capsys)
    assert rc == 2 and ".xlsx" in err and not out.exists()


@pytest.mark.parametrize("cell", ["NA", ""])
def test_r_na_in_word_column(tmp_path, capsys, cell):
    p = tmp_path / "q.csv"
    p.write_text(
        f'"","query","MASK","M_pair","M_word"\n"1","[MASK] is here.","A","1","he"\n"2","[MASK] is here.","B","1",{cell}\n',
        encoding="utf-8",
    )
    rc, err = fmat(["run", str(p), "-m", "no/such-model"], capsys)
    assert rc == 2 and str(p) in err and "M_word" in err and "row(s) 2" in err, err


# ---------------------------------------------------------------- class 3: hangs and blow-ups


def test_range_cap(tmp_path, capsys):
    p = tmp_path / "S.yaml"
    p.write_text(
        HEAD.format(sid="S") + '  - query: "[MASK] was born in {TARGET}."\n    MASK: {A: [he], '
        "B: [she]}\n    TARGET: {Year: {range: [0, 200000000]}}\n"
    )
    rejected(p, capsys, "TARGET.Year", "limit")


def test_alias_bomb(tmp_path, capsys):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    p = tmp_path / "S.yaml"
    p.write_text("\n".join(lines) + "\n")
    rejected(p, capsys, "expands to more than")


def _big_study(tmp_path, n: int) -> Path:
    words = [f"w{i}" for i in range(n)]
    p = tmp_path / f"S{n}" / "S.yaml"
    p.parent.mkdir()
    p.write_text(
        HEAD.format(sid="S")
        + '  - query: "[MASK] is here."\n    MASK:\n      A: ['
        + ", ".join(words[: n // 2])
        + "]\n      B: ["
        + ", ".join(words[n // 2 :])
        + "]\n"
    )
    return p


def test_large_valid_study_check_is_linear(tmp_path, capsys):
    """A 200,000-word study passes the check, and the check grows linearly with the words: the
    times of 20,000 and 200,000 words in one run (quadratic work would take ~100x longer; the
    fixed start-up makes a linear pass under 10x). Its absolute time is benchmarks/bench_validate.py's."""
    took = {}
    for n in (20_000, 200_000):
        p = _big_study(tmp_path, n)
        t = time.perf_counter()
        rc, err = fmat(["query", "--study", str(p), "--check"], capsys)
        took[n] = time.perf_counter() - t
        assert rc == 0, err
    print(f"study check: 20,000 words {took[20_000]:.2f} s, 200,000 words {took[200_000]:.2f} s")
    assert took[200_000] / took[20_000] < 30, took


# ---------------------------------------------------------------- class 4: found only after the model loads


@pytest.mark.parametrize(
    "rows,shown",
    [
        ([("[MASK] is here [MASK].", "A", "1", "he"), ("[MASK] is here [MASK].", "B", "1", "she")], "2 [MASK]"),
        ([("It is here.", "A", "1", "he"), ("It is here.", "B", "1", "she")], "0 [MASK]"),
        ([("[MASK] is here.", "A", "1", "he"), ("[MASK] is here.", "A", "1", "he")], "repeat"),
        ([("[MASK] is here.", "A", "1", "he"), ("[MASK] is here.", "A", "1", "him")], "M_pair"),
        ([("[MASK] is {TARGET}.", "A", "1", "he"), ("[MASK] is {TARGET}.", "B", "1", "she")], "unfilled"),
        ([("[MASK] is here.", "A", "1", "[MASK]"), ("[MASK] is here.", "B", "1", "she")], "contains [MASK]"),
    ],
)
def test_query_table_checked_before_model(tmp_path, capsys, rows, shown):
    p = tmp_path / "q.csv"
    pd.DataFrame(rows, columns=["query", "MASK", "M_pair", "M_word"]).to_csv(p, index=False)
    rc, err = fmat(["run", str(p), "-m", "no/such-model"], capsys)
    assert rc == 2 and str(p) in err and shown in err and "unexpected" not in err, err


def test_single_mask_group_refused_by_fmat_run_before_the_model(tmp_path, capsys):
    p = tmp_path / "q.csv"
    pd.DataFrame(
        [("[MASK] is here.", "A", "1", "he"), ("[MASK] is there.", "A", "1", "he")], columns=["query", "MASK", "M_pair", "M_word"]
    ).to_csv(p, index=False)
    rc, err = fmat(["run", str(p), "-m", "no/such-model"], capsys)
    assert rc == 2 and f"{p}: MASK" in err and "--single-group" in err and "unexpected" not in err, err
    # with --single-group the table passes the check and the run goes on to the (missing) model
    rc, err = fmat(["run", str(p), "-m", "no/such-model", "--single-group"], capsys)
    assert rc == 2 and "MASK group" not in err and "no/such-model" in err, err


# ---------------------------------------------------------------- class 5: messages


def test_yaml_error_names_the_path(tmp_path, capsys):
    p = tmp_path / "S.yaml"
    p.write_text("id: S\ntitle: [unclosed\n")
    err = rejected(p, capsys, "not valid YAML")
    assert "<unicode string>" not in err


# ---------------------------------------------------------------- class 6: permissions


def test_outputs_follow_the_umask(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        out = tmp_path / "q.csv"
        assert main(["query", "[MASK] is here.", "--mask", "A=he", "--mask", "B=she", "-o", str(out)]) == 0
        assert out.stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        out2 = tmp_path / "q.parquet"
        assert main(["query", "[MASK] is here.", "--mask", "A=he", "--mask", "B=she", "-o", str(out2)]) == 0
        assert out2.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


@pytest.mark.parametrize(
    "config,shown",
    [
        ({"device": "gpu"}, "cuda:N or mps"),
        ({"studies": ["3A", "3A"]}, "'3A' is listed more than once"),
    ],
)
def test_config_messages_in_words(config, shown):
    from fmat.errors import InputError
    from fmat_replication.config import validate_config

    base = {"models": ["bert-base-uncased"], "studies": ["3A"]}
    with pytest.raises(InputError) as err:
        validate_config({**base, **config}, load_studies=False)
    assert shown in str(err.value) and "^(" not in str(err.value)


def test_study_loader_parses_with_libyaml():
    """The speed of the check above comes from libyaml's parser (PyYAML's wheels ship it): the
    project's loader is built on CSafeLoader, and every study-file read goes through it."""
    import yaml

    from fmat import validate

    assert yaml.__with_libyaml__
    assert issubclass(validate._make_loader(), yaml.CSafeLoader)
    data = validate.load_yaml("words: [010, 1e3, x]\n", "S.yaml")
    assert [validate.as_written(w) for w in data["words"]] == ["010", "1e3", "x"]


def test_one_translator_of_schema_errors_serves_study_files_and_configs():
    """fmat.validate.schema_problems words every JSON-Schema error for both kinds of file: the same
    error reads the same in a study file and in a workflow config."""
    import jsonschema

    from fmat import validate

    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["a"],
        "properties": {
            "a": {"type": "boolean"},
            "b": {"type": "string", "pattern": "^x", "description": "text starting with x"},
            "c": {
                "oneOf": [
                    {"type": "string", "description": "a name"},
                    {"type": "object", "properties": {"n": {"type": "integer"}}},
                ]
            },
        },
    }
    v = jsonschema.Draft202012Validator(schema)
    got = dict(
        (".".join(map(str, p)), m)
        for p, m in validate.schema_problems(v, {"a": "yes please", "b": "y", "zz": 1, "c": {"n": "one"}})
    )
    assert got["a"] == "'yes please' is text, expected boolean"
    assert got["b"] == "'y' is not allowed here; allowed: text starting with x"
    assert got["zz"] == "unknown key 'zz'; allowed keys here: a, b, c"
    assert got["c.n"] == "'one' is text, expected integer"  # the mapping form's own error
    got = dict((".".join(map(str, p)), m) for p, m in validate.schema_problems(v, {"a": True, "c": 3}))
    assert got == {"c": "3 is an integer; expected a name or a mapping"}
    assert validate.schema_problems(v, {}) == [(["a"], "required key 'a' is missing")]
    assert "quote the word" in validate.schema_problems(v, {"a": True, "b": True})[0][1]
