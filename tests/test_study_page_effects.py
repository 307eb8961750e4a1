"""Every family's page shows its effect (issue 54): per model (attitude too), per item with the
compared relations kept apart in every visible figure and table, the trend family's change over
time, reliability that means nothing for the number of rows as NA with the reason, and one p
format (``.012``, ``< .001``) in every table and summary."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from fmat import analyses, plant
from fmat.results import p_text, reliability_note
from fmat.stages import lpr_table, reliability_tables
from fmat.study import load_study
from fmat.study_page import compared_columns, lpr_tables, reliability_view, render_study_page, trend_figure

REPO = Path(__file__).resolve().parents[1]
MODELS = ["m1", "m2", "m3"]


def _page(sid: str):
    """The study's page on the demo world's planted scores for three models (no model: seconds)."""
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    scores = plant.planted_scores(study, plant.load_world(REPO / "config" / "world.yaml").plant(sid), MODELS)
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid=sid)
    stats, figures, status = analyses.analysis_stage(study, scores, lpr, rel, {}, sid=sid)
    stats = pd.concat([rel, stats], ignore_index=True)
    return study, lpr, stats, render_study_page(study, study.queries, lpr, stats, MODELS, figures, status)


def _tables(html: str) -> list[list[list[str]]]:
    out = []
    for body in re.findall(r"<table[^>]*>(.*?)</table>", html, re.S):
        rows = [
            [unescape(c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)
        ]
        out.append(rows)
    return out


@pytest.fixture(scope="module")
def attitude():
    return _page("2A")


def test_the_attitude_page_shows_the_effect_per_model(attitude):
    _, _, _, html = attitude
    m = re.search(r'<table class="per-model">(.*?)</table>', html, re.S)
    assert m, "no per-model table on the attitude page"
    rows = _tables(m.group(0))[0]
    assert rows[0] == ["statistic", "condition", *MODELS], rows[0]
    assert {r[1] for r in rows[1:]} >= {"like-dislike:average", "notice-ignore:average"}


def test_the_attitude_pages_visible_tables_keep_the_relations_apart(attitude):
    """2A's like - dislike (planted) and notice - ignore (its control) were averaged in the
    figure and both visible LPR tables."""
    study, lpr, _, html = attitude
    assert compared_columns(lpr, analyses.item_columns("attitude_weat")) == ["M_word"]
    tables = lpr_tables(lpr, ["M_word"])
    assert tables and all("M_word" in t["columns"] or "MASK word" in t["columns"] for t in tables), [t["columns"] for t in tables]
    for t in tables:
        col = t["columns"].index("M_word") if "M_word" in t["columns"] else t["columns"].index("MASK word")
        assert {r[col] for r in t["rows"]} == {"like - dislike", "notice - ignore"}, t["caption"]
    # on the page: every LPR table, and the figure one panel per relation
    section = html[html.index('<h2 id="lpr">') :]  # the last section of the library's page
    for rows in _tables(section):
        assert "M_word" in rows[0] or "MASK word" in rows[0], rows[0]
    assert "one panel per M_word (compared by the analysis, never averaged together)" in section
    # the relations differ: averaging them would hide the planted one
    planted = lpr[lpr["M_word"] == "like - dislike"]["LPR"].mean()
    control = lpr[lpr["M_word"] == "notice - ignore"]["LPR"].mean()
    assert abs(planted - control) > 0.5


def test_alpha_over_three_rows_is_na_with_the_reason_and_p_is_one_format(attitude):
    _, _, stats, html = attitude
    section = html[html.index('<h2 id="reliability">') :]
    rows = _tables(section)[0]
    head, body = rows[0], rows[1:]
    assert head[-1] == "note"
    alphas = [r for r in body if r[0].startswith("alpha")]
    assert alphas and all(r[head.index("value")] == "NA" and "alpha over 3 rows" in r[-1] for r in alphas), alphas[:2]
    iccs = [r for r in body if r[0].startswith("ICC")]
    assert iccs and all(r[head.index("p")] == "< .001" for r in iccs), iccs  # was "0.000"
    # every p on the page is "< .001", ".ddd" or NA
    for table in _tables(html):
        if "p" in table[0]:
            k = table[0].index("p")
            assert all(re.fullmatch(r"< \.001|\.\d{3}|1\.000|NA", r[k]) for r in table[1:]), [r[k] for r in table[1:]]


def test_the_trend_page_draws_the_change_over_time():
    _, _, _, html = _page("4A")
    assert re.search(r'<img class="trend-figure" src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', html)
    assert "each model's effect size per year" in html
    assert trend_figure(pd.DataFrame({"model": ["m1"], "year": [1900]})) is None  # no d column: no figure


def test_reliability_values_that_mean_nothing_are_na():
    rel = pd.DataFrame(
        {
            "statistic": ["alpha", "alpha_std", "alpha", "ICC_average", "ICC_single"],
            "condition": "all",
            "model": "all",
            "value": [-4.2, 16470307208669242.0, 0.81, float("nan"), 0.5],
            "ci_low": [float("nan")] * 3 + [float("nan"), 0.2],
            "ci_high": [float("nan")] * 3 + [float("nan"), 0.7],
            "p": [float("nan")] * 3 + [float("nan"), 0.0004],
            "n": [3, 12, 12, 40, 40],
        }
    )
    view = reliability_view(rel)
    assert view["value"].tolist() == ["NA", "NA", "0.810", "NA", "0.500"]
    assert "fewer than 4" in view["note"][0] and "singular" in view["note"][1] and view["note"][2] == ""
    assert "not defined" in view["note"][3] and view["p"].tolist()[-1] == "< .001"
    assert reliability_note("alpha", 0.5, 4) == ""  # 4 rows: shown


def test_the_study_summary_shows_na_and_the_apa_p():
    from fmat.results import StudyResult, _effect_text

    eff = pd.DataFrame(
        {"statistic": ["d"], "condition": ["all"], "value": [0.5], "ci_low": [0.1], "ci_high": [0.9], "p": [0.0123]}
    )
    assert _effect_text(eff).endswith("d (all) = 0.500 [0.100, 0.900], p = .012")
    assert p_text(0.0004) == "< .001" and p_text(0.5) == ".500"
    stats = pd.DataFrame(
        {"statistic": ["alpha_std"], "condition": ["all"], "model": ["all"], "value": [16470307208669242.0], "n": [3]}
    )
    res = StudyResult.__new__(StudyResult)
    res.study, res.stats, res.status, res.models = type("S", (), {"id": "S"})(), stats, {}, ["m1", "m2", "m3"]
    text = res.summary()
    assert "16470307208669242" not in text and "NA" in text and "alpha over 3 rows" in text, text
