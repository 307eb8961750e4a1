"""Adding a study costs only that study (issue 19), on local model folders (not the demo rule).

Two tiny models saved as local folders (``{name, path}`` in the config), two small studies
(3D, 3A: the paper's score group) run to completion; then study X1 (a group of its own) is added.
Snakemake's own dry run must list only X1's jobs (its report page included) and the
overview-level ``compare``; the run
must leave every output of 3D and 3A with its bytes and file time; editing X1's file must again
list only X1's jobs; X1's tables must equal those of a run made from scratch with all three studies.
About 2-3 minutes on 2 CPU cores.
"""

from __future__ import annotations

import os
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
FIRST = ["3D", "3A"]  # in config/config.yaml's score group `paper`
NEW = "X1"  # in no group: scored by jobs of its own (rule score_study_X1)
FAMILIES = {"tiny-bert-uncased": "bert-uncased", "tiny-roberta": "roberta"}


def targets(studies) -> list[str]:
    per_study = [f"results/{stage}/{s}.parquet" for s in studies for stage in ("lpr", "reliability")]
    return (
        per_study
        + [f"results/analysis/{s}/stats.parquet" for s in studies]
        + ["results/replication.parquet"]
        + [f"results/reports/{s}.html" for s in studies]
    )  # each study's page (not the overview)


def write_config(work: Path, studies, models: Path) -> None:
    """The working folder's config (local.yaml) and its own copies of the study files."""
    folder = work / "studies"
    folder.mkdir(exist_ok=True)
    for sid in [*FIRST, NEW]:
        if not (folder / f"{sid}.yaml").exists():
            (folder / f"{sid}.yaml").write_bytes((REPO / "config" / "studies" / f"{sid}.yaml").read_bytes())
    cfg = {
        "studies_dir": str(folder),
        "studies": list(studies),
        "models": [{"name": name, "path": str(models / name)} for name in FAMILIES],
        "mirror_dir": None,  # these studies read no criterion table
        "cache_dir": str(work / "hf"),
        "device": "cpu",
        "score_threads": 1,
    }
    (work / "local.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")


def run(work: Path, *args, timeout: int = 600, cores: int = 2) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--configfile",
        str(REPO / "config" / "config.yaml"),
        "local.yaml",
        "--cores",
        str(cores),
        *args,
    ]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def local_models(tmp_path_factory) -> Path:
    """Tiny models of two tokenizer families that know the three studies' words, saved as folders."""
    from fmat.agreement import fixture_words
    from fmat.tiny import build_tiny_model
    from fmat_replication.demo import demo_words
    from fmat_replication.queries import query_table

    out = tmp_path_factory.mktemp("models")
    words = demo_words([query_table(REPO / "config" / "studies" / f"{s}.yaml") for s in [*FIRST, NEW]], extra=fixture_words())
    for name, family in FAMILIES.items():
        build_tiny_model(out / name, family, words)
    return out


def outputs(work: Path, studies) -> dict[Path, tuple[int, bytes]]:
    """Every file the run wrote for ``studies`` (queries, scores, LPR, reliability, analysis), and
    the models' markers: {path: (mtime_ns, bytes)}."""
    files = [
        p
        for s in studies
        for p in [
            *(work / "results").glob(f"*/{s}.parquet"),
            *(work / "results").glob(f"*/{s}_details.parquet"),
            *(work / "results").glob(f"*/{s}.html"),
            *(work / "results" / "scores" / s).glob("*"),
            *(work / "results" / "analysis" / s).rglob("*"),
        ]
    ]
    files += list((work / "resources" / "models").glob("*.json"))
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in files if p.is_file()}


