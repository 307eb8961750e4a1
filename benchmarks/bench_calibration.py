"""Benchmark: calibration of the studies' analyses on worlds of known truth (docs/calibration.md).

For each study (its study file: the paper's design and analysis), each kind of world (``null``:
nothing planted and no item variation, every realised value 0; ``planted``: config/world.yaml's
plant of the study with its variation), each share ``others`` of the probability outside the
options, and worlds seeded 1..``--worlds``: ``--models`` perfect learners
(fmat.calibration) are drawn, the study's analysis runs on them (the paper's, and
``sentence``: the calibrated within-sentence variant of the stereotype analyses;
``sigma``: the attitude d on the sigma scale; ``disattenuated``: the criterion r corrected for
the models' unreliability), and each d / b / r row with a CI is judged
against the world's realised value (what the models hold: the same analysis on the learners'
expected log probabilities; a pooled-SD d on the sample's SD scale; see
fmat.calibration.realised_values): covered by the 95% CI, and p < .05 where the
realised value is 0 (a false positive).

Rows go to ``--runs`` (CSV, or gzipped CSV when it ends in .gz; appended world by world; a
rerun skips the worlds already there, so a long run can be stopped and resumed: the committed
``benchmarks/results/calibration-runs.csv.gz`` is extended to 500 worlds by rerunning the
command of docs/calibration.md). ``--table`` then writes the summary (coverage and
false-positive rate with exact binomial 95% CIs, per study x variant x kind x others x
condition "all" or "each") to ``--out`` (CSV and Markdown) and the figure (``--figure``, PNG).

``--jobs N`` runs worlds in N processes of one thread each (the rows are the same: world k is
seeded k in any process); a world-setting of 12 models takes about 0.6 core-seconds for
the designs of 2A-4D and 4.1 for 1C's 3,832 names (docs/calibration.md, "What it costs"), so
500 worlds of every design and setting take many core-hours: a job for a many-core machine or
the cluster.

Run:  python benchmarks/bench_calibration.py --studies 3A,3B --worlds 500 --others 0,0.5,0.9 [--jobs 16]
      python benchmarks/bench_calibration.py --table --runs ... --out ... --figure ...
"""

from __future__ import annotations

import argparse
import functools
import gzip
import logging
import os
import platform
import sys
import time
import warnings
import zlib
from dataclasses import replace
from pathlib import Path

# one thread a process (numpy's BLAS reads these when it loads, so before the import below; a
# value set in the environment wins): --jobs N processes use N cores, never more
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_args import at_least, criteria_folder, known_studies, output_folders, run_checked  # noqa: E402

from fmat import analyses, plant  # noqa: E402
from fmat import calibration as cal  # noqa: E402
from fmat.errors import InputError  # noqa: E402
from fmat.power import stop_pool, worker_start  # noqa: E402
from fmat.study import load_study  # noqa: E402

PROG = "bench_calibration.py"

#: option overrides of each analysis variant
VARIANTS = {
    "paper": {},
    "sentence": {"inference": "sentence"},
    "sigma": {"effect_size": "sigma"},
    "disattenuated": {"inference": "disattenuated"},
}


def applies(analysis: str, variant: str) -> bool:
    """Variant ``variant`` runs for ``analysis`` where the analysis declares every value it sets
    (its option types, :func:`fmat.analyses.option_values`: ``inference: Literal["paper",
    "sentence", ...]``); the paper's runs for every analysis."""
    return all(value in analyses.option_values(analysis, key) for key, value in VARIANTS[variant].items())


KEY = ["study", "kind", "others", "seed"]
#: the ``analysis`` of the runs of ``--icc``: the reliability stage's ICC, not the study's analysis
ICC_ANALYSIS = "icc_models"


def read_runs(path) -> pd.DataFrame:
    """The runs CSV, plain or gzipped ("null" is a kind of world here, not a missing value)."""
    return pd.read_csv(path, keep_default_na=False, na_values=["", "NaN", "nan"])


#: the folder of criterion tables a study's word lists come from (1C's names: build it with
#: ``snakemake --configfile config/demo.yaml resources/criteria/ssa_names_1c.parquet -c1``);
#: set by ``--criteria-dir``
CRITERIA_DIR: Path | None = None


def study_file(sid: str):
    return load_study(REPO / "config" / "studies" / f"{sid}.yaml", criteria_dir=CRITERIA_DIR)


