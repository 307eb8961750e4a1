"""Every file a rule writes or reads is declared (issue 33): the lock records.

Each model's lock record (``resources/models/{model}.lock.tsv``) is an output of its own download
job and an input of every job that loads the model; each criterion source's record
(``resources/criteria/raw/{source}/{file}.lock.tsv``) is an output of its fetch job and an input
of the tables made from it. Both are kept when their job reruns (Snakemake's ``update()``), and
one rule each gathers them into ``resources/models.lock.tsv`` / ``resources/criteria.lock.tsv``.
Local model folders are hashed, not loaded, so these runs take seconds.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from pathlib import Path

import pandas as pd
import yaml
from test_incremental import run as run_workflow
from test_workflow import job_counts  # the 'Job stats' table of a run: {rule: count}

REPO = Path(__file__).resolve().parents[1]
MODELS = ["tiny-a", "tiny-b"]


def setup_work(tmp_path: Path, **extra) -> Path:
    work = tmp_path / "work"
    (work / "studies").mkdir(parents=True)
    (work / "studies" / "3D.yaml").write_bytes((REPO / "config" / "studies" / "3D.yaml").read_bytes())
    for i, name in enumerate(MODELS):  # a model folder as download_model sees it: hashed, not loaded
        folder = tmp_path / "models" / name
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}", encoding="utf-8")
        (folder / "model.safetensors").write_bytes(b"weights %d" % i)
    cfg = {
        "studies_dir": str(work / "studies"),
        "studies": ["3D"],
        "mirror_dir": None,
        "models": [{"name": n, "path": str(tmp_path / "models" / n)} for n in MODELS],
        "cache_dir": str(work / "hf"),
        "device": "cpu",
        "score_threads": 1,
        **extra,
    }
    (work / "local.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return work


def run(work: Path, *args) -> subprocess.CompletedProcess:
    """The workflow in ``work`` with its local.yaml, one core (tests/test_incremental.py's runner)."""
    return run_workflow(work, *args, cores=1)


def flip_last_bit_keeping_its_time(weights: Path) -> None:
    """One bit of the last weight flipped, the file's times kept (as `cp -p` or `rsync -a` leave
    a swapped file): same size, same time, other weights."""
    st = weights.stat()
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))


def jobs(output: str) -> list[tuple[str, str]]:
    """(rule, wildcards line) of every job a (dry) run lists."""
    return re.findall(r"^(?:local)?rule (\w+):\n(?:.*\n)*?(?:    wildcards: (.*)\n|\n)", output + "\n", re.M)


def test_model_lock_records_are_declared(tmp_path):
    work = setup_work(tmp_path)
    res = run(work, "resources/models.lock.tsv")
    assert res.returncode == 0, res.stdout[-4000:]
    assert job_counts(res.stdout) == {"download_model": 2, "models_lock": 1, "total": 3}
    for i, name in enumerate(MODELS):
        rec = pd.read_csv(work / "resources" / "models" / f"{name}.lock.tsv", sep="\t", dtype=str)
        assert rec["model"].tolist() == [name] and rec["revision"].tolist() == ["local"]
        assert rec["sha256"].iloc[0] == hashlib.sha256(b"weights %d" % i).hexdigest()
    gathered = pd.read_csv(work / "resources" / "models.lock.tsv", sep="\t", dtype=str)
    assert gathered["model"].tolist() == MODELS
    assert not list((work / "resources").rglob("*.lck"))  # nothing undeclared beside the records

    # every job that loads a model names its lock record as an input
    targets = [f"results/models/{n}.json" for n in MODELS] + [f"results/agreement/{n}.parquet" for n in MODELS]
    res = run(work, "-n", *targets, "results/scores/3D/tiny-a.parquet")
    assert res.returncode == 0, res.stdout[-4000:]
    for rule in ("model_card", "agreement", "score_paper"):
        blocks = re.findall(rf"^(?:local)?rule {rule}:\n    input: (.*)\n", res.stdout, re.M)
        assert blocks, (rule, res.stdout[-3000:])
        assert all(re.search(r"resources/models/tiny-[ab]\.lock\.tsv", b) for b in blocks), (rule, blocks)

    # a model's finished card; then its lock record goes: that model's download and card run
    # again (the record is a declared input), the other model's nothing
    for name in MODELS:
        card = work / "results" / "models" / f"{name}.json"
        card.parent.mkdir(parents=True, exist_ok=True)
        card.write_text("{}", encoding="utf-8")
    time.sleep(0.05)
    later = time.time() + 5
    for name in MODELS:
        os.utime(work / "results" / "models" / f"{name}.json", (later, later))
    # the records, as rule all lists them (Snakemake rebuilds a deleted file only when asked for it)
    cards = [f"results/models/{n}.json" for n in MODELS] + [f"resources/models/{n}.lock.tsv" for n in MODELS]
    res = run(work, "-n", *cards, "resources/models.lock.tsv", "--rerun-triggers", "mtime")
    assert res.returncode == 0 and "Nothing to be done" in res.stdout, res.stdout[-3000:]
    (work / "resources" / "models" / "tiny-a.lock.tsv").unlink()
    res = run(work, "-n", *cards, "resources/models.lock.tsv", "--rerun-triggers", "mtime")
    assert res.returncode == 0, res.stdout[-3000:]
    assert job_counts(res.stdout) == {"download_model": 1, "model_card": 1, "models_lock": 1, "total": 3}
    assert sorted(jobs(res.stdout)) == [
        ("download_model", "model=tiny-a"),
        ("model_card", "model=tiny-a"),
        ("models_lock", ""),
    ], res.stdout[-3000:]


