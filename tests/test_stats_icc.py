"""ICC against published values (Shrout & Fleiss 1979), pingouin and R psych::ICC."""

from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from fmat.errors import InputError
from fmat.stats import icc

FIX = Path(__file__).parent / "fixtures" / "r"
# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges
SF = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)


@pytest.mark.parametrize(
    "type_,unit,published",
    [
        ("agreement", "single", 0.29),
        ("agreement", "average", 0.62),
        ("consistency", "single", 0.71),
        ("consistency", "average", 0.91),
    ],
)
def test_shrout_fleiss_published(type_, unit, published):
    res = icc(SF, type_, unit)
    assert round(res["ICC"], 2) == published
    assert res["n_items"] == 6 and res["n_raters"] == 4
    # Shrout & Fleiss Table 3 mean squares: BMS 11.24, JMS 32.49, EMS 1.02 -> F = 11.03
    assert res["F"] == pytest.approx(11.24 / 1.02, rel=2e-3)


def _long(x):
    return pd.DataFrame([(i, j, x[i, j]) for i in range(x.shape[0]) for j in range(x.shape[1])], columns=["t", "r", "s"])


def _pingouin(x):
    out = pg.intraclass_corr(_long(x), "t", "r", "s", nan_policy="omit").set_index("Type")
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_against_pingouin_with_missing(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 1)) + rng.normal(size=(30, 5)) + np.arange(5) * 0.3
    x[[2, 5, 5], [1, 3, 4]] = np.nan  # rows 2 and 5 are dropped by both
    ref = _pingouin(x)
    for (t, u), name in {
        ("agreement", "single"): "ICC(A,1)",
        ("agreement", "average"): "ICC(A,k)",
        ("consistency", "single"): "ICC(C,1)",
        ("consistency", "average"): "ICC(C,k)",
    }.items():
        res = icc(x, t, u, method="mcgraw-wong")
        assert res["n_items"] == 28 and res["n_dropped"] == 2
        assert res["ICC"] == pytest.approx(ref.loc[name, "ICC"], abs=1e-10)
        assert res["F"] == pytest.approx(ref.loc[name, "F"], rel=1e-10)
        assert res["df2"] == ref.loc[name, "df2"]
        assert res["p"] == pytest.approx(ref.loc[name, "pval"], rel=1e-6)
        lo, hi = ref.loc[name, "CI95"]  # pingouin rounds CIs to 2 decimals
        assert res["ci_low"] == pytest.approx(lo, abs=0.005 + 1e-9)
        assert res["ci_high"] == pytest.approx(hi, abs=0.005 + 1e-9)


def test_against_r_psych_icc():
    x = pd.read_csv(FIX / "psych_items.csv").to_numpy(float)
    ref = pd.read_csv(FIX / "psych_icc.csv").set_index("type")
    for (t, u), name in {
        ("agreement", "single"): "ICC2",
        ("agreement", "average"): "ICC2k",
        ("consistency", "single"): "ICC3",
        ("consistency", "average"): "ICC3k",
    }.items():
        res = icc(x, t, u, method="mcgraw-wong")
        assert res["ICC"] == pytest.approx(ref.loc[name, "ICC"], abs=1e-10)
        assert res["F"] == pytest.approx(ref.loc[name, "F"], rel=1e-10)
        if t == "consistency":  # psych's ICC2 bounds use another approximation; ICC3 bounds agree
            assert res["ci_low"] == pytest.approx(ref.loc[name, "lower"], abs=1e-8)
            assert res["ci_high"] == pytest.approx(ref.loc[name, "upper"], abs=1e-8)


def test_irr_variant_differs_only_where_documented():
    mw = {u: icc(SF, "agreement", u, method="mcgraw-wong") for u in ("single", "average")}
    ir = {u: icc(SF, "agreement", u, method="irr") for u in ("single", "average")}
    # same coefficient and F; the single-measure CI is the same (same v)
    for u in mw:
        assert ir[u]["ICC"] == mw[u]["ICC"] and ir[u]["F"] == mw[u]["F"]
    assert ir["single"]["ci_low"] == pytest.approx(mw["single"]["ci_low"])
    # irr 0.84.1 reports df2 = v (non-integer) for agreement; McGraw-Wong (n-1)(k-1) = 15
    assert mw["single"]["df2"] == 15 and ir["single"]["df2"] != 15
    # irr's ICC(A,k) CI uses the average ICC in v -> a different lower bound
    assert ir["average"]["ci_low"] != pytest.approx(mw["average"]["ci_low"], abs=1e-3)
    assert ir["average"]["ci_low"] < ir["average"]["ICC"] < ir["average"]["ci_high"]


def test_single_below_average_and_bad_input():
    assert icc(SF, unit="single")["ICC"] < icc(SF, unit="average")["ICC"]
    with pytest.raises(InputError):
        icc(SF, type="absolute")
    with pytest.raises(InputError):
        icc(np.array([[1.0, np.nan], [2.0, 3.0]]))
