"""fmat_replication.pages.inputs: a page reads only the files its rule gives it (lists as lists); a
missing one is an error naming the input, and a study file is read with the project's loader (010
stays 010). The inputs are declared once (STUDY_INPUTS, INDEX_INPUTS): the rules unpack them and
the Quarto documents' default (hand_inputs) derives them from the same declaration."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.results import results_frame
from fmat_replication.pages.design import design_data
from fmat_replication.pages.html import render
from fmat_replication.pages.inputs import (
    INDEX_INPUTS,
    STUDY_INPUTS,
    hand_inputs,
    read_index,
    read_study,
    repository_root,
    study_inputs,
)

REPO = Path(__file__).resolve().parents[1]


def _inputs(tmp_path: Path) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
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
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    (drawn / "figures.json").write_text(json.dumps([{"name": "x", "file": "x.svg", "title": "X", "caption": "c"}]))
    (drawn / "x.svg").write_text("<svg/>")
    return {
        "drawn": str(drawn),
        "study_file": str(sfile),
        "paper": str(REPO / "config" / "paper_results.tsv"),
        "replication": str(rep),
        "stats": str(stats),
        "status": str(status),
        "figures": str(figures),
        "oov": str(oov),
    }


def test_a_study_page_reads_what_its_rule_gives(tmp_path):
    page = read_study("S1", _inputs(tmp_path))
    assert page.replication["study"].tolist() == ["S1"]  # its own rows
    assert page.drawn == [{"name": "x", "file": "x.svg", "title": "X", "caption": "c", "svg": "<svg/>"}]
    assert page.demo is None  # the scoring jobs recorded nothing: not taken for a demo, nor for a real run
    assert list(page.figures) == ["trend"] and page.figures["trend"]["y"].tolist() == [3, 4]
    # the project's loader: the word written 010 is shown as 010 (YAML alone reads the number 8)
    assert "<td>Code (2): 010, 911</td>" in render("design.html.j2", design=design_data(page.raw))


@pytest.mark.parametrize("name", ["study_file", "replication", "stats", "status", "figures", "oov", "paper", "drawn"])
def test_a_missing_input_is_an_error_not_an_empty_table(tmp_path, name):
    args = _inputs(tmp_path)
    args[name] = str(tmp_path / "gone" / "missing.parquet")
    with pytest.raises(InputError, match=rf"(?s){name}.*not found.*snakemake results/reports"):
        read_study("S1", args)
    args[name] = ""
    with pytest.raises(InputError, match=f"page input '{name}' must name one file"):
        read_study("S1", args)
    del args[name]
    with pytest.raises(InputError, match=f"the study page needs {name}"):
        read_study("S1", args)
    with pytest.raises(InputError, match="the study page takes no input surplus"):
        read_study("S1", {**_inputs(tmp_path / "again"), "surplus": "x"})


def test_lists_are_lists_not_comma_joined_strings(tmp_path):
    """A path with a comma is one path; the overview's studies must be a list."""
    args = _inputs(tmp_path)
    odd = tmp_path / "a,b.parquet"
    Path(args["oov"]).rename(odd)
    assert read_study("S1", {**args, "oov": str(odd)}).oov["model"].tolist() == ["m"]
    with pytest.raises(InputError, match="'studies' must be a list"):
        read_index("1A,2A", {k: [] if "{" in v else "" for k, v in INDEX_INPUTS.items()})


def test_the_documents_defaults_are_the_workflows_layout(tmp_path, monkeypatch):
    """reports/*.qmd rendered by hand: Quarto runs the cells in reports/, the inputs are found
    under the folder above it; from the project folder itself (--execute-dir), there. They are
    the rules' own declaration filled with the project's configuration (its studies_dir)."""
    (tmp_path / "reports").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("studies: [2A, 1A]\nstudies_dir: my/studies\n")
    for s in ("1A", "2A"):
        (tmp_path / "results" / "analysis" / s).mkdir(parents=True)
        (tmp_path / "results" / "analysis" / s / "stats.parquet").write_text("")
    (tmp_path / "results" / "models").mkdir()
    (tmp_path / "results" / "models" / "m1.json").write_text("{}")
    monkeypatch.chdir(tmp_path / "reports")
    assert repository_root() == tmp_path.resolve()
    monkeypatch.chdir(tmp_path)
    assert repository_root() == tmp_path.resolve()
    assert repository_root(tmp_path / "results") == (tmp_path / "results").resolve()  # not a reports/ folder
    root = tmp_path.resolve()
    layout = hand_inputs("study", "2A")
    assert set(layout) == set(STUDY_INPUTS) - {"recovery"}  # no world: no recovery table
    assert layout["study_file"] == str(root / "my" / "studies" / "2A.yaml")  # the configuration's studies_dir
    assert layout["replication"] == str(root / "results" / "replication" / "2A.parquet")
    assert layout["oov"] == str(root / "results" / "oov" / "2A.parquet")
    assert layout == study_inputs(
        "2A", {"studies_dir": "my/studies"}, world=False, root=root, repo=root
    )  # the rules' declaration
    (tmp_path / "results" / "recovery").mkdir()
    (tmp_path / "results" / "recovery" / "2A.parquet").write_text("")
    assert hand_inputs("study", "2A")["recovery"] == str(root / "results" / "recovery" / "2A.parquet")
    index = hand_inputs("index")
    assert index["stats"] == [str(root / "results" / "analysis" / s / "stats.parquet") for s in ("2A", "1A")]  # config order
    assert index["oov"] == [str(root / "results" / "oov" / f"{s}.parquet") for s in ("2A", "1A")]
    assert index["checks"] == str(root / "results" / "models" / "checks.parquet")
    assert index["cards"] == [str(root / "results" / "models" / "m1.json")]
