"""Benchmark: Study 1C's full design with ``inference: crossed`` (issue 52's target: 3,832 names x
12 models analysed in under a minute on 2 cores).

Synthetic LPRs of 3,832 names x 4 query templates x 12 models (184,000 rows; the names' logit %
male bimodal, each model's own slope on it, each name's own value, model x name and sentence
noise) and a criterion table (% male, its logit, a WEFAT score) go through ``factual_names``
as Study 1C's study file sets it up: once with the paper's inference and once with
``inference: crossed`` (which also fits the paper's two mixed models: the b rows keep their
values), and the crossed tests alone (:func:`fmat.analyses.factual.crossed_rows`).  Prints
seconds and the crossed rows of model ``all``; docs/calibration.md, "The criterion family".
Run:  python benchmarks/bench_criterion_crossed.py [--names 3832] [--models 12] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

#: the study file benchmarked: its analysis is the one run
STUDY = Path(__file__).resolve().parents[1] / "config" / "studies" / "1C.yaml"


def make_data(n_names: int = 3832, n_models: int = 12, n_queries: int = 4, seed: int = 1):
    """``(lpr, criterion)``: the LPR table (model, query, T_word, LPR) and the criterion table."""
    rng = np.random.default_rng(seed)
    names = np.array([f"name{i:04d}" for i in range(n_names)])
    logit = np.where(rng.random(n_names) < 0.5, -2.5, 2.5) + rng.normal(0, 1, n_names)
    wefat = 0.15 * logit + rng.normal(0, 0.4, n_names)
    slope = 0.3 + rng.normal(0, 0.05, n_models)
    own = rng.normal(0, 0.5, n_names)
    m, q, i = np.meshgrid(np.arange(n_models), np.arange(n_queries), np.arange(n_names), indexing="ij")
    m, q, i = m.ravel(), q.ravel(), i.ravel()
    cell = rng.normal(0, 0.3, (n_models, n_names))
    lpr = rng.normal(0, 1, (n_models, n_queries))[m, q] + slope[m] * logit[i] + own[i] + cell[m, i] + rng.normal(0, 0.6, len(m))
    table = pd.DataFrame({"model": [f"m{k:02d}" for k in m], "query": [f"Q{k + 1}" for k in q], "T_word": names[i], "LPR": lpr})
    crit = pd.DataFrame({"item": names, "pct_male": 100 / (1 + np.exp(-logit)), "logit_pct_male": logit, "wefat_male": wefat})
    return table, crit


OPTIONS = {
    "standardize_within": ["model", "query"],
    "criterion": {"table": "c", "item": "item", "column": "pct_male", "logit_column": "logit_pct_male"},
    "wefat": {"table": "c", "item": "item", "column": "wefat_male"},
}


def main(argv=None) -> None:
    from fmat import analyses
    from fmat.analyses import AnalysisInput, factual
    from fmat.oracle import read_study_file

    name = str(read_study_file(STUDY)["analysis"]["name"])

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", type=int, default=3832)
    ap.add_argument("--models", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each timing (the fastest is printed)")
    args = ap.parse_args(argv)
    lpr, crit = make_data(args.names, args.models)
    data = AnalysisInput(
        study=SimpleNamespace(id="1C", queries=None, items=None), scores=pd.DataFrame(), lpr=lpr, criteria={"c": crit}
    )
    size = f"{args.names} names x 4 queries x {args.models} models = {len(lpr)} rows"
    print(f"{platform.machine()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}: {size} ({name})")
    best = {}
    for _ in range(args.repeat):
        for label, opts in (("paper", OPTIONS), ("crossed", {**OPTIONS, "inference": "crossed"})):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = analyses.run_analysis(name, data, opts)
            best[label] = min(best.get(label, np.inf), time.perf_counter() - t0)
            if label == "crossed":
                crossed = out
    # the crossed tests alone, on the paper's rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = analyses.run_analysis(name, data, OPTIONS)
    rows = paper.stats.to_dict("records")
    long = factual.item_lpr(lpr)
    z = factual.zscore(long, "LPR", ["model", "query"])
    c = crit.rename(columns={"logit_pct_male": "logit_male", "wefat_male": "wefat"})
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        factual.crossed_rows(rows, z, c)
        best["crossed tests alone"] = min(best.get("crossed tests alone", np.inf), time.perf_counter() - t0)
    for label, sec in best.items():
        print(f"{label:>20}: {sec:6.2f} s")
    s = crossed.stats
    keep = (s["model"] == "all") & s["statistic"].isin(["r", "b"]) & ~s["condition"].str.contains(":Q")
    print(s.loc[keep, ["statistic", "condition", "value", "df", "p", "ci_low", "ci_high", "n"]].to_string(index=False))


if __name__ == "__main__":
    main()
