"""Issue 35: nothing is left in the temporary folder by any command, whether it ends normally,
on an error, on Ctrl-C (SIGINT) or on SIGTERM.

`fmat report` left the kernel's connection file (mode 600, holding the dead kernel's key) in
/tmp after Ctrl-C: jupyter_client wrote it with tempfile.mkstemp(), outside the render's private
folder. Each command here runs with its own empty TMPDIR and HOME (Jupyter's runtime folder is
under HOME), listed before and after.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from test_scoring import make_query, tiny_models

REPORT = textwrap.dedent('''\
    # %% [markdown]
    # ---
    # title: "A report"
    # format:
    #   html:
    #     embed-resources: true
    # ---

    # %%
    #| tags: [parameters]
    mode = "ok"

    # %%
    import pathlib, time
    pathlib.Path("cell-started").write_text("yes")
    if mode == "fail":
        raise RuntimeError("boom")
    if mode == "slow":
        time.sleep(120)
    print("done")
    ''')


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


def _env(tmp_path: Path) -> dict:
    for name in ("T", "H"):
        (tmp_path / name).mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(TMPDIR=str(tmp_path / "T"), HOME=str(tmp_path / "H"), PYTHONWARNINGS="ignore")
    return env


def _left(tmp_path: Path) -> list[str]:
    """What is in the temporary folder, and Jupyter's runtime folder (connection files), now."""
    runtime = tmp_path / "H" / ".local" / "share" / "jupyter" / "runtime"
    return sorted(str(p.relative_to(tmp_path)) for p in [*(tmp_path / "T").rglob("*"),
                                                         *(runtime.rglob("*") if runtime.is_dir() else [])])


def _fmat(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "fmat.cli", *args], cwd=tmp_path, env=_env(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


@pytest.mark.parametrize("mode, status", [("ok", 0), ("fail", 2)])
def test_fmat_report_leaves_nothing_when_it_ends(tmp_path, mode, status):
    (tmp_path / "r.py").write_text(REPORT, encoding="utf-8")
    res = _fmat(tmp_path, "report", "r.py", "-o", "r.html", "-P", f"mode:{mode}", "--engine", "offline")
    assert res.returncode == status, res.stderr[-3000:]
    assert (tmp_path / "r.html").exists() == (mode == "ok")
    assert _left(tmp_path) == []


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 128 + signal.SIGTERM)])
def test_fmat_report_leaves_nothing_when_it_is_stopped(tmp_path, sig, status):
    """Stopped while a cell runs (the kernel is up: its cell wrote cell-started), as Ctrl-C stops
    the terminal's foreground process group, or as a job killer sends SIGTERM."""
    (tmp_path / "r.py").write_text(REPORT, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "fmat.cli", "report", "r.py", "-o", "r.html", "-P", "mode:slow",
                             "--engine", "offline"], cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        while not (tmp_path / "cell-started").exists():   # the kernel runs the slow cell
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.1)
        os.killpg(proc.pid, sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == status, out[-3000:]
    assert not (tmp_path / "r.html").exists()
    assert _left(tmp_path) == []


def test_other_commands_leave_nothing(tmp_path, tiny):
    from fmat.design import write_query_table

    model = shutil.copytree(tiny["bert-uncased"], tmp_path / "m")
    write_query_table(make_query("The [MASK] is here.", MASK={"M": ["man"], "F": ["woman"]}), tmp_path / "q.csv")
    for args, status in ((["query", "The [MASK] works.", "--mask", "M=man", "--mask", "F=woman", "-o", "q2.csv"], 0),
                         (["run", "q.csv", "-m", str(model), "-o", "s.parquet", "--no-progress"], 0),
                         (["summary", "s.parquet", "-o", "lpr.csv"], 0),
                         (["run", "q.csv", "-m", "no-such-model", "-o", "x.parquet", "--no-progress"], 2),
                         (["check", "The [MASK] is here.", "-m", str(model)], 0)):
        res = _fmat(tmp_path, *args)
        assert res.returncode == status, (args, res.stderr[-3000:])
        assert _left(tmp_path) == [], args
