"""Benchmark: the demo workflow (`make demo` less the `.venv` set-up, which is the same) at two
commits, side by side in one run on the same machine.

Each commit is checked out into its own temporary folder (`git worktree`), and the demo runs
there from nothing: `snakemake --profile profiles/default --cores N --configfile
config/demo.yaml` with this environment's Python. Prints each wall time, the jobs, and the
ratio NEW / OLD. Issue 32's target: the demo with trained models (known truth) within 2x the
demo with random-weight models.
Run:  python benchmarks/bench_demo.py [--old fe86582] [--new HEAD] [--cores all]
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


def run_demo(commit: str, folder: Path, cores: str) -> tuple[float, int, str]:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), commit], check=True, capture_output=True)
    try:
        t = time.perf_counter()
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "--profile",
                "profiles/default",
                "--cores",
                cores,
                "--configfile",
                "config/demo.yaml",
            ],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - t
        if res.returncode != 0:
            raise SystemExit(f"the demo at {commit} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
        jobs = 0
        for line in (res.stdout + res.stderr).splitlines():
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


def rule_seconds(folder: Path) -> dict[str, int]:
    """Each rule's jobs' wall seconds summed, from the benchmark files the rules write."""
    out = {}
    for tsv in sorted((folder / "results" / "benchmarks").rglob("*.tsv")):
        rule = tsv.relative_to(folder / "results" / "benchmarks").parts[0]
        lines = tsv.read_text().splitlines()
        if len(lines) > 1:
            out[rule] = out.get(rule, 0) + float(lines[1].split("\t")[0])
    return {k: round(v) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="fe86582", help="the commit before (default: the last demo with random weights)")
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--cores", default="all")
    args = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory(prefix="fmat-bench-demo-") as tmp:
        for label, commit in (("old", args.old), ("new", args.new)):
            out[label] = run_demo(commit, Path(tmp) / label, args.cores)
            s, jobs, sha = out[label]
            print(f"{label} ({sha}): {s:.0f} s, {jobs} jobs", flush=True)
    ratio = out["new"][0] / out["old"][0]
    print(
        f"demo workflow: new/old = {ratio:.2f} (target <= 2.0); {platform.machine()}, {os.cpu_count()} CPU(s), "
        f"--cores {args.cores}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
