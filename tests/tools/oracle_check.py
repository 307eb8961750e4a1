"""The exact check of tests/test_oracle.py, shared with its mutation test: plant a world from a
study file's raw words (fmat.oracle), run the workflow's own stages on the planted
scores (the design's query table, the LPR, reliability and analysis stages) and compare every
statistic the oracle knows with the workflow's."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import yaml
from scipy import stats as sps

from fmat import plant as P
from fmat.oracle import oracle, planted_table, read_study_file
from fmat.results import KEY
from fmat.stages import lpr_table, reliability_tables
from fmat_replication.analysis import analysis_stage
from fmat_replication.queries import load_study_file

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "config" / "studies"
MODELS = ["bert-m1", "roberta-m2", "albert-m3", "electra-m4"]
#: the demo's model names (config/demo.yaml): they seed each model's variation in its world
DEMO_MODELS = [str(m["name"]) for m in yaml.safe_load((REPO / "config" / "demo.yaml").read_text(encoding="utf-8"))["models"]]
#: a world with every kind of variation, small: the realised values differ from the nominal
#: ones, the mixed models are not singular, and the oracle still knows them exactly
VARIATION = {"words": 0.3, "items": 0.2, "models": 0.1, "model_items": 0.1}
TOL = 1e-6


def demo_plant(sid: str, variation: dict | None = None) -> P.Plant:
    """The demo world's plant of ``sid`` (nothing planted for a study it does not name)."""
    plant = P.load_world(REPO / "config" / "world.yaml").plant(sid) or P.Plant(sid)
    plant.variation = dict(VARIATION if variation is None else variation)
    return plant


#: made-up names for a word list read from a criterion table (Study 1C)
NAMES = ["Avery", "Jordan", "Taylor", "Morgan", "Casey", "Riley", "Jamie", "Quinn", "Skyler", "Dakota", "Reese", "Rowan"]


def criteria_for(sid: str) -> dict[str, pd.DataFrame]:
    """Made-up criterion tables for Study 1 (% male and WEFAT per item of the study file: the
    real ones are built by the workflow from data/mirror; 1C's names list is :data:`NAMES`)."""
    data = read_study_file(STUDIES / f"{sid}.yaml")
    opts = dict(data.get("analysis", {}).get("options") or {})
    out = {}
    items = None
    crit = opts.get("criterion") or {}
    if "logit_column" in crit:  # 1C: the names are the criterion table's items
        pct = np.random.default_rng(7).uniform(5, 95, len(NAMES))
        out[str(crit["table"])] = pd.DataFrame(
            {"item": NAMES, str(crit["column"]): pct, str(crit["logit_column"]): np.log(pct / (100 - pct))}
        )
        items = NAMES
    for key in ("criterion", "wefat"):
        spec = opts.get(key)
        if not spec:
            continue
        if str(spec["table"]) in out:
            continue
        if items is None:
            raw = planted_table(data, P.Plant(sid, variation=dict.fromkeys(VARIATION, 0.0)), ["m"])
            items = list(dict.fromkeys(raw["T_item"]))
        rng = np.random.default_rng(len(key))
        if key == "criterion":
            value = rng.uniform(0, 100, len(items))
        else:  # WEFAT follows % male, as in the real data (r = .77 in 1A)
            c = opts["criterion"]
            pct = out[str(c["table"])].set_index(str(c.get("item", "item")))[str(c["column"])]
            value = (pct.reindex(items).to_numpy() - 50) / 50 + rng.normal(0, 0.4, len(items))
        out[str(spec["table"])] = pd.DataFrame({str(spec.get("item", "item")): items, str(spec["column"]): value})
    return out


