"""The demo pages' "planted and recovered" part: nominal, realised and ours with its CI side by
side (fmat_replication.pages.recovery.recovery_rows), and the overview's count of the paper's
sign-bearing numbers printed / computable / checked (expectation_coverage)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fmat.plant import Plant, recovery
from fmat_replication.pages.recovery import COLUMNS, expectation_coverage, recovery_rows

STATS = pd.DataFrame(
    {
        "study": ["3A"] * 3,
        "statistic": ["d", "t", "d"],
        "condition": ["all", "all", "pair1"],
        "model": ["all"] * 3,
        "value": [0.9, 8.0, 0.7],
        "p": [1e-6, 1e-6, 0.01],
        "ci_low": [0.8, np.nan, 0.2],
        "ci_high": [1.1, np.nan, 1.2],
    }
)
REALISED = pd.DataFrame({"statistic": ["d", "d"], "condition": ["all", "pair1"], "model": ["all"] * 2, "value": [0.95, 1.3]})


def judged() -> pd.DataFrame:
    plant = Plant("3A", expect=[{"statistic": "d", "condition": "*", "value": 1.0}, {"statistic": "t", "sign": 1}])
    return recovery(plant, STATS, REALISED)


def test_the_page_shows_nominal_realised_and_ours_with_its_ci():
    rows = recovery_rows(judged())
    assert list(rows.columns) == COLUMNS
    first = rows.iloc[0]
    assert (first["planted"], first["realised"], first["ours"], first["95% CI"]) == ("1.00", 0.95, 0.9, "[0.80, 1.10]")
    assert first["verdict"] == "recovered"
    # pair1: ours 0.7 with CI [0.2, 1.2] misses the realised 1.3 (the nominal 1.0 it would cover)
    pair = rows[rows["condition"] == "pair1"].iloc[0]
    assert pair["verdict"] == "not recovered" and "misses the realised 1.3" in pair["reason"]
    # a table written before realised values were recorded still renders
    old = judged().drop(columns=["realised", "ci_low", "ci_high"])
    assert recovery_rows(old)["95% CI"].tolist() == ["", "", ""]


def test_the_overview_counts_printed_computable_and_checked():
    rep = pd.DataFrame(
        {
            "study": ["3A"] * 5,
            "statistic": ["d", "d", "t", "d", "alpha"],
            "condition": ["all", "pair1", "all", "ref:iat", "all"],
            "model": ["all"] * 5,
            "paper_value": [1.02, 1.08, 10.41, 0.72, 0.9],
            "verdict": ["replicated", "replicated", "replicated", "not computable", "replicated"],
        }
    )
    rec = judged().iloc[[0, 2]]  # d:all and t:all judged; pair1 left out
    out = expectation_coverage(rec, rep).set_index("study")
    assert out.loc["3A"].tolist() == [4, 3, 2]  # alpha is not sign-bearing; ref:iat is not computable
    assert out.loc["all"].tolist() == [4, 3, 2]


def test_a_concept_level_control_is_counted_apart_from_the_recovered_numbers():
    """Issue 52: the page's sentence counts the planted numbers recovered and, apart, the
    concept-level controls that found nothing for the concept (never as recovered numbers);
    each row of the table says the level it was judged at."""
    from fmat_replication.pages.html import render
    from fmat_replication.pages.recovery import recovery_counts

    def recovery_summary(rec):  # the page's sentence: its template on the counts
        return render("recovery_summary.html.j2", c=recovery_counts(rec))

    control = {"statistic": "d", "condition": "pair1", "absent": True, "level": "concept"}
    plant = Plant("3A", expect=[{"statistic": "d", "condition": "all", "value": 1.0}, control])
    crossed = STATS[STATS["condition"] == "pair1"].assign(value=0.1, p=0.6, ci_low=-0.3, ci_high=0.5)
    rec = recovery(plant, STATS, REALISED, crossed)
    assert rec["verdict"].tolist() == ["recovered", "nothing found for the concept"]
    assert recovery_rows(rec)["level"].tolist() == ["words", "concept"]
    text = recovery_summary(rec)
    assert "<b>1 of 1</b> planted number recovered" in text and "<b>1 of 1</b> concept-level control" in text, text
    assert "all-recovered" in text and "not-all" not in text
    missed = recovery(plant, STATS, REALISED, crossed.assign(p=0.01, ci_low=0.05, ci_high=0.2))
    assert "<b>0 of 1</b> concept-level control" in recovery_summary(missed)
