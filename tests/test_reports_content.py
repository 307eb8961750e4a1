"""The report pages (fmat_replication.pages.study.study_page, .overview.overview_page) written
without Quarto on a small synthetic results folder: every study, figure, table and the demo
banner must be in the HTML, and no notebook runs (no kernel, no jupytext/papermill/nbconvert).

The same fixture renders with Quarto in tests/test_quarto.py, which compares the two outlines.
"""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from fmat.results import results_frame
from fmat_replication.compare import StudyStatus, compare
from fmat_replication.pages.render import render_page
from fmat_replication.paper import load_paper_results
from fmat_replication.score import PROVENANCE_KEY

STUDIES = ["1A", "2A"]
#: an embedded output image (not the PNG inside the page's CSS)
IMG = re.compile(r"<img[^>]+src=[\"']data:image/png;base64,[A-Za-z0-9+/=]{2000,}")
#: an embedded SVG figure (fmat_replication.pages.study.figure_items)
SVG = re.compile(r"<img[^>]*class=[\"']paper-figure[\"'][^>]*src=[\"']data:image/svg\+xml;base64,[A-Za-z0-9+/=]{2000,}")
MODELS = ["bert-base-uncased", "roberta-base"]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """results/ as the workflow writes it: per study stats.parquet, status.json and figures/
    (+ a figure table), scores and their OOV tables, the replication tables (whole and per
    study), the agreement summary, the model cards and the model checks (the checks stage's own
    functions make results/oov and results/models/*.parquet, as its rules do)."""
    from fmat.agreement import SUMMARY_COLUMNS
    from fmat_replication.checks import model_checks, oov_study
    from fmat_replication.scripts import write_json

    root = tmp_path_factory.mktemp("reports")
    res = root / "results"
    icc = {"1A": (0.81, 0.30), "2A": (0.95, 0.64)}
    all_rows = []
    for s in STUDIES:
        adir = res / "analysis" / s
        (adir / "figures").mkdir(parents=True)
        avg, single = icc[s]
        rows = [
            {
                "study": s,
                "statistic": "ICC_average",
                "condition": "all",
                "model": "all",
                "value": avg,
                "ci_low": avg - 0.03,
                "ci_high": avg + 0.02,
                "p": 0.0,
                "n": 400,
            },
            {
                "study": s,
                "statistic": "ICC_single",
                "condition": "all",
                "model": "all",
                "value": single,
                "ci_low": single - 0.05,
                "ci_high": single + 0.05,
                "p": 0.0,
                "n": 400,
            },
        ]
        if s == "1A":
            rows += [
                {"study": s, "statistic": "alpha", "condition": "all", "model": m, "value": v, "n": 50}
                for m, v in zip(MODELS, [0.97, 0.93])
            ]
        else:
            rows += [
                {
                    "study": s,
                    "statistic": "d",
                    "condition": "like-dislike:personal",
                    "model": "all",
                    "value": 0.41,
                    "p": 1e-5,
                    "df": 2381,
                },
                {"study": s, "statistic": "alpha", "condition": "1:like:Flowers", "model": "all", "value": 0.97, "n": 25},
            ]
        stats = results_frame(rows)
        stats.to_parquet(adir / "stats.parquet")
        all_rows.append(stats)
        figs = {}
        if s == "2A":
            years = np.arange(1800, 1830)
            pd.DataFrame(
                {
                    "model": "all",
                    "year": years,
                    "d": np.sin(years / 5.0),
                    "d_interpolated": np.sin(years / 5.0),
                    "d_smooth": np.sin(years / 5.0),
                }
            ).to_parquet(adir / "figures" / "trend.parquet")
            figs = {"trend": "trend.parquet"}
        (adir / "status.json").write_text(
            json.dumps(
                {
                    "study": s,
                    "analysis": "factual_wefat" if s == "1A" else "attitude_weat",
                    "implemented": s == "2A",
                    "run": True,
                    "notes": ["NOTE-FROM-ANALYSIS"] if s == "2A" else ["no analysis named 'factual_wefat' is registered"],
                    "figures": figs,
                }
            )
        )
        sdir = res / "scores" / s
        sdir.mkdir(parents=True)
        for m in MODELS:
            oov = m == "roberta-base"
            scores = pd.DataFrame(
                {
                    "model": m,
                    "M_word": ["man", "woman", "zyzzyva"],
                    "prob": [0.1, 0.2, np.nan if oov else 0.01],
                    "oov": [False, False, oov],
                }
            )
            # what the scoring job records (fmat_replication.score.scoring_provenance): 2A's
            # scores come from tiny demo models, 1A's from real ones (each page reads its own)
            scores.attrs[PROVENANCE_KEY] = {
                "model": m,
                "demo": s == "2A",
                "packages": {"torch": "2.13.0", "fill-mask-association-test": "0.1.0"},
            }
            scores.to_parquet(sdir / f"{m}.parquet")
        oov_study([sdir / f"{m}.parquet" for m in MODELS], res / "oov" / f"{s}.parquet", study=s)
    ours = pd.concat(all_rows, ignore_index=True)
    status = {"1A": StudyStatus(analysis="factual_wefat", implemented=False), "2A": StudyStatus(analysis="attitude_weat")}
    replication = compare(load_paper_results(), ours, status)
    replication.to_parquet(res / "replication.parquet")
    (res / "replication").mkdir()
    for s in STUDIES:
        replication[replication["study"] == s].to_parquet(res / "replication" / f"{s}.parquet")
    (res / "agreement").mkdir()
    pd.DataFrame(columns=SUMMARY_COLUMNS).to_parquet(res / "agreement" / "summary.parquet")
    for m in MODELS:
        write_json(
            {
                "model": m,
                "architecture": "BertForMaskedLM",
                "parameters": 1000,
                "vocabulary": 50,
                "source": "hub",
                "revision": "main",
                "probes": [],
                "commit": "LOCKEDSHA123" + "a" * 28 if m == "bert-base-uncased" else "b" * 40,
            },
            res / "models" / f"{m}.json",
        )
    model_checks(
        res / "agreement" / "summary.parquet",
        [res / "analysis" / s / "stats.parquet" for s in STUDIES],
        [res / "oov" / f"{s}.parquet" for s in STUDIES],
        [res / "models" / f"{m}.json" for m in MODELS],
        checks_out=res / "models" / "checks.parquet",
        agreement_out=res / "models" / "agreement.parquet",
        provenance_out=res / "models" / "provenance.parquet",
    )
    return root


