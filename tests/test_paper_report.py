"""Issue 18: the paper's tables in its layout (fmat_replication.pages.tables), its figures redrawn
(fmat_replication.pages.paper_figures) and the design in words (fmat_replication.pages.design), on known data."""

from __future__ import annotations

import base64
import re
from html import unescape
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as sps

from fmat.analyses.change import trend_table
from fmat.results import results_frame
from fmat_replication.compare import compare
from fmat_replication.pages.design import design_data, pair_labels
from fmat_replication.pages.html import render
from fmat_replication.pages.paper_figures import (
    FigureUnavailable,
    figure3_criterion,
    figure4_trend,
    figure_attitude_forest,
    figure_stereotype_forest,
)
from fmat_replication.pages.tables import (
    csv_download,
    headline_rows,
    headlines,
    other_rows,
    ours_text,
    paper_table,
    paper_text,
    table_attitude,
    table_cells,
    verdict_box,
)
from fmat_replication.paper import load_paper_results

REPO = Path(__file__).resolve().parents[1]


def _layout(study, paper):
    """The paper's layout of a study as its page chooses it: by the paper's table that prints it."""
    import yaml

    from fmat_replication.pages.study import item_word

    raw = yaml.safe_load((REPO / "config" / "studies" / f"{study}.yaml").read_text(encoding="utf-8"))
    return paper_table(study, paper, item=item_word(raw))


def verdict_box_html(*args, **kwargs) -> str:
    """The verdict box as the study page writes it: its template on :func:`verdict_box`'s data."""
    return render("verdict_box.html.j2", v=verdict_box(*args, **kwargs))


STUDIES = ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "3A", "3B", "3C", "3D", "4A", "4B", "4C", "4D"]


@pytest.fixture(scope="module")
def paper():
    return load_paper_results()


@pytest.fixture(scope="module")
def not_run(paper):
    """The replication table of a run that computed nothing: every row not computable."""
    from fmat.results import RESULT_COLUMNS

    return compare(paper, pd.DataFrame(columns=RESULT_COLUMNS))


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- tables


@pytest.mark.parametrize("study", STUDIES)
def test_every_printed_number_appears_once_in_table_or_text(study, paper, not_run):
    """The layout table and the "printed in the text" rows together hold each paper row of the
    study exactly once, and every key of the layout is a row of the paper's file."""
    rep = not_run[not_run["study"] == study]
    layout = _layout(study, paper)
    keys = [k for _, cells in layout.rows for k in cells if k is not None]
    assert len(keys) == len(set(keys))  # no cell twice
    paper_keys = set(zip(rep["statistic"], rep["condition"], rep["model"]))
    assert set(keys) <= paper_keys, set(keys) - paper_keys  # no invented cell
    rest = other_rows(rep, [layout])
    assert len(rest) + len(set(keys)) == len(rep)  # nothing lost, nothing twice


def test_table3_has_a_row_per_model_and_the_index_row(paper, not_run):
    t = _layout("1A", paper)
    assert t.title == "Table 3" and _layout("1B", paper).title == "Table 4"  # the table the paper's rows name
    assert "% male of the occupation" in t.groups[1][0] and "of the name" in _layout("1B", paper).groups[1][0]
    labels = [label for label, _ in t.rows]
    assert labels[0] == "Overall" and labels[-1].startswith("Mean standardized index")
    assert "vinai/bertweet-large" in labels and len(labels) == 14  # Overall + 12 models + index
    assert len(t.columns) == 9 and [n for _, n in t.groups] == [1, 4, 4]
    text = render("paper_table.html.j2", t=table_cells(t, not_run[not_run["study"] == "1A"], study="1A"))
    # roberta-base, Q1 with % male: the paper's .80***, our number missing
    row = re.search(r"<th class='rowlabel'>roberta-base</th>(.*?)</tr>", text).group(1)
    cells = re.findall(r"<span class='paper'>(.*?)</span><span class='ours'>(.*?)</span>", row)
    assert cells[0] == ("0.93", "—") and cells[1] == ("0.80***", "—")
    assert "v-nc" in row and "title='not computable:" in row