def worlds_of(sid: str, kind: str, others: float, n_models: int, icc: bool = False) -> cal.World:
    """A setting's world; ``icc``: a null world without the words' own frequencies either
    (:func:`fmat.calibration.icc_null_plant`: the ICC's null)."""
    study = study_file(sid)
    p = plant.load_world(REPO / "config" / "world.yaml").plant(sid)
    if p is None:
        p = plant.Plant(sid, effects=[], variation={}, samples=20, seed=0)
    null = cal.icc_null_plant(p) if icc else cal.null_plant(p)
    return cal.World(study, null if kind == "null" else p, n_models=n_models, others=others)


def stand_in_criteria(study, p: plant.Plant) -> dict[str, pd.DataFrame]:
    """1A-1C's criterion tables are made by the workflow from downloaded sources (not in a
    checkout): the table itself where ``--criteria-dir`` holds it (1C's names and their % male,
    built from the repository's data mirror), otherwise a stand-in for each table the plant or
    the analysis names, one value per item of the slot it keys (TARGET) in every column named:
    uniform on 0-100 (a % male), seeded 0, the same in every world. The criterion is the design
    here (as the real occupations' % male is), not a random part of a world.  Empty for a
    study that names none."""
    named: dict[str, tuple[str, set[str]]] = {}

    def name(table, key, column):
        named.setdefault(str(table), (str(key), set()))[1].add(str(column))

    for e in p.effects:
        if e.per_item:
            name(e.per_item["table"], e.per_item.get("key", "item"), e.per_item["column"])
    crit = dict((study.analysis.get("options") or {}).get("criterion") or {})
    if crit.get("table"):
        name(crit["table"], crit.get("item", "item"), crit["column"])
    out = {}
    items = study.items.loc[study.items["slot"] == "TARGET", "item"].astype(str).unique()
    for table, (key, cols) in named.items():
        real = CRITERIA_DIR / f"{table}.parquet" if CRITERIA_DIR else None
        if real is not None and real.exists():
            out[table] = pd.read_parquet(real)
            continue
        pct = np.random.default_rng(0).uniform(0, 100, len(items))
        out[table] = pd.DataFrame({key: items, **{c: pct for c in sorted(cols)}})
    return out


def _append(runs: Path, rec: pd.DataFrame) -> None:
    header = not runs.exists()
    if runs.suffix == ".gz":  # gzip members appended: one file, read back as one
        with gzip.open(runs, "at", newline="") as f:
            rec.to_csv(f, header=header, index=False)
    else:
        rec.to_csv(runs, mode="a", header=header, index=False)


@functools.lru_cache(maxsize=None)
def _study_and_criteria(sid: str):
    """A study and its stand-in criteria, built once per process: the settings of a study share
    the objects (so a world's planted probabilities are computed once for all its settings)."""
    world = worlds_of(sid, "planted", 0.0, 1)
    return world.study, stand_in_criteria(world.study, world.plant)


@functools.lru_cache(maxsize=None)
def _setting(sid: str, kind: str, others: float, n_models: int, icc: bool = False):
    """A setting's world and the study's stand-in criteria, built once per process."""
    study, criteria = _study_and_criteria(sid)
    world = worlds_of(sid, kind, others, n_models, icc)
    return replace(world, study=study), criteria


def one_world(task: tuple) -> pd.DataFrame:
    """The judged rows of one world of one setting: ``task`` = (study, analysis, variants,
    kind, others, models, seed, criteria folder[, population]); a process of the pool runs it
    on one thread.  Analysis ``icc_models`` (``--icc``): the reliability stage's ICC rows against
    the population ICC of ``population`` more models (:func:`fmat.calibration.icc_world`)."""
    global CRITERIA_DIR
    sid, analysis, vs, kind, o, n_models, seed, CRITERIA_DIR, *rest = task
    icc = analysis == ICC_ANALYSIS
    world, criteria = _setting(sid, kind, o, n_models, icc)
    if icc:
        rec = cal.icc_world(world, seed, criteria, population=int(rest[0]) if rest else cal.POPULATION)
    else:
        # the criterion analyses compute their variant in every run (one run for both); the
        # stereotype ones run twice, so that the sentence rows keep their SE (the SE-ratio column)
        rec = cal.run_world(world, seed, criteria, variants=vs, one_run="disattenuated" in vs)
    for i, (col, val) in enumerate((("study", sid), ("analysis", analysis), ("kind", kind), ("others", o), ("models", n_models))):
        rec.insert(i, col, val)
    return rec