def _render(root, kind, out_name, args, monkeypatch, engine="offline"):
    """Draw the page's figures as rule report_figures does, then write the page as rule
    report_study/report_index does, in ``root`` (its relative paths resolve there); no notebook
    machinery may be imported on the way."""
    import sys

    from fmat_replication.pages.drawing import FIGURE_INPUTS, draw_index, draw_study

    monkeypatch.chdir(root)
    inputs = args["inputs"]
    if kind == "study":
        draw_study(args["study"], {k: v for k, v in inputs.items() if k in FIGURE_INPUTS}, inputs["drawn"])
    else:
        draw_index(args["studies"], inputs, inputs["drawn"])
    out = root / "reports" / out_name
    assert render_page(kind, out, args, engine=engine) == engine
    if engine == "offline":
        assert not {"jupytext", "papermill", "nbconvert", "nbclient", "ipykernel"} & set(sys.modules)
    return out.read_text(encoding="utf-8")


def _common(repo):
    return {"config_hash": "HASH42", "device": "cpu"}


def _study(repo, study, study_file=None):
    """A study page's arguments, as rule report_study passes them (its inputs from
    fmat_replication.pages.inputs.study_inputs, relative to the working folder)."""
    from fmat_replication.pages.inputs import study_inputs

    inputs = study_inputs(study, {"studies_dir": str(repo / "config/studies")}, world=False, repo=repo)
    if study_file:
        inputs["study_file"] = str(study_file)
    return {"study": study, "inputs": inputs}


def _index(repo):
    """The overview's arguments, as rule report_index passes them."""
    from fmat_replication.pages.inputs import index_inputs

    inputs = index_inputs(STUDIES, MODELS, {"studies_dir": str(repo / "config/studies")}, world=False, repo=repo)
    return {"studies": STUDIES, "inputs": inputs, "models": MODELS}


