"""Resuming and failure in the workflow (docs/resuming.md), on a small offline demo.

Two studies (3D: 20 rows; 1B: 400 rows, 200 sentences) on two tiny models, in temporary working folders
(nothing is written into the repository). The demo models are built once (rule
``demo_models``) and copied into each folder with their timestamps, so every run below starts
at the scoring stage:

- an uninterrupted run (the reference);
- a run killed with SIGKILL (power loss, OOM killer, node failure) while the second model's
  scoring job is half done (its 3D table written, its 1B table not yet); the restart needs
  ``--unlock``, is refused without ``--rerun-incomplete`` (the half-done job's table is listed as
  incomplete), and with it redoes only that job and its downstream ``lpr`` jobs: the finished
  model's tables keep their bytes and timestamps, and every table equals the reference's;
- a model whose folder is empty: with ``--keep-going`` its scoring job fails with a log line
  naming the folder, and the other model's tables are written.

Marked slow (about two minutes on two cores); run: ``python -m pytest tests/test_resume.py -q``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_workflow import job_counts  # the 'Job stats' table of a run: {rule: count}

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
STUDIES = ["3D", "1B"]  # scored in this order by each model's job
MODELS = {"tiny-bert-base-uncased": "bert-uncased", "tiny-roberta-base": "roberta"}
TARGETS = [f"results/lpr/{s}.parquet" for s in STUDIES]
SMALL = {
    "studies_dir": str(REPO / "config" / "studies"),
    "studies": STUDIES,
    "models": [{"name": name, "tiny": fam} for name, fam in MODELS.items()],
    "mirror_dir": None,  # the queries of 3D and 1B read no criterion table
    "batch_size": 4,  # small batches: a wider window to interrupt the scoring of 1B
    "score_threads": 2,  # with --cores 2: one scoring job at a time
    "world": None,  # untrained tiny models: these tests are about the jobs, not the science
}


def snakemake_cmd(*args) -> list[str]:
    cfg = [str(REPO / "config" / "config.yaml"), str(REPO / "config" / "demo.yaml"), "small.yaml"]
    return [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--configfile", *cfg, "--cores", "2", *args]


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def run(work: Path, *args, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        snakemake_cmd(*args), cwd=work, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout
    )


def scores(work: Path, model: str) -> list[Path]:
    return [work / "results" / "scores" / s / f"{model}.parquet" for s in STUDIES]


def new_folder(tmp: Path, name: str, base: Path) -> Path:
    """A working folder with the built query tables and demo models (timestamps kept)."""
    work = tmp / name
    for sub in ("results/queries", "resources/demo_models"):
        shutil.copytree(base / sub, work / sub)
    (work / "small.yaml").write_text(yaml.safe_dump(SMALL), encoding="utf-8")
    return work


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Query tables and tiny models, built once by the workflow itself."""
    work = tmp_path_factory.mktemp("resume_base")
    (work / "small.yaml").write_text(yaml.safe_dump(SMALL), encoding="utf-8")
    res = run(work, *[f"resources/demo_models/{m}.json" for m in MODELS])
    assert res.returncode == 0, res.stdout[-6000:]
    return work


