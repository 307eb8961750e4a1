"""Benchmark: the concept-level calibration of issue 52 (docs/calibration.md, "The concept-level test").

The calibration of bench_calibration.py judges a CI against the *realised* value: what these
models hold for *these* words.  A psychologist's claim is about the concept: the words are a
sample of the many that could express it (4A: its three query templates).  Here each world keeps config/world.yaml's plant of
the study (its effect, the models' variation 0.1 of each model's own effect, the model x item
variation 0.15) with the item variation ``--item-sd`` (the SD of each sentence's own log-weight
of an option: what *these* words carry), and

- ``--kind concept-null``: the effect's size set to 0: nothing at the concept level (each
  model's own effect and each item's own value stay): a row with p < .05 is a false positive;
- ``--kind planted``: the world's effect: a CI is judged by whether it covers the concept-level
  value (the mean over the population of items and models; 0 for a condition the plant leaves out).

``--models`` perfect learners (fmat.calibration) a world, worlds seeded 1..``--worlds`` (``--first-seed``:
a block of them; benchmarks/concept.smk cuts a long run into such blocks, one job each); the
study's analysis runs with the paper's inference and with ``inference: crossed`` (ours: the
items random, crossed with the models; fmat.stats.crossed).  Every study of config/studies that
config/world.yaml plants can run (the paper's 1A-4D, and the examples); nothing below is a list
of studies or of analyses:

- **judged rows**: every d, b and r of model ``all`` with a CI (:func:`fmat.calibration.analyse`),
  but a named item's own row (3A/3D's ``pair1``...: a claim about that pair, whose crossed test
  takes only the models as random, not about the concept);
- **the concept-level value** of a row in a planted world: the oracle (:mod:`fmat.oracle`) on the
  plant without any word, item, model or model-item variation (:func:`fmat.plant.concept_values`):
  the planted d itself (3A: 1.0; 3B's ``interest`` 0.4, ``talent`` 0.35, ``all`` 0.375; 2A's
  like-dislike d 0.4, 0 for its personal-societal difference and its notice-ignore rows), the
  planted trend per century (4A's ``year`` slope b and each century contrast d: -0.6).  An
  analysis whose ``effect_size`` can be ``sigma`` (2A-2D's d) runs on that scale in planted worlds,
  the plant's own (a pooled-SD d has the sample's scale, not the concept's);
- **not stated: the criterion studies** (1A-1C: the study file's ``analysis.options.criterion``).
  Their r, and 1C's b of the criterion on the score, are in units of the spread of the models'
  z-scores over the items, and that spread holds the items' own variation (``--item-sd``) and the
  models' noise: the concept (no variation) has r = 1 and no single value stands for the
  population of items.  Only their false positives (concept-null worlds: every concept value 0)
  are judged; their planted worlds run and are reported with coverage ``not stated``.
- worlds whose plant has a trend (4A-4D: 5 sentences a year) get :data:`TREND_SAMPLES` sentences
  a context: with 5 the learners hold a trend shrunk towards 0 (docs/calibration.md, "Why 2A and
  4A missed"), a bias that no inference can cover the concept's slope against.
- 1C's names come from its criterion table: ``--criteria-dir`` (built by the workflow); 1A and
  1B use bench_calibration.py's stand-in % male (uniform 0-100, seeded 0) unless the folder has
  their tables.

The summary pools a study's judged rows (2A's eight d a world, 4A's slope and its two century
contrasts, ...). They are correlated within a world, so beside the rows' exact CI (``low``,
``high``: too narrow where a world has several rows) it gives Korn and Graubard's CI with the
worlds as clusters (``low_worlds``, ``high_worlds``; :func:`fmat.calibration.binomial_clustered`).
``--by-condition``: a line per judged row instead (each has one row a world: its CI is exact).
``--runs`` keeps every row with its condition; ``--from-runs FILE`` summarizes such a file again
(no world drawn): ``--studies``, ``--kinds`` and ``--item-sd`` select from it; with ``--runs`` too,
the rows of every ``--from-runs`` file are written there as one file.

Run:  python benchmarks/bench_concept.py --studies 3A,2A --item-sd 0,0.05,0.1,0.2 --worlds 200 --jobs 2 \\
          --out benchmarks/results/concept-calibration.csv
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import re
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_calibration  # noqa: E402
from bench_args import at_least, criteria_folder, known_studies, output_folders, run_checked  # noqa: E402

from fmat import analyses, plant  # noqa: E402
from fmat import calibration as cal  # noqa: E402
from fmat.errors import FmatError, InputError  # noqa: E402
from fmat.study import load_study  # noqa: E402

PROG = "bench_concept.py"
VARIANTS = ("paper", "crossed")
KINDS = ("concept-null", "planted")
STUDIES = REPO / "config" / "studies"
WORLD = REPO / "config" / "world.yaml"
#: a named item's own row (``pair1``...): that item's value, not the concept's
NAMED_ITEM = re.compile(r"pair\d+")
#: sentences per option of each context in a world whose plant has a trend (config/world.yaml: 5 a year)
TREND_SAMPLES = 100


@functools.lru_cache(maxsize=None)
def setting(sid: str, criteria_dir: str | None = None):
    """``(study, plant, criteria)`` of a study, built once per process (the stand-in criterion
    tables of bench_calibration.py, or ``criteria_dir``'s own)."""
    bench_calibration.CRITERIA_DIR = Path(criteria_dir) if criteria_dir else None
    study = load_study(STUDIES / f"{sid}.yaml", criteria_dir=criteria_dir)
    p = plant.load_world(WORLD).plant(sid)
    return study, p, bench_calibration.stand_in_criteria(study, p)


def options(study) -> tuple[str, dict]:
    spec = dict(getattr(study, "analysis", None) or {})
    return str(spec.get("name") or ""), dict(spec.get("options") or {})


def scale(study, kind: str) -> dict:
    """The option overrides of a world: ``effect_size: sigma`` in planted worlds where the
    analysis offers it (the plant's own scale: the concept-level d is stated on it)."""
    name, _ = options(study)
    return {"effect_size": "sigma"} if kind == "planted" and "sigma" in analyses.option_values(name, "effect_size") else {}


def stated(study) -> bool:
    """Whether the study's concept-level values can be stated: not for an analysis against a
    criterion (the study file's ``analysis.options.criterion``; module docstring)."""
    return not options(study)[1].get("criterion")


def world_of(sid: str, kind: str, item_sd: float, n_models: int, criteria_dir: str | None = None) -> cal.World:
    study, p, _ = setting(sid, criteria_dir)
    p = p if kind == "planted" else cal.concept_null_plant(p)
    p = replace(p, variation={**p.variation, "items": float(item_sd)}, expect=[])
    samples = TREND_SAMPLES if any(e.trend for e in p.effects) else None
    return cal.World(study, p, n_models=n_models, samples=samples)


@functools.lru_cache(maxsize=None)
def planted_concept(sid: str, criteria_dir: str | None = None) -> dict:
    """``{(statistic, condition): value}``: the concept-level value of each row in the study's
    planted world (:func:`fmat.plant.concept_values` on the scale of :func:`scale`); empty where
    it is not stated (:func:`stated`)."""
    study, p, criteria = setting(sid, criteria_dir)
    if not stated(study):
        return {}
    override = scale(study, "planted")
    models = ["m01", "m02"]  # the concept has no model variation: any names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if override:
            data = yaml.safe_load((STUDIES / f"{sid}.yaml").read_text(encoding="utf-8"))
            data["analysis"]["options"] = {**dict(data["analysis"].get("options") or {}), **override}
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"{sid}.yaml"
                path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
                out = plant.concept_values(path, p, models, criteria)
        else:
            out = plant.concept_values(STUDIES / f"{sid}.yaml", p, models, criteria)
    out = out[out["model"].astype(str) == "all"]
    return {(str(r.statistic), str(r.condition)): float(r.value) for r in out.itertuples(index=False)}


def concept_values(sid: str, kind: str, rows: pd.DataFrame, criteria_dir: str | None = None) -> np.ndarray:
    """The concept-level value of each row (``statistic``, ``condition``): 0 in concept-null
    worlds; in planted ones :func:`planted_concept` (NaN where not stated)."""
    if kind != "planted":
        return np.zeros(len(rows))
    want = planted_concept(sid, criteria_dir)
    return np.array([want.get((str(s), str(c)), np.nan) for s, c in zip(rows["statistic"], rows["condition"])], dtype=float)


def one_world(task) -> pd.DataFrame:
    sid, kind, item_sd, seed, n_models, *rest = task
    criteria_dir = rest[0] if rest else None
    warnings.simplefilter("ignore")
    world = world_of(sid, kind, item_sd, n_models, criteria_dir)
    _, _, criteria = setting(sid, criteria_dir)
    _, sampled = cal.perfect_learner_scores(world, seed, criteria)
    frames = []
    for v in VARIANTS:
        est = cal.analyse(world.study, sampled, criteria, inference=v, **scale(world.study, kind))
        est = est[~est["condition"].astype(str).str.fullmatch(NAMED_ITEM)]
        frames.append(est.assign(variant=v))
    out = pd.concat(frames, ignore_index=True)
    out["concept"] = concept_values(sid, kind, out, criteria_dir)
    covered = (out["ci_low"] <= out["concept"]) & (out["concept"] <= out["ci_high"])
    out["covered"] = covered.astype(object).where(out["concept"].notna(), None)
    out["rejected"] = out["p"] < 0.05
    return out.assign(study=sid, kind=kind, item_sd=float(item_sd), seed=int(seed))


def summary(runs: pd.DataFrame, by_condition: bool = False) -> pd.DataFrame:
    """The share of judged rows rejected (concept-null worlds) or covering the concept (planted)
    of each study, kind, item SD and variant (``by_condition``: and row, e.g. 4C's ``year``):
    ``low``/``high`` the rows' exact binomial CI, ``low_worlds``/``high_worlds`` Korn and
    Graubard's CI with the worlds as clusters (:func:`fmat.calibration.binomial_clustered`: the
    rows of a world are correlated, so the rows' CI is too narrow where a world has several)."""
    keys = ["study", "kind", "item_sd", "variant"] + (["condition"] if by_condition else [])
    rows = []
    for key, g in runs.groupby(keys, sort=False):
        kind = key[1]
        if kind == "concept-null":
            hit, what = g["rejected"].astype(bool), "fpr"
        else:
            g = g[g["concept"].notna()]
            hit, what = g["covered"].astype(bool), "coverage" if len(g) else "coverage not stated"
        n = len(g)
        share, lo, hi = cal.binomial(int(hit.sum()), n) if n else (np.nan, np.nan, np.nan)
        per_world = hit.groupby(g["seed"]).agg(["sum", "size"])
        _, lo_w, hi_w = cal.binomial_clustered(per_world["sum"], per_world["size"])
        rows.append(
            {
                **dict(zip(keys, key)),
                "measure": what,
                "worlds": int(g["seed"].nunique()),
                "rows": n,
                "share": share,
                "low": lo,
                "high": hi,
                "low_worlds": lo_w,
                "high_worlds": hi_w,
            }
        )
    return pd.DataFrame(rows)


def _list(text: str) -> list[str]:
    return [s.strip() for s in str(text).split(",") if s.strip()]


def check_args(args) -> None:
    """Every argument checked before any world is drawn: an :class:`InputError` naming the
    argument, what is wrong and the fix (printed as the ``fmat`` command prints one)."""
    planted = set(plant.load_world(WORLD).plants)
    known = sorted(p.stem for p in STUDIES.glob("*.yaml") if p.stem in planted)
    studies = _list(args.studies)
    known_studies(studies, args.studies, known, "config/studies that config/world.yaml plants")
    criteria_folder(args.criteria_dir)
    for sid in [] if args.from_runs else studies:  # --from-runs draws no world: no study is loaded
        try:
            load_study(STUDIES / f"{sid}.yaml", criteria_dir=args.criteria_dir)
        except FmatError as err:
            raise InputError(
                f"study {sid} cannot be loaded: {err.message}",
                where="--criteria-dir" if "criteri" in err.message else "--studies",
                fix="pass --criteria-dir resources/criteria (build it with `snakemake --configfile config/demo.yaml "
                "resources/criteria/ssa_names_1c.parquet -c1`), or leave the study out",
            ) from None
    at_least(args, "--worlds", 1)
    at_least(args, "--first-seed", 1)
    at_least(args, "--models", 2, " (the crossed test takes the models as random)")
    at_least(args, "--jobs", 1)
    try:
        sds = [float(x) for x in _list(args.item_sd)]
    except ValueError:
        sds = []
    if not sds or not all(np.isfinite(s) and s >= 0 for s in sds):
        raise InputError(
            f"{args.item_sd!r} is not a list of SDs",
            where="--item-sd",
            fix="give SDs of at least 0 (log-probability units), comma-separated, e.g. 0,0.05,0.1,0.2",
        )
    kinds = _list(args.kinds)
    if not kinds or not set(kinds) <= set(KINDS):
        raise InputError(
            f"unknown kind of world in {args.kinds!r}", where="--kinds", fix=f"give {' or '.join(KINDS)}, or {','.join(KINDS)}"
        )
    if args.minutes is not None and not args.minutes > 0:
        raise InputError(f"must be above 0; got {args.minutes:g}", where="--minutes", fix="e.g. --minutes 10, or leave it out")
    output_folders(args, "out", "runs")
    for path in args.from_runs or []:
        if not Path(path).is_file():
            raise InputError(f"no such file: {path}", where="--from-runs", fix="give a file that --runs wrote (CSV, .gz allowed)")


def _interrupted(args) -> int:
    print(f"{PROG}: interrupted (Ctrl-C); kept: nothing (the files are written at the end)\n  run it again", file=sys.stderr)
    return 130


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--studies", default="3A,2A")
    ap.add_argument("--item-sd", default="0,0.05,0.1,0.2")
    ap.add_argument("--kinds", default="concept-null,planted")
    ap.add_argument("--worlds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1, help="worlds seeded FIRST..FIRST+WORLDS-1 (a block of a longer run)")
    ap.add_argument("--models", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=None, help="stop after this long (whole seeds kept)")
    ap.add_argument("--criteria-dir", default=None, help="criterion tables a study's words come from (1C)")
    ap.add_argument("--out", default=None, help="summary CSV (default: print only)")
    ap.add_argument("--runs", default=None, help="every judged row (CSV, .gz allowed)")
    ap.add_argument(
        "--from-runs", action="append", default=None, help="summarize rows --runs wrote (repeatable; no world is drawn)"
    )
    ap.add_argument("--by-condition", action="store_true", help="a line per judged row (4C's year slope, ...), not pooled")
    return run_checked(PROG, ap.parse_args(argv), check_args, _main, _interrupted)


def _main(a) -> int:
    if a.from_runs:
        runs = pd.concat([pd.read_csv(p) for p in a.from_runs], ignore_index=True)
        if a.runs:  # the files' rows together, as one --runs file (benchmarks/concept.smk's blocks)
            runs.to_csv(a.runs, index=False)
        runs = runs[runs["study"].astype(str).isin(_list(a.studies)) & runs["kind"].isin(_list(a.kinds))]
        tab = summary(runs[runs["item_sd"].isin([float(x) for x in _list(a.item_sd)])], a.by_condition)
        print(tab.to_string(index=False))
        if a.out:
            tab.to_csv(a.out, index=False)
        return 0
    np.seterr(all="ignore")
    warnings.simplefilter("ignore")
    crit = str(Path(a.criteria_dir).resolve()) if a.criteria_dir else None
    # seed by seed, so that a run stopped early (--minutes) has every setting equally often
    tasks = [
        (sid, kind, float(sd), seed, a.models, crit)
        for seed in range(a.first_seed, a.first_seed + a.worlds)
        for sid in _list(a.studies)
        for kind in _list(a.kinds)
        for sd in _list(a.item_sd)
    ]
    t0 = time.time()
    frames = []
    if a.jobs > 1:
        from multiprocessing import Pool  # here: only with --jobs

        with Pool(a.jobs) as pool:
            for f in pool.imap(one_world, tasks, chunksize=2):
                frames.append(f)
                if a.minutes and time.time() - t0 > 60 * a.minutes:
                    pool.terminate()
                    break
    else:
        for t in tasks:
            frames.append(one_world(t))
            if a.minutes and time.time() - t0 > 60 * a.minutes:
                break
    per_seed = len(tasks) // a.worlds
    frames = frames[: len(frames) // per_seed * per_seed]  # whole seeds only
    if not frames:
        print(f"{PROG}: no whole seed finished in --minutes {a.minutes:g}: give more minutes", file=sys.stderr)
        return 1
    runs = pd.concat(frames, ignore_index=True)
    tab = summary(runs, a.by_condition)
    took = time.time() - t0
    print(tab.to_string(index=False))
    done = f"{len(frames)} of {len(tasks)} world-settings in {took:.0f} s"
    print(f"{done} with {a.jobs} job(s) ({platform.machine()}, {os.cpu_count()} cores)")
    if a.runs:
        runs.to_csv(a.runs, index=False)
    if a.out:
        tab.assign(seconds=round(took), jobs=a.jobs, machine=platform.machine()).to_csv(a.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