def _no_external_scripts(page):
    """Nothing loaded from outside the page: every script, stylesheet and image is inline."""
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=[\"'](?!data:)", page)
    assert not re.search(r"<link[^>]*\shref=[\"'](?!data:)", page)


def test_study_page_demo(repo, results_dir, monkeypatch):
    page = _render(results_dir, "study", "2A.html", {**_common(repo), **_study(repo, "2A")}, monkeypatch)
    _no_external_scripts(page)
    assert "demo-banner" in page and "not expected to match the paper" in page
    assert "Study 2A" in page and "Flower" in page  # design from the study file
    assert "I [MASK] {TARGET}." in page  # the query templates
    assert "ICC_average" in page and "0.950" in page  # reliability
    # the verdict first, then Table 6: our d .41 vs the paper's .38*** -> replicated, in the Personal cell
    assert page.index("replication-summary") < page.index("Table 6") < page.index('id="figures"')  # (after the TOC)
    assert re.search(
        r"<td class=[\"']cell v-replicated[\"'][^>]*><span class=[\"']paper[\"']>0.38\*\*\*</span>"
        r"<span class=[\"']ours[\"']>0.41\*\*\*</span>",
        page,
    )
    assert "Caliskan" in page  # ref: rows not computable (hover)
    assert "<code>docs/reports.md</code>" in page  # the rule, named
    assert "file://" not in page and str(repo) not in page and str(results_dir) not in page  # no local path
    assert "<code>2A.yaml</code>" in page  # the study file (outside cwd): its name
    assert "Figure 4 (Study 2A)" in page and "Figure 2 (Study 2A)" in page
    assert len(SVG.findall(page)) == 2 and not IMG.findall(page)  # vector figures, embedded
    assert "figure_" not in page.replace("paper-figure", "")  # no internal names or messages
    assert re.search(r"download=[\"']2A_paper_vs_ours.csv", page)  # the long table as CSV
    assert "zyzzyva" in page  # OOV word of roberta-base
    assert "NOTE-FROM-ANALYSIS" in page
    assert "import pandas" not in page  # code hidden


def test_study_page_normal_has_no_banner(repo, results_dir, monkeypatch):
    page = _render(results_dir, "study", "1A.html", {**_common(repo), **_study(repo, "1A")}, monkeypatch)
    _no_external_scripts(page)
    assert "demo-banner" not in page
    assert "Study 1A" in page and "Occupation" in page
    assert "no analysis of that name is registered" in page  # 1A analysis rows not computable
    assert "Table 3" in page and "bert-base-uncased" in page and "Mean standardized index" in page
    assert "Figure 2 (Study 1A)" in page and len(SVG.findall(page)) == 1  # no figure table: Figure 2 only
    assert "0.80 to 0.98" in page  # Table 3's alpha range row
    assert "not computable" in page and "replicated" in page
    assert not IMG.findall(page)


def test_index_page_demo(repo, results_dir, monkeypatch):
    page = _render(results_dir, "index", "index.html", {**_common(repo), **_index(repo)}, monkeypatch)
    _no_external_scripts(page)
    assert "demo-banner" in page
    for s in STUDIES:
        assert f"href='{s}.html'" in page or f'href="{s}.html"' in page
    assert "replication-total" in page and "not run" in page  # other studies listed as not run
    assert len(SVG.findall(page)) == 1 and not IMG.findall(page)  # Figure 2, embedded as SVG
    assert "Table 6 of the paper" in page and "Study 2A: Flower" in page  # the attitude studies together
    assert "The paper's headline claims" in html.unescape(page) and "attitude toward flowers vs. insects" in page
    assert "0.640" in page  # 2A ICC_single in the ICC table
    assert "zyzzyva" in page and "roberta-base" in page  # OOV per model
    assert "LOCKEDSHA123" in page and "HASH42" in page  # provenance
    # the versions the scoring jobs recorded, per model, under the distributions' names
    assert "fill-mask-association-test" in page and "2.13.0" in page and "not installed" not in page


