"""benchmarks/gpu_run.sh (issue 56's one device call) and its helpers: the pure functions fast, the
whole script end to end in its CPU rehearsal (GPU_RUN_DEVICE=cpu GPU_RUN_TINY=1) in the slow tier."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_paper
import bench_scoring
import gpu_run

ROOT = Path(__file__).resolve().parents[1]


def test_best_sweep_takes_the_smallest_value_within_the_noise_of_the_fastest():
    rows = [
        {"max_tokens": 2048, "sps": 900.0},
        {"max_tokens": 4096, "sps": 990.0},
        {"max_tokens": 8192, "sps": 1000.0},
        {"max_tokens": 16384, "sps": 1001.0},
    ]
    assert bench_scoring.best_sweep(rows)["max_tokens"] == 4096  # 990 is within 3% of 1001
    assert bench_scoring.best_sweep(rows, within=0.0)["max_tokens"] == 16384
    with pytest.raises(ValueError):
        bench_scoring.best_sweep([])


def test_auto_batch_advice_names_the_new_setting_and_a_cap_that_does_not_bind():
    assert [bench_scoring.next_pow2(x) for x in (0, 1, 2, 3, 512, 513)] == [1, 1, 2, 4, 512, 1024]
    best = {"max_tokens": 16384, "sps": 12345.0, "most_sentences": 1638}
    line = bench_scoring.auto_batch_advice("cuda", best, (8192, 512))
    assert line.startswith("AUTO_BATCH['cuda'] is (8192, 512): set it to (16384, 2048)")
    same = bench_scoring.auto_batch_advice("cuda", {"max_tokens": 8192, "sps": 1.0, "most_sentences": 300}, (8192, 512))
    assert "keep it" in same


def test_gflops_counts_two_flops_per_multiply_add():
    assert bench_scoring.gflops(1000, 1000, 1000, 1.0) == 2.0
    assert bench_scoring.gflops(8192, 8192, 8192, 0.5) == pytest.approx(2 * 8192**3 / 0.5 / 1e9)


def test_tf32_matmul_sets_and_restores_the_setting():
    import torch

    mm = torch.backends.cuda.matmul
    before = mm.fp32_precision
    with bench_scoring.tf32_matmul(True):
        assert mm.fp32_precision == "tf32"
    assert mm.fp32_precision == before
    with bench_scoring.tf32_matmul(False):
        assert mm.fp32_precision == before


def test_budget_step_full_then_fallback_then_stop():
    step = bench_paper.budget_step
    assert step(1000.0, [50.0], [], None) == "full"  # no budget
    assert step(10.0, [], [], 100.0) == "full"  # nothing measured yet
    assert step(30.0, [50.0], [], 100.0) == "full"  # 30 + 1.2 x 50 = 90 fits
    assert step(45.0, [50.0], [], 100.0) == "fallback"  # 45 + 60 does not
    assert step(60.0, [50.0], [10.0], 100.0) == "fallback"  # once falling back, stays there
    assert step(95.0, [50.0], [10.0], 100.0) == "stop"
    assert step(101.0, [], [], 100.0) == "stop"


def test_breakdown_row_extrapolates_and_keeps_the_rest_as_other():
    samples = {"1A": (None, 100, 10), "2A": (None, 50, 50)}
    bd = {
        "load": 9.0,
        "check": 0.5,
        "tokenize": {"1A": 1.0, "2A": 2.0},
        "host": {"1A": 0.1, "2A": 0.0},
        "copy": {"1A": 0.2, "2A": 0.0},
        "forward": {"1A": 0.3, "2A": 1.0},
        "outputs": {"1A": 0.1, "2A": 0.5},
    }
    row = bench_paper.breakdown_row(bd, samples, {"load": 2.0, "score": 30.0})
    assert row["load"] == 2.0 and row["tokenize"] == pytest.approx(12.0) and row["forward"] == pytest.approx(4.0)
    assert row["other"] == pytest.approx(30.0 - (0.5 + 12.0 + 1.0 + 2.0 + 4.0 + 1.5))
    assert bench_paper.breakdown_line(row).endswith("largest: tokenizing")


def test_parse_steps_and_lock_versions():
    got = gpu_run.parse_steps("check=0:1 paper=124:200 scoring=1:5 sweep=skipped")
    assert got == [
        ("check", "passed", 1.0),
        ("paper", "timed out (exit 124)", 200.0),
        ("scoring", "failed (exit 1)", 5.0),
        ("sweep", "skipped", None),
    ]
    lock = gpu_run.lock_versions()
    assert lock["transformers"] and lock["torch"] and lock["jsonschema-rs"] and lock["rpds-py"]
    # the wheels gpu_run.sh --fetch-wheels downloads are the tested versions
    script = (ROOT / "benchmarks/gpu_run.sh").read_text()
    for dist in ("jsonschema", "jsonschema-rs", "jsonschema-specifications", "referencing", "rpds-py"):
        assert f" {dist}=={lock[dist]}" in script, dist


def test_check_names_a_missing_package_and_the_wheels_to_carry(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(gpu_run.NEEDED, "no_such_module_xyz", "no-such-dist")
    t = time.perf_counter()
    assert gpu_run.check(tmp_path) == 2
    assert time.perf_counter() - t < 2
    err = capsys.readouterr().err
    assert "missing: no-such-dist" in err and "pip download --no-deps --only-binary=:all: --python-version 3.12" in err
    assert "no-such-dist==VERSION" in err and "carry ['.whl']" in err
    assert json.loads((tmp_path / "env.json").read_text())["missing"] == ["no-such-dist"]


def test_gpu_run_sh_refuses_a_bad_setting(tmp_path):
    env = {**os.environ, "OUT": str(tmp_path), "GPU_RUN_DEVICE": "gpu"}
    r = subprocess.run(["bash", str(ROOT / "benchmarks/gpu_run.sh")], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "GPU_RUN_DEVICE=gpu" in r.stderr and "fix: use cuda" in r.stderr
    r = subprocess.run(["bash", str(ROOT / "benchmarks/gpu_run.sh"), "--go"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "unknown argument --go" in r.stderr


@pytest.mark.slow
def test_gpu_run_sh_cpu_rehearsal_end_to_end(tmp_path):
    """The whole script as the device call runs it, on the CPU with tiny sizes: every step passes,
    at most 8 files come back, the summary holds every headline figure and they parse."""
    env = {
        **os.environ,
        "OUT": str(tmp_path),
        "GPU_RUN_DEVICE": "cpu",
        "GPU_RUN_TINY": "1",
        "GPU_RUN_THREADS": "1",
        "GPU_RUN_WHEELS": str(tmp_path / "no-wheels"),
        "PYTHON": sys.executable,
        "OMP_NUM_THREADS": "1",
    }
    t = time.perf_counter()
    r = subprocess.run(["bash", str(ROOT / "benchmarks/gpu_run.sh")], env=env, capture_output=True, text=True, timeout=400)
    took = time.perf_counter() - t
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == sorted(
        ["env.json", "log.txt", "paper.json", "scoring.json", "summary.md", "sweep-bert.json", "sweep-roberta.json"]
    )
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", f) for f in files) and len(files) <= 8
    summary = (tmp_path / "summary.md").read_text()
    last = summary.strip().splitlines()[-1]
    assert last.startswith("steps passed: 6 of 6 (check passed, paper passed, scoring passed, sweep-bert passed"), last
    assert "TINY rehearsal" in summary and "GPU_RUN_TINY=1 GPU_RUN_DEVICE=cpu bash benchmarks/gpu_run.sh" in summary

    paper = json.loads((tmp_path / "paper.json").read_text())
    assert paper["status"] == "complete" and [r["model"] for r in paper["rows"]] == ["albert-base-v2", "bert-base-uncased"]
    tot = paper["total"]
    assert tot["wall"] > 0 and tot["peak_mem"] > 0 and set(tot["breakdown"]) == set(bench_paper.PHASES)
    assert re.search(r"\*\*total [\d.]+ s\*\* wall, loads included, 2 of 12 models", summary)
    assert "where the time goes: load" in summary and "largest: " in summary

    scoring = json.loads((tmp_path / "scoring.json").read_text())
    assert scoring["cpu_agreement"] <= 1e-5 and scoring["max_dlogp_fmat_way"] <= 1e-5
    assert scoring["sps_fmat"] > 0 and 0 < scoring["share_fp32"] and scoring["peak_tf32"] > 0
    assert set(scoring["lowp"]) == {"bfloat16", "float16", "tf32"}
    assert scoring["lowp"]["tf32"]["lpr_max"] == 0.0  # a CPU has no TF32: the same products
    agree = re.search(r"max \|Δ log p\| against the CPU \(one sentence a pass\): \*\*([\d.e+-]+)\*\*", summary)
    assert agree and float(agree.group(1)) <= 1e-5
    assert re.search(r"\| bfloat16 \| [\d.]+x \| [\d.e+-]+ \|", summary)
    assert "TF32 rule: max |Δ LPR| 0.0e+00 vs 1e-04: **may become the default**" in summary

    for arch in ("bert", "roberta"):
        sw = json.loads((tmp_path / f"sweep-{arch}.json").read_text())
        assert [s["max_tokens"] for s in sw["sweep"]] == [256, 512, 1024]
        assert sw["sweep_best"]["max_tokens"] in (256, 512, 1024)
        assert sw["auto_batch_advice"].startswith("AUTO_BATCH['cpu'] is (1024, 256)")
        assert sw["auto_batch_advice"] in summary
    print(f"gpu_run.sh CPU rehearsal: {took:.0f} s")
