"""The demo with a study of one's own (issue 44): `make demo` with an added study that the world
file does not plant (the documented way to add a study, docs/adding-a-study.md) ended in
"unexpected error" in the overview: no study had a judged recovery row. A small demo run (two
tiny families, few training steps) with one planted study (X1) and one unplanted study of one's
own must end with all its pages, the unplanted study's page saying that nothing was planted and
the overview counting it with nothing checked. Slow: it trains two tiny models."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import yaml
from test_workflow import REPO, snakemake

OWN = """\
id: U1
title: A study of one's own (nothing planted)
family: stereotype
source: a test of the demo with a study the world file does not plant
queries:
  - query: "Most [MASK] like {ATTRIB}."
    MASK: {Male: [men], Female: [women]}
    ATTRIB:
      Sweet: [cake, candy, honey]
      Salty: [chips, pretzels, olives]
lpr: {mask_pair: false, attrib_pair: true}
reliability:
  item: A_word
  by: [ATTRIB]
  lpr: {mask_pair: false, attrib_pair: false}
score: {method: fmat, add_tokens: false, na_out: true}
analysis:
  name: stereotype_pairs
  options:
    sigma: 1.414
    mask_contrast: [Male, Female]
    attrib_contrast: [Sweet, Salty]
"""


@pytest.mark.slow
def test_the_demo_with_an_unplanted_study_of_ones_own_ends_with_all_its_pages(tmp_path):
    studies = tmp_path / "studies"
    shutil.copytree(REPO / "config" / "studies", studies)
    (studies / "U1.yaml").write_text(OWN, encoding="utf-8")
    override = tmp_path / "mine.yaml"
    override.write_text(
        yaml.safe_dump(
            {
                "studies_dir": str(studies),
                "studies": ["X1", "U1"],
                "models": [
                    {"name": "tiny-bert-base-uncased", "tiny": "bert-uncased"},
                    {"name": "tiny-roberta-base", "tiny": "roberta"},
                ],
                "demo_steps": 40,
                "report_engine": "offline",
            }
        ),
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    res = snakemake(["--cores", "2"], work, timeout=1500, configfiles=[REPO / "config" / "demo.yaml", override])
    assert res.returncode == 0, res.stdout[-6000:]
    assert "unexpected error" not in res.stdout and "Traceback" not in res.stdout
    pages = work / "results" / "reports"
    assert {p.name for p in pages.glob("*.html")} == {"index.html", "X1.html", "U1.html"}
    assert "Nothing was planted for this study" in (pages / "U1.html").read_text(encoding="utf-8")
    recovery = pd.read_parquet(work / "results" / "recovery.parquet")
    assert set(recovery["study"].astype(str)) >= {"X1"}
    assert not (recovery["study"].astype(str).eq("U1") & recovery["verdict"].isin(["recovered", "not recovered"])).any()
    overview = (pages / "index.html").read_text(encoding="utf-8")
    assert "U1" in overview and "X1" in overview


@pytest.mark.parametrize(
    "studies, verdicts, expected",
    [
        (["U1"], ["not planted"], [("U1", 0, 0, 0, 0)]),  # no study has a judged row: the crash
        (["X1", "X1", "U1"], ["recovered", "not recovered", "not planted"], [("X1", 2, 1, 0, 1), ("U1", 0, 0, 0, 0)]),
        (["2A", "2A"], ["recovered", "nothing found for the concept"], [("2A", 2, 1, 1, 0)]),  # a concept-level control
        ([], [], []),
    ],
)
def test_the_overviews_recovery_counts_hold_without_a_judged_row(studies, verdicts, expected):
    """The overview's per-study counts (fmat_replication.pages.recovery.recovery_by_study): with
    no judged row at all (only studies the world does not plant) they subtracted a text column
    (pandas gives the empty aggregate object columns) and the overview job failed with a
    traceback. Every study now has a row of plain integers."""
    from fmat_replication.pages.recovery import recovery_by_study

    table = recovery_by_study(pd.DataFrame({"study": studies, "verdict": verdicts}, dtype=str))
    assert [tuple(r) for r in table.itertuples(index=False)] == expected
    assert list(table.columns) == ["study", "checked", "recovered", "nothing found for the concept", "not recovered"]