def test_study_page_draws_another_analysis_table_or_says_why(repo, tmp_path, monkeypatch):
    """A figure table outside the families' named ones: drawn when it has x and y (SVG), its
    plain reason when it cannot be; never a Python message."""
    res = tmp_path / "results"
    adir = res / "analysis" / "X9"
    (adir / "figures").mkdir(parents=True)
    results_frame([{"study": "X9", "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9}]).to_parquet(
        adir / "stats.parquet"
    )
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.1, 0.4, 0.2], "kind": "line"}).to_parquet(adir / "figures/shape.parquet")
    pd.DataFrame({"x": ["a"], "y": ["not a number"]}).to_parquet(adir / "figures/broken.parquet")
    pd.DataFrame({"term": ["a"], "F": [1.0]}).to_parquet(adir / "figures/anova.parquet")
    (adir / "status.json").write_text(
        json.dumps(
            {
                "study": "X9",
                "analysis": "x",
                "implemented": True,
                "run": True,
                "notes": [],
                "figures": {n: f"{n}.parquet" for n in ("shape", "broken", "anova")},
            }
        )
    )
    (res / "replication").mkdir()
    pd.DataFrame({"study": pd.Series([], dtype=str)}).to_parquet(res / "replication" / "X9.parquet")
    (res / "oov").mkdir()
    pd.DataFrame({"study": "X9", "model": MODELS, "rows": 1, "oov_rows": 0, "nan_prob_rows": 0, "oov_words": ""}).to_parquet(
        res / "oov" / "X9.parquet"
    )
    page = _render(
        tmp_path, "study", "X9.html", {**_common(repo), **_study(repo, "X9", repo / "config/studies/X1.yaml")}, monkeypatch
    )
    assert "Figure: shape (Study X9)" in page and len(SVG.findall(page)) == 1
    plain = html.unescape(page)
    assert (
        "This figure cannot be drawn: the values of the table 'broken' to draw (its y column) are not numbers" in plain
        and "could not convert" not in plain
    )
    assert re.search(r"download=[\"']X9_anova.csv", page)
    assert "no-paper-table" in page  # X9: no paper numbers