def test_adding_a_study_reruns_only_its_jobs(local_models, tmp_path):
    t0 = time.perf_counter()
    work = tmp_path / "grown"
    work.mkdir()
    write_config(work, FIRST, local_models)
    res = run(work, *targets(FIRST))
    assert res.returncode == 0, res.stdout[-6000:]
    n = job_counts(res.stdout)
    assert n["download_model"] == 2 and n["score_paper"] == 2, n  # one scoring job per model
    lock = pd.concat([pd.read_csv(work / "resources" / "models" / f"{m}.lock.tsv", sep="\t") for m in FAMILIES])
    assert list(lock["model"]) == sorted(FAMILIES) and set(lock["revision"]) == {"local"}
    assert all(len(h) == 64 for h in lock["sha256"])  # the weights' sha256
    before = outputs(work, FIRST)
    assert len(before) >= 2 * 10, sorted(map(str, before))
    assert all((work / "results" / "reports" / f"{s}.html").exists() for s in FIRST)

    # add the study: Snakemake's own dry run lists its jobs and compare, nothing else
    write_config(work, [*FIRST, NEW], local_models)
    res = run(work, "-n", *targets([*FIRST, NEW]))
    assert res.returncode == 0, res.stdout[-6000:]
    expected = {
        "queries": 1,
        f"score_study_{NEW}": 2,
        "lpr": 1,
        "reliability": 1,
        "analysis": 1,
        "oov_study": 1,
        "compare_study": 1,
        "report_figures": 1,
        "report_study": 1,
        "compare": 1,
    }
    assert job_counts(res.stdout) == {**expected, "total": sum(expected.values())}, res.stdout[-4000:]
    assert f"wildcards: study={NEW}" in res.stdout
    assert not any(f"wildcards: study={s}" in res.stdout for s in FIRST)

    t1 = time.perf_counter()
    res = run(work, *targets([*FIRST, NEW]))
    assert res.returncode == 0, res.stdout[-6000:]
    print(f"the addition's run: {time.perf_counter() - t1:.1f} s")
    assert job_counts(res.stdout) == {**expected, "total": sum(expected.values())}
    for path, (mtime, data) in before.items():  # untouched: bytes and file time
        assert path.stat().st_mtime_ns == mtime and path.read_bytes() == data, path
    res = run(work, "-n", *targets([*FIRST, NEW]))
    assert res.returncode == 0 and "Nothing to be done" in res.stdout, res.stdout[-3000:]
    # editing the new study's file: its own jobs again, and the overview; nothing of 3D or 3A
    with open(work / "studies" / f"{NEW}.yaml", "a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    res = run(work, "-n", *targets([*FIRST, NEW]))
    assert res.returncode == 0, res.stdout[-6000:]
    assert job_counts(res.stdout) == {**expected, "total": sum(expected.values())}, res.stdout[-4000:]
    assert not any(f"wildcards: study={s}" in res.stdout for s in FIRST)

    # the new study's tables equal a run made from scratch with all three studies
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    write_config(scratch, [*FIRST, NEW], local_models)
    t1 = time.perf_counter()
    res = run(scratch, *targets([*FIRST, NEW]))
    assert res.returncode == 0, res.stdout[-6000:]
    print(f"from scratch with the three studies: {time.perf_counter() - t1:.1f} s")
    new_files = [p.relative_to(work) for p in outputs(work, [NEW]) if p.suffix == ".parquet"]
    assert len(new_files) >= 2 + 4, new_files  # 2 score tables, LPR, reliability x2, stats
    for rel in new_files + [Path("results/replication.parquet")]:
        pd.testing.assert_frame_equal(pd.read_parquet(work / rel), pd.read_parquet(scratch / rel), obj=str(rel))
    print(f"incremental test: {time.perf_counter() - t0:.0f} s")
    # a study page reads its own study's rows of the replication table: the same rows, in the
    # same order, as the whole table (rule compare_study vs rule compare)
    whole = pd.read_parquet(work / "results" / "replication.parquet")
    for sid in [*FIRST, NEW]:
        own = pd.read_parquet(work / "results" / "replication" / f"{sid}.parquet")
        rows = whole[whole["study"] == sid].reset_index(drop=True)
        if sid == NEW:  # X1 is not a paper study: no paper rows
            assert len(own) == len(rows) == 0, sid
        else:
            assert len(own) > 0, sid
            pd.testing.assert_frame_equal(own, rows, obj=sid)
