"""Benchmark: the null control's false-positive rate (docs/planting.md).

For each of ``--seeds`` worlds (default 20), the demo's null-control study N0
(config/studies/N0.yaml: nothing planted) is planted with the variation of the demo's world
(config/world.yaml) under that seed, ``--models`` tiny models of different tokenizer families
are trained on it (each its own corpus sample), and the workflow's own stages run on them:
scoring (fmat.run), the LPRs, the reliability rows and the study's analysis
(stereotype_pairs: d of men vs women, models as random intercepts). A run is a false positive
when its d is significant at alpha = .05. Goal: at most 10% of the worlds (nominal: 5%).

Prints one line per seed and the rate; writes the table with ``--out`` (CSV).
``--perfect-learners``: no training; each "model" is the empirical share of each option in its
own corpus sample (what a perfect learner of that sample would say), many seeds in seconds: it
separates what the analysis does with sampling noise from what training adds. ``--others P``
(with it): the share of the [MASK]'s probability outside the study's options (0 in the demo's
world: its contexts only ever hold their options; most of it in a real model's vocabulary).

``--study SID`` (another study than N0): trained null worlds of that study: its plant in the
demo's world with nothing planted and no item, model-item or model variation
(fmat.calibration.null_plant, seeded by the world's seed: every realised value is 0),
the models trained on that world's sentences as for N0 and the workflow's stages run on them
(criterion tables: bench_calibration's stand-ins). Every judged row (d, b or r of model "all"
with a CI: fmat.calibration.judged) is written to ``--out``, appended world by world
with the columns of bench_calibration.py's runs file (kind "null", realised 0), variants "paper",
for the stereotype analyses "sentence" and for the criterion r "disattenuated" (each from the same
analysis run: its figure table ``calibrated``; rows without a CI left out), so that
``bench_calibration.py --table --runs FILE`` summarises it; a rerun skips the seeds already there.
``--kind planted`` (with ``--study``): the study's plant in the demo's world instead, each row
judged against the oracle's value for the world's items and models (fmat.oracle.oracle): the value
an infinite-data learner of the world holds, not what a model trained for a few steps holds.

Run:  python benchmarks/bench_null.py [--seeds 20] [--first-seed 1] [--models bert-uncased,roberta,albert] [--steps 200]
      python benchmarks/bench_null.py --perfect-learners --seeds 200 [--others 0.5]
      python benchmarks/bench_null.py --study 3B [--kind planted] --seeds 20 --out calibration-trained.csv
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_args import run_checked  # noqa: E402

from fmat.errors import InputError  # noqa: E402


def one_world(seed: int, families: list[str], steps: int, folder: Path) -> dict:
    import fmat
    from fmat import plant, tiny
    from fmat.stages import lpr_table, reliability_tables
    from fmat.study import load_study
    from fmat_replication.analysis import analysis_stage

    study = load_study(REPO / "config" / "studies" / "N0.yaml")
    demo = plant.load_world(REPO / "config" / "world.yaml").plant("N0")
    null = plant.Plant(
        "N0",
        effects=[],
        variation=dict(demo.variation),
        samples=demo.samples,
        seed=seed,
        expect=[e for e in demo.expect if e.get("absent")],
    )
    words = sorted({w for c in ("M_word", "A_word") for w in study.queries[c].astype(str)})
    paths = {}
    for k, fam in enumerate(families):
        name = f"null-{seed}-{fam}"
        sentences = plant.training_sentences([(study, null)], name, seed=seed)
        paths[name] = str(
            tiny.build_trained_model(folder / name, fam, words, sentences, seed=seed * 100 + k, steps=steps, filler=300)
        )
    scores = fmat.run(paths, study.queries, progress=False)
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid="N0")
    stats, figures, _ = analysis_stage(study, scores, lpr, rel, {}, sid="N0")
    row = stats[(stats["statistic"] == "d") & (stats["condition"] == "all") & (stats["model"] == "all")].iloc[0]
    verdict = plant.recovery(null, stats)["verdict"].iloc[0]
    return {
        "seed": seed,
        "d": float(row["value"]),
        "p": float(row["p"]),
        "false_positive": bool(row["p"] < 0.05),
        **calibrated_p(figures),
        "recovery": verdict,
    }


def _bench_calibration():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_calibration

    return bench_calibration


def trained_world(sid: str, seed: int, families: list[str], steps: int, folder: Path, kind: str = "null"):
    """One trained world of study ``sid`` (``kind`` "null": nothing planted, every realised
    value 0; "planted": the demo world's plant of the study): the judged rows of each variant, in
    the columns of bench_calibration.py's runs file (others 0). A planted world's rows are judged
    against the oracle's value for the world's items and models (fmat.oracle.oracle; ``realised``
    and ``planted`` alike): the value an infinite-data learner of the world holds (its scores are
    the planted probabilities, so a pooled-SD d is on the planted LPRs' SD scale), not what a
    model trained for a few steps holds. (The oracle's ``scores=``, the SD scale of the scores
    analysed, is for perfect learners: a trained model's LPRs vary with much else than the
    plant, and the planted LPRs in units of their SD made d of 75-97 in 2A.)"""
    import pandas as pd

    import fmat
    from fmat import calibration as cal
    from fmat import plant, tiny
    from fmat.oracle import oracle
    from fmat.stages import lpr_table, reliability_tables
    from fmat.study import score_options
    from fmat_replication.analysis import analysis_stage

    bc = _bench_calibration()
    world, criteria = bc._setting(sid, kind, 0.0, len(families))
    study, planted = world.study, cal.with_seed(world.plant, seed)
    assert cal.is_null(planted) == (kind == "null")
    words = sorted({w for c in ("M_word", "T_word", "A_word") if c in study.queries for w in study.queries[c].astype(str)})
    paths = {}
    for k, fam in enumerate(families):
        name = f"{kind}-{sid}-{seed}-{fam}"  # the name seeds the model's own sample and variation (the oracle's too)
        sentences = plant.training_sentences([(study, planted)], name, criteria, seed=seed)
        paths[name] = str(
            tiny.build_trained_model(folder / name, fam, words, sentences, seed=seed * 100 + k, steps=steps, filler=300)
        )
    study_path = REPO / "config" / "studies" / f"{sid}.yaml"
    scores = fmat.run(paths, study.queries, progress=False, threads=1, **score_options(study_path))
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid=sid)
    stats, figures, _ = analysis_stage(study, scores, lpr, rel, criteria, sid=sid)
    analysis = str(study.analysis["name"])
    paper = cal.judged(stats)
    frames = {"paper": paper}
    if figures.get("calibrated") is not None and len(figures["calibrated"]):
        variant, rows = cal.calibrated_variant(paper, figures["calibrated"])
        frames[variant] = rows
    truth = None
    if kind != "null":
        o = oracle(study_path, planted, list(paths), criteria)
        truth = o.loc[o["model"].astype(str) == "all", ["statistic", "condition", "value"]]
        truth = truth.assign(planted=truth["value"])
    out = []
    for variant, est in frames.items():
        if truth is None:
            real = cal.realised_values(world, None, est)
        elif variant in cal.SAME_ESTIMATE:
            real = truth
        else:  # a variant with its own point estimate (the disattenuated r): its own analysis on the planted probabilities
            exact = plant.planted_scores(study, planted, list(paths), criteria)
            real = cal.realised_values(cal.World(study, planted, n_models=len(paths)), exact, est, criteria, inference=variant)
        out.append(cal.judge(est, real).assign(variant=variant, seed=int(seed)))
    rec = pd.concat(out, ignore_index=True)
    columns = (("study", sid), ("analysis", analysis), ("kind", kind), ("others", 0.0), ("models", len(families)))
    for i, (col, val) in enumerate(columns):
        rec.insert(i, col, val)
    return rec


def study_runs(args, families: list[str]) -> int:
    """``--study SID``: trained worlds (``--kind``) of a study other than N0, appended to ``--out``."""
    import os
    import platform
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")  # singular fits of a null world's models: expected, and in the stats
    bc = _bench_calibration()
    out = Path(args.out) if args.out else None
    done = set()
    if out is not None and out.exists():
        old = bc.read_runs(out)
        done = set(old.loc[(old["study"].astype(str) == args.study) & (old["kind"] == args.kind), "seed"].astype(int))
    seeds = [s for s in range(args.first_seed, args.first_seed + args.seeds) if s not in done]
    if done:
        print(f"{args.study} {args.kind}: {len(done)} world(s) already in {out}; running seeds {seeds}", flush=True)
    rows, took = [], []
    with tempfile.TemporaryDirectory(prefix=f"fmat-{args.kind}-{args.study}-") as tmp:
        for seed in seeds:
            t = time.perf_counter()
            rec = trained_world(args.study, seed, families, args.steps, Path(tmp), args.kind)
            took.append(time.perf_counter() - t)
            if out is not None:  # written as it goes: a stopped run keeps its worlds
                bc._append(out, rec)
            rows.append(rec)
            ov = rec[rec["variant"] == "paper"]
            print(
                f"{args.study} {args.kind} seed {seed:3d}: {int(rec['rejected'].sum())} of {len(rec)} judged rows "
                f"significant at .05, {int(rec['covered'].sum())} covered (paper: {int(ov['rejected'].sum())} and "
                f"{int(ov['covered'].sum())} of {len(ov)})  ({took[-1]:.1f} s)",
                flush=True,
            )
    if rows:
        runs = pd.concat(rows, ignore_index=True)
        for variant, g in runs.groupby("variant", sort=False):
            k, c, n = int(g["rejected"].sum()), int(g["covered"].sum()), len(g)
            print(f"{args.study} {variant}: {k} of {n} judged rows significant at .05 ({k / n:.1%}), {c} covered ({c / n:.1%})")
        print(
            f"{len(seeds)} trained {args.kind} world(s) of {args.study}, {len(families)} models ({', '.join(families)}), "
            f"{args.steps} steps each: {sum(took) / len(took):.1f} s a world on {platform.machine()} with "
            f"{os.cpu_count()} CPU(s), {time.strftime('%Y-%m-%d')}"
        )
    return 0


def calibrated_p(figures: dict) -> dict:
    """The d's p under the calibrated within-sentence variant (figure table ``calibrated``,
    condition ``all``; docs/calibration.md), computed by the same analysis run."""
    cal = figures.get("calibrated")
    row = cal[cal["condition"] == "all"] if cal is not None and len(cal) else None
    if row is None or not len(row):
        return {"p_calibrated": float("nan"), "false_positive_calibrated": False}
    p = float(row["p_ours"].iloc[0])
    return {"p_calibrated": p, "false_positive_calibrated": bool(p < 0.05)}


def perfect_learners(seed: int, n_models: int, others: float) -> dict:
    """The null world's analysis on models that learned their corpus sample exactly."""
    import numpy as np

    from fmat import plant
    from fmat.stages import lpr_table, reliability_tables
    from fmat.study import load_study
    from fmat_replication.analysis import analysis_stage

    study = load_study(REPO / "config" / "studies" / "N0.yaml")
    demo = plant.load_world(REPO / "config" / "world.yaml").plant("N0")
    null = plant.Plant("N0", effects=[], variation=dict(demo.variation), samples=demo.samples, seed=seed)
    names = [f"null-{seed}-{k}" for k in range(n_models)]
    scores = plant.planted_scores(study, null, names)
    ctx = plant.context_of(study.queries).to_numpy()
    rng = np.random.default_rng(seed)
    logp = np.empty(len(scores))
    model = scores["model"].astype(str).to_numpy()
    for m in names:
        rows = np.where(model == m)[0]
        for c in np.unique(ctx):
            j = rows[ctx == c]
            n = demo.samples * len(j)
            counts = rng.multinomial(n, [*(scores["prob"].to_numpy()[j] * (1 - others)), others])[: len(j)]
            logp[j] = np.log((counts + 0.5) / (n + 1))
    scores["prob"], scores["logp"] = np.exp(logp), logp
    lpr = lpr_table(study, scores)
    _, rel = reliability_tables(study, scores, lpr, sid="N0")
    stats, figures, _ = analysis_stage(study, scores, lpr, rel, {}, sid="N0")
    row = stats[(stats["statistic"] == "d") & (stats["condition"] == "all") & (stats["model"] == "all")].iloc[0]
    return {
        "seed": seed,
        "d": float(row["value"]),
        "p": float(row["p"]),
        "false_positive": bool(row["p"] < 0.05),
        **calibrated_p(figures),
        "recovery": "recovered" if row["p"] >= 0.05 else "not recovered",
    }


PROG = "bench_null.py"


def check_args(args) -> None:
    """Every argument and file checked before any model is trained: an ``InputError`` naming the
    argument, what is wrong and the fix (printed as the ``fmat`` command prints one)."""
    from fmat import tiny

    for name, least in (("--seeds", 1), ("--first-seed", 0), ("--steps", 1), ("--threads", 1)):
        value = getattr(args, name[2:].replace("-", "_"))
        if value < least:
            raise InputError(f"must be at least {least}; got {value}", where=name, fix=f"e.g. {name} {max(least, 2)}")
    families = [f for f in args.models.split(",") if f]
    if len(families) < 2:
        raise InputError(
            f"{len(families)} model(s) in {args.models!r}: the analysis takes the models as random intercepts",
            where="--models",
            fix="give two or more, comma-separated, e.g. --models bert-uncased,roberta,albert",
        )
    bad = [f for f in families if f not in tiny.FAMILIES]
    if bad and not args.perfect_learners:
        raise InputError(
            f"unknown tokenizer family {', '.join(map(repr, bad))}",
            where="--models",
            fix=f"give families of the tiny models, comma-separated: {', '.join(tiny.FAMILIES)}",
        )
    if not 0 <= args.others < 1:
        raise InputError(f"{args.others:g} is outside [0, 1)", where="--others", fix="give a share in [0, 1), e.g. --others 0.5")
    known = sorted(p.stem for p in (REPO / "config" / "studies").glob("*.yaml"))
    if args.study not in known:
        raise InputError(
            f"unknown study {args.study!r}", where="--study", fix=f"give a study id of config/studies: {', '.join(known)}"
        )
    if args.study != "N0" and args.perfect_learners:
        raise InputError(
            f"perfect learners are of N0 only here; --study {args.study} trains models",
            where="--perfect-learners",
            fix="perfect learners of every study: bench_calibration.py; or leave out --study",
        )
    if args.study == "N0" and args.kind != "null":
        raise InputError("N0 plants nothing", where="--kind planted", fix="give --study with another study, e.g. --study 3B")
    if args.out:
        out = Path(args.out)
        if not out.resolve().parent.is_dir():
            raise InputError(f"no such folder: {out.parent}", where="--out", fix="create the folder first, or give another path")
        if out.exists() and not out.is_file():
            raise InputError(f"{out} is not a file", where="--out", fix="give a file name")
        if out.exists() and args.study != "N0":  # runs appended: the file must be a runs file
            _bench_calibration()._runs_file(out, "--out")
        elif out.exists():  # the table is written anew: only over a table of this script
            fix = "give a new file name, or the table an earlier run of this script wrote"
            try:
                import pandas as pd

                cols = set(pd.read_csv(out, nrows=1).columns) if out.stat().st_size else set()
            except (OSError, UnicodeDecodeError, ValueError) as err:
                raise InputError(f"{out} cannot be read as this script's table ({err})", where="--out", fix=fix) from None
            if not {"seed", "d", "p", "false_positive"} <= cols:
                raise InputError(f"{out} is not a table of {PROG}, and it would be replaced", where="--out", fix=fix)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1, help="the first world's seed (to add worlds to an earlier run)")
    ap.add_argument("--models", default="bert-uncased,roberta,albert")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", default=None, help="CSV of the runs")
    ap.add_argument("--perfect-learners", action="store_true", help="no training: empirical shares of each sample")
    ap.add_argument("--others", type=float, default=0.0, help="with --perfect-learners: probability outside the options")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: never every core beside another job)")
    ap.add_argument("--study", default="N0", help="another study: its trained worlds, every judged row to --out")
    ap.add_argument("--kind", default="null", choices=("null", "planted"), help="with --study: the kind of world")
    return run_checked(PROG, ap.parse_args(argv), check_args, _main, _interrupted)