def test_cells_show_ours_with_stars_and_verdict_colour(paper):
    ours = results_frame(
        [
            {
                "study": "2A",
                "statistic": "d",
                "condition": "like-dislike:personal",
                "model": "all",
                "value": 0.4012,
                "p": 0.0004,
                "ci_low": 0.2,
                "ci_high": 0.6,
            }
        ]
    )
    rep = compare(paper[paper["study"] == "2A"], ours)
    r = rep[(rep["condition"] == "like-dislike:personal") & (rep["statistic"] == "d")].iloc[0].to_dict()
    assert paper_text(r) == "0.38***" and ours_text(r) == "0.40***"
    assert r["verdict"] == "replicated"
    html = render("paper_table.html.j2", t=table_cells(table_attitude(["2A"], {"2A": "Flower–insect"}), rep))
    assert "<td class='cell v-replicated'" in html and "Study 2A: Flower–insect" in html
    nonsig = {**r, "ours_value": -0.051, "ours_p": 0.5}
    assert ours_text(nonsig) == "-0.05"  # no stars for p >= .05


def test_verdict_box_counts_and_headlines(paper):
    ours = results_frame(
        [
            {
                "study": "1A",
                "statistic": "r",
                "condition": "fmat~pct_male",
                "model": "all",
                "value": 0.7351,
                "p": 1e-9,
                "ci_low": 0.58,
                "ci_high": 0.84,
            }
        ]
    )
    rep = compare(paper[paper["study"] == "1A"], ours)
    box = verdict_box_html("1A", rep)
    n = int((rep["verdict"] == "replicated").sum())
    assert n >= 1 and f"<b>{n}</b> replicated" in box
    assert f"of {len(rep)} numbers" in box
    assert "paper r = 0.74***, ours r = 0.74***" in box  # the headline claim
    assert "docs/reports.md" in box and "rule-link" not in box
    assert "<a class='rule-link' href='file:///r/docs/reports.md'>" in verdict_box_html(
        "1A", rep, rule_href="file:///r/docs/reports.md"
    )
    assert "nothing to replicate" in verdict_box_html("X1", rep)
    table = render("headlines.html.j2", rows=headline_rows(["1A", "X1"], rep))
    assert table.count("<tr>") == 1 + int((headlines()["study"] == "1A").sum()) and "href='1A.html'" in table
    assert "<td>r = 0.74***</td><td>r = 0.74***</td><td class='v-replicated'" in table


def test_the_overview_prints_the_attitude_studies_in_one_table_6(paper):
    """The paper prints 2A-2D together (its Table 6): the overview does too, chosen by the paper's
    table number, not by the studies' analysis."""
    from fmat_replication.pages.inputs import IndexPage
    from fmat_replication.pages.overview import verdicts

    ids = ["1A", "2A", "2B"]
    rep = compare(paper[paper["study"].isin(ids)], results_frame([{"study": "2A", "statistic": "d", "value": 0.5}]))
    empty = pd.DataFrame()
    data = IndexPage(ids, paper, rep, empty, {s: f"title {s}" for s in ids}, empty, empty, empty, empty, [])
    joint = verdicts(data)["joint_tables"]
    assert [t["number"] for t in joint] == ["6"]  # the heading "Table 6 of the paper, with ours": overview.html.j2
    html = render("paper_table.html.j2", t=joint[0]["table"])
    assert "Study 2A: title 2A" in html and "Study 2B: title 2B" in html and "1A" not in html


def test_every_headline_names_a_row_of_the_paper(paper):
    keys = set(zip(paper["study"], paper["statistic"], paper["condition"], paper["model"]))
    claims = headlines()
    assert set(claims["study"]) == set(STUDIES)  # every study of the paper has its claims
    for study, stat, cond, model in claims[["study", "statistic", "condition", "model"]].itertuples(index=False):
        assert (study, stat, cond, model) in keys, (study, stat, cond)


def test_csv_link_round_trips():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y,z"]})
    link = render("csv_link.html.j2", d=csv_download(df, "t.csv"))
    data = re.search(r"base64,([A-Za-z0-9+/=]+)'", link).group(1)
    assert pd.read_csv(pd.io.common.BytesIO(base64.b64decode(data))).equals(df)
    assert "download='t.csv'" in link and "(2 rows)" in link


# ----------------------------------------------------------------------------- figures


def _line(ax, label):
    return next(ln for ln in ax.get_lines() if ln.get_label() == label)


