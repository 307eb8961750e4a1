"""Property test (issue 22): random mutations of a valid study file never crash, and never
pass with an unfilled placeholder or a word shared by two groups of a contrast."""
from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fmat.errors import InputError
from fmat.study import load_study

BASE = {"query": "The [MASK] works as a {TARGET}.", "Male": ["man", "he"], "Female": ["woman", "she"],
        "Occ": ["nurse", "engineer"]}
PIECES = ["he", "man", "{target}", "{ATRIB}", "{TARGET}", "[MASK]", "010", "0x1F", ".inf", "\u200b",
          " ", "\u0441", "\n", "yes", "~", "*a", "&a x", "{", "}", "'", '"', ":", "#", "-", "\t", "é", ""]

text = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), min_size=1, max_size=4).map("".join)


def _yaml_list(words):
    return "[" + ", ".join(words) + "]"


@st.composite
def mutated(draw):
    d = {k: list(v) if isinstance(v, list) else v for k, v in BASE.items()}
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(list(d)))
        if key == "query":
            d["query"] = draw(st.sampled_from([d["query"] + draw(text), draw(text) + d["query"],
                                               d["query"].replace("{TARGET}", draw(text))]))
        else:
            i = draw(st.integers(0, len(d[key]) - 1))
            d[key][i] = draw(st.sampled_from([draw(text), d[key][i] + draw(text)]))
    return d


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated())
def test_mutations_never_crash_or_pass_wrongly(tmp_path, d):
    p = tmp_path / "S.yaml"
    p.write_text(f"id: S\ntitle: t\nlpr: {{target_pair: false}}\nqueries:\n  - query: \"{d['query']}\"\n"
                 f"    MASK: {{Male: {_yaml_list(d['Male'])}, Female: {_yaml_list(d['Female'])}}}\n"
                 f"    TARGET: {{Occ: {_yaml_list(d['Occ'])}}}\n", encoding="utf-8")
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