def _calibrated_page(repo, tmp_path, monkeypatch, table: pd.DataFrame) -> str:
    """Study X9's page with ``table`` as its analysis' figure table ``calibrated``."""
    res = tmp_path / "results"
    adir = res / "analysis" / "X9"
    (adir / "figures").mkdir(parents=True)
    results_frame([{"study": "X9", "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9}]).to_parquet(
        adir / "stats.parquet"
    )
    table.to_parquet(adir / "figures/calibrated.parquet")
    (adir / "status.json").write_text(
        json.dumps(
            {
                "study": "X9",
                "analysis": "x",
                "implemented": True,
                "run": True,
                "notes": [],
                "figures": {"calibrated": "calibrated.parquet"},
            }
        )
    )
    (res / "replication").mkdir()
    pd.DataFrame({"study": pd.Series([], dtype=str)}).to_parquet(res / "replication" / "X9.parquet")
    (res / "oov").mkdir()
    pd.DataFrame({"study": "X9", "model": MODELS, "rows": 1, "oov_rows": 0, "nan_prob_rows": 0, "oov_words": ""}).to_parquet(
        res / "oov" / "X9.parquet"
    )
    page = _render(
        tmp_path, "study", "X9.html", {**_common(repo), **_study(repo, "X9", repo / "config/studies/X1.yaml")}, monkeypatch
    )
    return page


def test_study_page_shows_the_calibrated_inference_beside_the_papers(repo, tmp_path, monkeypatch):
    """A stereotype analysis' figure table ``calibrated`` (docs/calibration.md): its own section,
    marked as ours, with the sentence on which significant d's hold under it."""
    table = pd.DataFrame(
        {
            "condition": ["all", "pair1"],
            "d": [0.5, 0.2],
            "p": [0.001, 0.03],
            "ci_low": [0.3, 0.02],
            "ci_high": [0.7, 0.38],
            "p_ours": [0.004, 0.12],
            "ci_low_ours": [0.2, -0.05],
            "ci_high_ours": [0.8, 0.45],
            "significant": [True, True],
            "significant_ours": [True, False],
            "holds": [True, False],
        }
    )
    page = _calibrated_page(repo, tmp_path, monkeypatch, table)
    plain = html.unescape(page)
    assert "Calibrated inference (ours)" in plain and "p_ours" in plain and "inference: sentence" in plain
    assert "Of the 2 d's significant at .05 under the paper's model, 1 stay significant under the calibrated inference." in plain
    assert page.index("calibrated-inference") < page.index('id="figures"')
    assert "X9_calibrated.csv" not in page  # its own section, not among the other tables


def test_the_verdicts_say_whether_a_number_holds_under_the_calibrated_inference():
    """A number whose analysis has a calibrated variant (compare.py's verdict_calibrated and
    calibrated_p) shows that verdict beside the paper check's, marked as ours; a page with no
    such number has no such column."""
    from fmat_replication.compare import REPLICATION_COLUMNS
    from fmat_replication.pages.html import render
    from fmat_replication.pages.tables import text_rows

    def text_rows_html(rows):  # the page's table of the numbers printed in the text
        return render("text_numbers.html.j2", rows=text_rows(rows))

    def row(**kw):
        r = {c: float("nan") for c in REPLICATION_COLUMNS}
        r.update(
            study="3A",
            statistic="d",
            condition="all",
            model="all",
            paper_value=0.5,
            paper_p=0.001,
            ours_value=0.4,
            ours_p=0.002,
            verdict="replicated",
            reason="",
            verdict_calibrated="",
            source="",
        )
        r.update(kw)
        return r

    both = pd.DataFrame([row(verdict_calibrated="not replicated", calibrated_p=0.21), row(condition="pair1")])
    page = html.unescape(text_rows_html(both))
    assert "under the calibrated inference (ours)" in page
    assert "not replicated (p = .210)" in page  # one p format on every page (issue 53)
    assert page.count("calibrated-verdict") == 2  # one cell per row; the second row's empty
    plain = html.unescape(text_rows_html(pd.DataFrame([row()])))
    assert "calibrated" not in plain


def test_study_page_explains_the_disattenuated_r_of_a_criterion_analysis(repo, tmp_path, monkeypatch):
    """A criterion analysis' figure table ``calibrated`` (r beside the disattenuated r): the
    section says what that variant is, not the stereotype one, and counts r's."""
    table = pd.DataFrame(
        {
            "condition": ["fmat~pct_male", "fmat~pct_male:Q1"],
            "statistic": ["r", "r"],
            "value": [0.74, 0.6],
            "p": [1e-9, 1e-5],
            "ci_low": [0.59, 0.38],
            "ci_high": [0.85, 0.75],
            "reliability": [0.82, 0.7],
            "value_ours": [0.82, 0.72],
            "p_ours": [1e-9, 1e-5],
            "ci_low_ours": [0.65, 0.45],
            "ci_high_ours": [0.94, 0.9],
            "significant": [True, True],
            "significant_ours": [True, True],
            "holds": [True, True],
        }
    )
    page = _calibrated_page(repo, tmp_path, monkeypatch, table)
    plain = html.unescape(page)
    assert "inference: disattenuated" in plain and "inference: sentence" not in plain
    assert "Of the 2 r's significant at .05 under the paper's model, 2 stay significant" in plain
    assert "value_ours" in plain and "regression calibration" not in plain  # no b: no word of it
    with_b = pd.concat([table, table.iloc[:1].assign(condition="lmm:logit_male~fmat:fmat", statistic="b", value=2.6)])
    plain = html.unescape(_calibrated_page(repo, tmp_path / "b", monkeypatch, with_b))
    assert "Of the 3 r's and b's significant at .05" in plain
    assert "ICC(C,1) among the models: regression calibration" in plain


def _concept_stats_and_crossed(study: str):
    """The paper's inference (stats) and the concept-level rows (figure table crossed) of three
    headline numbers: one holds for the concept, one does not, one is significant under neither."""
    cells = [("all", 0.5, 0.001, 0.3, 0.7, 0.012, 0.13, 0.87), ("pair1", 0.2, 0.03, 0.02, 0.38, 0.21, -0.15, 0.55)]
    cells.append(("pair2", 0.05, 0.4, -0.1, 0.2, 0.7, -0.3, 0.4))
    key = {"study": study, "statistic": "d", "model": "all"}
    stats = results_frame(
        [{**key, "condition": c, "value": v, "p": p, "ci_low": lo, "ci_high": hi} for c, v, p, lo, hi, *_ in cells]
        + [{"study": study, "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9}]
    )
    crossed = results_frame(
        [{**key, "condition": c, "value": v, "p": p, "ci_low": lo, "ci_high": hi} for c, v, _, _, _, p, lo, hi in cells]
    )
    return stats, crossed


def test_study_page_sets_the_concept_level_test_beside_the_papers(repo, tmp_path, monkeypatch):
    """Issue 52: a study whose analysis wrote the figure table ``crossed`` shows, per headline
    number, the paper's CI and p ("these words in these models") beside the concept-level ones
    ("the concept") and a verdict; the summary counts which significant results still hold."""
    res = tmp_path / "results"
    adir = res / "analysis" / "X9"
    (adir / "figures").mkdir(parents=True)
    stats, crossed = _concept_stats_and_crossed("X9")
    stats.to_parquet(adir / "stats.parquet")
    crossed.to_parquet(adir / "figures" / "crossed.parquet")
    (adir / "status.json").write_text(
        json.dumps(
            {
                "study": "X9",
                "analysis": "x",
                "implemented": True,
                "run": True,
                "notes": [],
                "figures": {"crossed": "crossed.parquet"},
            }
        )
    )
    (res / "replication").mkdir()
    pd.DataFrame({"study": pd.Series([], dtype=str)}).to_parquet(res / "replication" / "X9.parquet")
    (res / "oov").mkdir()
    pd.DataFrame({"study": "X9", "model": MODELS, "rows": 1, "oov_rows": 0, "nan_prob_rows": 0, "oov_words": ""}).to_parquet(
        res / "oov" / "X9.parquet"
    )
    page = _render(
        tmp_path, "study", "X9.html", {**_common(repo), **_study(repo, "X9", repo / "config/studies/X1.yaml")}, monkeypatch
    )
    plain = html.unescape(page)
    assert "What each verdict generalizes over" in plain
    assert "95% CI: these words in these models" in plain and "p: the concept" in plain  # both columns
    assert "[0.300, 0.700]" in plain and "[0.130, 0.870]" in plain  # the paper's CI, the crossed CI
    assert re.search(r"class=.concept-holds.>holds for the concept<", plain)
    assert re.search(r"class=.concept-lost.>does not hold when the words are a sample<", plain)
    assert re.search(r"class=.concept-neither.>not significant either way<", plain)
    assert "Of the 3 headline numbers, 2 are significant at .05 under the paper's inference; 1 of them" in re.sub(
        r"</?b>", "", plain
    )
    assert "X9_crossed.csv" not in page  # its own section, not among the other tables


def test_the_overview_counts_what_holds_for_the_concept(repo, results_dir, tmp_path, monkeypatch):
    """Issue 52: the overview counts, per study with the concept-level test and in all, the paper's
    significant headline numbers and how many still hold when the words are a sample."""
    import shutil

    root = tmp_path / "run"
    shutil.copytree(results_dir, root)
    _, crossed = _concept_stats_and_crossed("2A")
    crossed = crossed[crossed["condition"] == "all"].assign(condition="like-dislike:personal", p=0.2)
    crossed.to_parquet(root / "results" / "analysis" / "2A" / "figures" / "crossed.parquet")
    page = html.unescape(_render(root, "index", "index.html", {**_common(repo), **_index(repo)}, monkeypatch))
    total = re.sub(r"</?b>", "", re.search(r"id=.concept-total.>(.*?)</p>", page).group(1))
    assert total.startswith("All these studies: 1 significant under the paper's inference, 0 of them still hold for the concept")
    assert re.search(r"<td><a href=.2A.html.>2A</a></td><td>1</td><td>1</td><td>0</td><td>1</td>", page)
    assert ">1A</a></td><td>" not in page.split("concept-counts")[1].split("</table>")[0]  # no crossed table, no row
    plain = html.unescape(_render(results_dir, "index", "index2.html", {**_common(repo), **_index(repo)}, monkeypatch))
    assert "concept-total" not in plain  # no study with the test: no such section
