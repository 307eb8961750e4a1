"""fmat_replication.pages.inputs: a page reads only the files its rule gives it (lists as lists); a
missing one is an error naming the input, and a study file is read with the project's loader (010
stays 010). The Quarto documents' defaults: the workflow's layout under the repository root."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.results import results_frame
from fmat_replication.pages.design import template_rows
from fmat_replication.pages.inputs import index_layout, read_index, read_study, repository_root, study_layout

REPO = Path(__file__).resolve().parents[1]


def _inputs(tmp_path: Path) -> dict:
    sfile = tmp_path / "S1.yaml"
    sfile.write_text(
        'id: S1\ntitle: Codes\nqueries:\n  - query: "[MASK] dialled {TARGET}."\n'
        "    MASK: {A: [he], B: [she]}\n    TARGET: {Code: [010, 911]}\nlpr: {target_pair: false}\n",
        encoding="utf-8",
    )
    stats = tmp_path / "stats.parquet"
    results_frame([{"study": "S1", "statistic": "alpha", "value": 0.5}]).to_parquet(stats)
    rep = tmp_path / "rep.parquet"
    pd.DataFrame({"study": ["S1", "S2"], "statistic": ["r", "r"]}).to_parquet(rep)
    figures = tmp_path / "figures"
    figures.mkdir()
    pd.DataFrame({"x": [1, 2], "y": [3, 4]}).to_parquet(figures / "trend.parquet")
    status = tmp_path / "status.json"
    status.write_text(
        json.dumps({"study": "S1", "analysis": "x", "implemented": True, "notes": [], "figures": {"trend": "trend.parquet"}})
    )
    oov = tmp_path / "oov" / "S1.parquet"
    oov.parent.mkdir(parents=True)
    pd.DataFrame(
        {"study": ["S1"], "model": ["m"], "rows": [1], "oov_rows": [0], "nan_prob_rows": [0], "oov_words": [""]}
    ).to_parquet(oov)
    return {
        "study_file": str(sfile),
        "paper": str(REPO / "config" / "paper_results.tsv"),
        "replication": str(rep),
        "stats": str(stats),
        "status": str(status),
        "figures": str(figures),
        "oov": str(oov),
    }


def test_a_study_page_reads_what_its_rule_gives(tmp_path):
    page = read_study("S1", **_inputs(tmp_path))
    assert page.replication["study"].tolist() == ["S1"]  # its own rows
    assert list(page.figures) == ["trend"] and page.figures["trend"]["y"].tolist() == [3, 4]
    # the project's loader: the word written 010 is shown as 010 (YAML alone reads the number 8)
    assert "010, 911" in template_rows(page.raw).loc[0, "TARGET"]


@pytest.mark.parametrize("name", ["study_file", "replication", "stats", "status", "figures", "oov", "paper"])
def test_a_missing_input_is_an_error_not_an_empty_table(tmp_path, name):
    args = _inputs(tmp_path)
    args[name] = str(tmp_path / "gone" / "missing.parquet")
    with pytest.raises(InputError, match=rf"(?s){name}.*not found.*snakemake results/reports"):
        read_study("S1", **args)
    args[name] = ""
    with pytest.raises(InputError, match=f"page input '{name}' must name one file"):
        read_study("S1", **args)


def test_lists_are_lists_not_comma_joined_strings(tmp_path):
    """A path with a comma is one path; the overview's studies must be a list."""
    args = _inputs(tmp_path)
    odd = tmp_path / "a,b.parquet"
    Path(args["oov"]).rename(odd)
    assert read_study("S1", **{**args, "oov": str(odd)}).oov["model"].tolist() == ["m"]
    with pytest.raises(InputError, match="'studies' must be a list"):
        read_index(
            "1A,2A", paper="", replication="", stats=[], study_files=[], oov=[], checks="", agreement="", provenance="", cards=[]
        )


def test_the_documents_defaults_are_the_workflows_layout(tmp_path, monkeypatch):
    """reports/*.qmd rendered by hand: Quarto runs the cells in reports/, the inputs are found
    under the folder above it; from the project folder itself (--execute-dir), there."""
    (tmp_path / "reports").mkdir()
    (tmp_path / "results" / "analysis" / "2A").mkdir(parents=True)
    (tmp_path / "results" / "analysis" / "2A" / "stats.parquet").write_text("")
    monkeypatch.chdir(tmp_path / "reports")
    assert repository_root() == tmp_path.resolve()
    monkeypatch.chdir(tmp_path)
    assert repository_root() == tmp_path.resolve()
    assert repository_root(tmp_path / "results") == (tmp_path / "results").resolve()  # not a reports/ folder
    layout = study_layout("2A", tmp_path)
    assert layout["study_file"] == tmp_path / "config" / "studies" / "2A.yaml"
    assert layout["replication"] == tmp_path / "results" / "replication" / "2A.parquet"
    assert layout["oov"] == tmp_path / "results" / "oov" / "2A.parquet" and layout["recovery"] is None
    (tmp_path / "results" / "recovery").mkdir()
    (tmp_path / "results" / "recovery" / "2A.parquet").write_text("")
    assert study_layout("2A", tmp_path)["recovery"] == tmp_path / "results" / "recovery" / "2A.parquet"
    index = index_layout(tmp_path)
    assert index["studies"] == ["2A"] and index["stats"] == [tmp_path / "results" / "analysis" / "2A" / "stats.parquet"]
    assert index["oov"] == [tmp_path / "results" / "oov" / "2A.parquet"]
    assert index["checks"] == tmp_path / "results" / "models" / "checks.parquet"
    assert index_layout(tmp_path, ["1A"])["study_files"] == [tmp_path / "config" / "studies" / "1A.yaml"]
