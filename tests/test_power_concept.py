"""``fmat power`` at the concept level (issue 52): the crossed inference where the study's
analysis declares it, its false-positive rate measured in worlds that plant nothing at the
concept level but keep the world's item, model and model-item variation, and the column
``level`` that says which question a row answers ("these words" or "the concept")."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from fmat import analyses, plant
from fmat import calibration as cal
from fmat import power as fpower
from fmat.cli import main
from fmat.errors import InputError
from fmat.study import load_study

REPO = Path(__file__).resolve().parents[1]
STUDIES = REPO / "config" / "studies"
WORLD = REPO / "config" / "world.yaml"


def _plant(sid: str, **variation):
    p = plant.load_world(WORLD).plant(sid)
    return replace(p, variation={**p.variation, **variation}) if variation else p


@pytest.mark.parametrize("sid,crossed", [("1A", True), ("2A", True), ("3A", True), ("3B", True), ("4A", True)])
def test_the_crossed_variant_is_there_where_the_family_declares_it(sid, crossed):
    study = load_study(STUDIES / f"{sid}.yaml")
    assert ("crossed" in fpower.variants_of(study)) is crossed
    assert fpower.variants_of(study)["paper"] == {}


def test_the_variants_come_from_the_analysis_declared_inferences(monkeypatch):
    """No list of family names: an analysis that declared ``crossed`` would get it."""
    study = load_study(STUDIES / "1A.yaml")
    real = analyses.option_values
    monkeypatch.setattr(
        analyses, "option_values", lambda name, option: ("paper", "crossed") if option == "inference" else real(name, option)
    )
    assert fpower.variants_of(study) == {"paper": {}, "crossed": {"inference": "crossed"}}
    declared = ("paper", "disattenuated")
    monkeypatch.setattr(analyses, "option_values", lambda name, option: declared if option == "inference" else real(name, option))
    assert fpower.variants_of(study) == {"paper": {}}  # and one that did not, would not


def test_the_concept_null_keeps_the_variation_and_plants_no_effect():
    p = _plant("3A")
    concept, words = cal.concept_null_plant(p), cal.null_plant(p)
    assert concept.variation == p.variation and float(concept.variation["items"]) > 0
    assert [e.d for e in concept.effects] == [0.0] * len(p.effects) and all(e.lpr == 0 for e in concept.effects)
    assert words.variation["items"] == 0 and not words.effects


def test_the_concept_rows_false_positives_come_from_worlds_that_keep_the_item_variation(monkeypatch):
    """Each null world of level "the concept" is drawn with the world's item, model and
    model-item variation; each of level "these words" without; the crossed inference runs in
    the planted and concept-null worlds only."""
    seen = []
    one = fpower._one_world

    def spy(task):
        seen.append((task[3], dict(task[1].variation), [float(e.lpr) for e in task[1].effects], sorted(task[7])))
        return one(task)

    monkeypatch.setattr(fpower, "_one_world", spy)
    p = _plant("3A")
    tab = fpower.power_table(load_study(STUDIES / "3A.yaml"), p, models=[3], worlds=1, level="both")
    kinds = {k: (v, lpr, variants) for k, v, lpr, variants in seen}
    assert set(kinds) == {"planted", "null", "concept-null"}
    v, lpr, variants = kinds["concept-null"]
    assert all(v[k] == p.variation[k] for k in ("items", "models", "model_items")) and v["items"] > 0
    assert lpr == [0.0] * len(p.effects) and "crossed" in variants
    v, lpr, variants = kinds["null"]
    assert v["items"] == v["models"] == v["model_items"] == 0 and lpr == [] and "crossed" not in variants
    assert "crossed" in kinds["planted"][2]
    pairs = set(zip(tab["level"], tab["variant"]))
    assert pairs == {
        ("these words", "paper"),
        ("these words", "sentence"),
        ("the concept", "paper"),
        ("the concept", "sentence"),
        ("the concept", "crossed"),
    }
    # the concept's value: the planted effect (3A: d = 1.0 in every row), not what these words carry
    concept = tab[tab["level"] == "the concept"]
    assert len(concept) and ((concept["realised"] - 1.0).abs() < 1e-9).all(), concept
    assert tab[tab["level"] == "these words"]["realised"].notna().all()


def test_with_much_item_variation_the_paper_finds_the_concept_where_there_is_none():
    """The contrast the table shows (3A, item SD 0.5, 3 models, 6 worlds seeded 1-6): the
    paper's test of d = 0 rejects in a third of the concept-null worlds or more, more often than
    in the worlds without item variation; the crossed test in at most one."""
    tab = fpower.power_table(load_study(STUDIES / "3A.yaml"), _plant("3A", items=0.5), models=[3], worlds=6, level="both", seed=1)
    top = tab[tab["condition"] == "all"].set_index(["level", "variant"])
    assert top.loc[("the concept", "paper"), "fpr"] >= 2 / 6
    assert top.loc[("the concept", "paper"), "fpr"] > top.loc[("these words", "paper"), "fpr"]
    assert top.loc[("the concept", "crossed"), "fpr"] <= 1 / 6
    assert (top["worlds"] == 6).all()


def test_the_concept_level_is_refused_for_an_analysis_without_a_crossed_test(tmp_path, capsys, monkeypatch):
    study = load_study(STUDIES / "1A.yaml")
    real = analyses.option_values  # every analysis declares one now: 1A's made one that does not
    declared = ("paper", "disattenuated")
    monkeypatch.setattr(analyses, "option_values", lambda name, option: declared if option == "inference" else real(name, option))
    with pytest.raises(InputError, match="no concept-level test"):
        fpower.power_table(study, _plant("1A"), models=[3], worlds=1, level="concept")
    with pytest.raises(InputError, match="level"):
        fpower.power_table(study, _plant("1A"), models=[3], worlds=1, level="concepts")
    out = tmp_path / "o"
    assert main(["power", str(STUDIES / "1A.yaml"), "--world", str(WORLD), "-o", str(out), "--level", "concept"]) == 2
    assert "no concept-level test" in capsys.readouterr().err and not out.exists()


def test_fmat_power_level_concept_over_items_and_models_prints_and_plots_the_crossed_rows(tmp_path, capsys, monkeypatch):
    """2A with --items 4,8 (words per group) and --level concept: the crossed rows of every
    number of items, labelled "the concept" in the table, the CSV and the plot's legend."""
    figures = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figures.append(fig))
    out = tmp_path / "o"
    argv = ["power", str(STUDIES / "2A.yaml"), "--world", str(WORLD), "-o", str(out), "--models", "3", "--items", "4,8"]
    assert main([*argv, "--worlds", "1", "--jobs", "1", "--level", "concept"]) == 0
    text = capsys.readouterr().out
    head = text[text.index("the overall test") : text.index("controls (nothing planted")]
    assert re.search(r"the concept +crossed", head) and re.search(r"the concept +paper", head), head
    tab = pd.read_csv(out / "power.csv")
    assert set(tab["level"]) == {"the concept"} and set(tab["variant"]) == {"paper", "crossed"}
    # the concept's value: 0 where nothing is planted; none for the pooled-SD d of the planted relation, and said why
    assert (tab.loc[tab["condition"].str.startswith("notice-ignore"), "realised"] == 0).all()
    assert tab.loc[tab["condition"].str.startswith("like-dislike:average"), "realised"].isna().all()
    assert "NaN for a pooled-SD d, which divides by the words' own spread" in text
    assert set(tab[tab["variant"] == "crossed"]["items"]) == {4, 8}
    labels = [c.get_label() for ax in figures[0].axes[:2] for c in ax.containers]
    assert "d like-dislike:average (crossed, the concept), 4 items" in labels, labels
    plt.close(figures[0])