def _quiet() -> None:
    worker_start()  # Ctrl-C is the parent's: it stops the pool (fmat.power.stop_pool)
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")


def simulate(args) -> None:
    runs = Path(args.runs)
    done = set()
    if runs.exists():
        old = read_runs(runs)
        done = set(zip(old["study"].astype(str), old["kind"], old["others"].round(6), old["seed"]))
    variants = {v: VARIANTS[v] for v in args.variants.split(",")}
    studies = [s for s in args.studies.split(",") if s]
    others = [float(x) for x in args.others.split(",")]
    kinds = args.kinds.split(",")
    start = time.perf_counter()
    settings = []
    for sid in studies:
        analysis = ICC_ANALYSIS if args.icc else study_file(sid).analysis["name"]
        vs = {v: o for v, o in variants.items() if applies(analysis, v)}
        settings += [(sid, analysis, vs, kind, o) for kind in kinds for o in others]
    # worlds outermost: stopped early, every setting has (about) the same number of worlds
    tasks = [
        (sid, analysis, vs, kind, o, args.models, seed, CRITERIA_DIR, args.population)
        for seed in range(1, args.worlds + 1)
        for sid, analysis, vs, kind, o in settings
        if (sid, kind, round(o, 6), seed) not in done
    ]
    n_done = 0
    if args.jobs > 1:  # one thread a process (the thread variables above): --jobs N uses N cores
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(args.jobs, initializer=_quiet)
        results = pool.map(one_world, tasks, chunksize=1)
    else:
        pool, results = None, map(one_world, tasks)
    try:
        for task, rec in zip(tasks, results):  # in task order: the file grows world by world
            _append(runs, rec)
            n_done += 1
            if n_done % (10 * len(settings)) == 0 or n_done == len(tasks):
                took = time.perf_counter() - start
                print(f"world {task[6]}: {n_done} of {len(tasks)} world-settings, {took:.0f} s", flush=True)
    except BaseException:  # Ctrl-C or an error: queued worlds cancelled, the workers stopped now
        if pool is not None:
            stop_pool(pool)
            pool = None
        raise
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    busy = time.perf_counter() - start
    per = busy * max(args.jobs, 1) / max(n_done, 1)
    print(
        f"done in {busy:.0f} s on {platform.machine()} with {os.cpu_count()} CPU(s), --jobs {args.jobs}, "
        f"{time.strftime('%Y-%m-%d')}; {per:.1f} core-seconds a world-setting",
        flush=True,
    )


def table(runs: pd.DataFrame) -> pd.DataFrame:
    """The summary: per study x variant x kind x others, for the overall d/b/r (condition
    ``all`` or the analysis's first judged row) and for every judged row (``each``)."""
    first = runs.groupby(["study", "analysis"], sort=False)["condition"].transform("first")
    has_all = runs.groupby(["study", "analysis"], sort=False)["condition"].transform(lambda c: (c == "all").any())
    overall = runs[runs["condition"].where(~has_all, "all").eq(runs["condition"]) & (has_all | (runs["condition"] == first))]
    # the ICC's overall row is the paper's ICC: ICC_average of the raw log probabilities
    overall = overall[(overall["analysis"] != ICC_ANALYSIS) | (overall["statistic"] == "ICC_average")]
    by = ["study", "analysis", "variant", "kind", "others"]
    a = cal.summarise(overall, by).assign(rows_judged="overall")
    b = cal.summarise(runs, by).assign(rows_judged="every row")
    # evidence for the cause: the SE of each variant's overall row relative to the paper's, world by world
    same = ["study", "analysis", "kind", "others", "seed", "statistic", "condition"]
    paper = overall[overall["variant"] == "paper"].set_index(same)["se"]
    ratio = overall.join(paper.rename("se_paper"), on=same)
    ratio = (ratio["se"] / ratio["se_paper"]).groupby([overall[c] for c in by], sort=False).mean()
    a = a.join(ratio.rename("se_ratio_to_paper"), on=by)
    out = pd.concat([a, b], ignore_index=True)
    return out.sort_values(["study", "rows_judged", "variant", "kind", "others"], kind="stable").reset_index(drop=True)


