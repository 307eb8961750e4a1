"""What a full paper run asks of a SLURM cluster: jobs, memory, walltime and GPU-hours, as the
rules' own resource functions give them (fmat_replication.score.score_resources etc.), read from a dry run
of the paper configuration with this profile's default-resources and set-resources.

    python profiles/slurm/paper_requests.py        (prints the Markdown table of docs/cluster.md)

Offline, a few seconds; writes nothing into the repository (the dry run is in a temporary folder).
tests/test_slurm.py checks that docs/cluster.md shows exactly this output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
PORTABLE = ("mem_mb", "runtime")  # what the rules and the profile state; partitions etc. are site names


def dry_run_args(profile: dict) -> list[str]:
    """--default-resources / --set-resources / --set-threads of the profile (portable keys only)."""
    default = [f"{k}={v}" for k, v in profile.get("default-resources", {}).items() if k in PORTABLE]
    per_rule = [
        f"{rule}:{k}={v}" for rule, res in profile.get("set-resources", {}).items() for k, v in res.items() if k in PORTABLE
    ]
    threads = [f"{rule}={n}" for rule, n in profile.get("set-threads", {}).items()]
    args = ["--default-resources", *default]
    if per_rule:
        args += ["--set-resources", *per_rule]
    if threads:
        args += ["--set-threads", *threads]
    return args


def local_rules(repo: Path = REPO) -> set[str]:
    """Rules named in a ``localrules:`` directive (they run on the login node, not through sbatch)."""
    names: set[str] = set()
    for smk in [repo / "Snakefile", *sorted((repo / "rules").glob("*.smk"))]:
        pattern = r"^localrules:((?:[ \t]*\w+,?)*[ \t]*\n(?:[ \t]+\w+,?[ \t]*\n)*)"
        for block in re.findall(pattern, smk.read_text(encoding="utf-8"), re.M):
            names |= set(re.findall(r"\w+", block))
    return names


def parse_jobs(dry_run: str, local: set[str] = frozenset()) -> list[dict]:
    """Every job block of ``snakemake -n`` output: rule, local?, threads, mem_mb, runtime, gpu."""
    jobs = []
    for m in re.finditer(r"^(localrule|rule) (\w+):\n(.*?)(?=^\S|\Z)", dry_run, re.M | re.S):
        kind, rule, body = m.groups()
        if rule == "all":
            continue
        res = dict(re.findall(r"(\w+)=([^,\s]+)", (re.search(r"resources: (.*)", body) or [None, ""])[1]))
        threads = re.search(r"threads: (\d+)", body)
        jobs.append(
            {
                "rule": rule,
                "local": kind == "localrule" or rule in local,
                "threads": int(threads.group(1)) if threads else 1,
                "mem_mb": int(res.get("mem_mb", 0)),
                "runtime": int(res.get("runtime", 0)),
                "gpu": int(res.get("gpu", 0)),
            }
        )
    return jobs


def summarize(jobs: list[dict]) -> str:
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for j in jobs:
        by_rule[j["rule"]].append(j)
    lines = ["| rule | jobs | where | per job: CPUs, memory, walltime | requested in all |", "|---|---|---|---|---|"]
    for rule, js in sorted(by_rule.items(), key=lambda kv: (kv[1][0]["local"], -kv[1][0]["gpu"], kv[0])):
        j = js[0]
        where = "login node" if j["local"] else ("GPU" if j["gpu"] else "CPU")
        if j["local"]:
            per, total = "-", "-"
        else:
            mems = sorted({x["mem_mb"] for x in js})
            mins = sorted({x["runtime"] for x in js})
            mem = f"{mems[0] / 1000:g} GB" if len(mems) == 1 else f"{mems[0] / 1000:g}-{mems[-1] / 1000:g} GB"
            rt = f"{mins[0]} min" if len(mins) == 1 else f"{mins[0]}-{mins[-1]} min"
            per = f"{j['threads']}, {mem}, {rt}"
            hours = sum(x["runtime"] for x in js) / 60
            total = f"{hours:.1f} {'GPU' if j['gpu'] else 'job'}-hours"
        lines.append(f"| {rule} | {len(js)} | {where} | {per} | {total} |")
    remote = [j for j in jobs if not j["local"]]
    gpu = [j for j in remote if j["gpu"]]
    lines += [
        "",
        f"In all: {len(jobs)} jobs, {len(remote)} submitted with sbatch ({len(gpu)} on GPUs), "
        f"{len(jobs) - len(remote)} on the login node; "
        f"{sum(j['runtime'] for j in gpu) / 60:.1f} GPU-hours and "
        f"{sum(j['runtime'] * j['threads'] for j in remote if not j['gpu']) / 60:.1f} CPU core-hours of walltime "
        f"requested on the first attempt (each retry doubles a scoring job's request); "
        f"the largest memory request is {max(j['mem_mb'] for j in remote) / 1000:g} GB.",
    ]
    return "\n".join(lines)


def main() -> int:
    profile = yaml.safe_load(PROFILE.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(REPO / "config", Path(tmp) / "config")
        cmd = [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "-n",
            "--cores",
            "256",
            "--configfile",
            str(REPO / "config" / "config.yaml"),
            "--config",
            f"studies_dir={REPO / 'config' / 'studies'}",
            *dry_run_args(profile),
        ]
        res = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-3000:] + res.stderr[-3000:])
        return res.returncode
    print(summarize(parse_jobs(res.stdout, local_rules())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
