"""Benchmark: the demo workflow (`make demo` less the `.venv` set-up, which is the same) at two
commits, side by side in one run on the same machine.

Each commit is checked out into its own temporary folder (`git worktree`), and the demo runs
there from nothing: `snakemake --profile profiles/default --cores N --configfile
config/demo.yaml` with this environment's Python. Prints each wall time, the jobs, and the
ratio NEW / OLD. Issue 32's target: the demo with trained models (known truth) within 2x the
demo with random-weight models.
Run:  python benchmarks/bench_demo.py [--old fe86582] [--new HEAD] [--cores all]

`--threads-off COMMIT` measures instead what setting threads is worth (issue 42): COMMIT twice,
"before" a copy of it in which every `torch.set_num_threads(...)` call of the project is made a
no-op (so each training and scoring process takes torch's default, every core it sees, beside
the other jobs Snakemake runs at once), "after" as committed (each process the threads of its
rule). OMP_NUM_THREADS and the like are removed from both runs' environment, so neither inherits
a setting from the shell. With `--training PAIRS` only the training stage (rule demo_model, all
six tiny models) runs, before and after alternated ABBA, PAIRS times each, with the jobs' CPU
seconds beside the wall seconds: a comparison that a shared machine's changing load biases less.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_args import run_checked  # noqa: E402

from fmat.errors import InputError  # noqa: E402

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def unset_threads(folder: Path) -> int:
    """Make every ``torch.set_num_threads(...)`` call in the project's code at ``folder`` a no-op
    (the state before threads were set); returns how many calls were disabled."""

    n = 0
    for sub in ("fmat", "fmat_replication", "scripts"):
        for py in sorted((folder / sub).rglob("*.py")):
            text = py.read_text()
            if "torch.set_num_threads(" in text:
                n += text.count("torch.set_num_threads(")
                py.write_text(text.replace("torch.set_num_threads(", "(lambda *_: None)("))
    return n


def run_demo(commit: str, folder: Path, cores: str, threads_off: bool = False) -> tuple[float, int, str]:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), commit], check=True, capture_output=True)
    try:
        if threads_off:
            print(f"  {commit} (before): {unset_threads(folder)} torch.set_num_threads calls disabled", flush=True)
        seconds, output = _snakemake(folder, cores)
        jobs = 0
        for line in output.splitlines():
            if line.startswith("total"):
                jobs = int(line.split()[-1])
        sha = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        print(f"  {commit}: seconds per rule (sum of its jobs' wall times): {rule_seconds(folder)}", flush=True)
        recovered = folder / "results" / "recovery.csv"
        if recovered.exists():  # a demo with a world: what it planted, found again
            import pandas as pd

            verdicts = pd.read_csv(recovered)["verdict"]
            print(f"  {commit}: {int((verdicts == 'recovered').sum())} of {len(verdicts)} planted numbers recovered", flush=True)
        return seconds, jobs, sha
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)], capture_output=True)


def _benchmark_records(folder: Path, rule: str = ""):
    """(rule, {column: value}) of each job's Snakemake benchmark file under ``folder`` (of
    ``rule`` only when given)."""
    base = folder / "results" / "benchmarks"
    for tsv in sorted((base / rule).rglob("*.tsv")):
        lines = tsv.read_text().splitlines()
        if len(lines) > 1:
            yield tsv.relative_to(base).parts[0], dict(zip(lines[0].split("\t"), lines[1].split("\t")))


def rule_seconds(folder: Path) -> dict[str, int]:
    """Each rule's jobs' wall seconds summed, from the benchmark files the rules write."""
    out = {}
    for rule, rec in _benchmark_records(folder):
        out[rule] = out.get(rule, 0) + float(rec["s"])
    return {k: round(v) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def _snakemake(folder: Path, cores: str, *extra: str) -> tuple[float, str]:
    """The demo's Snakemake command in ``folder`` (thread variables removed from its
    environment); returns its wall seconds and its output. A failure stops the benchmark."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/default", "--cores", cores]
    t = time.perf_counter()
    res = subprocess.run([*cmd, "--configfile", "config/demo.yaml", *extra], cwd=folder, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"snakemake failed in {folder}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return time.perf_counter() - t, res.stdout + res.stderr


def _training_cost(folder: Path) -> tuple[float, float]:
    """The demo_model jobs' wall seconds and CPU seconds, summed (Snakemake's benchmark files)."""
    recs = [rec for _, rec in _benchmark_records(folder, "demo_model")]
    return sum(float(r["s"]) for r in recs), sum(float(r["cpu_time"]) for r in recs)


def training_abba(commit: str, cores: str, repeats: int, tmp: Path) -> int:
    """The demo's training stage (rule demo_model, every tiny model) with and without threads set,
    in the order before, after, after, before, ... (``repeats`` pairs), so that a drift in the
    machine's load falls on both alike. The inputs the stage needs are built once per copy,
    untimed; each timed run retrains every model (``--forcerun demo_model``)."""

    folders = {}
    for label, off in (("before", True), ("after", False)):
        folders[label] = tmp / f"train-{label}"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folders[label]), commit], check=True, capture_output=True
        )
        if off:
            print(f"  before: {unset_threads(folders[label])} torch.set_num_threads calls disabled", flush=True)
        _snakemake(folders[label], cores, "--until", "demo_model")  # untimed: the inputs
    order = [lab for i in range(repeats) for lab in (("before", "after") if i % 2 == 0 else ("after", "before"))]
    rows = []
    try:
        for label in order:
            load = os.getloadavg()[0]
            seconds, _ = _snakemake(folders[label], cores, "--until", "demo_model", "--forcerun", "demo_model")
            wall, cpu = _training_cost(folders[label])
            rows.append((label, seconds, wall, cpu, load))
            print(
                f"  {label}: {seconds:.0f} s wall (jobs: {wall:.0f} s wall, {cpu:.0f} s CPU; load {load:.1f} at its start)",
                flush=True,
            )
    finally:
        for f in folders.values():
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(f)], capture_output=True)
    mean = {lab: [sum(r[k] for r in rows if r[0] == lab) / repeats for k in (1, 3)] for lab in ("before", "after")}
    print(
        f"demo training stage, before/after setting threads (means of {repeats}): wall {mean['before'][0]:.0f} / "
        f"{mean['after'][0]:.0f} s (ratio {mean['before'][0] / mean['after'][0]:.2f}); the jobs' CPU "
        f"{mean['before'][1]:.0f} / {mean['after'][1]:.0f} s; {platform.machine()}, {os.cpu_count()} CPU(s), "
        f"--cores {cores}, {time.strftime('%Y-%m-%d %H:%M')}",
        flush=True,
    )
    return 0


