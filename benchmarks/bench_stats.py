"""Benchmark: the Study 1C-sized random-intercept model (~175,000 rows).

3,644 names x 4 queries x 12 models; ``logit_pct_male ~ z_LPR`` with a random intercept per
model (the paper's LMM of Study 1C), fitted with :func:`fmat.stats.fit_lmm` (statsmodels REML +
exact profile polish + nlme df).  Prints seconds and the estimates; target: under a minute on
the 2-core development machine.
Run:  python benchmarks/bench_stats.py [--engine statsmodels]
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def make_data(n_names: int = 3644, n_queries: int = 4, n_models: int = 12, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0, 3, n_names)
    model_shift = rng.normal(0, 0.4, n_models)
    names = np.tile(np.repeat(np.arange(n_names), n_queries), n_models)
    models = np.repeat(np.arange(n_models), n_names * n_queries)
    lpr = 0.3 * logit[names] + model_shift[models] + rng.normal(0, 1.2, len(names))
    df = pd.DataFrame(
        {"model": pd.Categorical([f"m{i:02d}" for i in models]), "name": names, "LPR": lpr, "logit_pct_male": logit[names]}
    )
    df["z_LPR"] = (df["LPR"] - df["LPR"].mean()) / df["LPR"].std()
    return df


def main() -> None:
    import argparse

    from fmat.stats import fit_lmm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=["profile", "statsmodels"], default="profile")
    args = ap.parse_args()
    df = make_data()
    t0 = time.perf_counter()
    fit = fit_lmm(df, "logit_pct_male ~ z_LPR", group="model", engine=args.engine)
    dt = time.perf_counter() - t0
    b = fit.coefs.set_index("term").loc["z_LPR"]
    print(f"engine={args.engine} rows={fit.n} groups={fit.n_groups} seconds={dt:.1f}")
    print(
        f"b={b['b']:.4f} se={b['se']:.5f} df={b['df']:.0f} R2m={fit.r2m:.3f} R2c={fit.r2c:.3f} "
        f"tau2={fit.var_group:.4g} llf={fit.llf:.1f}"
    )


if __name__ == "__main__":
    main()
