"""Issue 41: in `snakemake --report`, a figure's caption is the one written from the data (its
title and caption in figures.json, as on the pages), not one text per kind of figure.

report/figures.rst is rendered here as Snakemake 9 renders a caption (its FileRecord.render: the
caption file through Jinja2 with the job's `snakemake` object, then reStructuredText to HTML),
for figures.json files the figures rule's own code writes (fmat_replication.pages.drawing), with
the config function rules/report.smk sets. The job is a stand-in holding what render reads; the
whole path (`snakemake --report` on a finished run) is checked in tests/test_clone_paths.py.
"""

from __future__ import annotations

import html
import json
import pickle
import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from jinja2 import Environment
from snakemake.iocontainers import InputFiles, Log, OutputFiles, Params, Wildcards
from snakemake.report import FileRecord
from snakemake.sourcecache import LocalSourceFile, SourceCache
from test_drawing import EFFECTS, ICC, RAW, _rep

from fmat.errors import InputError
from fmat_replication.config import FIGURE_CAPTIONS, config_hash
from fmat_replication.criteria import DEMO_SOURCE
from fmat_replication.pages.captions import FIGURE_CAPTION, figure_caption
from fmat_replication.pages.drawing import study_figures, write_figures

REPO = Path(__file__).resolve().parents[1]


def report_caption(tmp_path, folder: Path, name: str, config: dict) -> str:
    """The HTML caption Snakemake's report gives figure ``folder/name.svg`` of rule report_figures."""
    job = SimpleNamespace(
        input=InputFiles(),
        output=OutputFiles([str(folder)]),
        params=Params(),
        wildcards=Wildcards(fromdict={"study": folder.name}),
        threads=1,
        resources={},
        log=Log(),
        rule=SimpleNamespace(
            name="report_figures",
            module_globals={"config": config},
            workflow=SimpleNamespace(sourcecache=SourceCache(tmp_path / "cache")),
        ),
    )
    record = FileRecord(
        path=folder / f"{name}.svg",
        parent_path=folder,
        job=job,
        wildcards_overwrite=Wildcards(fromdict={"study": folder.name, "name": name}),
        raw_caption=LocalSourceFile(str(REPO / "report" / "figures.rst")),
    )
    record.render(Environment(trim_blocks=True, lstrip_blocks=True), "", {}, [])
    assert "system-message" not in record.caption, record.caption  # no reStructuredText error
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", record.caption))).strip()


@pytest.fixture
def drawn(tmp_path):
    """Study N0 (no paper values, a forest plot and Figure 2) and 1C (Figure 3, WEFAT of two of
    three items from the demo's seeded vectors) as the figures rule writes them."""
    n0 = study_figures("N0", RAW, {"effects": EFFECTS}, ICC.assign(study="N0"), _rep("N0", False), None)
    table = pd.DataFrame({"item": ["ann", "bob", "cy"], "fmat": [0.1, 0.5, 0.9], "pct_male": [10.0, 50.0, 90.0]})
    table["wefat_male"] = [0.0, 0.2, 0.4]
    wefat = pd.DataFrame({"item": ["ann", "bob", "cy"], "source": [DEMO_SOURCE, "GloVe 840B", DEMO_SOURCE]})
    c1 = study_figures(
        "1C", {"analysis": {"name": "factual_names"}}, {"criterion": table}, ICC.iloc[:0], _rep("1C", False), None, wefat
    )
    for study, figs in (("N0", n0), ("1C", c1)):
        write_figures(figs, tmp_path / "figures" / study)
    return tmp_path / "figures"


def _item(folder: Path, name: str) -> dict:
    return next(i for i in json.loads((folder / "figures.json").read_text()) if i["name"] == name)


def test_a_figures_caption_in_the_report_is_the_one_written_from_the_data(tmp_path, drawn):
    config = {FIGURE_CAPTIONS: FIGURE_CAPTION}
    for study, name in (("N0", "effects"), ("N0", "icc"), ("1C", "criterion")):
        item = _item(drawn / study, name)
        text = report_caption(tmp_path, drawn / study, name, config)
        # its title and the data's caption, word for word (the stars of "*** p < .001" are text)
        assert text.startswith(f"{item['title']}. {item['caption']}"), (text, item)
        if study == "N0":
            assert "paper" not in text and "diamond" not in text, text  # the paper prints nothing for N0
    assert "2 of the 3 items comes from seeded demo vectors" in report_caption(tmp_path, drawn / "1C", "criterion", config)


def test_without_the_data_the_caption_says_what_kind_of_figure_it_is(tmp_path, drawn):
    """The kind text (what the caption was before issue 41) where figures.json is absent or the
    config has no reader: the first test fails on it (it has no "diamond"-free data caption)."""
    kind = report_caption(tmp_path, drawn / "N0", "effects", {})
    assert kind.startswith("Study N0: our d per condition with its 95% CI (a forest plot).")
    assert _item(drawn / "N0", "effects")["caption"] not in kind
    (drawn / "N0" / "figures.json").unlink()
    assert report_caption(tmp_path, drawn / "N0", "effects", {FIGURE_CAPTIONS: FIGURE_CAPTION}) == kind


def test_a_damaged_figures_json_is_named_with_the_fix(tmp_path):
    (tmp_path / "figures.json").write_text('{"name": "effects"', encoding="utf-8")
    with pytest.raises(InputError, match=r"figures\.json.*delete the folder"):
        figure_caption(tmp_path, "effects")
    (tmp_path / "figures.json").write_text("[]", encoding="utf-8")
    assert figure_caption(tmp_path, "effects") == ""


def test_the_reader_in_the_config_changes_no_provenance_hash():
    settings = {"studies": ["1A"], "device": "cpu"}
    assert config_hash({**settings, FIGURE_CAPTIONS: FIGURE_CAPTION}) == config_hash(settings)
    assert "config[_FIGURE_CAPTIONS] = _FIGURE_CAPTION" in (REPO / "rules" / "report.smk").read_text()
    assert f'snakemake.config.get("{FIGURE_CAPTIONS}")' in (REPO / "report" / "figures.rst").read_text()


def test_a_script_job_gets_an_empty_dict_in_its_place():
    """Snakemake pickles the config into each script job: the reader arrives there as {}, so no
    job's environment has to import it (and an unpicklable value would stop every job)."""
    config = pickle.loads(pickle.dumps({"studies": ["1A"], FIGURE_CAPTIONS: FIGURE_CAPTION}, protocol=4))
    assert config == {"studies": ["1A"], FIGURE_CAPTIONS: {}}
    assert b"fmat_replication" not in pickle.dumps(FIGURE_CAPTION, protocol=4)
