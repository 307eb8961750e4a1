"""The cluster path on a real SLURM (issue 20): a one-node cluster on this machine
(profiles/slurm/local-cluster.sh), the demo submitted with ``snakemake --profile profiles/slurm``
plus the overrides docs/cluster.md documents (partition, no account, ``squeue`` as the status
command), and three faults a cluster user meets, all in ONE run:

- the first scoring job of one model is cancelled with ``scancel`` while it runs: retried, same outputs;
- the first scoring job of the other model exceeds its ``runtime`` (``score_runtime: 1`` minute and
  the test hook ``FMAT_TEST_SLOW_SCORING``, tests/hooks/slow_scoring.py): SLURM kills it at its time limit and
  Snakemake resubmits it with the doubled runtime of ``fmat_replication.score.score_resources``;
- the controlling ``snakemake`` is killed (SIGKILL) once the first ``lpr`` job has finished; the same
  command with ``--rerun-incomplete`` (after ``--unlock``) finishes the run without redoing a
  finished job.

Then: every job that is not a ``localrule`` went through sbatch (Snakemake's submission lines, checked
against SLURM's own records: ``scontrol show job``), every table equals that of a local run of the same
configuration, and the SLURM logs are where docs/cluster.md says. The slow test needs root (it
installs and starts SLURM; CI runs as root) and no network. About 4 minutes on 2 cores (the local run
goes side by side with the cluster run's first, mostly idle, minute).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
CLUSTER = REPO / "profiles" / "slurm" / "local-cluster.sh"
CLUSTER_DOC = REPO / "docs" / "cluster.md"

STUDIES = ["1B", "X2", "3D"]  # 1B's analysis reads criterion tables; X2 is scored with LPBS
MODELS = {"tiny-bert-base-uncased": "bert-uncased", "tiny-roberta-base": "roberta"}
CANCELLED, TIMED_OUT = "tiny-bert-base-uncased", "tiny-roberta-base"
TARGETS = [f"results/{kind}/{s}.parquet" for kind in ("lpr", "reliability") for s in STUDIES] + [
    f"results/analysis/{s}/stats.parquet" for s in STUDIES
]
SMALL = {
    "studies_dir": str(REPO / "config" / "studies"),
    "studies": STUDIES,
    "models": [{"name": n, "tiny": fam} for n, fam in MODELS.items()],
    "score_threads": 1,  # two scoring jobs side by side on the 2-CPU node
    "world": None,  # untrained tiny models: these tests are about the jobs, not the science
    # all three studies in one scoring job per model (rule score_paper), as the paper's studies are
    "score_groups": {"paper": STUDIES, "examples": ["X1"]},  # (X1 is not configured here: ignored)
}
# what docs/cluster.md ("Trying it on one machine") tells users to add to `--profile profiles/slurm`
# on the local cluster; test_doc_shows_the_overrides_the_test_uses keeps the two in step
SLURM_OVERRIDES = [
    "--slurm-status-command",
    "squeue",
    "--slurm-no-account",
    "--default-resources",
    "slurm_partition=local",
    "mem_mb=2000",
    "runtime=30",
    "--set-resources",
    "score_paper:slurm_partition=local",
    "--set-threads",
    "score_paper=1",
]
# test only: status checks every few seconds instead of the profile's 40 s (short jobs)
FAST_CHECKS = ["--slurm-init-seconds-before-status-checks", "3", "--seconds-between-status-checks", "3"]
SLOW_SECONDS = 400  # FMAT_TEST_SLOW_SCORING: far beyond the 1-minute limit of the first attempt


# --------------------------------------------------------------------------- fast checks


def test_doc_shows_the_overrides_the_test_uses():
    doc = CLUSTER_DOC.read_text(encoding="utf-8")
    line = " ".join(SLURM_OVERRIDES)
    assert line in " ".join(doc.replace("\\\n", " ").split()), f"docs/cluster.md should show: {line}"
    assert "slurm-status-command: squeue" in doc and "AccountingStorageType" in doc
    assert "local-cluster.sh start" in doc and "FMAT_TEST_SLOW_SCORING" in doc


HOOKS = REPO / "tests" / "hooks"  # the slow-scoring hook, loaded by the jobs through sitecustomize


def test_slow_scoring_hook(tmp_path):
    sys.path.insert(0, str(HOOKS))
    try:
        from slow_scoring import SLOW_SCORING, slow_first_attempt, slow_seconds, slowed
    finally:
        sys.path.remove(str(HOOKS))

    slept = []
    stamp = tmp_path / "m.slowed"
    assert slow_first_attempt(stamp, env={}, sleep=slept.append) == 0 and not stamp.exists()
    assert slow_first_attempt(stamp, env={SLOW_SCORING: "2.5"}, sleep=slept.append) == 2.5
    assert stamp.exists() and slept == [2.5]
    # later attempts of the same job do not sleep
    assert slow_first_attempt(stamp, env={SLOW_SCORING: "2.5"}, sleep=slept.append) == 0 and slept == [2.5]
    assert slow_seconds({SLOW_SCORING: " "}) == 0
    for bad in ("soon", "-1"):
        with pytest.raises(ValueError, match=SLOW_SCORING):
            slow_seconds({SLOW_SCORING: bad})

    def score(marker, studies):
        yield from studies

    assert list(slowed(score, tmp_path)({"slug": "m"}, ["1A"])) == ["1A"]  # m.slowed exists: no sleep


def test_slow_scoring_hook_reaches_the_jobs_and_only_with_its_variable():
    """A job started with tests/hooks on PYTHONPATH (as the cluster test starts the jobs) gets the
    workflow's scoring function wrapped; without FMAT_TEST_SLOW_SCORING nothing changes, and the
    package itself never imports the hook."""
    code = "import fmat_replication.score as s; print(hasattr(s.score_studies, '__wrapped__'))"
    env = _env(PYTHONPATH=str(HOOKS))
    on = subprocess.run(
        [sys.executable, "-c", code], env={**env, "FMAT_TEST_SLOW_SCORING": "1"}, capture_output=True, text=True, timeout=120
    )
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert on.stdout.strip() == "True", on.stderr
    assert off.stdout.strip() == "False", off.stderr
    assert not (REPO / "fmat" / "testhooks.py").exists()
    assert "slow_scoring" not in "".join(p.read_text() for p in (REPO / "fmat").rglob("*.py"))


def test_score_runtime_replaces_the_first_attempt_and_doubles():
    from fmat_replication.score import score_resources

    assert [score_resources("bert-base-cased", a, 15, minutes=1)["runtime"] for a in (1, 2, 3)] == [1, 2, 4]
    assert score_resources("bert-base-cased", 1, 15, minutes=None)["runtime"] == 30
    assert (
        score_resources("bert-base-cased", 2, 15, minutes=1)["mem_mb"] == 2 * score_resources("bert-base-cased", 1, 15)["mem_mb"]
    )


# --------------------------------------------------------------------------- the cluster run


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.setdefault("PYTHONWARNINGS", "ignore")
    env.update(extra)
    return env


def _cmd(*args) -> list[str]:
    cfg = [str(REPO / "config" / "config.yaml"), str(REPO / "config" / "demo.yaml"), "small.yaml"]
    return [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--configfile", *cfg, *args]


def _slurm_cmd(*args) -> list[str]:
    return _cmd("--profile", str(REPO / "profiles" / "slurm"), *SLURM_OVERRIDES, *FAST_CHECKS, *args, *TARGETS)


def _workdir(path: Path, extra: dict | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config").symlink_to(REPO / "config", target_is_directory=True)
    (path / "small.yaml").write_text(yaml.safe_dump({**SMALL, **(extra or {})}), encoding="utf-8")
    return path


def _scontrol(jobid: str) -> dict:
    out = subprocess.run(["scontrol", "show", "job", "-o", jobid], capture_output=True, text=True).stdout
    return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


def _jobs(log: str) -> tuple[dict, dict]:
    """Snakemake's output: {jobid: (rule, outputs)} of the jobs it started (not localrules), and
    {jobid: [(slurm id, log path), ...]} of its sbatch submissions (one per attempt)."""
    started, submitted = {}, {}
    for block in re.split(r"\n(?=\[|rule |localrule )", log):
        m = re.match(r"rule (\w+):\n", block)
        if m and (j := re.search(r"^\s+jobid: (\d+)$", block, re.M)):
            out = re.search(r"^\s+output: (.*)$", block, re.M)
            started[int(j.group(1))] = (m.group(1), out.group(1).split(", ") if out else [])
    for j, sid, path in re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (.*?)\)\.", log):
        submitted.setdefault(int(j), []).append((sid, path))
    return started, submitted


def _finished(log: str, started: dict) -> list[str]:
    """Outputs of the jobs Snakemake reported finished."""
    done = [int(j) for j in re.findall(r"Finished jobid: (\d+)", log)]
    return [o for j in done if j in started for o in started[j][1]]


def _tables(work: Path) -> dict[str, pd.DataFrame]:
    res = work / "results"
    return {
        str(p.relative_to(res)): pd.read_parquet(p)
        for p in sorted(res.rglob("*.parquet"))
        if p.relative_to(res).parts[0] != "benchmarks"
    }


@pytest.fixture(scope="module")
def cluster():
    """The one-node cluster (started here if CI has not started it already; .ci/run stops it)."""
    if os.geteuid() != 0:
        pytest.fail(
            "the SLURM test installs and starts a one-node cluster: run it as root "
            "(CI does), or run `sudo profiles/slurm/local-cluster.sh start` and the test as root"
        )
    res = subprocess.run([str(CLUSTER), "start"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm")
    # the reference: the same configuration, run locally in a folder of its own. It starts once
    # the cluster run's first scoring job is cancelled: the other one then sleeps until its
    # 1-minute time limit, so the two CPUs are free for it (rather than the two runs one after
    # the other); waited for, and checked, once the cluster run is done
    local = _workdir(base / "local")
    ref: dict = {}

    def start_local() -> None:
        ref["t0"] = time.perf_counter()
        with open(local / "local.log", "w") as fh:
            ref["proc"] = proc = subprocess.Popen(
                _cmd("--cores", "2", *TARGETS), cwd=local, env=_env(), stdout=fh, stderr=subprocess.STDOUT
            )
        threading.Thread(
            target=lambda: ref.setdefault("seconds", (proc.wait(), time.perf_counter() - ref["t0"])[1]), daemon=True
        ).start()

    try:
        facts = _cluster_run(base, start_local)
    except BaseException:
        if "proc" in ref:  # the cluster run failed: its reference is not needed
            ref["proc"].kill()
            ref["proc"].wait()
        raise
    try:
        ref["proc"].wait(timeout=600)
    except subprocess.TimeoutExpired:
        ref["proc"].kill()
        ref["proc"].wait()
    assert ref["proc"].returncode == 0, (local / "local.log").read_text()[-8000:]
    facts.update(local=local, local_seconds=ref.get("seconds", time.perf_counter() - ref["t0"]))
    return facts


def _cluster_run(base: Path, on_cancel) -> dict:
    """The cluster run with its three faults; ``on_cancel()`` is called once the first fault is made."""
    # the cluster run, with a 1-minute first attempt and a slow first scoring job per model
    work = _workdir(base / "slurm", {"score_runtime": 1})
    env = _env(
        FMAT_TEST_SLOW_SCORING=str(SLOW_SECONDS),
        PYTHONUNBUFFERED="1",  # log lines as they happen
        PYTHONPATH=str(HOOKS),
        FMAT_TEST_SLOW_STAMPS=str(work / "logs" / "score_paper"),
    )
    first_log = work / "first.log"
    facts: dict = {}
    t1 = time.perf_counter()
    with open(first_log, "w") as fh:
        proc = subprocess.Popen(_slurm_cmd(), cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 420
        stamp = work / "logs" / "score_paper" / f"{CANCELLED}.slowed"
        cancelled = killed = None
        while time.time() < deadline and proc.poll() is None:
            time.sleep(1)
            if cancelled is None and stamp.exists():
                # the job is in the test hook's sleep: cancel it the way a user would
                for line in subprocess.run(
                    ["squeue", "-h", "-t", "running", "-o", "%i|%k"], capture_output=True, text=True
                ).stdout.splitlines():
                    sid, comment = line.split("|", 1)
                    if comment == f"rule_score_paper_wildcards_{CANCELLED}":
                        subprocess.run(["scancel", sid], check=True)
                        cancelled = sid
                        on_cancel()
            if cancelled and killed is None and re.search(r"Finished jobid: \d+ \(Rule: lpr\)", first_log.read_text()):
                proc.send_signal(signal.SIGKILL)  # the controlling snakemake dies; its SLURM jobs go on
                proc.wait()
                killed = time.time()
                # and its jobs still in the queue are cancelled (as docs/cluster.md tells users to do,
                # or as a node failure would): they stop half done, and the resume must redo them
                in_flight = subprocess.run(
                    ["squeue", "-h", "-t", "pending,running", "-o", "%i|%k"], capture_output=True, text=True
                ).stdout.split()
                for line in in_flight:
                    subprocess.run(["scancel", line.split("|")[0]], check=False)
                facts["in_flight"] = [line.split("|", 1) for line in in_flight]
        assert cancelled, "the cancelled model's scoring job was never seen running:\n" + first_log.read_text()[-6000:]
        assert killed, "snakemake was not killed after an lpr job:\n" + first_log.read_text()[-6000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first = first_log.read_text()
    started1, submitted1 = _jobs(first)
    done_before = _finished(first, started1)
    assert done_before, first[-4000:]
    mtimes = {p: (work / p).stat().st_mtime_ns for p in done_before}
    # wait until the cancelled jobs have left the node
    for _ in range(120):
        if not subprocess.run(["squeue", "-h", "-t", "pending,running"], capture_output=True, text=True).stdout.strip():
            break
        time.sleep(1)
    # resume: unlock, then the same command with --rerun-incomplete
    resumed_at_ns = time.time_ns()
    unlock = subprocess.run(_slurm_cmd("--unlock"), cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    res = subprocess.run(_slurm_cmd("--rerun-incomplete"), cwd=work, env=env, capture_output=True, text=True, timeout=600)
    second = res.stdout + res.stderr
    (work / "second.log").write_text(second, encoding="utf-8")
    assert res.returncode == 0, second[-6000:]
    facts.update(
        slurm_seconds=time.perf_counter() - t1,
        cancelled=cancelled,
        first=first,
        second=second,
        done_before=done_before,
        mtimes=mtimes,
        work=work,
        resumed_at_ns=resumed_at_ns,
    )
    return facts


@pytest.mark.slow
@pytest.mark.serial  # its faults are timed (a 1-minute limit, a kill mid-run): run alone, not beside another test
def test_slurm_run_survives_three_faults_and_equals_the_local_run(runs, capsys):
    work, first, second = runs["work"], runs["first"], runs["second"]
    started1, submitted1 = _jobs(first)
    started2, submitted2 = _jobs(second)

    # 1. every job that is not a localrule went through sbatch, as SLURM's records confirm
    n_sbatch = 0
    for started, submitted, log in ((started1, submitted1, first), (started2, submitted2, second)):
        assert started, log[-3000:]
        for jobid, (rule, _) in started.items():
            assert jobid in submitted, f"job {jobid} ({rule}) was not submitted with sbatch:\n{log[-3000:]}"
            for sid, path in submitted[jobid]:
                rec = _scontrol(sid)
                assert rec.get("Comment", "").startswith(f"rule_{rule}"), (sid, rec)
                assert rec.get("Partition") == "local", rec
                # 3. per-job SLURM logs: logs/slurm/rule_<rule>/<wildcards>/<SLURM job id>.log (docs/cluster.md)
                rel = Path(path).relative_to(work)
                assert rel.parts[:3] == ("logs", "slurm", f"rule_{rule}") and rel.name == f"{sid}.log", path
                assert rec.get("StdOut") == path, rec
                n_sbatch += 1
    assert "localrule criteria_fetch" in first  # downloads stay on the login node

    # fault 1: scancel -> CANCELLED, resubmitted, and its log kept (failed jobs' logs are kept)
    sid = runs["cancelled"]
    assert _scontrol(sid)["JobState"] == "CANCELLED"
    # fault 2: the other model's first attempt ran past its 1-minute limit, SLURM killed it, and the
    # retry asked for twice the runtime (score_resources: runtime x 2 per attempt)
    attempts = {}
    for started, submitted in ((started1, submitted1), (started2, submitted2)):
        for jobid, (rule, outs) in started.items():
            if rule == "score_paper":
                model = Path(outs[0]).stem
                attempts.setdefault(model, []).extend(s for s, _ in submitted[jobid])
    assert set(attempts) == set(MODELS), attempts
    for model, state in ((CANCELLED, "CANCELLED"), (TIMED_OUT, "TIMEOUT")):
        sids = attempts[model]
        recs = [_scontrol(s) for s in sids]
        assert len(sids) == 2, (model, recs)
        assert recs[0]["JobState"] == state and recs[1]["JobState"] == "COMPLETED", (model, recs)
        assert (recs[0]["TimeLimit"], recs[1]["TimeLimit"]) == ("00:01:00", "00:02:00"), (model, recs)
        kept = work / "logs" / "slurm" / "rule_score_paper" / model / f"{sids[0]}.log"
        assert kept.exists(), f"the failed job's SLURM log should be kept at {kept}"
        assert ("DUE TO TIME LIMIT" if state == "TIMEOUT" else "CANCELLED") in kept.read_text(), kept.read_text()
        # successful jobs' logs are deleted (slurm-keep-successful-logs: false)
        assert not (work / "logs" / "slurm" / "rule_score_paper" / model / f"{sids[1]}.log").exists()
    assert sid == attempts[CANCELLED][0]
    assert "Trying to restart job" in first

    # fault 3: the resumed run redid no job that had finished before the kill
    for p in runs["done_before"]:
        assert (work / p).stat().st_mtime_ns == runs["mtimes"][p], f"{p} was redone after the resume"
        assert not any(p in outs for _, outs in started2.values()), p
    assert "score_paper" not in {rule for rule, _ in started2.values()}

    # ... and redid the jobs that were cancelled half done after the kill (rerun-incomplete)
    # (not a job whose end the first run had already logged: the kill follows the first finished lpr
    # job at once, and squeue may still list that job, ending, when it is cancelled; CI saw it)
    def logged_done(c):
        rule, _, study = c.partition("_wildcards_")
        return any(
            r == rule and any(f"/{study}" in o or f"{study}." in o for o in outs) and set(outs) <= set(runs["done_before"])
            for r, outs in started1.values()
        )

    redo = [c.removeprefix("rule_") for sid, c in runs["in_flight"] if _scontrol(sid)["JobState"] == "CANCELLED"]
    redo = [c for c in redo if not logged_done(c)]
    assert redo, ("no job was in flight when snakemake was killed", runs["in_flight"])

    def ended_before_the_resume(c):
        # cancelled as it ended (squeue still listed it, its end not yet logged: seen in CI beside
        # another test): all its outputs were written before the resume, which rightly kept them;
        # the tables below must still equal the local run's, so none of them is half done
        rule, _, study = c.partition("_wildcards_")
        outs = [o for r, os_ in started1.values() if r == rule for o in os_ if f"/{study}" in o or f"{study}." in o]
        return bool(outs) and all((work / o).exists() and (work / o).stat().st_mtime_ns < runs["resumed_at_ns"] for o in outs)

    resumed = sorted(started2.values())
    for c in [c for c in redo if not ended_before_the_resume(c)]:
        rule, _, study = c.partition("_wildcards_")
        assert any(r == rule and any(f"/{study}" in o or f"{study}." in o for o in outs) for r, outs in started2.values()), (
            c,
            resumed,
        )

    # the outputs equal those of the local run of the same configuration
    ref, got = _tables(runs["local"]), _tables(work)
    assert set(ref) == set(got) and len(ref) >= 3 * len(STUDIES), (sorted(ref), sorted(got))
    for name in ref:
        pd.testing.assert_frame_equal(got[name], ref[name], obj=name)

    with capsys.disabled():
        print(
            f"\nslurm: {n_sbatch} jobs through sbatch, outputs equal to the local run ({len(ref)} tables), "
            f"3 faults survived (scancel, time limit, killed snakemake: {len(redo)} half-done jobs redone, "
            f"{len(runs['done_before'])} finished outputs kept) in {runs['slurm_seconds']:.0f} s "
            f"(local run {runs['local_seconds']:.0f} s)"
        )


def test_doc_shows_what_a_paper_run_asks_of_the_cluster():
    """docs/cluster.md's table is the current output of profiles/slurm/paper_requests.py (a dry run
    of the paper configuration with the profile's resources), not numbers typed by hand."""
    res = subprocess.run(
        [sys.executable, str(REPO / "profiles" / "slurm" / "paper_requests.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert res.returncode == 0, res.stderr
    doc = CLUSTER_DOC.read_text(encoding="utf-8")
    shown = doc.split("<!-- paper_requests.py: begin -->\n", 1)[1].split("\n<!-- paper_requests.py: end -->", 1)[0]
    assert shown == res.stdout.strip(), "rerun `python profiles/slurm/paper_requests.py` and paste it into docs/cluster.md"
    rows = {line.split(" | ")[0].strip("| "): line for line in shown.splitlines() if line.startswith("| ")}
    # the paper: 12 models -> 12 scoring jobs on GPUs; 15 studies -> 15 lpr jobs; downloads on the login node
    assert rows["score_paper"].split(" | ")[1:3] == ["12", "GPU"]
    assert rows["lpr"].split(" | ")[1] == "15"
    assert "login node" in rows["download_model"] and "login node" in rows["criteria_fetch"]
    # score_resources' first-attempt walltimes of the 12 models, summed: the GPU-hours of score_paper
    from fmat_replication.score import score_resources

    models = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))["models"]
    names = [m if isinstance(m, str) else m["name"] for m in models]
    hours = sum(score_resources(n, 1, 15)["runtime"] for n in names) / 60
    assert f"{hours:.1f} GPU-hours" in rows["score_paper"], (hours, rows["score_paper"])


def test_paper_requests_parses_local_rules():
    sys.path.insert(0, str(REPO / "profiles" / "slurm"))
    try:
        import paper_requests
    finally:
        sys.path.pop(0)
    assert {"download_model", "criteria_fetch", "agreement_download"} <= paper_requests.local_rules()
    jobs = paper_requests.parse_jobs(
        "rule a:\n    threads: 4\n    resources: mem_mb=3000, runtime=20, gpu=1\n"
        "localrule b:\n    resources: mem_mb=2000, runtime=30\n"
    )
    assert jobs == [
        {"rule": "a", "local": False, "threads": 4, "mem_mb": 3000, "runtime": 20, "gpu": 1},
        {"rule": "b", "local": True, "threads": 1, "mem_mb": 2000, "runtime": 30, "gpu": 0},
    ]


def test_cluster_script_usage():
    """The script is executable, valid bash, and says how to call it (the slow test starts it)."""
    assert os.access(CLUSTER, os.X_OK)
    assert subprocess.run(["bash", "-n", str(CLUSTER)]).returncode == 0
    res = subprocess.run([str(CLUSTER)], capture_output=True, text=True)
    assert res.returncode == 2 and "start|stop|status" in res.stderr
    text = CLUSTER.read_text(encoding="utf-8")
    # the settings docs/cluster.md and the slow test rely on
    for setting in (
        "AccountingStorageType=accounting_storage/none",
        "MinJobAge=600",
        "OverTimeLimit=0",
        "SelectTypeParameters=CR_Core_Memory",
        "ProctrackType=proctrack/linuxproc",
        "PartitionName=$PARTITION",
        'PARTITION="${FMAT_SLURM_PARTITION:-local}"',
    ):
        assert setting in text, setting
