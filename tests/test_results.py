"""The one results shape: defaults, types and the checks that keep the paper-vs-ours join sound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.results import RESULT_COLUMNS, STATISTICS, results_frame, validate_results
from fmat_replication.paper import conditions


def test_defaults_fill_condition_and_model_per_row():
    rows = [
        {"study": "2A", "statistic": "d", "condition": "like-dislike:personal", "value": 0.38, "p": 1e-5},
        {"study": "2A", "statistic": "ICC_average", "value": 0.9},  # no condition, no model
    ]
    df = results_frame(rows)
    assert list(df.columns) == RESULT_COLUMNS
    assert df.loc[1, "condition"] == "all" and df.loc[1, "model"] == "all"
    assert df.loc[0, "condition"] == "like-dislike:personal"
    assert np.isnan(df.loc[1, "se"]) and df.loc[0, "p"] == pytest.approx(1e-5)
    validate_results(df)


def test_unknown_column_is_an_error():
    with pytest.raises(InputError, match="unknown result columns"):
        results_frame([{"study": "1A", "statistic": "r", "value": 0.7, "rho": 1}])


def test_validate_rejects_unknown_statistic_duplicates_and_blank_keys():
    base = results_frame([{"study": "1A", "statistic": "r", "condition": "fmat~pct_male", "value": 0.7}])
    with pytest.raises(InputError, match="unknown statistic"):
        validate_results(base.assign(statistic="rr"), statistics=STATISTICS)
    for bad in ("two words", "", "1st", "r;drop"):
        with pytest.raises(InputError, match="are not names"):
            validate_results(base.assign(statistic=bad))
    with pytest.raises(InputError, match="share a key"):
        validate_results(pd.concat([base, base], ignore_index=True))
    with pytest.raises(InputError, match="empty key"):
        validate_results(base.assign(condition=np.nan))


def test_numeric_columns_must_be_numbers():
    with pytest.raises(ValueError):
        results_frame([{"study": "1A", "statistic": "r", "value": "high"}])


def test_vocabulary_is_documented():
    cond = conditions()
    assert {"condition", "meaning"} <= set(cond.columns)
    assert "all" in set(cond["condition"])
    assert (cond["meaning"].str.len() > 0).all()
    assert all(isinstance(v, str) and v for v in STATISTICS.values())


def test_statistic_names_are_open_unless_closed():
    """Issue 33: an analysis of one's own may report a statistic the project does not list;
    the paper's file (which must join ours) keeps the closed list."""
    rows = results_frame([{"study": "S1", "statistic": "omega_h", "value": 0.8}])
    assert validate_results(rows)["statistic"].tolist() == ["omega_h"]
    with pytest.raises(InputError, match=r"unknown statistic\(s\) \['omega_h'\]"):
        validate_results(rows, statistics=STATISTICS)
