"""fmat.formatting (re-exported by fmat_replication.formats): the one place numbers become text
(issues 33, 53), by example."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fmat_replication import formats as F


def test_missing():
    assert all(F.missing(x) for x in (None, math.nan, np.float32("nan"), pd.NA, ""))
    assert not any(F.missing(x) for x in (0, 0.0, "0", "ns"))


def test_number_short_and_p():
    assert F.number(0.41234) == "0.412" and F.number(12.3456) == "12.35" and F.number(0.0004) == "4.0e-04"
    assert F.number(0.41234, 2) == "0.41" and F.number(math.nan) == ""
    assert F.short(0.3100) == "0.31" and F.short(0.00042) == "0.00042" and F.short(1234.56) == "1234.6"
    assert F.short(None) == "NA"
    # one p format on every page (issue 53): a sentence's p has the digits of a table's
    assert F.p_text(0.0001) == "p < .001" and F.p_text(0.044) == "p = .044" and F.p_text(0.007) == "p = .007"
    assert F.p_text(0.01, "<") == "p < .01" and F.p_text(math.nan) == ""
    assert F.p_cell(0.0001) == "< .001" and F.p_cell(0.0441) == ".044"


def test_cell_by_column():
    assert F.cell("p", 0.0441) == ".044" and F.cell("n", 12.0) == "12" and F.cell("value", 12.0) == "12.000"
    assert F.cell("share_replicated", 0.456) == "46%" and F.cell("x", True) == "yes" and F.cell("x", math.nan) == ""
    assert F.cell("value", 0.00012) == "0.00012" and F.cell("model", "bert") == "bert"
    # a variant's p (the calibrated inference's p_ours) is a p too, not a tiny number in e-notation
    assert F.cell("p_ours", 3.8e-43) == "< .001" and F.cell("p_ours", 0.12) == ".120" and F.cell("ci_low_ours", 0.5) == "0.500"


def _row(**kw):
    base = {
        "paper_value": 0.45,
        "paper_digits": 2.0,
        "paper_value_low": math.nan,
        "paper_value_high": math.nan,
        "paper_value_bound": "",
        "paper_p": math.nan,
        "paper_bound": "",
        "paper_stars": "***",
        "ours_value": 0.512,
        "ours_p": 0.0002,
        "ours_min": 0.512,
        "ours_max": 0.512,
        "n_matched": 1,
        "ours_ci_low": 0.3,
        "ours_ci_high": 0.7,
        "study": "3A",
        "statistic": "d",
        "condition": "all",
        "model": "all",
        "verdict": "replicated",
        "exact": False,
        "reason": "same sign",
    }
    return {**base, **kw}


def test_cells_of_the_papers_tables():
    assert F.paper_cell(_row()) == "0.45***" and F.ours_cell(_row()) == "0.51***"
    assert F.paper_cell(_row(paper_stars="", paper_p=0.01, paper_bound="<")) == "0.45 (p < .01)"
    assert F.paper_cell(_row(paper_value_low=0.2, paper_value_high=0.6, paper_stars="")) == "0.20 to 0.60"
    assert F.paper_cell(_row(paper_value_bound="abs<", paper_value=0.1, paper_stars="")) == "|x| < 0.10"
    # issue 41: our range at the paper's precision, as our single values (not 3 decimals beside its 2)
    assert F.ours_cell(_row(n_matched=3, ours_min=0.1, ours_max=0.254)) == "0.10 to 0.25"
    assert F.ours_cell(_row(n_matched=3, ours_min=0.1, ours_max=0.254, paper_digits=math.nan)) == "0.100 to 0.254"
    assert F.ours_cell(_row(ours_value=math.nan, ours_min=math.nan)) == "—"


def test_replication_text():
    t = F.replication_text(pd.DataFrame([_row()])).iloc[0]
    assert t["paper"] == "0.45 (***)" and t["ours"] == "0.512 (p < .001, 95% CI [0.300, 0.700])"
    assert t["as printed"] == "no" and t["verdict"] == "replicated"
