"""The benchmarks are programs for users too (issue 55): bench_calibration.py, bench_null.py and
bench_demo.py check their arguments and files before any work, in the ``fmat`` command's style:
``<script>: error: <argument>: what is wrong`` and a ``fix:`` line, exit status 2, no traceback.
(Before, each case below ended in a traceback, some after minutes of work.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_calibration  # noqa: E402
import bench_demo  # noqa: E402
import bench_null  # noqa: E402


@pytest.fixture
def notes(tmp_path) -> Path:
    """A user's own text file, given where a runs file or a table goes."""
    path = tmp_path / "notes.txt"
    path.write_text("my notes\nsecond line\n", encoding="utf-8")
    return path


def refused(main, argv: list[str], capsys, where: str, says: str) -> None:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert f"error: {where}: " in err and says in err and "\n  fix: " in err, err
    assert "Traceback" not in err


CALIBRATION = [
    (["--studies", "9Z"], "--studies", "unknown study '9Z'"),
    (["--studies", "3D", "--worlds", "-1"], "--worlds", "must be at least 1; got -1"),
    (["--studies", "3D", "--models", "1"], "--models", "must be at least 2"),
    (["--studies", "3D", "--variants", "banana"], "--variants", "unknown variant 'banana'"),
    (["--studies", "3D", "--others", "0,1.5"], "--others", "is not a list of shares"),
    (["--studies", "3D", "--kinds", "nul"], "--kinds", "unknown kind of world"),
    (["--studies", "3D", "--jobs", "0"], "--jobs", "must be at least 1"),
    (["--studies", "3D", "--criteria-dir", "no-such-folder"], "--criteria-dir", "no such folder"),
    (["--table", "--runs", "{tmp}/missing.csv"], "--runs", "no such file"),
    (["--studies", "3D", "--runs", "{notes}"], "--runs", "is not a runs file of bench_calibration.py"),
    (["--table", "--runs", "{notes}"], "--runs", "is not a runs file of bench_calibration.py"),
    (["--studies", "3D", "--runs", "{tmp}/no/runs.csv"], "--runs", "no such folder"),
]


@pytest.mark.parametrize("argv, where, says", CALIBRATION, ids=[" ".join(c[0]) for c in CALIBRATION])
def test_bench_calibration_checks_its_arguments(argv, where, says, tmp_path, notes, capsys, monkeypatch):
    def no_simulation(args):
        raise AssertionError("simulated despite a bad argument")

    monkeypatch.setattr(bench_calibration, "simulate", no_simulation)
    argv = [a.format(tmp=tmp_path, notes=notes) for a in argv]
    refused(bench_calibration.main, argv, capsys, where, says)
    assert notes.read_text(encoding="utf-8") == "my notes\nsecond line\n"  # the user's file untouched


def test_bench_calibration_refuses_a_damaged_gzip_runs_file(tmp_path, capsys):
    runs = tmp_path / "runs.csv.gz"
    runs.write_bytes(b"\x1f\x8b\x08 not really gzip")
    refused(bench_calibration.main, ["--table", "--runs", str(runs)], capsys, "--runs", "cannot be read as a runs file")


NULL = [
    (["--seeds", "0"], "--seeds", "must be at least 1; got 0"),
    (["--first-seed", "-1"], "--first-seed", "must be at least 0"),
    (["--steps", "0"], "--steps", "must be at least 1"),
    (["--models", "bert-uncased"], "--models", "1 model(s)"),
    (["--models", "bert-uncased,banana"], "--models", "unknown tokenizer family 'banana'"),
    (["--study", "9Z"], "--study", "unknown study '9Z'"),
    (["--study", "3D", "--perfect-learners"], "--perfect-learners", "perfect learners are of N0 only"),
    (["--kind", "planted"], "--kind planted", "N0 plants nothing"),
    (["--perfect-learners", "--others", "1.5"], "--others", "outside [0, 1)"),
    (["--out", "{notes}"], "--out", "is not a table of bench_null.py"),
    (["--study", "3D", "--out", "{notes}"], "--out", "is not a runs file"),
    (["--out", "{tmp}/no/null.csv"], "--out", "no such folder"),
]


@pytest.mark.parametrize("argv, where, says", NULL, ids=[" ".join(c[0]) for c in NULL])
def test_bench_null_checks_its_arguments(argv, where, says, tmp_path, notes, capsys, monkeypatch):
    def no_work(args):
        raise AssertionError("ran despite a bad argument")

    monkeypatch.setattr(bench_null, "_main", no_work, raising=False)
    argv = [a.format(tmp=tmp_path, notes=notes) for a in argv]
    refused(bench_null.main, argv, capsys, where, says)
    assert notes.read_text(encoding="utf-8") == "my notes\nsecond line\n"


DEMO = [
    (["--old", "no-such-commit"], "--old", "'no-such-commit' is not a commit"),
    (["--new", "0000000"], "--new", "is not a commit"),
    (["--cores", "0"], "--cores", "is not a number of cores"),
    (["--training", "2"], "--training", "needs --threads-off"),
    (["--threads-off", "HEAD", "--training", "0"], "--training", "must be at least 1"),
    (["--threads-off", "nope"], "--threads-off", "is not a commit"),
]


@pytest.mark.parametrize("argv, where, says", DEMO, ids=[" ".join(c[0]) for c in DEMO])
def test_bench_demo_checks_its_arguments(argv, where, says, capsys, monkeypatch):
    def no_work(args):
        raise AssertionError("ran despite a bad argument")

    monkeypatch.setattr(bench_demo, "_main", no_work, raising=False)
    refused(bench_demo.main, argv, capsys, where, says)


@pytest.mark.parametrize(
    "script, argv",
    [
        ("bench_calibration.py", ["--variants", "banana"]),
        ("bench_null.py", ["--seeds", "0"]),
        ("bench_demo.py", ["--cores", "0"]),
    ],
)
def test_a_benchmark_run_as_a_program_exits_2_without_a_traceback(script, argv):
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *argv], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith(f"{script}: error: ") and "\n  fix: " in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and not res.stdout
