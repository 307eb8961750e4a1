"""A newcomer's study of a kind not tried before (change_over_time: years as [MASK] words), written
from the docs alone, with ordinary mistakes (issue 42). Each is refused by `fmat study --check`,
before any model loads, naming the file, the field and the fix; five of them (3, 4, 5, 11, 12)
passed the check before and failed only in the analysis, after every model was scored."""

from __future__ import annotations

import pytest

from fmat.cli import main

STUDY = """id: C1
title: Change in how immigrants are welcomed
queries:
  - query: "In the year [MASK], {TARGET} were welcomed."
    MASK: {Year: {range: [1900, 2019]}}
    TARGET: {Immigrants: [immigrants], Citizens: [citizens]}
lpr: {mask_pair: false, target_pair: true}
analysis:
  name: change_over_time
  options:
    year_scale: 100
    average_over: [query]
    century_contrasts: [[2000, 1900]]
    smoothing: {window: 10}
"""

MISTAKES = {
    "analysis name typo": ("name: change_over_time", "name: change_over_times", "did you mean 'change_over_time'"),
    "option key typo": ("year_scale: 100", "year_scal: 100", "did you mean 'year_scale'"),
    "average_over names no LPR column": (
        "average_over: [query]",
        "average_over: [template]",
        "analysis.options.average_over: average_over names 'template', not a column",
    ),
    "century year outside the design": (
        "century_contrasts: [[2000, 1900]]",
        "century_contrasts: [[2000, 1800]]",
        "century_contrasts[0]: century_contrasts[0] names the year 1800, which is not a [MASK] year of this design (1900-2019)",
    ),
    "smoothing key typo": ("smoothing: {window: 10}", "smoothing: {windw: 10}", "did you mean 'window'"),
    "mask_pair left on": ("lpr: {mask_pair: false, target_pair: true}", "lpr: {target_pair: true}", "lpr.mask_pair"),
    "typographic quotes": (
        '"In the year [MASK], {TARGET} were welcomed."',
        '"\u201cIn the year [MASK], {TARGET} were welcomed.\u201d"',
        "wrapped in the quotation marks",
    ),
    "tab in YAML": ("    year_scale: 100", "\tyear_scale: 100", "a tab on line 11"),
    "range reversed": ("range: [1900, 2019]", "range: [2019, 1900]", "is empty (start > end)"),
    "placeholder misspelt": ("{TARGET} were", "{TARGETS} were", "did you mean {TARGET}?"),
    "year_scale zero": ("year_scale: 100", "year_scale: 0", "year_scale is 0; it must be a positive number"),
    "century_contrasts flat": (
        "century_contrasts: [[2000, 1900]]",
        "century_contrasts: [2000, 1900]",
        "it must be a list of [later, earlier] year pairs",
    ),
}


def test_the_newcomers_study_is_valid(tmp_path, capsys):
    (tmp_path / "C1.yaml").write_text(STUDY, encoding="utf-8")
    assert main(["study", str(tmp_path / "C1.yaml"), "--check"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_is_refused_by_the_check(mistake, tmp_path, capsys):
    old, new, said = MISTAKES[mistake]
    assert old in STUDY
    path = tmp_path / "C1.yaml"
    path.write_text(STUDY.replace(old, new), encoding="utf-8")
    assert main(["study", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert said in err and str(path) in err and "fix:" in err, err
