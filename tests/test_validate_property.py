"""Property test (issue 22): random mutations of a valid study file never crash, and never
pass with an unfilled placeholder or a word shared by two groups of a contrast."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fmat.errors import InputError
from fmat.study import load_study

BASE = {
    "query": "The [MASK] works as a {TARGET}.",
    "Male": ["man", "he"],
    "Female": ["woman", "she"],
    "Occ": ["nurse", "engineer"],
}
PIECES = [
    "he",
    "man",
    "{target}",
    "{ATRIB}",
    "{TARGET}",
    "[MASK]",
    "010",
    "0x1F",
    ".inf",
    "\u200b",
    " ",
    "\u0441",
    "\n",
    "yes",
    "~",
    "*a",
    "&a x",
    "{",
    "}",
    "'",
    '"',
    ":",
    "#",
    "-",
    "\t",
    "é",
    "",
]

text = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), min_size=1, max_size=4).map("".join)


def _yaml_list(words):
    return "[" + ", ".join(words) + "]"


@st.composite
def mutated(draw):
    d = {k: list(v) if isinstance(v, list) else v for k, v in BASE.items()}
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(list(d)))
        if key == "query":
            d["query"] = draw(
                st.sampled_from([d["query"] + draw(text), draw(text) + d["query"], d["query"].replace("{TARGET}", draw(text))])
            )
        else:
            i = draw(st.integers(0, len(d[key]) - 1))
            d[key][i] = draw(st.sampled_from([draw(text), d[key][i] + draw(text)]))
    return d


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated())
def test_mutations_never_crash_or_pass_wrongly(tmp_path, d):
    p = tmp_path / "S.yaml"
    p.write_text(
        f'id: S\ntitle: t\nlpr: {{target_pair: false}}\nqueries:\n  - query: "{d["query"]}"\n'
        f"    MASK: {{Male: {_yaml_list(d['Male'])}, Female: {_yaml_list(d['Female'])}}}\n"
        f"    TARGET: {{Occ: {_yaml_list(d['Occ'])}}}\n",
        encoding="utf-8",
    )
    try:
        s = load_study(p)
    except InputError as err:
        assert str(p) in str(err)
        return
    q = s.queries
    for query, t in zip(q["query"].astype(str), q["T_word"].astype(str)):
        filled = query.replace("{TARGET}", t, 1)
        assert not re.search(r"\{[^{}]*\}", filled), filled
        assert filled.count("[MASK]") == 1
    male = set(q.loc[q["MASK"] == "Male", "M_word"].astype(str))
    female = set(q.loc[q["MASK"] == "Female", "M_word"].astype(str))
    assert not male & female


@settings(max_examples=150, deadline=None)
@given(mutated())
def test_c_and_python_yaml_parsers_read_study_files_alike(d):
    """The study loader runs on libyaml (CSafeLoader) when PyYAML has it, else on the pure-Python
    SafeLoader, with the same constructors: where both parse a file, the data are the same, every
    number with the text it was written with. (Where they disagree it is on malformed flow
    sequences: PyYAML refuses a tab in `[nurse, <tab>]`, which libyaml reads as `[nurse]`; libyaml
    refuses `[he:, he]`, which PyYAML reads as a mapping that the study schema then refuses.)"""
    import yaml

    from fmat import validate

    text = (
        f'id: S\ntitle: t\nqueries:\n  - query: "{d["query"]}"\n'
        f"    MASK: {{Male: {_yaml_list(d['Male'])}, Female: {_yaml_list(d['Female'])}}}\n"
        f"    TARGET: {{Occ: {_yaml_list(d['Occ'])}}}\n"
    )
    parsed = []
    for base in (yaml.CSafeLoader, yaml.SafeLoader):
        try:
            data = validate.load_yaml(text, "S.yaml", loader_class=validate._make_loader(base))
        except InputError as err:
            assert "S.yaml" in str(err)
            return
        parsed.append((repr(data), repr(_texts(data)), [type(x).__name__ for x in _leaves(data)]))
    assert parsed[0] == parsed[1], (text, parsed)


def _leaves(node):
    if isinstance(node, dict):
        return [x for v in node.values() for x in _leaves(v)]
    if isinstance(node, list):
        return [x for v in node for x in _leaves(v)]
    return [node]


def _texts(node):
    """Every number's written text (fmat.validate.as_written), to compare the two parsers."""
    from fmat.validate import as_written

    if isinstance(node, dict):
        return {k: _texts(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_texts(v) for v in node]
    return as_written(node)


@settings(max_examples=150, deadline=None)
@given(
    mutated(),
    st.sampled_from(
        [
            None,
            "",
            True,
            3,
            2.5,
            [],
            {},
            {"phrase": "a"},
            {"phrase": "a", "x": 1},
            {"range": [1, 2]},
            {"criterion": "c", "column": "k"},
            ["a", None],
        ]
    ),
)
def test_fast_schema_gate_agrees_with_jsonschema(d, odd):
    """fmat.study checks a study file with jsonschema-rs first (fast), and asks jsonschema only
    when that does not say valid: whatever the fast gate passes, jsonschema must pass too, and the
    problems found are jsonschema's."""
    import jsonschema

    from fmat.study import _fast_validator, _plain, _schema_problems, schema

    data = {
        "id": "S",
        "title": "t",
        "queries": [{"query": d["query"], "MASK": {"Male": d["Male"], "Female": d["Female"]}, "TARGET": {"Occ": d["Occ"]}}],
    }
    for variant in (
        data,
        {**data, "queries": [{**data["queries"][0], "TARGET": {"Occ": odd}}]},
        {**data, "queries": [{**data["queries"][0], "TARGET": {"Occ": [*d["Occ"], odd]}}]},
    ):
        slow = not list(jsonschema.Draft202012Validator(schema()).iter_errors(variant))
        if _fast_validator().is_valid(_plain(variant)):
            assert slow, variant
        assert (_schema_problems(variant, "S.yaml") == []) == slow, variant