def test_figure4_draws_the_two_sided_moving_average_of_a_known_series():
    """d = year - 1800 for one model with the years 1850-1851 missing: the interpolated series
    is the line itself, so the 10-year average (t-4 .. t+5) is t - 1800 + 0.5 inside, and the
    adaptive ends average the nearest years (1800: mean of 0..5 = 2.5; 2019: mean of 215..219 = 217)."""
    years = [y for y in range(1800, 2020) if y not in (1850, 1851)]
    yearly = pd.DataFrame({"model": "m1", "year": years, "d": [float(y - 1800) for y in years]})
    trend = trend_table(yearly, list(range(1800, 2020)))
    fig = figure4_trend(trend, "4A")
    ax = fig.axes[0]
    bold = _line(ax, "mean, 10-year moving average")
    x, y = np.asarray(bold.get_xdata(), float), np.asarray(bold.get_ydata(), float)
    assert x[0] == 1800 and x[-1] == 2019 and len(x) == 220
    assert y[0] == pytest.approx(2.5) and y[-1] == pytest.approx(217.0)
    assert np.allclose(y[10:-10], x[10:-10] - 1800 + 0.5)
    assert y[list(x).index(1850)] == pytest.approx(50.5)  # through the interpolated gap
    assert bold.get_linewidth() > _line(ax, "m1").get_linewidth()  # average bold, model thin
    pts = ax.collections[0].get_offsets()
    shown = np.asarray(pts)[~np.ma.getmaskarray(pts).any(axis=1) & np.isfinite(np.asarray(pts, float)).all(axis=1)]
    assert len(shown) == 218 and 1850 not in shown[:, 0]  # yearly points: raw, gap not filled
    assert ax.get_xlim()[0] < 1800 < 2019 < ax.get_xlim()[1]
    assert "Figure 4 (Study 4A)" in ax.get_title()


def test_figure4_without_scores_says_why():
    trend = pd.DataFrame(
        {
            "model": ["all", "all"],
            "year": [1800, 1801],
            "d": [np.nan, np.nan],
            "d_interpolated": [np.nan, np.nan],
            "d_smooth": [np.nan, np.nan],
        }
    )
    with pytest.raises(FigureUnavailable, match="no year has scores"):
        figure4_trend(trend)
    with pytest.raises(FigureUnavailable, match="no rows"):
        figure4_trend(pd.DataFrame())


def test_figure3_fits_and_r_on_known_data():
    rng = np.random.default_rng(3)
    pct = np.linspace(1, 99, 40)
    fmat = 0.02 * pct - 1 + rng.normal(0, 0.3, 40)
    table = pd.DataFrame(
        {
            "item": [f"w{i}" for i in range(40)],
            "fmat": fmat,
            "pct_male": pct,
            "wefat_male": fmat + rng.normal(0, 0.1, 40),
            "fit_logit": 0.3 * np.log(pct / (100 - pct)),
        }
    )
    fig = figure3_criterion(table, "1C", logit=True)
    ax_pct, ax_wefat = fig.axes
    lin = _line(ax_pct, "linear fit")
    b, a = np.polyfit(pct, fmat, 1)
    gx, gy = np.asarray(lin.get_xdata()), np.asarray(lin.get_ydata())
    assert np.allclose(gy, a + b * gx) and lin.get_color() == "#8c8c8c"
    logit = _line(ax_pct, "logit fit")  # 1C: the black logit curve
    assert logit.get_color() == "#000000" and np.allclose(logit.get_ydata(), table["fit_logit"])
    r = sps.pearsonr(pct, fmat).statistic
    label = ax_pct.texts[0].get_text()
    assert label.startswith(f"r = {r:.2f}".replace("0.", ".") + "***") and "n = 40" in label
    assert "WEFAT" in ax_wefat.get_xlabel()
    assert not [ln for ln in figure3_criterion(table, "1A").axes[0].get_lines() if ln.get_label() == "logit fit"]
    assert (
        figure3_criterion(table, "1C", wefat_label="WEFAT male (3 of 40 items: demo vectors)")
        .axes[1]
        .get_xlabel()
        .endswith("demo vectors)")
    )


def test_figure3_without_criterion_says_why():
    with pytest.raises(FigureUnavailable, match="no item has both"):
        figure3_criterion(pd.DataFrame({"fmat": [1.0, 2.0], "pct_male": [np.nan, np.nan]}), "1A")


