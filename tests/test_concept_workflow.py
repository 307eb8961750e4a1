"""benchmarks/concept.smk: issue 52's concept-level calibration cut into blocks of seeds, one job
each, for a cluster (docs/calibration.md, "On a cluster"). The blocks cover every seed once, their
rows together are the rows of one process drawing the same worlds, and the blocks run as SLURM
jobs on a real (one-node) cluster with the runtime the workflow asks for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "benchmarks" / "concept.smk"
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_concept as bc  # noqa: E402
from test_slurm import FAST_CHECKS, cluster  # noqa: E402,F401  (cluster: the one-node cluster fixture)

SMALL = ["studies=3A", "kinds=concept-null", "item_sd=0.1", "worlds=3", "block=2", "models=4"]
OUT = Path("results/calibration/concept")
# the overrides docs/cluster.md gives for the one-node cluster (test_slurm.SLURM_OVERRIDES, less its score rule's)
ON_ONE_NODE = ["--slurm-status-command", "squeue", "--slurm-no-account", "--default-resources", "slurm_partition=local"]


def _snakemake(work: Path, *args: str, config=SMALL) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(WORKFLOW), *args, "--config", *config]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600, env=env)


def test_the_blocks_cover_every_seed_once(tmp_path):
    dry = _snakemake(tmp_path, "-n", config=["studies=3A", "kinds=concept-null,planted", "worlds=5", "block=2"])
    assert dry.returncode == 0, dry.stdout + dry.stderr
    blocks = sorted(set(re.findall(r"runs/(3A-[a-z-]+-\d+-\d+)\.csv\.gz", dry.stdout)))
    want = [f"3A-{k}-{a}-{b}" for k in ("concept-null", "planted") for a, b in ((1, 2), (3, 4), (5, 5))]
    assert blocks == sorted(want), dry.stdout


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> pd.DataFrame:
    """The same worlds drawn by one bench_concept.py process (seeds 1-3)."""
    runs = tmp_path_factory.mktemp("one") / "runs.csv.gz"
    argv = ["--studies", "3A", "--kinds", "concept-null", "--item-sd", "0.1", "--worlds", "3", "--models", "4"]
    assert bc.main([*argv, "--runs", str(runs)]) == 0
    return pd.read_csv(runs)


def _same_rows(work: Path, one: pd.DataFrame) -> pd.DataFrame:
    runs = pd.read_csv(work / OUT / "runs.csv.gz")
    key = ["seed", "variant", "condition"]
    pd.testing.assert_frame_equal(
        runs.sort_values(key).reset_index(drop=True), one.sort_values(key).reset_index(drop=True), check_like=True
    )
    return runs


@pytest.mark.slow
def test_the_blocks_together_are_the_rows_of_one_process(tmp_path, one_process):
    res = _snakemake(tmp_path, "-c1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in (tmp_path / OUT / "runs").iterdir()) == [
        "3A-concept-null-1-2.csv.gz",
        "3A-concept-null-3-3.csv.gz",
    ]
    runs = _same_rows(tmp_path, one_process)
    assert sorted(runs["seed"].unique()) == [1, 2, 3]
    pooled = pd.read_csv(tmp_path / OUT / "summary.csv")
    assert sorted(pooled["variant"]) == ["crossed", "paper"] and (pooled["worlds"] == 3).all()
    want = bc.summary(one_process, False)
    got = pooled.set_index("variant").loc[want["variant"], "share"].to_numpy()
    assert got == pytest.approx(want["share"].to_numpy())
    assert len(pd.read_csv(tmp_path / OUT / "summary-by-condition.csv")) == 2  # 3A: the overall d, both variants


@pytest.mark.slow
@pytest.mark.serial  # a real cluster's jobs: run alone
def test_the_blocks_run_as_slurm_jobs_with_their_runtime(tmp_path, one_process, cluster):  # noqa: F811
    res = _snakemake(tmp_path, "--profile", str(REPO / "profiles" / "slurm"), *ON_ONE_NODE, *FAST_CHECKS)
    log = res.stdout + res.stderr
    assert res.returncode == 0, log
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", log)
    assert len(submitted) == 2, log  # the two blocks; the summary is a localrule
    for jobid in submitted:
        job = subprocess.run(["scontrol", "show", "job", "-o", jobid], capture_output=True, text=True).stdout
        assert "TimeLimit=00:10:00" in job and "Partition=local" in job, job  # the workflow's runtime (minimum 10)
    _same_rows(tmp_path, one_process)