def test_criteria_lock_records_are_declared_and_kept(tmp_path):
    work = setup_work(tmp_path, mirror_dir=str(REPO / "data" / "mirror"))
    res = run(work, "resources/criteria.lock.tsv", "resources/criteria/bls2021_occupations.parquet")
    assert res.returncode == 0, res.stdout[-4000:]
    counts = job_counts(res.stdout)
    assert counts["criteria_fetch"] == 3 and counts["criteria_lock"] == 1, counts
    records = sorted((work / "resources" / "criteria" / "raw").glob("*/*.lock.tsv"))
    assert [r.parent.name for r in records] == ["bls2021", "glove", "ssa"]
    gathered = pd.read_csv(work / "resources" / "criteria.lock.tsv", sep="\t", dtype=str)
    assert sorted(gathered["name"]) == ["bls2021", "glove", "ssa"]
    assert not list((work / "resources").rglob("*.lck"))

    # the table names its source's record as an input (so the record is part of the DAG)
    res = run(
        work,
        "-n",
        "resources/criteria/bls2021_occupations.parquet",
        "--forcerun",
        "resources/criteria/bls2021_occupations.parquet",
    )
    block = re.search(r"^(?:local)?rule criteria_bls2021_occupations:\n    input: (.*)\n", res.stdout, re.M)
    assert block and "raw/bls2021/" in block.group(1) and ".lock.tsv" in block.group(1), res.stdout[-3000:]

    # a refetch keeps the record (update()): the differing file is recorded, the old hash kept
    bls = next(r for r in records if r.parent.name == "bls2021")
    rec = pd.read_csv(bls, sep="\t", dtype=str, keep_default_na=False)
    real = rec.at[0, "sha256"]
    rec.at[0, "sha256"] = "0" * 64
    rec.to_csv(bls, sep="\t", index=False)
    raw = str(bls)[: -len(".lock.tsv")]
    res = run(work, "resources/criteria.lock.tsv", "--forcerun", os.path.relpath(raw, work))
    assert res.returncode == 0, res.stdout[-4000:]
    rec = pd.read_csv(bls, sep="\t", dtype=str, keep_default_na=False)
    assert rec.at[0, "sha256"] == real and rec.at[0, "previous_sha256"] == "0" * 64
    # (the CriterionChangedWarning itself: tests/test_criteria.py; these runs ignore warnings)


def test_jobs_that_load_a_model_check_it_against_its_lock_record(tmp_path):
    """The card and agreement jobs get the model's record from their input: a model whose weights
    changed after it was locked (file times kept, as `cp -p` leaves them) is refused."""
    from fmat.agreement import fixture_words
    from fmat.tiny import build_tiny_model

    work = setup_work(tmp_path)
    folder = tmp_path / "models" / "tiny-a"
    for f in folder.iterdir():
        f.unlink()
    build_tiny_model(folder, "bert-uncased", ["he", "she", *fixture_words()])
    targets = ["results/models/tiny-a.json", "results/agreement/tiny-a.parquet"]
    res = run(work, *targets)
    assert res.returncode == 0, res.stdout[-4000:]
    rec = pd.read_csv(work / "resources" / "models" / "tiny-a.lock.tsv", sep="\t", dtype=str)
    weights = folder / "model.safetensors"
    assert rec["sha256"].iloc[0] == hashlib.sha256(weights.read_bytes()).hexdigest()

    flip_last_bit_keeping_its_time(weights)
    res = run(work, *targets, "--forcerun", "model_card", "agreement")
    assert res.returncode != 0
    assert "not the ones locked" in res.stdout, res.stdout[-4000:]


def test_a_record_cut_to_its_header_stops_every_job_that_loads_the_model(tmp_path):
    """Issue 44: a lock record cut to its header line, then the weights swapped (same size, same
    file time): the jobs that load the model rerun (their input changed) and each refuses, naming
    the model, the record and the fix; the gathered lock file refuses too, instead of dropping
    the model. Never exit 0, never the swapped weights scored."""
    from fmat.agreement import fixture_words
    from fmat.tiny import build_tiny_model

    work = setup_work(tmp_path)
    folder = tmp_path / "models" / "tiny-a"
    for f in folder.iterdir():
        f.unlink()
    build_tiny_model(folder, "bert-uncased", ["he", "she", *fixture_words()])
    targets = ["results/models/tiny-a.json", "results/agreement/tiny-a.parquet"]
    res = run(work, *targets, "resources/models.lock.tsv")
    assert res.returncode == 0, res.stdout[-4000:]

    record = work / "resources" / "models" / "tiny-a.lock.tsv"
    record.write_text(record.read_text().splitlines()[0] + "\n")
    flip_last_bit_keeping_its_time(folder / "model.safetensors")

    for target in [*targets, "resources/models.lock.tsv"]:
        res = run(work, target)
        assert res.returncode != 0, (target, res.stdout[-3000:])
        assert "tiny-a.lock.tsv has no row" in res.stdout, (target, res.stdout[-3000:])
        assert "--forcerun resources/models/tiny-a.json" in res.stdout, (target, res.stdout[-3000:])
    assert record.read_text().count("\n") == 1  # nothing wrote a row behind the user's back
