"""The figures rule (fmat_replication.pages.drawing; rules report_figures, report_figures_index):
which figures a study gets follows from its tables, not its id; each caption is written from the
data it draws (no paper diamonds where the paper prints nothing, the planted value in the demo,
"demo vectors" where WEFAT used them); the SVG files and figures.json are what the pages embed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from fmat.results import results_frame
from fmat_replication.criteria import DEMO_SOURCE
from fmat_replication.pages.drawing import study_figures, write_figures

EFFECTS = pd.DataFrame(
    {"model": "all", "condition": ["all", "pair1"], "d": [0.5, 0.2], "ci_low": [0.3, 0.0], "ci_high": [0.7, 0.4]}
)
RAW = {"analysis": {"name": "stereotype_pairs"}, "queries": []}
ICC = results_frame(
    [{"study": "S", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.9, "ci_low": 0.8, "ci_high": 0.95}]
)


def _rep(study, with_paper):
    if not with_paper:
        return pd.DataFrame(columns=["study", "statistic", "condition", "model", "paper_value"])
    return pd.DataFrame({"study": study, "statistic": "d", "condition": ["all"], "model": "all", "paper_value": [0.6]})


def test_a_forest_caption_names_only_the_marks_it_draws(tmp_path):
    for study, with_paper, planted in (("N0", False, None), ("3A", True, None), ("3A", True, "demo")):
        recovery = (
            pd.DataFrame({"statistic": ["d"], "condition": ["all"], "model": ["all"], "planted": [0.5], "realised": [0.45]})
            if planted
            else None
        )
        figs = study_figures(study, RAW, {"effects": EFFECTS}, ICC.assign(study=study), _rep(study, with_paper), recovery)
        assert [f.name for f in figs] == ["effects", "icc"]
        caption = figs[0].caption
        assert ("diamond" in caption) == with_paper, caption
        assert ("planted" in caption) == bool(planted), caption
        assert ("paper" in figs[1].caption) is False  # no paper ICC in these replication rows


def test_figure3_says_demo_vectors_where_wefat_used_them():
    table = pd.DataFrame({"item": ["ann", "bob", "cy"], "fmat": [0.1, 0.5, 0.9], "pct_male": [10.0, 50.0, 90.0]})
    table["wefat_male"] = [0.0, 0.2, 0.4]
    wefat = pd.DataFrame({"item": ["ann", "bob", "cy"], "source": [DEMO_SOURCE, "GloVe 840B", DEMO_SOURCE]})
    raw = {"analysis": {"name": "factual_names", "options": {"criterion": {"logit_column": "logit_pct_male"}}}}
    fig = study_figures("1C", raw, {"criterion": table}, ICC.iloc[:0], _rep("1C", False), None, wefat)[0]
    assert "2 of the 3 items comes from seeded demo vectors" in fig.caption and "logit-function" in fig.caption
    assert fig.draw().axes[1].get_xlabel() == "WEFAT male (2 of 3 items: demo vectors)"
    plain = study_figures(
        "1A", {"analysis": {"name": "factual_wefat"}}, {"criterion": table}, ICC.iloc[:0], _rep("1A", False), None
    )[0]
    assert "demo vectors" not in plain.caption and "logit" not in plain.caption
    assert plain.draw().axes[1].get_xlabel() == "WEFAT male (GloVe)"


def test_the_rule_writes_svg_files_and_an_index_with_reasons(tmp_path):
    trend = pd.DataFrame({"model": "all", "year": np.arange(1800, 1803), "d": np.nan, "d_smooth": np.nan})
    figs = study_figures("4A", RAW, {"trend": trend, "effects": EFFECTS}, ICC.assign(study="4A"), _rep("4A", False), None)
    items = write_figures(figs, tmp_path / "4A")
    index = json.loads((tmp_path / "4A" / "figures.json").read_text())
    assert index == items and [i["name"] for i in index] == ["trend", "effects", "icc"]
    assert index[0]["file"] == "" and "no year has scores" in index[0]["missing"]
    assert (tmp_path / "4A" / "effects.svg").read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in (tmp_path / "4A").iterdir()) == ["effects.svg", "figures.json", "icc.svg"]
