"""fmat_replication.pages.inputs: a page reads only the files its rule gives it; a missing one is an
error naming the parameter, and a study file is read with the project's loader (010 stays 010)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.results import results_frame
from fmat_replication.pages.design import template_rows
from fmat_replication.pages.inputs import study_page

REPO = Path(__file__).resolve().parents[1]


def _inputs(tmp_path: Path) -> dict:
    sfile = tmp_path / "S1.yaml"
    sfile.write_text("id: S1\ntitle: Codes\nqueries:\n  - query: \"[MASK] dialled {TARGET}.\"\n"
                     "    MASK: {A: [he], B: [she]}\n    TARGET: {Code: [010, 911]}\nlpr: {target_pair: false}\n",
                     encoding="utf-8")
    stats = tmp_path / "stats.parquet"
    results_frame([{"study": "S1", "statistic": "alpha", "value": 0.5}]).to_parquet(stats)
    rep = tmp_path / "rep.parquet"
    pd.DataFrame({"study": ["S1", "S2"], "statistic": ["r", "r"]}).to_parquet(rep)
    figures = tmp_path / "figures"
    figures.mkdir()
    pd.DataFrame({"x": [1, 2], "y": [3, 4]}).to_parquet(figures / "trend.parquet")
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"study": "S1", "analysis": "x", "implemented": True, "notes": [],
                                  "figures": {"trend": "trend.parquet"}}))
    score = tmp_path / "scores" / "S1" / "m.parquet"
    score.parent.mkdir(parents=True)
    pd.DataFrame({"model": ["m"], "M_word": ["he"], "prob": [0.1], "oov": [False]}).to_parquet(score)
    return {"study_file": str(sfile), "paper": str(REPO / "config" / "paper_results.tsv"), "replication": str(rep),
            "stats": str(stats), "status": str(status), "figures": str(figures), "scores": str(score)}


def test_a_study_page_reads_what_its_rule_gives(tmp_path):
    page = study_page("S1", **_inputs(tmp_path))
    assert page.replication["study"].tolist() == ["S1"]                 # its own rows
    assert list(page.figures) == ["trend"] and page.figures["trend"]["y"].tolist() == [3, 4]
    # the project's loader: the word written 010 is shown as 010 (YAML alone reads the number 8)
    assert "010, 911" in template_rows(page.raw).loc[0, "TARGET"]


@pytest.mark.parametrize("name", ["study_file", "replication", "stats", "status", "figures", "scores", "paper"])
def test_a_missing_input_is_an_error_not_an_empty_table(tmp_path, name):
    args = _inputs(tmp_path)
    args[name] = str(tmp_path / "gone" / "missing.parquet")
    with pytest.raises(InputError, match=rf"(?s){name}.*not found.*snakemake results/reports"):
        study_page("S1", **args)
    args[name] = ""
    if name != "scores":
        with pytest.raises(InputError, match=f"page parameter '{name}' must name one file"):
            study_page("S1", **args)