def markdown(tab: pd.DataFrame) -> str:
    def pct(x, lo, hi):
        return "" if not np.isfinite(x) else f"{100 * x:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"

    lines = [
        "| study | analysis | rows judged | variant | world | others | worlds "
        "| coverage % [95% CI] | FPR % [95% CI] | SE / paper's SE | CI holds the planted value % |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in tab.itertuples():
        lines.append(
            f"| {r.study} | {r.analysis} | {r.rows_judged} | {r.variant} | {r.kind} | {r.others:g} | {r.worlds} | "
            f"{pct(r.coverage, r.coverage_low, r.coverage_high)} | {pct(r.fpr, r.fpr_low, r.fpr_high)} | "
            + ("" if not np.isfinite(r.se_ratio_to_paper) else f"{r.se_ratio_to_paper:.2f}")
            + " | "
            + ("" if not np.isfinite(r.coverage_planted) else f"{100 * r.coverage_planted:.1f}")
            + " |"
        )
    return "\n".join(lines) + "\n"


#: the fewest worlds a setting needs to be drawn in the figure (all are in the table)
MIN_WORLDS_DRAWN = 20


def _label(r) -> str:
    """A setting's label in the figure: study, variant (the ICC: "ICC"), share of others."""
    what = "ICC (reliability)" if r.analysis == ICC_ANALYSIS else r.variant
    return f"{r.study} {what} o={r.others:g}"


def figure(tab: pd.DataFrame, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # the smoke runs (a handful of worlds) stay in the table; their rates say nothing drawn here
    t = tab[tab["rows_judged"] == "overall"]
    if (t["worlds"] >= MIN_WORLDS_DRAWN).any():  # a trial run of a few worlds draws them all
        t = t[t["worlds"] >= MIN_WORLDS_DRAWN]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.45 * max(6, len(t)) / 2 + 1.5))
    null = t[t["kind"] == "null"].reset_index(drop=True)
    lab = [_label(r) for r in null.itertuples()]
    y = np.arange(len(null))
    ax = axes[0]
    err = [100 * (null["fpr"] - null["fpr_low"]), 100 * (null["fpr_high"] - null["fpr"])]
    ax.errorbar(100 * null["fpr"], y, xerr=err, fmt="o")
    ax.axvline(5, color="grey", ls="--")
    ax.set_yticks(y, lab)
    ax.set_xlabel("false-positive rate at .05, % (null worlds)")
    ax.invert_yaxis()
    pl = t[t["kind"] == "planted"].reset_index(drop=True)
    lab = [_label(r) for r in pl.itertuples()]
    y = np.arange(len(pl))
    ax = axes[1]
    ax.errorbar(
        100 * pl["coverage"],
        y,
        xerr=[100 * (pl["coverage"] - pl["coverage_low"]), 100 * (pl["coverage_high"] - pl["coverage"])],
        fmt="o",
    )
    if "coverage_planted" in pl.columns:
        ax.plot(100 * pl["coverage_planted"], y, "x", color="tab:red", label="CI holds the planted value (not the target)")
        ax.legend(fontsize=7, loc="lower left")
    ax.axvline(95, color="grey", ls="--")
    ax.set_yticks(y, lab)
    ax.set_xlabel("coverage of the realised value, % (planted worlds)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _runs_file(path: Path, where: str) -> None:
    """``path`` is a runs file this script wrote (CSV or gzipped CSV with the columns of
    :data:`KEY`); an :class:`InputError` naming ``where`` otherwise."""
    fix = f"give a runs file {PROG} wrote (CSV, or .csv.gz), or a new file name to start one"
    try:
        cols = set(read_runs(path).columns) if path.stat().st_size else set()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, pd.errors.ParserError) as err:  # gzip, encoding, CSV
        raise InputError(f"{path} cannot be read as a runs file ({type(err).__name__}: {err})", where=where, fix=fix) from None
    missing = [c for c in KEY if c not in cols]
    if missing:
        raise InputError(f"{path} is not a runs file of {PROG}: it has no column {', '.join(missing)}", where=where, fix=fix)


