"""Benchmark: how long ``fmat power`` takes for a study of the paper's size (docs/calibration.md).

Runs :func:`fmat.power.power_table` for a study file and ``config/world.yaml``'s
plant with the command's defaults (models 3, 6, 12, 24; 20 worlds per number of models and
kind: 160 worlds) in one process, and reports the CPU time of this process (what a free core
would take; on a machine shared with other work the wall time is longer) and the wall time,
with the machine and date, and appends a line to ``--out`` (Markdown).  The speed target of the
issue: a study of the paper's size (3A) answers in under a minute on a laptop.

Run:  python benchmarks/bench_power.py --study 3A --out benchmarks/results/power-speed.md
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fmat import plant  # noqa: E402
from fmat.power import power_table  # noqa: E402
from fmat.study import load_study  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default="3A")
    ap.add_argument("--models", default="3,6,12,24")
    ap.add_argument("--worlds", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=None, help="Markdown file to append the timing to")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    study = load_study(REPO / "config" / "studies" / f"{args.study}.yaml")
    p = plant.load_world(REPO / "config" / "world.yaml").plant(args.study)
    models = [int(m) for m in args.models.split(",")]
    n = len(models) * 2 * args.worlds
    cpu, wall = time.process_time(), time.perf_counter()
    tab = power_table(study, p, models=models, worlds=args.worlds, jobs=args.jobs)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    line = (
        f"| {time.strftime('%Y-%m-%d %H:%M')} | {args.study} | {args.models} | {args.worlds} | {n} | {args.jobs} | "
        f"{cpu:.1f} | {wall:.1f} | {platform.machine()}, {os.cpu_count()} CPU(s), load {load:.1f} |"
    )
    print(tab[tab["condition"] == "all"].to_string(index=False))
    print(line)
    if args.out:
        out = Path(args.out)
        if not out.exists():
            out.write_text(
                "| date (UTC) | study | models | worlds each | worlds in all | processes | CPU s | wall s | machine |\n"
                "|---|---|---|---|---|---|---|---|---|\n"
            )
        with out.open("a") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
