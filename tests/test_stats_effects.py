"""Effect sizes d: WEAT-style (Caliskan et al. 2017) and with the population sigma of LPRs."""

import math

import numpy as np
import pandas as pd
import pytest

from fmat.errors import InputError
from fmat.stats import LPR_SIGMA, effect_d, sigma_d, standardize, weat_d


def test_weat_d_hand():
    x, y = [1.0, 2.0, 3.0], [0.0, 1.0]
    # means 2 and 0.5; all five values 1,2,3,0,1: mean 1.4, sample var = (0.16+0.36+2.56+1.96+0.16)/4 = 1.3
    assert weat_d(x, y) == pytest.approx(1.5 / math.sqrt(1.3))


def test_sigma_d():
    assert LPR_SIGMA == pytest.approx(1.41421356)
    assert sigma_d([1.0, 2.0], [0.0, 0.0]) == pytest.approx(1.5 / math.sqrt(2))
    assert sigma_d([1.414]) == pytest.approx(1.414 / math.sqrt(2))


def test_effect_d_pooling():
    d = pd.DataFrame(
        {"model": ["a"] * 4 + ["b"] * 4, "g": ["X", "X", "Y", "Y"] * 2, "v": [1.0, 3.0, 0.0, 0.0, 2.0, 2.0, 1.0, 1.0]}
    )
    pooled = effect_d(d, "v", "g", "X", "Y")
    assert pooled.loc[0, "d"] == pytest.approx(weat_d([1, 3, 2, 2], [0, 0, 1, 1]))
    per = effect_d(d, "v", "g", "X", "Y", pooling="per_model")
    expected = np.mean([weat_d([1, 3], [0, 0]), weat_d([2, 2], [1, 1])])
    assert per.loc[0, "d"] == pytest.approx(expected) and per.loc[0, "n_models"] == 2
    sig = effect_d(d, "v", "g", "X", "Y", sigma=LPR_SIGMA, by="model")
    assert list(sig["d"]) == pytest.approx([2 / math.sqrt(2), 1 / math.sqrt(2)])
    with pytest.raises(InputError):
        effect_d(d, "v", "g", "X", "Y", pooling="mean")


def test_standardize():
    d = pd.DataFrame({"k": ["a", "a", "b", "b"], "v": [1.0, 3.0, 2.0, 6.0]})
    out = standardize(d, "v", by="k", out="z")
    assert list(out["z"]) == pytest.approx([1 / math.sqrt(2), 3 / math.sqrt(2), 2 / math.sqrt(8), 6 / math.sqrt(8)])
    assert list(standardize(d, "v", sigma=2.0)["v"]) == [0.5, 1.5, 1.0, 3.0]
