"""Paper vs ours (fmat_replication.compare): each verdict type on small hand-made tables.

Expected verdicts are worked out by hand from the rule in docs/reports.md (sign, significance
at .05, tolerance, bounds, ranges, patterns), never by the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fmat.results import results_frame
from fmat_replication.compare import (
    NOT_COMPUTABLE,
    NOT_REPLICATED,
    REPLICATED,
    REPLICATION_COLUMNS,
    StudyStatus,
    compare,
    paper_significance,
    summarise,
)
from fmat_replication.paper import load_paper_results

NAN = math.nan


def paper_frame(rows):
    """A paper table as load_paper_results returns it (digits included) from short dicts."""
    base = {
        "condition": "all",
        "model": "all",
        "value": NAN,
        "se": NAN,
        "df": NAN,
        "df2": NAN,
        "p": NAN,
        "ci_low": NAN,
        "ci_high": NAN,
        "n": NAN,
        "value_low": NAN,
        "value_high": NAN,
        "value_bound": "",
        "bound": "",
        "stars": "",
        "df_corrected": NAN,
        "source": "hand-made",
        "note": "",
        "digits": 2.0,
    }
    return pd.DataFrame([{**base, **r} for r in rows])


def ours_frame(rows):
    return results_frame([{"condition": "all", "model": "all", **r} for r in rows])


def verdict_of(out, **key):
    sel = np.ones(len(out), dtype=bool)
    for k, v in key.items():
        sel &= out[k].to_numpy() == v
    assert sel.sum() == 1, key
    return out[sel].iloc[0]


# ------------------------------------------------------------------ significance of a paper row


@pytest.mark.parametrize(
    "p, bound, stars, expected",
    [
        (0.001, "<", "", True),  # p < .001
        (0.01, "<", "", True),  # p < .01
        (0.44, "", "", False),  # p = .44
        (0.007, "", "", True),  # p = .007
        (0.33, ">", "", False),  # ps > .33
        (0.01, ">", "", None),  # p > .01 says nothing at .05
        (0.10, "<", "", None),  # p < .10 says nothing at .05
        (NAN, "", "***", True),
        (NAN, "", "*", True),
        (NAN, "", "ns", False),
        (NAN, "", "", None),
    ],
)
def test_paper_significance(p, bound, stars, expected):
    assert paper_significance(p, bound, stars) is expected


# ------------------------------------------------------------------ plain rows


def test_r_within_tolerance_same_sign_and_significance_replicates():
    paper = paper_frame(
        [{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.74, "p": 0.001, "bound": "<"}]
    )
    ours = ours_frame([{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.71, "p": 2e-9}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == REPLICATED
    assert row["diff"] == pytest.approx(-0.03)
    assert row["tolerance"] == 0.05
    assert not row["exact"]  # 0.71 does not round to .74
    assert row["ours_value"] == 0.71 and row["ours_p"] == 2e-9


def test_r_outside_tolerance_is_not_replicated_and_says_why():
    paper = paper_frame(
        [{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.74, "p": 0.001, "bound": "<"}]
    )
    ours = ours_frame([{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.66, "p": 1e-6}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == NOT_REPLICATED
    assert "closeness" in row["reason"] and "0.08" in row["reason"]


def test_exact_when_rounding_to_printed_value_and_p_bound():
    paper = paper_frame(
        [{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.74, "p": 0.001, "bound": "<"}]
    )
    ours = ours_frame([{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.7449, "p": 1e-5}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == REPLICATED and bool(row["exact"]) is True
    ours2 = ours_frame([{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.7449, "p": 0.004}])
    row2 = compare(paper, ours2).iloc[0]
    assert row2["verdict"] == REPLICATED  # still significant at .05
    assert bool(row2["exact"]) is False  # but not p < .001 as printed


def test_sign_flip_of_significant_effect_is_not_replicated():
    # t has no tolerance: only sign and significance
    paper = paper_frame(
        [
            {
                "study": "2A",
                "statistic": "t",
                "condition": "like-dislike:average",
                "value": 6.55,
                "df": 2381,
                "p": 0.001,
                "bound": "<",
            }
        ]
    )
    ours = ours_frame([{"study": "2A", "statistic": "t", "condition": "like-dislike:average", "value": -3.0, "p": 0.003}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == NOT_REPLICATED and "sign" in row["reason"]
    assert math.isnan(row["tolerance"])


def test_significance_mismatch_is_not_replicated():
    paper = paper_frame([{"study": "2A", "statistic": "t", "condition": "notice-ignore:societal", "value": 2.70, "p": 0.007}])
    ours = ours_frame([{"study": "2A", "statistic": "t", "condition": "notice-ignore:societal", "value": 1.2, "p": 0.23}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == NOT_REPLICATED and "significance" in row["reason"]


def test_null_effect_sign_is_not_checked_but_tolerance_is():
    # paper: d = -0.06, ns (stars) ; ours +0.02, p = .60 -> same significance, |diff| = .08 <= .10
    paper = paper_frame([{"study": "2A", "statistic": "d", "condition": "notice-ignore:personal", "value": -0.06, "stars": "ns"}])
    ours = ours_frame([{"study": "2A", "statistic": "d", "condition": "notice-ignore:personal", "value": 0.02, "p": 0.60}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == REPLICATED, row["reason"]
    # ... but a null turned significant is not
    ours_sig = ours_frame([{"study": "2A", "statistic": "d", "condition": "notice-ignore:personal", "value": 0.02, "p": 0.01}])
    assert compare(paper, ours_sig).iloc[0]["verdict"] == NOT_REPLICATED


def test_stars_give_significance_for_table_cells():
    paper = paper_frame([{"study": "3A", "statistic": "d", "condition": "pair2", "value": 0.87, "stars": "**"}])
    ok = ours_frame([{"study": "3A", "statistic": "d", "condition": "pair2", "value": 0.80, "p": 0.004}])
    row = compare(paper, ok).iloc[0]
    assert row["verdict"] == REPLICATED and bool(row["exact"]) is False  # 0.80 != .87 as printed
    ns = ours_frame([{"study": "3A", "statistic": "d", "condition": "pair2", "value": 0.80, "p": 0.09}])
    assert compare(paper, ns).iloc[0]["verdict"] == NOT_REPLICATED


def test_icc_without_p_uses_sign_and_tolerance():
    paper = paper_frame(
        [{"study": "2A", "statistic": "ICC_average", "value": 0.96}, {"study": "2A", "statistic": "ICC_single", "value": 0.66}]
    )
    ours = ours_frame(
        [
            {"study": "2A", "statistic": "ICC_average", "value": 0.95, "ci_low": 0.94, "ci_high": 0.96, "p": 0.0},
            {"study": "2A", "statistic": "ICC_single", "value": 0.55, "ci_low": 0.5, "ci_high": 0.6, "p": 0.0},
        ]
    )
    out = compare(paper, ours)
    assert verdict_of(out, statistic="ICC_average")["verdict"] == REPLICATED
    single = verdict_of(out, statistic="ICC_single")
    assert single["verdict"] == NOT_REPLICATED and "0.11" in single["reason"]
    assert single["ours_ci_low"] == 0.5


def test_statistic_with_only_a_p_and_ours_without_p_is_not_computable():
    # b has no tolerance; paper prints only b and SE (no p, no stars) and the value is 0 at its precision
    paper = paper_frame(
        [{"study": "1C", "statistic": "b", "condition": "logit_male~fmat:intercept", "value": 0.0, "digits": 3.0}]
    )
    ours = ours_frame([{"study": "1C", "statistic": "b", "condition": "logit_male~fmat:intercept", "value": 0.02}])
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == NOT_COMPUTABLE and "nothing comparable" in row["reason"]


# ------------------------------------------------------------------ bounds and ranges


def test_value_bound_rows():
    paper = paper_frame(
        [
            {
                "study": "2B",
                "statistic": "t",
                "condition": "notice-ignore:average",
                "value": 1.0,
                "value_bound": "abs<",
                "p": 0.33,
                "bound": ">",
                "digits": 0.0,
            }
        ]
    )
    ok = ours_frame([{"study": "2B", "statistic": "t", "condition": "notice-ignore:average", "value": -0.6, "p": 0.55}])
    row = compare(paper, ok).iloc[0]
    assert row["verdict"] == REPLICATED and bool(row["exact"]) is True
    bad = ours_frame([{"study": "2B", "statistic": "t", "condition": "notice-ignore:average", "value": 1.5, "p": 0.13}])
    row = compare(paper, bad).iloc[0]
    assert row["verdict"] == NOT_REPLICATED and "bound" in row["reason"]


def test_alpha_lower_bound_over_pattern_rows():
    paper = paper_frame([{"study": "2A", "statistic": "alpha", "condition": "*", "value": 0.96, "value_bound": ">"}])
    conds = ["1:like:Flowers", "1:like:Insects", "2:like:Flowers"]
    ours = ours_frame(
        [{"study": "2A", "statistic": "alpha", "condition": c, "value": v} for c, v in zip(conds, [0.97, 0.99, 0.98])]
    )
    row = compare(paper, ours).iloc[0]
    assert row["verdict"] == REPLICATED and row["n_matched"] == 3
    assert row["ours_min"] == 0.97 and row["ours_max"] == 0.99
    ours_low = ours_frame(
        [{"study": "2A", "statistic": "alpha", "condition": c, "value": v} for c, v in zip(conds, [0.97, 0.95, 0.98])]
    )
    row = compare(paper, ours_low).iloc[0]
    assert row["verdict"] == NOT_REPLICATED and "1 of 3" in row["reason"]


def test_alpha_range_over_models():
    # Table 3: alpha_query = .80-.98 over the 12 models (model pattern "*", the "all" row excluded)
    paper = paper_frame([{"study": "1A", "statistic": "alpha", "model": "*", "value_low": 0.80, "value_high": 0.98}])
    rows = [
        {"study": "1A", "statistic": "alpha", "model": m, "value": v}
        for m, v in [("bert-base-uncased", 0.83), ("roberta-base", 0.97), ("all", 0.50)]
    ]
    row = compare(paper, ours_frame(rows)).iloc[0]
    assert row["n_matched"] == 2  # the pooled "all" row is not a model
    assert row["verdict"] == REPLICATED  # .83 within .05 of .80, .97 within .05 of .98
    assert bool(row["exact"]) is False
    rows[0]["value"] = 0.70  # min .70 is .10 below .80
    row = compare(paper, ours_frame(rows)).iloc[0]
    assert row["verdict"] == NOT_REPLICATED and "range" in row["reason"]


def test_range_of_t_with_p_bound_checks_sign_and_significance():
    paper = paper_frame(
        [
            {
                "study": "3A",
                "statistic": "t",
                "condition": "pair*",
                "value_low": 2.74,
                "value_high": 4.46,
                "df": 385,
                "p": 0.01,
                "bound": "<",
            }
        ]
    )
    good = ours_frame(
        [
            {"study": "3A", "statistic": "t", "condition": f"pair{i}", "value": v, "p": q}
            for i, (v, q) in enumerate([(3.0, 0.003), (6.0, 1e-8)], 1)
        ]
    )
    row = compare(paper, good).iloc[0]
    assert row["verdict"] == REPLICATED  # no tolerance for t: the range ends are not compared
    bad = ours_frame(
        [
            {"study": "3A", "statistic": "t", "condition": f"pair{i}", "value": v, "p": q}
            for i, (v, q) in enumerate([(3.0, 0.003), (1.2, 0.23)], 1)
        ]
    )
    assert compare(paper, bad).iloc[0]["verdict"] == NOT_REPLICATED


def test_pattern_p_bound_interactions_all_ns():
    paper = paper_frame([{"study": "3A", "statistic": "F", "condition": "gender_x_*", "p": 0.86, "bound": ">"}])
    ours = ours_frame(
        [
            {"study": "3A", "statistic": "F", "condition": c, "value": 0.2, "p": q}
            for c, q in [("gender_x_wording", 0.9), ("gender_x_pair", 0.4), ("gender", 1e-10)]
        ]
    )
    row = compare(paper, ours).iloc[0]
    assert row["n_matched"] == 2  # "gender" itself is not gender_x_*
    assert row["verdict"] == REPLICATED  # both not significant at .05
    assert bool(row["exact"]) is False  # .4 is not > .86 as printed


# ------------------------------------------------------------------ not computable


def test_reasons_for_rows_without_counterpart():
    paper = paper_frame(
        [
            {"study": "2A", "statistic": "d", "condition": "ref:iat", "value": 1.35, "stars": "***"},
            {"study": "2A", "statistic": "d", "condition": "like-dislike:average", "value": 0.37},
            {"study": "4A", "statistic": "ICC_average", "value": 0.68},
            {"study": "1A", "statistic": "r", "condition": "fmat~wefat", "value": 0.86},
            {"study": "3B", "statistic": "R2m", "value": 0.5},
        ]
    )
    ours = ours_frame(
        [
            {"study": "2A", "statistic": "ICC_average", "value": 0.9},
            {"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.7},
            {"study": "3B", "statistic": "alpha", "value": 0.9},
        ]
    )
    status = {
        "2A": StudyStatus(analysis="attitude_weat", implemented=False),
        "1A": {"analysis": "factual_wefat", "implemented": True, "notes": ["GloVe vectors not found"]},
        "3B": StudyStatus(analysis="stereotype_domains"),
    }
    out = compare(paper, ours, status)
    assert set(out["verdict"]) == {NOT_COMPUTABLE}
    reasons = list(out["reason"])
    assert "Caliskan" in reasons[0]
    assert "no analysis named 'attitude_weat' is registered" in reasons[1]
    assert "not run" in reasons[2]
    assert "WEFAT" in reasons[3] and "GloVe vectors not found" in reasons[3]
    assert "emitted no row" in reasons[4]


def test_columns_and_summary():
    paper = paper_frame(
        [
            {"study": "1A", "statistic": "ICC_average", "value": 0.82},
            {"study": "1A", "statistic": "ICC_single", "value": 0.28},
            {"study": "2A", "statistic": "ICC_average", "value": 0.96},
        ]
    )
    ours = ours_frame(
        [{"study": "1A", "statistic": "ICC_average", "value": 0.80}, {"study": "1A", "statistic": "ICC_single", "value": 0.60}]
    )
    out = compare(paper, ours)
    assert list(out.columns) == REPLICATION_COLUMNS
    s = summarise(out).set_index("study")
    assert s.loc["1A", "replicated"] == 1 and s.loc["1A", "not replicated"] == 1
    assert s.loc["2A", "not computable"] == 1 and s.loc["2A", "total"] == 1
    assert s.loc["1A", "share_replicated"] == 0.5 and math.isnan(s.loc["2A", "share_replicated"])


def test_real_paper_file_one_row_per_paper_row():
    paper = load_paper_results()
    ours = ours_frame(
        [
            {"study": "1A", "statistic": "ICC_average", "value": 0.81, "p": 0.0},
            {"study": "4A", "statistic": "b", "condition": "year", "value": -0.59, "p": 1e-20},
        ]
    )
    out = compare(
        paper,
        ours,
        {"1A": StudyStatus(analysis="factual_wefat", implemented=False), "4A": StudyStatus(analysis="change_over_time")},
    )
    assert len(out) == len(paper)
    assert verdict_of(out, study="1A", statistic="ICC_average")["verdict"] == REPLICATED
    b = verdict_of(out, study="4A", statistic="b", condition="year")
    assert b["verdict"] == REPLICATED and b["paper_ci_low"] == -0.605
    assert (
        out.loc[out["study"] == "2C", "reason"].str.contains("not run")
        | out.loc[out["study"] == "2C", "reason"].str.contains("Caliskan")
    ).all()
    import io  # the frame must be writable as parquet (dtypes)

    buf = io.BytesIO()
    out.to_parquet(buf)
    assert len(pd.read_parquet(io.BytesIO(buf.getvalue()))) == len(paper)


def test_format_replication_texts():
    from fmat_replication.formats import p_text
    from fmat_replication.formats import replication_text as format_replication

    assert p_text(0.001, "<") == "p < .001" and p_text(0.44) == "p = .440" and p_text(0.33, ">") == "p > .33"
    assert p_text(0.007) == "p = .007" and p_text(1e-9) == "p < .001"
    paper = paper_frame(
        [
            {"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.74, "p": 0.001, "bound": "<"},
            {"study": "1A", "statistic": "alpha", "model": "*", "value_low": 0.80, "value_high": 0.98},
            {"study": "2A", "statistic": "alpha", "condition": "*", "value": 0.96, "value_bound": ">"},
        ]
    )
    ours = ours_frame(
        [
            {
                "study": "1A",
                "statistic": "r",
                "condition": "fmat~pct_male",
                "value": 0.71,
                "p": 2e-9,
                "ci_low": 0.55,
                "ci_high": 0.82,
            },
            {"study": "1A", "statistic": "alpha", "model": "bert-base-uncased", "value": 0.83},
            {"study": "1A", "statistic": "alpha", "model": "roberta-base", "value": 0.97},
        ]
    )
    t = format_replication(compare(paper, ours))
    assert t["paper"].tolist() == ["0.74 (p < .001)", "0.80 to 0.98", "> 0.96"]
    assert t["ours"].tolist()[:2] == ["0.710 (p < .001, 95% CI [0.550, 0.820])", "0.830 to 0.970 (2 rows)"]
    assert t["verdict"].tolist() == [REPLICATED, REPLICATED, NOT_COMPUTABLE]


# ------------------------------------------------------------------ the analysis stage


class _FakeStudy:
    def __init__(self, name):
        self.id = "9Z"
        self.analysis = {"name": name, "options": {"k": 2}}


def _reliability_rows():
    return ours_frame(
        [
            {"study": "9Z", "statistic": "ICC_average", "value": 0.9, "ci_low": 0.8, "ci_high": 0.95},
            {"study": "9Z", "statistic": "alpha", "condition": "Career", "value": 0.85},
        ]
    )


def test_analysis_stage_without_registered_analysis_keeps_reliability_rows():
    from fmat_replication.analysis import analysis_stage

    stats, figures, status = analysis_stage(
        _FakeStudy("no_such_analysis_xyz"), pd.DataFrame(), pd.DataFrame(), _reliability_rows()
    )
    assert len(stats) == 2 and figures == {}
    assert status["implemented"] is False and "is registered" in status["notes"][0]
    assert status["analysis"] == "no_such_analysis_xyz" and status["study"] == "9Z"


def test_analysis_stage_runs_registered_analysis(monkeypatch):
    from fmat import analyses
    from fmat_replication.analysis import analysis_stage

    seen = {}

    def fake(data, k):
        seen["k"], seen["criteria"] = k, sorted(data.criteria)
        return analyses.AnalysisOutput(
            stats=ours_frame([{"study": "9Z", "statistic": "d", "condition": "all", "value": 0.5, "p": 0.01}]),
            figures={"trend": pd.DataFrame({"x": [1, 2], "y": [2, 3]})},
            notes=["GloVe missing"],
        )

    monkeypatch.setattr(analyses, "_load_all", lambda: None)
    monkeypatch.setitem(analyses._REGISTRY, "fake_analysis_for_test", fake)
    stats, figures, status = analysis_stage(
        _FakeStudy("fake_analysis_for_test"), pd.DataFrame(), pd.DataFrame(), _reliability_rows(), {"crit": pd.DataFrame()}
    )
    assert seen == {"k": 2, "criteria": ["crit"]}
    assert sorted(stats["statistic"]) == ["ICC_average", "alpha", "d"]
    assert list(figures) == ["trend"] and status["implemented"] is True and status["notes"] == ["GloVe missing"]


def test_analysis_stage_rejects_non_results_reliability_and_duplicate_keys(monkeypatch):
    from fmat import analyses
    from fmat.errors import InputError
    from fmat_replication.analysis import analysis_stage

    details = pd.DataFrame({"study": ["9Z"], "condition": ["raw"], "ICC": [0.9]})
    with pytest.raises(InputError, match="results shape|not a results table"):
        analysis_stage(_FakeStudy("x"), pd.DataFrame(), pd.DataFrame(), details)

    def dup(data, k):
        return analyses.AnalysisOutput(
            stats=ours_frame([{"study": "9Z", "statistic": "alpha", "condition": "Career", "value": 0.1}])
        )

    monkeypatch.setattr(analyses, "_load_all", lambda: None)
    monkeypatch.setitem(analyses._REGISTRY, "dup_analysis_for_test", dup)
    # a row the reliability stage made is not made again (test_an_analysis_may_not_emit_a_reliability_row)
    from fmat.errors import FmatError

    with pytest.raises(FmatError, match="alpha:Career:all"):
        analysis_stage(_FakeStudy("dup_analysis_for_test"), pd.DataFrame(), pd.DataFrame(), _reliability_rows())

    def twice(data, k):  # duplicate keys within one analysis' rows stay an error
        row = {"study": "9Z", "statistic": "r", "condition": "fmat~pct_male", "value": 0.1}
        return analyses.AnalysisOutput(stats=ours_frame([row, row]))

    monkeypatch.setitem(analyses._REGISTRY, "twice_analysis_for_test", twice)
    with pytest.raises(InputError, match="share a key"):
        analysis_stage(_FakeStudy("twice_analysis_for_test"), pd.DataFrame(), pd.DataFrame(), _reliability_rows())


def test_an_analysis_may_not_emit_a_reliability_row(monkeypatch):
    """Every statistic has one producer: an analysis that emits a row the reliability stage made
    (same study, statistic, condition, model) stops the stage, instead of replacing the row."""
    from fmat import analyses
    from fmat.errors import FmatError
    from fmat.results import results_frame
    from fmat_replication.analysis import analysis_stage

    rel = results_frame(
        [
            {"study": "9Z", "statistic": "alpha", "condition": "all", "model": "all", "value": 0.8},
            {"study": "9Z", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.8},
        ]
    )

    def again(data, k):
        return analyses.AnalysisOutput(
            stats=results_frame(
                [
                    {"study": "9Z", "statistic": "alpha", "condition": "all", "model": "all", "value": 0.9},
                    {"study": "9Z", "statistic": "r", "condition": "fmat~pct_male", "model": "all", "value": 0.7},
                ]
            )
        )

    def own(data, k):
        return analyses.AnalysisOutput(
            stats=results_frame([{"study": "9Z", "statistic": "r", "condition": "fmat~pct_male", "model": "all", "value": 0.7}])
        )

    monkeypatch.setattr(analyses, "_load_all", lambda: None)
    monkeypatch.setitem(analyses._REGISTRY, "again_for_test", again)
    monkeypatch.setitem(analyses._REGISTRY, "own_for_test", own)
    with pytest.raises(FmatError, match=r"reliability stage already produced: alpha:all:all"):
        analysis_stage(_FakeStudy("again_for_test"), pd.DataFrame(), pd.DataFrame(), rel)
    stats, _, status = analysis_stage(_FakeStudy("own_for_test"), pd.DataFrame(), pd.DataFrame(), rel)
    assert sorted(stats["statistic"]) == ["ICC_average", "alpha", "r"]
    assert stats.loc[stats.statistic == "alpha", "value"].tolist() == [0.8]  # the reliability stage's


def test_compare_studies_takes_one_file_or_a_list(tmp_path):
    """Rule compare_study passes one stats file and one status file (strings), rule compare lists
    of them: both give the same rows for that study (a string is never read letter by letter)."""
    import json

    from fmat.results import results_frame
    from fmat_replication.compare import compare_studies
    from fmat_replication.paper import PAPER_FILE

    stats = tmp_path / "stats.parquet"
    results_frame([{"study": "2A", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.9}]).to_parquet(
        stats
    )
    status = tmp_path / "status.json"
    status.write_text(
        json.dumps({"study": "2A", "analysis": "attitude_weat", "implemented": True, "run": True, "notes": [], "figures": {}})
    )
    one = compare_studies(PAPER_FILE, str(stats), str(status), tmp_path / "one.parquet", study="2A")
    many = compare_studies(PAPER_FILE, [str(stats)], [str(status)], tmp_path / "many.parquet", study="2A")
    assert len(one) and set(one["study"]) == {"2A"}
    pd.testing.assert_frame_equal(one, many)


def test_calibrated_verdict_says_whether_a_number_holds_under_the_calibrated_p():
    """3A's d rows with a calibrated variant (figure table ``calibrated``): the calibrated p and
    CI beside ours, and the verdict with the calibrated p in place of the paper's model's.
    pair1: significant either way (holds); pair2: significant only under the paper's model (the
    paper's p < .001 then fails under ours); rows of a study without the table: empty."""
    paper = paper_frame(
        [
            {"study": "3A", "statistic": "d", "condition": "pair1", "value": 0.50, "p": 0.001, "bound": "<"},
            {"study": "3A", "statistic": "d", "condition": "pair2", "value": 0.30, "p": 0.001, "bound": "<"},
            {
                "study": "3A",
                "statistic": "d",
                "condition": "pair*",
                "value_low": 0.3,
                "value_high": 0.5,
                "p": 0.001,
                "bound": "<",
            },
            {"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.74, "p": 0.001, "bound": "<"},
        ]
    )
    ours = ours_frame(
        [
            {"study": "3A", "statistic": "d", "condition": "pair1", "value": 0.49, "p": 1e-6, "ci_low": 0.4, "ci_high": 0.6},
            {"study": "3A", "statistic": "d", "condition": "pair2", "value": 0.31, "p": 0.01, "ci_low": 0.1, "ci_high": 0.5},
            {"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.71, "p": 2e-9},
        ]
    )
    cal = pd.DataFrame(
        {
            "condition": ["pair1", "pair2"],
            "p_ours": [1e-4, 0.09],
            "ci_low_ours": [0.3, -0.05],
            "ci_high_ours": [0.7, 0.67],
        }
    )
    out = compare(paper, ours, calibrated={"3A": cal})
    assert list(out.columns) == REPLICATION_COLUMNS
    one = verdict_of(out, study="3A", condition="pair1")
    assert one["verdict"] == REPLICATED and one["verdict_calibrated"] == REPLICATED
    assert one["calibrated_p"] == 1e-4 and one["calibrated_ci_low"] == 0.3 and one["ours_p"] == 1e-6
    two = verdict_of(out, study="3A", condition="pair2")
    assert two["verdict"] == REPLICATED and two["verdict_calibrated"] == NOT_REPLICATED
    assert two["calibrated_ci_high"] == 0.67
    pattern = verdict_of(out, study="3A", condition="pair*")
    assert pattern["verdict_calibrated"] == NOT_REPLICATED and math.isnan(pattern["calibrated_p"])
    other = verdict_of(out, study="1A")
    assert other["verdict"] == REPLICATED and other["verdict_calibrated"] == "" and math.isnan(other["calibrated_p"])
    assert (compare(paper, ours)["verdict_calibrated"] == "").all()  # no calibrated tables: empty
    # a criterion analysis's table (column statistic: its r and b, disattenuated): the same p, the
    # disattenuated CI; the value compared stays ours as the paper computed it (0.71, not 0.78)
    crit = pd.DataFrame(
        {
            "condition": ["fmat~pct_male", "lmm:logit_male~fmat:fmat"],
            "statistic": ["r", "b"],
            "value": [0.71, 2.6],
            "value_ours": [0.78, 2.9],
            "p_ours": [2e-9, 1e-12],
            "ci_low_ours": [0.6, 2.8],
            "ci_high_ours": [0.9, 3.0],
        }
    )
    r = verdict_of(compare(paper, ours, calibrated={"1A": crit}), study="1A")
    assert r["verdict_calibrated"] == REPLICATED and r["calibrated_p"] == 2e-9
    assert (r["calibrated_ci_low"], r["calibrated_ci_high"]) == (0.6, 0.9) and r["ours_value"] == 0.71