def workflow_vs_oracle(
    sid: str,
    tmp: Path,
    plant: P.Plant | None = None,
    models: list[str] = MODELS,
    mutate_queries: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
    path: Path | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(oracle rows joined with the workflow's value as ``ours``, the workflow's stats);
    ``tmp``: a folder for the criterion tables the study file's word lists read; ``path``: a
    study file of id ``sid`` elsewhere than config/studies."""
    path = Path(path) if path else STUDIES / f"{sid}.yaml"
    plant = plant or demo_plant(sid)
    criteria = criteria_for(sid)
    for name, table in criteria.items():
        table.to_parquet(Path(tmp) / f"{name}.parquet")
    study = load_study_file(path, tmp)
    if mutate_queries is not None:
        study.queries = mutate_queries(study.queries.copy())
    # planted from the study file's raw words and groups, not from the design's query table:
    # each row of the design gets the log probability its words have in the world
    raw = planted_table(read_study_file(path), plant, models, criteria)
    key = [c for c in ("model", "query", "M_word", "T_word", "A_word") if c in raw.columns]
    lookup = raw.set_index(key)["lp"]
    scores = P.planted_scores(study, plant, models, criteria)
    lp = lookup.reindex(pd.MultiIndex.from_frame(scores[key].astype(str))).to_numpy(dtype=float)
    assert not np.isnan(lp).any(), f"{sid}: a row of the query design has words the study file does not have"
    scores["logp"], scores["prob"] = lp, np.exp(lp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lpr = lpr_table(study, scores)
        _, reliability = reliability_tables(study, scores, lpr, sid=sid)
        stats, _, _ = analysis_stage(study, scores, lpr, reliability, criteria, sid=sid)
    truth = oracle(path, plant, models, criteria)
    both = truth.merge(stats[KEY + ["value", "df"]].rename(columns={"value": "ours", "df": "ours_df"}), on=KEY, how="left")
    return both, stats


def problems(both: pd.DataFrame, stats: pd.DataFrame) -> list[str]:
    """Every statistic the oracle knows that the workflow misses or gets wrong (beyond
    :data:`TOL`, df exactly), every t whose sign is not its d's (or b's) or whose p is not its
    two-sided p on the oracle's df, and a [MASK] main-effect F that is not t(all)^2."""
    out = [
        f"{r.statistic}:{r.condition}:{r.model}: oracle {r.value:.9g}, ours {r.ours:.9g}"
        for r in both.itertuples()
        if not (np.isfinite(r.ours) and abs(r.ours - r.value) <= TOL)
    ]
    out += [
        f"df of {r.statistic}:{r.condition}:{r.model}: oracle {r.df:g}, ours {r.ours_df:g}"
        for r in both.itertuples()
        if np.isfinite(r.df) and not r.ours_df == r.df
    ]
    truth = {(r.condition): r.value for r in both.itertuples() if r.model == "all" and r.statistic in ("d", "b")}
    dfs = {(r.condition): r.df for r in both.itertuples() if r.model == "all" and r.statistic in ("d", "b")}
    for r in stats[(stats["statistic"] == "t") & (stats["model"] == "all")].itertuples():
        want = truth.get(r.condition)
        if want is None:
            out.append(f"t:{r.condition}: the oracle has no d or b for it")
            continue
        if abs(want) > TOL and np.sign(r.value) != np.sign(want):
            out.append(f"t:{r.condition} = {r.value:.4g} has not the sign of the oracle's {want:.4g}")
        # its p is the two-sided p of t on the oracle's df
        p = 2 * sps.t.sf(abs(r.value), dfs[r.condition]) if np.isfinite(dfs[r.condition]) else np.nan
        if np.isfinite(p) and not np.isclose(r.p, p, rtol=1e-6, atol=1e-300):
            out.append(f"p of t:{r.condition} = {r.p:.6g}, not the two-sided p of t on df {dfs[r.condition]:g} ({p:.6g})")
    # the [MASK] factor's F (main effect; sequential, balanced design) is t(all)^2
    t_all = stats[(stats["statistic"] == "t") & (stats["condition"] == "all") & (stats["model"] == "all")]["value"]
    mains = stats[(stats["statistic"] == "F") & ~stats["condition"].astype(str).str.contains("_x_")]
    for r in mains.itertuples() if "all" in truth else []:
        if len(t_all) and not np.isclose(r.value, float(t_all.iloc[0]) ** 2, rtol=1e-9):
            out.append(f"F:{r.condition} = {r.value:.6g} is not t(all)^2 = {float(t_all.iloc[0]) ** 2:.6g}")
    return out