@pytest.fixture(scope="module")
def runs(base, tmp_path_factory):
    """The reference run and the interrupted run (SIGKILL while the second model is scored),
    started side by side."""
    tmp = tmp_path_factory.mktemp("resume")
    ref, cut = new_folder(tmp, "reference", base), new_folder(tmp, "interrupted", base)
    ref_proc = subprocess.Popen(
        snakemake_cmd(*TARGETS), cwd=ref, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    log = open(cut / "run1.log", "w")
    proc = subprocess.Popen(
        snakemake_cmd(*TARGETS), cwd=cut, env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )  # own process group
    finished = partial = None
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        done = [m for m in MODELS if all(p.exists() for p in scores(cut, m))]
        half = [m for m in MODELS if scores(cut, m)[0].exists() and not scores(cut, m)[1].exists()]
        if done and half:
            os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its running job, no clean-up
            finished, partial = done[0], half[0]
            break
        time.sleep(0.005)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    log.close()
    ref_out, _ = ref_proc.communicate(timeout=600)
    assert ref_proc.returncode == 0, ref_out[-6000:]
    assert finished and partial, "the run was not caught half-way through scoring:\n" + (cut / "run1.log").read_text()[-4000:]
    return ref, cut, finished, partial


def test_killed_run_resumes_only_the_unfinished_job(runs):
    ref, cut, finished, partial = runs
    # the state after the kill: the finished model's tables, the half-done job's first table
    # (complete -- tables are written atomically -- but its job did not finish), no LPRs
    assert all(p.exists() for p in scores(cut, finished))
    assert scores(cut, partial)[0].exists() and not scores(cut, partial)[1].exists()
    assert not any((cut / t).exists() for t in TARGETS)
    kept = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in scores(cut, finished)}

    # 1. SIGKILL left Snakemake's lock behind
    res = run(cut, *TARGETS)
    assert res.returncode != 0
    assert "LockException" in res.stdout and "--unlock" in res.stdout, res.stdout[-3000:]
    res = run(cut, "--unlock")
    assert res.returncode == 0 and "Unlocked working directory" in res.stdout, res.stdout[-3000:]

    # 2. without --rerun-incomplete (no profile: profiles/default turns it on) the half-done
    #    job's table is refused, by name
    res = run(cut, "--workflow-profile", "none", *TARGETS)
    assert res.returncode != 0
    assert "IncompleteFilesException" in res.stdout, res.stdout[-3000:]
    listed = res.stdout.split("Incomplete files:", 1)[1].split()
    assert f"results/scores/{STUDIES[0]}/{partial}.parquet" in listed
    assert not any(finished in w for w in listed)

    # 3. with --rerun-incomplete: only the unfinished scoring job, then the LPRs
    res = run(cut, "--rerun-incomplete", *TARGETS)
    assert res.returncode == 0, res.stdout[-6000:]
    assert job_counts(res.stdout) == {"score_paper": 1, "lpr": 2, "total": 3}, res.stdout[-3000:]
    assert f"wildcards: model={partial}" in res.stdout
    assert f"wildcards: model={finished}" not in res.stdout
    for p, (mtime, data) in kept.items():  # not rewritten
        assert p.stat().st_mtime_ns == mtime and p.read_bytes() == data, p

    # 4. every table equals the uninterrupted run's
    for model in MODELS:
        for mine, theirs in zip(scores(cut, model), scores(ref, model)):
            assert mine.read_bytes() == theirs.read_bytes(), mine
    for t in TARGETS:
        pd.testing.assert_frame_equal(pd.read_parquet(cut / t), pd.read_parquet(ref / t))

    # 5. nothing left to do
    res = run(cut, "-n", *TARGETS)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout, res.stdout[-3000:]


def test_a_broken_model_fails_alone_with_keep_going(base, runs, tmp_path):
    ref = runs[0]
    work = new_folder(tmp_path, "broken", base)
    broken, good = "tiny-roberta-base", "tiny-bert-base-uncased"
    folder = work / "resources" / "demo_models" / broken
    shutil.rmtree(folder)
    folder.mkdir()  # an empty model folder (e.g. a failed copy)
    res = run(work, "--keep-going", *TARGETS)
    assert res.returncode != 0
    assert "Error in rule score_paper" in res.stdout, res.stdout[-4000:]
    assert f"wildcards: model={broken}" in res.stdout
    log = (work / "logs" / "score_paper" / f"{broken}.log").read_text(encoding="utf-8")
    assert f"model folder resources/demo_models/{broken} has no config.json" in log, log
    assert "Traceback" not in log  # a message, not a stack trace
    # the other model's job ran to the end, and its tables are the reference's
    for mine, theirs in zip(scores(work, good), scores(ref, good)):
        assert mine.read_bytes() == theirs.read_bytes(), mine
    assert not any(p.exists() for p in scores(work, broken))
    assert not any((work / t).exists() for t in TARGETS)  # the LPRs need every model


def test_a_lost_table_is_named_and_rescored_alone(runs, tmp_path):
    """Issue 35: deleting one score table planned the whole group's scoring job and every step
    after it, without a word. The command now says so and gives the cheaper way, which works:
    the lost file as the target (one job), then nothing left to do (Snakemake finds the group's
    rewritten tables equal by checksum)."""
    ref = runs[0]
    work = tmp_path / "lost"
    shutil.copytree(ref, work, symlinks=True)  # results, logs and .snakemake (checksums), times kept
    lost = work / "results" / "scores" / STUDIES[1] / "tiny-bert-base-uncased.parquet"
    lost.unlink()
    target = f"results/scores/{STUDIES[1]}/tiny-bert-base-uncased.parquet"
    # (the targets of this small run: the LPRs; a full run's rule all names every table, the lost one too)
    res = run(work, "-n", target, *TARGETS)
    assert res.returncode == 0, res.stdout[-3000:]
    assert f"note: 1 score table(s) of a finished run are missing: {target}." in res.stdout, res.stdout[-3000:]
    assert "would rerun score_paper (model tiny-bert-base-uncased)" in res.stdout
    assert f"snakemake {target} --profile profiles/default" in res.stdout  # the target before --configfile
    assert job_counts(res.stdout) == {"score_paper": 1, "lpr": 2, "total": 3}, res.stdout[-3000:]
    res = run(work, target)
    assert res.returncode == 0, res.stdout[-3000:]
    assert job_counts(res.stdout) == {"score_paper": 1, "total": 1}, res.stdout[-3000:]
    for mine, theirs in zip(scores(work, "tiny-bert-base-uncased"), scores(ref, "tiny-bert-base-uncased")):
        assert mine.read_bytes() == theirs.read_bytes(), mine
    res = run(work, "-n", target, *TARGETS)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout, res.stdout[-3000:]
    assert "note:" not in res.stdout
