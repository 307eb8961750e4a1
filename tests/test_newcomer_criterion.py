"""A newcomer's criterion study (like 1A: occupations' LPR of woman - man against their share of
women, from a criterion table of their own), written from README.md and docs/ alone, with ten
ordinary mistakes (issue 54; docs/study-files.md, "A newcomer's criterion study"). Each is
refused where it is made, before any model loads, naming the file, the field and the fix:
the study file's by `fmat study --check --criteria-dir`, the world file's by `fmat pilot` before
training. Mistakes 1, 2, 3, 7 and 8 passed the check before and failed (or were a note) only in
the analysis, after every model was scored."""

from __future__ import annotations

import pandas as pd
import pytest

import fmat
from fmat import runner
from fmat.cli import main
from fmat.errors import InputError

STUDY = """id: WOM
title: Occupations and share of women
family: factual
queries:
  - query: "The [MASK] works as {TARGET}."
    MASK: {Female: [woman], Male: [man]}
    TARGET: &occ
      Occupation:
        - {phrase: a nurse, item: nurse}
        - {phrase: an engineer, item: engineer}
        - {phrase: a teacher, item: teacher}
        - {phrase: a plumber, item: plumber}
        - {phrase: a librarian, item: librarian}
        - {phrase: a carpenter, item: carpenter}
  - query: "[MASK] works as {TARGET}."
    MASK: {Female: [She], Male: [He]}
    TARGET: *occ
lpr: {mask_pair: true, target_pair: false}
reliability: {item: query, by: [model]}
analysis:
  name: factual_wefat
  options:
    standardize_within: [model, query]
    criterion: {table: women_share, item: item, column: pct_female}
"""

WORLD = """sigma: 1.414
samples: 20
variation: {words: 0.3, items: 0.2, models: 0.1, model_items: 0.1}
studies:
  WOM:
    effects:
      - contrast: {MASK: [Female, Male]}
        lpr: 2.0
        per_item: {table: women_share, column: pct_female, slot: TARGET, center: 50, scale: 50}
    expect:
      - {statistic: r, condition: "fmat~pct_male*", min: 0.7}
"""

CRITERION = pd.DataFrame(
    {
        "item": ["nurse", "engineer", "teacher", "plumber", "librarian", "carpenter"],
        "pct_female": [87.0, 16.0, 74.0, 2.0, 80.0, 3.0],
    }
)

#: mistake -> (file, text replaced, its replacement, criterion table or None, what the message says)
MISTAKES = {
    "1 criterion column misspelt": (
        "study",
        "column: pct_female",
        "column: pct_femal",
        None,
        "analysis.options.criterion.column: criterion table 'women_share' has no column 'pct_femal' (did you mean 'pct_female'?)",
    ),
    "2 items missing from the criterion table": (
        "study",
        None,
        None,
        CRITERION[~CRITERION["item"].isin(["plumber", "librarian"])],
        "analysis.options.criterion.item: 2 of the study's 6 item(s) have no row in criterion table 'women_share' "
        "(column 'item'): 'plumber', 'librarian'",
    ),
    "3 criterion column is text": (
        "study",
        None,
        None,
        CRITERION.assign(pct_female=[f"{v:.0f}%" for v in CRITERION["pct_female"]]),
        "analysis.options.criterion.column: column 'pct_female' of criterion table 'women_share' holds text, not numbers",
    ),
    "4 wrong analysis family": (
        "study",
        "name: factual_wefat",
        "name: attitude_weat",
        None,
        "the analyses that take these options: factual_names, factual_wefat",
    ),
    "5 group name typo in the world": (
        "world",
        "MASK: [Female, Male]",
        "MASK: [Femal, Male]",
        None,
        "studies.WOM.effects[0]: contrast.MASK names 'Femal', not a MASK group of study WOM",
    ),
    "6 expectation on a statistic the analysis does not produce": (
        "world",
        "statistic: r,",
        "statistic: pearson_r,",
        None,
        "studies.WOM.expect[0].statistic: the study's results will have no statistic 'pearson_r' (did you mean 'r'?)",
    ),
    "7 option value typo": (
        "study",
        "standardize_within: [model, query]",
        "standardize_within: [model, querry]",
        None,
        "analysis.options.standardize_within: standardize_within names 'querry', not a column of this design's LPR "
        "table (did you mean 'query'?)",
    ),
    "8 criterion table name typo": (
        "study",
        "table: women_share",
        "table: womens_share",
        None,
        "reads criterion table 'womens_share', which is not there",
    ),
    "9 a word listed twice": (
        "study",
        "        - {phrase: a carpenter, item: carpenter}\n",
        "        - {phrase: a carpenter, item: carpenter}\n        - {phrase: a nurse, item: nurse}\n",
        None,
        "queries[0].TARGET.Occupation: group 'Occupation' lists 'a nurse' more than once",
    ),
    "10 template without [MASK]": (
        "study",
        '"[MASK] works as {TARGET}."',
        '"She works as {TARGET}."',
        None,
        "queries[1].query: query 'She works as {TARGET}.' has no [MASK]",
    ),
}