def test_attitude_forest_puts_the_paper_beside_ours(not_run):
    effects = pd.DataFrame(
        {
            "relation": ["like-dislike"] * 2 + ["notice-ignore"] * 2,
            "perceiver": ["personal", "societal"] * 2,
            "d": [0.3, 0.2, -0.1, 0.0],
            "ci_low": [0.1, 0.0, -0.3, -0.2],
            "ci_high": [0.5, 0.4, 0.1, 0.2],
        }
    )
    ax = figure_attitude_forest(effects, not_run, "2A").axes[0]  # the paper's d from the replication table
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "like-dislike, personal",
        "like-dislike, societal",
        "notice-ignore, personal",
        "notice-ignore, societal",
    ]
    diamonds = ax.collections[-1].get_offsets()
    assert list(np.round(diamonds[:, 0], 2)) == [0.38, 0.37, -0.06, 0.22]  # Table 6, Study 2A
    bars = ax.containers[0]
    assert list(bars.lines[0].get_xdata()) == [0.3, 0.2, -0.1, 0.0]
    seg = bars.lines[2][0].get_segments()[0]
    assert seg[0][0] == pytest.approx(0.1) and seg[1][0] == pytest.approx(0.5)


def test_stereotype_forest_labels_pairs_and_keeps_model_all(not_run):
    effects = pd.DataFrame(
        {
            "model": ["all", "all", "m1"],
            "condition": ["all", "pair1", "all"],
            "d": [1.0, 0.9, 5.0],
            "ci_low": [0.8, 0.5, 4.0],
            "ci_high": [1.2, 1.3, 6.0],
        }
    )
    ax = figure_stereotype_forest(effects, not_run, "3A", {"pair1": "lead – raise"}).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["overall", "lead – raise"]
    assert list(np.round(ax.collections[-1].get_offsets()[:, 0], 2)) == [1.02, 1.08]
    with pytest.raises(FigureUnavailable, match="every d is missing"):
        figure_stereotype_forest(effects.assign(d=np.nan), not_run, "3A")


# ----------------------------------------------------------------------------- design


def _design_rows(raw: dict) -> list[list[str]]:
    """The Design section's table rows as the page shows them (design.html.j2), cells as text."""
    page = render("design.html.j2", design=design_data(raw))
    return [[unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)] for row in re.findall(r"<tr>(.*?)</tr>", page)]


def test_design_in_words():
    raw = yaml.safe_load((REPO / "config" / "studies" / "2A.yaml").read_text(encoding="utf-8"))
    rows = _design_rows(raw)
    assert rows[0] == ["", "query template", "[MASK] options", "TARGET", "ATTRIB"]
    t = [r for r in rows if r[0] in ("Q1", "Q2")]
    assert [r[1] for r in t] == ["I [MASK] {TARGET}.", "Most people [MASK] {TARGET}."]
    assert t[0][3].startswith("Flowers (25): aster, clover") and "Insects (25)" in t[0][3]
    assert t[0][3].count(", …") == 2  # 25 words each, the first 8 shown
    assert t[0][2] == "Positive (2): like, notice; Negative (2): dislike, ignore"
    opts = dict(r for r in rows if len(r) == 2)
    words = opts["LPR"]
    assert words.startswith("LPR = log P([MASK] = Positive word) − log P([MASK] = Negative word), per [MASK] pair")
    assert "kept apart" in words
    assert opts["scoring"].startswith("probability of each [MASK] option from the fill-mask head (FMAT)")
    assert opts["analysis"] == "attitude_weat"
    assert opts["relations"] == "like-dislike: like vs. dislike; notice-ignore: notice vs. ignore"
    assert "yaml" not in " ".join(opts.values()).lower() and "mask_pair" not in " ".join(opts.values())


def test_design_words_of_ranges_criteria_and_options():
    raw = {
        "queries": [
            {"query": "q", "MASK": {"Year": {"range": [1800, 2019]}}, "TARGET": {"criterion": "names", "column": "item"}},
            {"query": "r", "MASK": ["a", "b"], "TARGET": {"G": {"criterion": "t"}}, "ATTRIB": {"range": [1, 2, 3]}},
        ],
        "lpr": {"mask_pair": False, "attrib_pair": True},
        "reliability": {"item": "T_word", "by": "model"},
        "score": {"method": "lpbs", "na_out": False},
    }
    rows = _design_rows(raw)
    assert rows[1][2:] == ["Year: the numbers 1800 to 2019", "the words of the criterion table 'names' (column 'item')", ""]
    assert rows[2][2:] == ["(2): a, b", "G: the words of the criterion table 't'", "range [1, 2, 3]"]
    opts = dict(r for r in rows if len(r) == 2)
    assert opts["LPR"] == "LPR = log P([MASK] word) of each [MASK] option, not paired"  # no ATTRIB groups to contrast
    assert opts["reliability"] == "ICC of the models as raters; Cronbach's α over the T_word items, separately per model"
    assert opts["scoring"] == (
        "log probability corrected for the [MASK] word's prior (LPBS); "
        "words not in a model's vocabulary are left out (NA), not split (kept)"
    )
    assert opts["analysis"] == "none (reliability only)"
    assert _design_rows({"queries": [{"query": "q", "MASK": {"A": ["x"]}}], "lpr": {}, "reliability": {}})[-3:] == [
        ["LPR", "LPR = log P([MASK] = A word) − log P([MASK] =  word), per [MASK] pair"],
        ["reliability", "ICC of the models only"],
        ["analysis", "none (reliability only)"],
    ]


