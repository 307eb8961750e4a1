"""``fmat power``'s output says what it measured (issue 54): its headline row is the study's
overall test (the average where the design has one), rows where nothing is planted are
false-positive rates, not power (in the table, the CSV and the plot), the plot's legend covers
no line, and ``--help`` prints "95%"."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from fmat import plant
from fmat.cli import main
from fmat.power import headline, mark_controls, power_plot
from fmat.study import load_study

REPO = Path(__file__).resolve().parents[1]
TWO_A = REPO / "config" / "studies" / "2A.yaml"


def test_power_help_prints_95_percent(capsys):
    try:
        main(["power", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "95% CIs" in out and "%%" not in out, out


def test_the_controls_of_an_attitude_design_are_the_rows_where_nothing_is_planted():
    """2A plants like-dislike only: notice-ignore is unchanged by the plant (the oracle), and the
    world calls personal-societal absent (planted alike for both perceivers)."""
    study = load_study(TWO_A)
    planted = plant.load_world(REPO / "config" / "world.yaml").plant("2A")
    rows = [
        f"{r}:{p}" for r in ("like-dislike", "notice-ignore") for p in ("personal", "societal", "average", "personal-societal")
    ]
    table = pd.DataFrame({"variant": "paper", "statistic": "d", "condition": rows})
    marked = mark_controls(table, study, planted).set_index("condition")["control"]
    assert not marked[["like-dislike:personal", "like-dislike:societal", "like-dislike:average"]].any()
    assert marked[[r for r in rows if r.startswith("notice-ignore")] + ["like-dislike:personal-societal"]].all()
    # without the world's absent: true, personal-societal is planted (its pooled-SD d moves with the plant)
    effect = {
        "contrast": {"MASK": ["Positive", "Negative"], "TARGET": ["Flowers", "Insects"]},
        "where": {"MASK": ["like", "dislike"]},
    }
    bare = plant.world_from_mapping({"studies": {"2A": {"effects": [{**effect, "d": 0.4}]}}}).plant("2A")
    again = mark_controls(table, study, bare).set_index("condition")["control"]
    assert again[[r for r in rows if r.startswith("notice-ignore")]].all() and not again["like-dislike:personal-societal"]


def test_the_headline_is_all_else_the_average_else_the_first_planted_row():
    base = {"variant": "paper", "statistic": "d"}
    one = pd.DataFrame([{**base, "condition": c, "control": False} for c in ("pair1", "all", "pair2")])
    assert headline(one)["condition"].tolist() == ["all"]
    two = pd.DataFrame(
        [
            {**base, "condition": "notice-ignore:average", "control": True},
            {**base, "condition": "like-dislike:personal", "control": False},
            {**base, "condition": "like-dislike:average", "control": False},
        ]
    )
    assert headline(two)["condition"].tolist() == ["like-dislike:average"]
    three = pd.DataFrame([{**base, "statistic": "b", "condition": "year", "control": False}])
    assert headline(three)["condition"].tolist() == ["year"]


def _table() -> pd.DataFrame:
    rows = []
    for cond, control in (("like-dislike:average", False), ("like-dislike:personal", False), ("notice-ignore:average", True)):
        for m in (3, 6, 12):
            rows.append(
                {"items": 0, "models": m, "variant": "paper", "statistic": "d", "condition": cond, "control": control}
                | {"power": 0.5, "power_low": 0.3, "power_high": 0.7, "fpr": 0.05, "fpr_low": 0.0, "fpr_high": 0.2}
            )
    return pd.DataFrame(rows)


def test_the_plot_draws_controls_as_false_positives_and_its_legend_below_the_panels(tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figures.append(fig))
    power_plot(_table(), tmp_path / "p.png", title="2A")
    assert (tmp_path / "p.png").stat().st_size > 0
    fig = figures[0]
    power, fpr = fig.axes[:2]
    labels = [[c.get_label() for c in ax.containers] for ax in (power, fpr)]
    assert labels[0] == ["d like-dislike:average (paper)", "d like-dislike:personal (paper)"], labels  # no control
    assert "d notice-ignore:average (paper) [control]" in labels[1], labels
    assert "nothing planted" in fpr.get_ylabel() and "planted" in power.get_ylabel()
    assert power.get_legend() is None and fpr.get_legend() is None  # no legend inside a panel
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    for ax in (power, fpr):
        assert legend.y1 < ax.get_window_extent().y0 - 5  # below the panels: it covers no line
    plt.close(fig)


def test_fmat_power_prints_the_average_as_the_overall_test_and_controls_as_false_positives(tmp_path, capsys):
    """Issue 54: 2A's headline was the like-dislike:personal row, and its notice-ignore control
    was drawn as power."""
    out = tmp_path / "o"
    argv = ["power", str(TWO_A), "--world", str(REPO / "config" / "world.yaml"), "-o", str(out)]
    assert main([*argv, "--models", "3", "--worlds", "2", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "the overall test: d like-dislike:average" in text, text
    head = text[text.index("the overall test") : text.index("controls (nothing planted")]
    assert "like-dislike:personal " not in head and "notice-ignore" not in head, head
    assert "false-positive rate, not power" in text and "notice-ignore:average" in text[text.index("controls") :]
    tab = pd.read_csv(out / "power.csv")
    control = tab.set_index("condition")["control"]
    assert control["notice-ignore:average"] and not control["like-dislike:average"]