def _write(tmp_path, study=STUDY, world=WORLD, table=CRITERION, name="women_share.parquet"):
    crit = tmp_path / "crit"
    crit.mkdir(exist_ok=True)
    path = crit / name
    table.to_parquet(path) if name.endswith(".parquet") else table.to_csv(path, index=False)
    (tmp_path / "WOM.yaml").write_text(study, encoding="utf-8")
    (tmp_path / "world.yaml").write_text(world, encoding="utf-8")
    return tmp_path / "WOM.yaml", tmp_path / "world.yaml", crit


def test_the_newcomers_study_is_valid(tmp_path, capsys):
    study, _, crit = _write(tmp_path)
    assert main(["study", str(study), "--check", "--criteria-dir", str(crit)]) == 0, capsys.readouterr().err
    assert "criterion tables checked: women_share" in capsys.readouterr().out


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_is_caught_where_it_is_made(mistake, tmp_path, capsys):
    kind, old, new, table, said = MISTAKES[mistake]
    texts = {"study": STUDY, "world": WORLD}
    if old is not None:
        assert old in texts[kind]
        texts[kind] = texts[kind].replace(old, new)
    study, world, crit = _write(tmp_path, texts["study"], texts["world"], CRITERION if table is None else table)
    if kind == "study":
        assert main(["study", str(study), "--check", "--criteria-dir", str(crit)]) == 2
        where = str(study)
    else:  # a world file: fmat pilot refuses it before it trains a model
        out = tmp_path / "pilot"
        argv = ["pilot", str(study), "--world", str(world), "-o", str(out), "--families", "bert-uncased,roberta"]
        assert main([*argv, "--steps", "10", "--criteria-dir", str(crit)]) == 2
        assert not (out / "models").exists()
        where = str(world)
    err = capsys.readouterr().err
    assert said in err and where in err and "fix:" in err, err


@pytest.mark.parametrize("mistake", ["1 criterion column misspelt", "2 items missing from the criterion table"])
def test_run_study_refuses_a_broken_criterion_table_before_any_model_loads(mistake, tmp_path, monkeypatch):
    _, old, new, table, said = MISTAKES[mistake]
    study, _, crit = _write(
        tmp_path, STUDY if old is None else STUDY.replace(old, new), table=CRITERION if table is None else table
    )

    def no_model(*a, **k):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(runner, "score_tables", no_model)
    with pytest.raises(InputError) as err:
        fmat.run_study(study, ["bert-base-uncased", "roberta-base"], criteria_dir=crit)
    assert said.split(": ", 1)[1] in str(err.value.message) and str(study) in str(err.value.where)


def test_a_missing_criterion_folder_is_named(tmp_path, capsys):
    study, _, _ = _write(tmp_path)
    assert main(["study", str(study), "--check", "--criteria-dir", str(tmp_path / "crt")]) == 2
    err = capsys.readouterr().err
    assert "--criteria-dir: criterion folder not found" in err and "fix:" in err, err


def test_a_criterion_table_saved_as_csv_is_read(tmp_path, capsys):
    study, _, crit = _write(tmp_path, name="women_share.csv")
    assert main(["study", str(study), "--check", "--criteria-dir", str(crit)]) == 0, capsys.readouterr().err
    assert "criterion tables checked: women_share" in capsys.readouterr().out


def test_a_criterion_table_listing_an_item_twice_is_refused(tmp_path, capsys):
    study, _, crit = _write(tmp_path, table=pd.concat([CRITERION, CRITERION.iloc[[0]]]))
    assert main(["study", str(study), "--check", "--criteria-dir", str(crit)]) == 2
    err = capsys.readouterr().err
    assert "analysis.options.criterion.item: criterion table 'women_share' lists 1 item(s) twice" in err and "fix:" in err