def test_pair_labels_of_3a():
    raw = yaml.safe_load((REPO / "config" / "studies" / "3A.yaml").read_text(encoding="utf-8"))
    labels = pair_labels(raw)
    assert len(labels) == 9 and labels["pair3"] == "lead teams – raise children"
    opts = dict(r for r in _design_rows(raw) if len(r) == 2)
    assert opts["mask wordings"] == "men vs. women; fathers vs. mothers" and "[" not in opts["mask wordings"]


def test_our_other_models_get_their_own_table3_rows(paper):
    stats = results_frame(
        [
            {"study": "1A", "statistic": "r", "condition": "fmat~pct_male:Q2", "model": "tiny-x", "value": 0.5012, "p": 0.0002},
            {"study": "1A", "statistic": "alpha", "condition": "all", "model": "tiny-x", "value": 0.9},
        ]
    )
    from fmat_replication.pages.tables import ours_only, table_criterion

    t = table_criterion("1A", paper, models=["tiny-x"])
    assert [label for label, _ in t.rows] == ["tiny-x"] and "our models" in t.title
    html = render("paper_table.html.j2", t=table_cells(t, ours_only(stats), study="1A", legend=False))
    cells = re.findall(r"<td class='cell v-ours'><span class='ours'>(.*?)</span></td>", html)
    assert cells == ["0.900", "0.501***"] and "table-legend" not in html


def test_figure3_rasterizes_only_thousands_of_points():
    """3,644 names (1C) as vector points would make a page of megabytes: the points become one
    bitmap layer inside the SVG, the axes and text stay vectors; 50 occupations stay vectors."""

    def table(n):
        x = np.linspace(0, 100, n)
        return pd.DataFrame({"item": range(n), "fmat": x / 100, "pct_male": x})

    assert figure3_criterion(table(1000), "1C").axes[0].collections[0].get_rasterized()
    assert not figure3_criterion(table(50), "1A").axes[0].collections[0].get_rasterized()


def test_forest_plot_is_legible_at_page_width():
    """Issue 41: nine long rows (3A): the data get more than half of the figure's width, the labels
    are wrapped words (not raw ids), the legend lies outside the data, the planted value is drawn,
    and the paper's mark only where the paper prints a number."""
    from fmat_replication.pages.paper_figures import wrap_label

    conds = ["all", *[f"pair{i}" for i in range(1, 7)], "wording:men/women", "wording:fathers/mothers"]
    labels = {f"pair{i}": f"a long attribute phrase number {i} – its long counterpart {i}" for i in range(1, 7)}
    effects = pd.DataFrame(
        {"model": "all", "condition": conds, "d": np.linspace(-0.3, 1.2, 9), "ci_low": np.linspace(-0.5, 1.0, 9)}
    ).assign(ci_high=lambda d: d["d"] + 0.2)
    rep = pd.DataFrame({"study": "3A", "statistic": "d", "condition": ["all"], "model": "all", "paper_value": [1.1]})
    fig = figure_stereotype_forest(effects, rep, "3A", labels, planted={"all": 1.0, "pair2": 0.5})
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    whole = fig.get_tightbbox(renderer).width * fig.dpi  # the saved figure (bbox_inches="tight"), in pixels
    assert ax.get_window_extent().width > 0.5 * whole
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert "wording: men vs. women" in ticks and all(max(map(len, t.split("\n"))) <= 26 for t in ticks)
    assert wrap_label("wording:men/women") == "wording: men vs. women"
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.y1 < ax.get_window_extent().y0  # below the data, not on it
    marks = {c.get_label(): c for c in ax.collections}
    assert len(marks["planted (demo world)"].get_offsets()) == 9  # NaN where nothing was planted
    assert np.isfinite(marks["planted (demo world)"].get_offsets()[:, 0]).sum() == 2
    no_paper = figure_stereotype_forest(effects, rep.iloc[:0], "X1", labels).axes[0]
    assert "paper" not in [c.get_label() for c in no_paper.collections]  # no diamonds where the paper has none