def check_args(args) -> None:
    """Every argument and file checked before any world is drawn: an :class:`InputError` naming
    the argument, what is wrong and the fix (printed as the ``fmat`` command prints one)."""

    known = sorted(p.stem for p in (REPO / "config" / "studies").glob("*.yaml"))
    criteria_folder(args.criteria_dir)
    if args.table:
        for name in [r for r in args.runs.split(",") if r]:
            if not Path(name).is_file():
                raise InputError(
                    f"no such file: {name}",
                    where="--runs",
                    fix=f"give the runs file(s) a simulation wrote (without --table: {PROG} --runs FILE)",
                )
            _runs_file(Path(name), "--runs")
        output_folders(args, "out", "figure")
        return
    studies = [s for s in args.studies.split(",") if s]
    known_studies(studies, args.studies, known)
    at_least(args, "--worlds", 1)
    at_least(args, "--models", 2, " (the analyses take the models as random intercepts)")
    at_least(args, "--jobs", 1)
    if args.icc:
        at_least(args, "--population", 2)
    try:
        others = [float(x) for x in args.others.split(",") if x.strip()]
    except ValueError:
        others = []
    if not others or not all(0 <= o < 1 for o in others):
        raise InputError(
            f"{args.others!r} is not a list of shares",
            where="--others",
            fix="give shares in [0, 1), comma-separated, e.g. 0,0.5,0.9",
        )
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or not set(kinds) <= {"null", "planted"}:
        raise InputError(f"unknown kind of world in {args.kinds!r}", where="--kinds", fix="give null, planted or null,planted")
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise InputError(
            f"unknown variant {', '.join(map(repr, bad)) or repr(args.variants)}",
            where="--variants",
            fix=f"give variants of {', '.join(VARIANTS)}, comma-separated",
        )
    runs = Path(args.runs)
    if "," in args.runs:
        raise InputError(
            f"--runs {args.runs!r}: one file when simulating", where="--runs", fix="several files: with --table only"
        )
    if runs.exists():
        if not runs.is_file():
            raise InputError(f"{runs} is not a file", where="--runs", fix="give a file name (the runs are appended to it)")
        _runs_file(runs, "--runs")
    elif not runs.resolve().parent.is_dir():
        raise InputError(f"no such folder: {runs.parent}", where="--runs", fix="create the folder first, or give another path")


def _interrupted(args) -> int:
    """Ctrl-C: what was kept (the worlds already appended to --runs) and how to go on."""
    runs = Path(args.runs)
    if args.table or not runs.exists():
        print(f"{PROG}: interrupted (Ctrl-C); kept: nothing\n  run the same command again", file=sys.stderr)
    else:
        print(
            f"{PROG}: interrupted (Ctrl-C); kept: the worlds already in {runs}\n"
            "  go on: run the same command again (it skips the worlds already there)",
            file=sys.stderr,
        )
    return 130


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--studies", default="3A,3B")
    ap.add_argument("--worlds", type=int, default=500)
    ap.add_argument("--models", type=int, default=12, help="perfect learners per world (the paper: 12)")
    ap.add_argument("--others", default="0,0.5,0.9", help="shares of the probability outside the options")
    ap.add_argument("--kinds", default="null,planted")
    ap.add_argument(
        "--variants", default="paper,sentence,sigma,disattenuated", help="those that apply to each analysis (applies)"
    )
    ap.add_argument(
        "--runs", default="calibration-runs.csv", help="CSV of the judged rows (appended); with --table, several joined by commas"
    )
    ap.add_argument("--criteria-dir", default=None, help="criterion tables a study's words come from (1C)")
    ap.add_argument("--jobs", type=int, default=1, help="processes, one thread each (worlds in parallel; the same rows)")
    ap.add_argument(
        "--icc", action="store_true", help="judge the reliability stage's ICC rows (against the population ICC), not the analysis"
    )
    ap.add_argument("--population", type=int, default=cal.POPULATION, help="with --icc: models drawn for the population ICC")
    ap.add_argument("--table", action="store_true", help="summarise --runs instead of simulating")
    ap.add_argument("--out", default=None, help="with --table: the summary (.csv and .md beside it)")
    ap.add_argument("--figure", default=None, help="with --table: the figure (PNG)")
    return run_checked(PROG, ap.parse_args(argv), check_args, _main, _interrupted)


def _main(args) -> int:
    global CRITERIA_DIR
    CRITERIA_DIR = Path(args.criteria_dir).resolve() if args.criteria_dir else None
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    if not args.table:
        simulate(args)
    tab = table(pd.concat([read_runs(r) for r in args.runs.split(",")], ignore_index=True))
    text = markdown(tab)
    print(text)
    if args.out:
        tab.to_csv(args.out, index=False)
        Path(args.out).with_suffix(".md").write_text(text)
    if args.figure:
        figure(tab, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