PROG = "bench_demo.py"


def check_args(args) -> None:
    """Every argument checked before any worktree is made: an ``InputError`` naming the argument,
    what is wrong and the fix (printed as the ``fmat`` command prints one)."""
    if args.cores != "all" and not (args.cores.isdigit() and int(args.cores) >= 1):
        raise InputError(
            f"{args.cores!r} is not a number of cores", where="--cores", fix="give all, or a whole number of at least 1"
        )
    if args.training is not None:
        if not args.threads_off:
            raise InputError(
                "--training needs --threads-off COMMIT", where="--training", fix="e.g. --threads-off HEAD --training 2"
            )
        if args.training < 1:
            raise InputError(f"must be at least 1; got {args.training}", where="--training", fix="e.g. --training 2")
    commits = (("--threads-off", args.threads_off),) if args.threads_off else (("--old", args.old), ("--new", args.new))
    for name, commit in commits:
        found = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], capture_output=True, text=True
        )
        if found.returncode != 0:
            raise InputError(
                f"{commit!r} is not a commit of {REPO}",
                where=name,
                fix="give a commit this checkout has (git log --oneline), e.g. HEAD or a short hash",
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="fe86582", help="the commit before (default: the last demo with random weights)")
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--cores", default="all")
    ap.add_argument("--threads-off", metavar="COMMIT", help="before/after of setting threads at one commit (see above)")
    ap.add_argument(
        "--training",
        type=int,
        metavar="PAIRS",
        help="with --threads-off: only the training stage, PAIRS before/after pairs (ABBA)",
    )
    return run_checked(PROG, ap.parse_args(argv), check_args, _main, _interrupted)


def _interrupted(args) -> int:
    """Ctrl-C: nothing is kept (the copies of the commits are removed)."""
    print(f"{PROG}: interrupted (Ctrl-C); kept: nothing (its copies of the commits are removed)\n  run it again", file=sys.stderr)
    return 130


def _main(args) -> int:
    if args.threads_off and args.training:
        with tempfile.TemporaryDirectory(prefix="fmat-bench-demo-") as tmp:
            return training_abba(args.threads_off, args.cores, args.training, Path(tmp))
    out = {}
    if args.threads_off:
        runs = (("before", args.threads_off, True), ("after", args.threads_off, False))
    else:
        runs = (("old", args.old, False), ("new", args.new, False))
    with tempfile.TemporaryDirectory(prefix="fmat-bench-demo-") as tmp:
        for label, commit, off in runs:
            load = os.getloadavg()[0]
            out[label] = run_demo(commit, Path(tmp) / label, args.cores, threads_off=off)
            s, jobs, sha = out[label]
            print(f"{label} ({sha}): {s:.0f} s, {jobs} jobs (load average {load:.1f} at its start)", flush=True)
    if args.threads_off:
        ratio = out["before"][0] / out["after"][0]
        print(
            f"demo workflow: before/after setting threads = {ratio:.2f}; {platform.machine()}, {os.cpu_count()} CPU(s), "
            f"--cores {args.cores}, {time.strftime('%Y-%m-%d %H:%M')}"
        )
        return 0
    ratio = out["new"][0] / out["old"][0]
    print(
        f"demo workflow: new/old = {ratio:.2f} (target <= 2.0); {platform.machine()}, {os.cpu_count()} CPU(s), "
        f"--cores {args.cores}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
