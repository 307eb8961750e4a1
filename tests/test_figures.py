"""Report figures and tables (fmat_replication.pages.figures) on small hand-made data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fmat.results import results_frame
from fmat_replication.checks import model_checks_table, oov_summary, read_scores
from fmat_replication.pages.figures import figure2_icc, icc_table, plot_figure_table, run_settings
from fmat_replication.pages.paper_figures import FigureUnavailable


@pytest.fixture
def stats():
    rows = []
    for study, avg, single, cond in [("1A", 0.82, 0.28, "all"), ("2A", 0.96, 0.66, "all"), ("4A", 0.68, 0.15, "all")]:
        rows.append(
            {
                "study": study,
                "statistic": "ICC_average",
                "condition": cond,
                "model": "all",
                "value": avg,
                "ci_low": avg - 0.02,
                "ci_high": avg + 0.01,
                "n": 400,
            }
        )
        rows.append(
            {
                "study": study,
                "statistic": "ICC_single",
                "condition": cond,
                "model": "all",
                "value": single,
                "ci_low": single - 0.05,
                "ci_high": single + 0.04,
                "n": 400,
            }
        )
    rows.append({"study": "1A", "statistic": "ICC_average", "condition": "LPR", "model": "all", "value": 0.1})
    rows.append({"study": "1A", "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9})
    rows.append({"study": "3A", "statistic": "ICC_average", "condition": "raw", "model": "all", "value": 0.5})
    return results_frame(rows)


def test_icc_table_picks_raw_score_icc_in_order(stats):
    t = icc_table(stats, studies=["4A", "1A", "2A"])
    assert list(t["study"]) == ["4A", "4A", "1A", "1A", "2A", "2A"]
    assert "3A" not in set(icc_table(stats)["study"])  # its ICC rows are not condition "all": not the raw-score ICC
    assert list(t["statistic"][:2]) == ["ICC_average", "ICC_single"]
    one = t[(t["study"] == "1A") & (t["statistic"] == "ICC_average")].iloc[0]
    assert one["value"] == 0.82  # the condition-"all" row, not the LPR one
    assert t[(t["study"] == "2A") & (t["statistic"] == "ICC_single")]["value"].item() == 0.66


def test_figure2_draws_both_iccs_with_cis(stats):
    paper = pd.DataFrame({"study": ["1A", "2A"], "statistic": ["ICC_average", "ICC_average"], "value": [0.82, 0.96]})
    fig = figure2_icc(stats, paper=paper, studies=["1A", "2A", "4A"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1A", "2A", "4A"]
    bars = ax.containers  # one ErrorbarContainer per ICC statistic
    assert len(bars) == 2
    data_line, _caps, (segs,) = bars[0].lines
    ys = data_line.get_ydata()
    assert list(np.round(ys, 2)) == [0.82, 0.96, 0.68]
    first = segs.get_segments()[0]  # 1A ICC_average: .80 to .83
    assert first[0][1] == pytest.approx(0.80) and first[1][1] == pytest.approx(0.83)
    labels = ax.get_legend_handles_labels()[1]
    assert "ICC_average (paper)" in labels
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_plot_figure_table_panels_groups_lines():
    years = np.arange(1800, 1810)
    df = pd.concat(
        [
            pd.DataFrame(
                {
                    "x": years,
                    "y": np.linspace(0, 1, 10) * k,
                    "group": g,
                    "panel": p,
                    "kind": "line",
                    "xlabel": "Year",
                    "ylabel": "LPR",
                }
            )
            for k, (g, p) in enumerate([("bert", "A"), ("roberta", "A"), ("bert", "B")], 1)
        ]
    )
    fig = plot_figure_table(df, "trend")
    visible = [a for a in fig.axes if a.get_visible()]
    assert len(visible) == 2
    assert len(visible[0].get_lines()) == 2 and len(visible[1].get_lines()) == 1
    assert visible[0].get_xlabel() == "Year" and visible[0].get_title() == "A"
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_plot_figure_table_without_convention():
    df = pd.DataFrame({"year": [1800, 1801, 1802], "lpr": [-1.0, 0.0, 1.0], "group": "all"})
    fig = plot_figure_table(df, "trend")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "year" and ax.get_ylabel() == "lpr"
    assert list(ax.get_lines()[0].get_ydata()) == [-1.0, 0.0, 1.0]
    with pytest.raises(FigureUnavailable, match="x and y"):  # no guessing on other tables
        plot_figure_table(pd.DataFrame({"item": ["a"], "pct_male": [1.0], "fmat": [2.0]}))
    import matplotlib.pyplot as plt

    plt.close("all")


def test_bars_of_groups_are_dodged():
    df = pd.DataFrame(
        {
            "x": ["personal", "societal"] * 2,
            "y": [0.4, 0.3, 0.1, -0.2],
            "group": ["like-dislike"] * 2 + ["notice-ignore"] * 2,
            "ymin": [0.3, 0.2, 0.0, -0.3],
            "ymax": [0.5, 0.4, 0.2, -0.1],
        }
    )
    fig = plot_figure_table(df)
    ax = fig.axes[0]
    centres = sorted(round(p.get_x() + p.get_width() / 2, 3) for p in ax.patches)
    assert centres == [-0.2, 0.2, 0.8, 1.2]  # two groups side by side at 0 and 1
    assert [t.get_text() for t in ax.get_xticklabels()] == ["personal", "societal"]
    import matplotlib.pyplot as plt

    plt.close("all")


def test_oov_summary_counts(tmp_path):
    scores = pd.DataFrame(
        {
            "model": ["m1"] * 4 + ["m2"] * 4,
            "M_word": ["1800", "1900", "1800", "2000"] * 2,
            "prob": [np.nan, 0.1, np.nan, 0.2, 0.1, 0.1, 0.1, np.nan],
            "oov": [True, False, True, False, False, False, False, False],
        }
    )
    path = tmp_path / "s.parquet"
    scores.to_parquet(path)
    back = read_scores([path])
    assert list(back.columns) == ["model", "M_word", "prob", "oov"]
    t = oov_summary(back).set_index("model")
    assert t.loc["m1", "rows"] == 4 and t.loc["m1", "oov_rows"] == 2 and t.loc["m1", "nan_prob_rows"] == 2
    assert t.loc["m1", "oov_words"] == "1800"
    assert t.loc["m2", "oov_rows"] == 0 and t.loc["m2", "nan_prob_rows"] == 1 and t.loc["m2", "oov_words"] == "2000"


def test_provenance_helpers():
    """(The package versions are the scoring jobs': tests/test_checks.py.)"""
    t = run_settings({"device": "cuda", "dtype": "float16", "empty": ""})
    assert t.to_dict("records") == [{"item": "device", "value": "cuda"}, {"item": "dtype", "value": "float16"}]


def test_html_table_formats_p_counts_and_missing():
    from fmat_replication.pages.figures import html_table

    df = pd.DataFrame(
        {"statistic": ["r", "d<"], "value": [0.7412, np.nan], "p": [2e-9, 0.0441], "n": [50.0, 2383.0], "exact": [True, False]}
    )
    out = html_table(df)
    assert "<td>0.741</td>" in out and "<td>&lt; .001</td>" in out and "<td>.044</td>" in out
    assert "<td>50</td>" in out and "<td>2383</td>" in out and "<td></td>" in out
    assert "<td>yes</td>" in out and "<td>d&lt;</td>" in out
    assert "<td>0.00012</td>" in html_table(pd.DataFrame({"value": [0.000123]}))
    assert html_table(pd.DataFrame()) == "<p><em>(none)</em></p>"
    assert "1 more rows" in html_table(df, max_rows=1)


def test_figure2_degenerate_ci_and_negative_icc():
    # seen on tiny demo models: ICC -0.01499 with the CI [-0.014988, -0.014988] (value a hair outside)
    rows = results_frame(
        [
            {
                "study": "3D",
                "statistic": "ICC_single",
                "condition": "all",
                "model": "all",
                "value": -0.014990,
                "ci_low": -0.014988,
                "ci_high": -0.014988,
            },
            {
                "study": "3D",
                "statistic": "ICC_average",
                "condition": "all",
                "model": "all",
                "value": -0.095,
                "ci_low": -0.0969,
                "ci_high": -0.088,
            },
        ]
    )
    fig = figure2_icc(rows)
    assert fig.axes[0].get_ylim()[0] < -0.09  # negative ICCs stay visible
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_model_checks_puts_agreement_beside_alpha_and_oov():
    agreement = pd.DataFrame(
        {
            "model": ["m1", "m1", "m2", "m2"],
            "construction": ["simple", "all", "simple", "all"],
            "n": [4, 10, 3, 8],
            "n_correct": [3, 7, 3, 8],
            "accuracy": [0.75, 0.7, 1.0, 1.0],
            "skipped": [0, 2, 1, 4],
            "total": [4, 12, 4, 12],
        }
    )
    stats = pd.DataFrame(
        {
            "study": ["1A", "1A", "1A", "1B"],
            "statistic": ["alpha", "alpha", "alpha", "r"],
            "condition": ["all", "all", "all", "fmat~pct_male"],
            "model": ["m1", "m2", "all", "m1"],
            "value": [0.8, 0.6, 0.9, 0.5],
        }
    )
    oov = pd.DataFrame({"model": ["m1", "m2", "m2"], "rows": [100, 50, 50], "oov_rows": [0, 10, 15]})
    t = model_checks_table(agreement, stats, oov).set_index("model")
    assert list(t.index) == ["m1", "m2"]
    assert t.loc["m1", "agreement accuracy"] == 0.7 and t.loc["m2", "pairs skipped"] == 4
    assert t.loc["m1", "alpha 1A"] == 0.8 and t.loc["m2", "alpha 1A"] == 0.6
    assert "alpha 1B" not in t.columns  # no per-model alpha there
    assert t.loc["m2", "OOV share"] == 0.25 and t.loc["m1", "OOV share"] == 0.0
