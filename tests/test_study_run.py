"""fmat.run_study and the page of ``fmat study --report`` (issue 42): the study's own analysis is
run, its effect is shown, the LPR is defined as the study file defines it, and the groups that
the analysis compares are never averaged together."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from fmat.results import results_frame
from fmat.study_page import lpr_tables, render_study_page

REPO = Path(__file__).resolve().parents[1]


def _text(html: str) -> str:
    html = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _two_group_lpr():
    """LPRs of a study with mask_pair false: +1 for every Male row, -1 for every Female row."""
    rows = []
    for model in ("m1", "m2"):
        for q in ("Most [MASK] are {ATTRIB}.", "Most [MASK] should be {ATTRIB}."):
            for group, word, value in (("Male", "men", 1.0), ("Female", "women", -1.0)):
                for pair in ("kind - rude", "warm - cold"):
                    rows.append(
                        {
                            "model": model,
                            "query": q,
                            "MASK": group,
                            "M_word": word,
                            "ATTRIB": "Warm - Cold",
                            "A_word": pair,
                            "LPR": value,
                        }
                    )
    return pd.DataFrame(rows)


def test_the_lpr_tables_never_average_the_groups_that_are_compared():
    """Issue 42: the page averaged the two groups being compared (a planted d = 0.75 showed as
    mean LPRs near 0). Each table now keeps the groups the LPR did not contrast apart."""
    tables = lpr_tables(_two_group_lpr())
    assert tables, "no LPR table"
    for t in tables:
        means = [float(r[-1]) for r in t["rows"]]
        assert set(means) == {1.0, -1.0}, (t["caption"], t["rows"])


class _Study:
    id = "S"
    title = "Warmth of men and women"
    lpr = {"mask_pair": False, "attrib_pair": True}
    analysis = {"name": "stereotype_pairs"}


def _page(stats, status):
    lpr = _two_group_lpr()
    queries = pd.DataFrame(
        [
            {"query": q, "MASK": g, "M_word": w, "ATTRIB": a, "A_word": word}
            for q in ("Most [MASK] are {ATTRIB}.", "Most [MASK] should be {ATTRIB}.")
            for g, w in (("Male", "men"), ("Female", "women"))
            for a, words in (("Warm", ("kind", "warm")), ("Cold", ("rude", "cold")))
            for word in words
        ]
    )
    return _text(render_study_page(_Study(), queries, lpr, stats, ["m1", "m2"], {}, status))


def test_the_page_shows_the_effect_and_defines_the_lpr_as_the_file_does():
    stats = results_frame(
        [
            {
                "study": "S",
                "statistic": "d",
                "condition": "all",
                "model": "all",
                "value": 0.75,
                "ci_low": 0.64,
                "ci_high": 0.87,
                "p": 1e-6,
                "df": 29,
            },
            {"study": "S", "statistic": "d", "condition": "all", "model": "m1", "value": 0.7},
            {"study": "S", "statistic": "d", "condition": "all", "model": "m2", "value": 0.8},
            {"study": "S", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.9},
        ]
    )
    text = _page(stats, {"analysis": "stereotype_pairs", "implemented": True, "notes": ["a note of the analysis"]})
    assert "Effect: stereotype_pairs" in text
    assert re.search(r"d all 0\.750 0\.640 0\.870 < \.001 29", text), text[:1500]
    assert re.search(r"Per model statistic condition m1 m2 d all 0\.700 0\.800", text), text[:1500]
    assert "a note of the analysis" in text
    assert "ln P(first MASK group" not in text
    defined = "LPR = ln P([MASK] word | the j-th ATTRIB word of Warm) − ln P(same | the j-th of Cold), for each [MASK] word"
    assert defined in text, text
    assert "Not contrasted in the LPR (mask_pair: false): the MASK groups (Male, Female)" in text
    assert "ICC_average" in text.split("Reliability", 2)[-1]


def test_a_study_without_a_registered_analysis_says_so_on_its_page():
    stats = results_frame([{"study": "S", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.9}])
    text = _page(stats, {"analysis": "my_analysis", "implemented": False, "notes": []})
    assert "No effect: no analysis named my_analysis is registered" in text


@pytest.mark.slow
def test_a_planted_d_shows_on_the_page_and_a_null_world_shows_none(tmp_path, capsys):
    """Issue 42: the page of a study run on tiny models that learned a planted d shows that d
    (sign, p < .05, CI), and the same study on models of a null world shows no effect (p >= .05,
    CI covering 0); `fmat study` prints the effect too."""
    from fmat.cli import main

    study = tmp_path / "W.yaml"
    study.write_text(
        "id: W\ntitle: Warm and competent nationalities\nqueries:\n"
        '  - query: ["The [MASK] are {ATTRIB}.", "Most [MASK] seem {ATTRIB}."]\n'
        "    MASK: {Swedes: [swedes], Greeks: [greeks]}\n"
        "    ATTRIB: {Warm: [friendly, kind, caring], Cold: [hostile, cruel, selfish]}\n"
        "lpr: {mask_pair: false, attrib_pair: true}\n"
        "analysis: {name: stereotype_pairs, options: {mask_contrast: [Swedes, Greeks], attrib_contrast: [Warm, Cold]}}\n",
        encoding="utf-8",
    )
    shown = {}
    for label, effects in (("planted", "[{contrast: {MASK: [Swedes, Greeks], ATTRIB: [Warm, Cold]}, d: 0.8}]"), ("null", "[]")):
        world = tmp_path / f"{label}.yaml"
        world.write_text(
            f"studies:\n  W:\n    variation: {{items: 0, model_items: 0}}\n    samples: 60\n    effects: {effects}\n",
            encoding="utf-8",
        )
        pilot = tmp_path / f"pilot-{label}"
        args = [
            "pilot",
            str(study),
            "--world",
            str(world),
            "-o",
            str(pilot),
            "--families",
            "bert-uncased,roberta",
            "--steps",
            "200",
        ]
        assert main(args) == 0, capsys.readouterr().err
        out = tmp_path / f"study-{label}"
        models = [str(p) for p in sorted((pilot / "models").iterdir())]
        rc = main(
            [
                "study",
                str(study),
                *sum((["-m", m] for m in models), []),
                "-o",
                str(out),
                "--report",
                "--threads",
                "1",
                "--no-progress",
            ]
        )
        printed = capsys.readouterr().out
        assert rc == 0
        assert "effect (95% CI):" in printed and "d (all) = " in printed, printed
        stats = pd.read_parquet(out / "stats.parquet")
        d = stats[(stats["statistic"] == "d") & (stats["condition"] == "all") & (stats["model"] == "all")].iloc[0]
        shown[label] = d
        text = _text((out / "report.html").read_text(encoding="utf-8"))
        assert re.search(rf"d all {d['value']:.3f} {d['ci_low']:.3f} {d['ci_high']:.3f}", text), text[:2000]
    planted, null = shown["planted"], shown["null"]
    assert planted["value"] > 0.3 and planted["p"] < 0.05 and planted["ci_low"] > 0, planted
    assert null["p"] >= 0.05 and null["ci_low"] <= 0 <= null["ci_high"], null


def _no_scoring(*args, **kwargs):
    raise AssertionError("a model was scored although the call is refused")


def test_run_study_refuses_before_any_model_loads(tmp_path, monkeypatch):
    """fmat.run_study finds the problems of its arguments before any model loads: a study file's
    analysis that reads a criterion table that is not there, resume or report without an output
    folder, an unknown table format, a model given twice."""
    import fmat
    import fmat.runner
    from fmat.errors import InputError

    monkeypatch.setattr(fmat.runner, "score_tables", _no_scoring)
    x1 = REPO / "config" / "studies" / "X1.yaml"
    with pytest.raises(InputError, match="need an output folder"):
        fmat.run_study(x1, ["a", "b"], resume=True)
    with pytest.raises(InputError, match="unknown table format 'xlsx'"):
        fmat.run_study(x1, ["a", "b"], out=tmp_path / "o", format="xlsx")
    with pytest.raises(InputError, match="a model is given twice"):
        fmat.run_study(x1, ["a", "a"], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_one_model_keeps_the_reliability_and_says_why_there_is_no_effect(tmp_path):
    """A model-level analysis (models as random intercepts) cannot run on one model: run_study
    keeps the reliability rows and says why there is no effect, on the terminal and the page,
    instead of failing after the scoring."""
    import fmat
    from fmat import tiny

    study = tmp_path / "S.yaml"
    study.write_text(
        'id: S\ntitle: t\nqueries:\n  - query: "The [MASK] is {ATTRIB}."\n'
        "    MASK: {Male: [man], Female: [woman]}\n    ATTRIB: {Warm: [kind, warm], Cold: [rude, cold]}\n"
        "lpr: {mask_pair: false, attrib_pair: true}\n"
        "analysis: {name: stereotype_pairs, options: {mask_contrast: [Male, Female]}}\n",
        encoding="utf-8",
    )
    model = tiny.build_tiny_model(tmp_path / "m", "bert-uncased", ["man", "woman", "kind", "warm", "rude", "cold"])
    res = fmat.run_study(study, [str(model)], out=tmp_path / "o", report=True, progress=False, threads=1)
    assert res.effect.empty and res.status["run"] is False
    assert "the analysis stereotype_pairs did not run" in res.summary() and "one model" in res.summary()
    assert (tmp_path / "o" / "stats.parquet").is_file()
    assert "No effect: the analysis stereotype_pairs did not run" in _text(res.page.read_text(encoding="utf-8"))


def test_a_missing_criterion_table_is_said_before_any_model_loads(tmp_path, monkeypatch, caplog):
    """An analysis that reads a criterion table that is not there (1A's factual_wefat) is said
    before any model loads; the scores, LPRs and reliability are still computed."""
    import logging

    import fmat
    import fmat.runner

    class Loaded(Exception):
        pass

    def loads(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(fmat.runner, "score_tables", loads)
    with caplog.at_level(logging.WARNING, logger="fmat.study_run"), pytest.raises(Loaded):
        fmat.run_study(REPO / "config" / "studies" / "1A.yaml", ["a", "b"], criteria_dir=tmp_path / "none")
    said = caplog.text
    assert "the analysis will not run" in said and "reads criterion table" in said and str(tmp_path / "none") in said, said