def _interrupted(args) -> int:
    """Ctrl-C: what was kept (the worlds already in --out) and how to go on."""
    kept = f"the worlds already in {args.out}" if args.out and Path(args.out).exists() else "nothing"
    go_on = "run the same command again" + (" (it skips the worlds already there)" if args.study != "N0" and args.out else "")
    print(f"{PROG}: interrupted (Ctrl-C); kept: {kept}\n  {go_on}", file=sys.stderr)
    return 130


def _main(args) -> int:
    import logging
    import os
    import platform

    import pandas as pd
    import torch

    logging.disable(logging.WARNING)
    torch.set_num_threads(max(1, args.threads))
    families = [f for f in args.models.split(",") if f]
    if args.study != "N0":  # (--perfect-learners and --kind: check_args)
        return study_runs(args, families)
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fmat-null-") as tmp:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            t = time.perf_counter()
            rec = (
                perfect_learners(seed, len(families), args.others)
                if args.perfect_learners
                else one_world(seed, families, args.steps, Path(tmp))
            )
            rec["seconds"] = round(time.perf_counter() - t, 1)
            rows.append(rec)
            print(
                f"seed {seed:3d}: d = {rec['d']:+.3f}, p = {rec['p']:.3f} (calibrated {rec['p_calibrated']:.3f})  "
                f"{rec['recovery']}  ({rec['seconds']} s)",
                flush=True,
            )
            if args.out:  # written as it goes: a stopped run keeps its worlds
                pd.DataFrame(rows).to_csv(args.out, index=False)
    table = pd.DataFrame(rows)
    rate = float(table["false_positive"].mean())
    print(
        f"\nnull control N0: {int(table['false_positive'].sum())} of {len(table)} worlds significant at .05 "
        f"-> false-positive rate {rate:.1%} (goal <= 10%; nominal 5%); {len(families)} models "
        + (
            f"(perfect learners, {args.others:.0%} of the probability outside the options)"
            if args.perfect_learners
            else f"({', '.join(families)}), {args.steps} steps each"
        )
        + f"; calibrated within-sentence variant: {int(table['false_positive_calibrated'].sum())} of {len(table)} "
        f"({table['false_positive_calibrated'].mean():.1%})" + f"; {time.perf_counter() - start:.0f} s on "
        f"{platform.machine()} with {os.cpu_count()} CPU(s), {time.strftime('%Y-%m-%d')}"
    )
    if args.out:
        table.to_csv(args.out, index=False)
    return 0 if rate <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
