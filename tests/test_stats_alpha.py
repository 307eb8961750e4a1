"""Cronbach's alpha against a hand-derived example, pingouin and R psych::alpha."""

from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from fmat.errors import InputError
from fmat.stats import alpha_if_dropped, cronbach_alpha

FIX = Path(__file__).parent / "fixtures" / "r"


def test_hand_example():
    # items: a = (1,2,3), b = (2,4,6): var a = 1, var b = 4, cov = 2; sum(C) = 9, tr(C) = 5
    # alpha = 2/1 * (1 - 5/9) = 8/9; r = 1 -> standardized alpha = 1
    res = cronbach_alpha(pd.DataFrame({"a": [1, 2, 3], "b": [2, 4, 6]}))
    assert res["alpha"] == pytest.approx(8 / 9)
    assert res["alpha_std"] == pytest.approx(1.0)
    assert res["k_items"] == 2 and res["n_obs"] == 3


def test_against_pingouin():
    rng = np.random.default_rng(3)
    x = pd.DataFrame(rng.normal(size=(50, 1)) + rng.normal(size=(50, 4)), columns=list("abcd"))
    ref, _ = pg.cronbach_alpha(data=x)
    assert cronbach_alpha(x)["alpha"] == pytest.approx(ref, abs=1e-12)


def test_against_r_psych():
    x = pd.read_csv(FIX / "psych_items.csv")
    ref = pd.read_csv(FIX / "psych_alpha.csv").iloc[0]
    res = cronbach_alpha(x)
    assert res["alpha"] == pytest.approx(ref["raw_alpha"], abs=1e-12)
    assert res["alpha_std"] == pytest.approx(ref["std_alpha"], abs=1e-12)
    drop = alpha_if_dropped(x)
    ref_drop = pd.read_csv(FIX / "psych_alpha_drop.csv")
    np.testing.assert_allclose(drop["alpha"], ref_drop["raw_alpha"], atol=1e-12)
    np.testing.assert_allclose(drop["alpha_std"], ref_drop["std_alpha"], atol=1e-12)


def test_pairwise_missing_as_psych():
    x = pd.read_csv(FIX / "psych_items_na.csv")
    ref = pd.read_csv(FIX / "psych_alpha_na.csv").iloc[0]
    res = cronbach_alpha(x)
    assert res["alpha"] == pytest.approx(ref["raw_alpha"], abs=1e-12)
    assert res["alpha_std"] == pytest.approx(ref["std_alpha"], abs=1e-12)


def test_one_item_is_an_error():
    with pytest.raises(InputError):
        cronbach_alpha(pd.DataFrame({"a": [1, 2, 3]}))
