"""Issue 52: pages say what each verdict generalizes over. The analysis stage runs the
concept-level variant (``inference: crossed``) where the analysis declares it and writes its rows
as the figure table ``crossed``; a study page sets them beside the paper's inference with a
verdict per headline number, and the overview counts them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_design_feeds_analysis import ATTITUDE, _write

from fmat import analyses, plant
from fmat.io import read_table, write_table
from fmat.results import results_frame
from fmat.stages import lpr_table, reliability_tables
from fmat.study import load_study
from fmat_replication.analysis import analysis
from fmat_replication.pages.concept import concept_counts, concept_rows, verdict_key

MODELS = ["m1", "m2", "m3", "m4"]


def _files(tmp_path, text):
    """A study file, its planted scores (item variation as config/world.yaml's default), LPRs and
    reliability rows written as the workflow's analysis rule reads them."""
    path = _write(tmp_path, text)
    study = load_study(path)
    scores = plant.planted_scores(study, plant.Plant(study="V"), MODELS)
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid="V")
    paths = []
    for m in MODELS:
        p = tmp_path / "scores" / f"{m}.parquet"
        p.parent.mkdir(exist_ok=True)
        write_table(scores[scores["model"] == m].reset_index(drop=True), p)
        paths.append(p)
    write_table(lpr, tmp_path / "lpr.parquet")
    write_table(rel, tmp_path / "rel.parquet")
    return path, paths


def _run(tmp_path, path, paths):
    out = tmp_path / "analysis"
    analysis(
        path,
        tmp_path / "no-criteria",
        paths,
        tmp_path / "lpr.parquet",
        tmp_path / "rel.parquet",
        [],
        sid="V",
        out_stats=out / "stats.parquet",
        out_status=out / "status.json",
        out_figures=out / "figures",
    )
    return out


def test_the_analysis_stage_writes_the_crossed_rows_beside_the_papers(tmp_path):
    path, paths = _files(tmp_path, ATTITUDE)
    out = _run(tmp_path, path, paths)
    status = json.loads((out / "status.json").read_text())
    assert status["figures"]["crossed"] == "crossed.parquet"
    crossed = read_table(out / "figures" / "crossed.parquet")
    stats = read_table(out / "stats.parquet")
    assert list(crossed.columns) == list(stats.columns)  # the results shape
    both = stats.merge(crossed, on=["statistic", "condition", "model"], suffixes=("", "_x"))
    assert len(both) == len(crossed) and (both["model"] == "all").any()
    np.testing.assert_allclose(both["value"], both["value_x"])  # the same d
    assert (both["p"] - both["p_x"]).abs().max() > 1e-6  # another test: the words random too
    assert any("inference: crossed" in n for n in status["notes"])


def test_no_crossed_table_where_the_study_chose_its_inference_or_the_analysis_has_none(tmp_path, monkeypatch):
    text = ATTITUDE.replace("    target_contrast:", "    inference: crossed\n    target_contrast:")
    path, paths = _files(tmp_path, text)
    out = _run(tmp_path, path, paths)
    assert not (out / "figures" / "crossed.parquet").exists()
    assert "crossed" not in json.loads((out / "status.json").read_text())["figures"]
    assert "crossed" in analyses.option_values("attitude_weat", "inference")
    assert "crossed" in analyses.option_values("factual_wefat", "inference")  # 1A-1C too (the criterion slope)
    assert analyses.crossed_variant(load_study(path), pd.DataFrame(), pd.DataFrame()) == (None, [])
    plain = load_study(_write(tmp_path, ATTITUDE, name="P"))
    monkeypatch.setattr(analyses, "option_values", lambda name, option: ("paper",))  # an analysis with no crossed variant
    assert analyses.crossed_variant(plain, pd.DataFrame(), pd.DataFrame()) == (None, [])


@pytest.mark.parametrize(
    "p_paper, p_crossed, key",
    [(0.001, 0.01, "holds"), (0.001, 0.2, "lost"), (0.3, 0.6, "neither"), (0.2, 0.04, "gained"), (0.01, np.nan, "lost")],
)
def test_the_verdict_of_a_number_at_both_levels(p_paper, p_crossed, key):
    assert verdict_key(p_paper, p_crossed) == key


def _stats(study="X9"):
    return results_frame(
        [
            {"study": study, "statistic": "d", "condition": c, "model": "all", "value": v, "p": p, "ci_low": lo, "ci_high": hi}
            for c, v, p, lo, hi in [
                ("all", 0.5, 0.001, 0.3, 0.7),
                ("pair1", 0.2, 0.03, 0.02, 0.38),
                ("pair2", 0.05, 0.4, -0.1, 0.2),
            ]
        ]
        + [{"study": study, "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9}]
    )


def _crossed(study="X9"):
    return results_frame(
        [
            {"study": study, "statistic": "d", "condition": c, "model": m, "value": v, "p": p, "ci_low": lo, "ci_high": hi}
            for c, m, v, p, lo, hi in [
                ("all", "all", 0.5, 0.012, 0.13, 0.87),
                ("pair1", "all", 0.2, 0.21, -0.15, 0.55),
                ("pair2", "all", 0.05, 0.7, -0.3, 0.4),
                ("all", "m1", 0.4, 0.04, 0.01, 0.8),  # not a headline number
            ]
        ]
    )


def test_concept_rows_pair_each_headline_number_with_the_papers_and_count():
    rows = concept_rows(_stats(), _crossed())
    assert [(r["condition"], r["verdict"]) for r in rows] == [("all", "holds"), ("pair1", "lost"), ("pair2", "neither")]
    # numbers (the library's rows): the library's template writes them, by the one set of formatters
    assert rows[0]["paper"][:2] == pytest.approx((0.3, 0.7)) and rows[0]["crossed"][:2] == pytest.approx((0.13, 0.87))
    assert concept_counts(rows) == {"holds": 1, "lost": 1, "neither": 1, "gained": 0, "paper_significant": 2, "total": 3}


def test_the_librarys_study_page_sets_the_concept_level_test_beside_its_own(tmp_path):
    """``fmat study --report``'s page (fmat.study_page): the crossed rows (which fmat.study_run
    adds as ``figures["crossed"]`` when it writes a page) beside the analysis's own CI and p,
    each with its verdict, and the count of what still holds."""
    from fmat.study_page import render_study_page

    path, _ = _files(tmp_path, ATTITUDE)
    study = load_study(path)
    scores = plant.planted_scores(study, plant.Plant(study="V"), MODELS)
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid="V")
    stats, figures, status = analyses.analysis_stage(study, scores, lpr, rel, {}, sid="V")
    crossed, _ = analyses.crossed_variant(study, scores, lpr, {})
    both = analyses.concept_side_by_side(stats, crossed)
    assert len(both) and set(both["verdict"]) <= set(analyses.CONCEPT_VERDICTS)
    page = render_study_page(study, study.queries, lpr, stats, MODELS, {**figures, "crossed": crossed}, status)
    assert "95% CI: these words in these models" in page and "p: the concept" in page
    assert page.count('class="concept-') == len(both)
    for v in both["verdict"]:
        assert f'class="concept-{v}"' in page
    c = both["verdict"].value_counts()
    assert f"Of the {len(both)} effects, {int(c.get('holds', 0) + c.get('lost', 0))} are significant" in page
    assert "<summary>crossed" not in page  # its own section, not among the analysis's tables
    plain = render_study_page(study, study.queries, lpr, stats, MODELS, figures, status)
    assert "p: the concept" not in plain
