"""Issue 35: nothing is left in the temporary folder by any command, whether it ends normally,
on an error, on Ctrl-C (SIGINT) or on SIGTERM.

A report page rendered with Quarto left the kernel's connection file (mode 600, holding the dead
kernel's key) in /tmp after Ctrl-C. The workflow's pages now go through Quarto's markdown engine
(no kernel), and Quarto removes its own temporary folder when it gets SIGINT or SIGTERM (seen with
Quarto 1.7.34: tests/test_quarto.py stops a real render); the render's own temporary folder (the
page's markdown) goes however the render ends. Here a stand-in quarto that, as Quarto does,
writes into $TMPDIR and removes it on SIGINT/SIGTERM. Each command here runs with its own empty
TMPDIR and HOME (Jupyter's runtime folder is under HOME), listed before and after.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_scoring import make_query, tiny_models

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


def _env(tmp_path: Path) -> dict:
    for name in ("T", "H"):
        (tmp_path / name).mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(
        TMPDIR=str(tmp_path / "T"),
        HOME=str(tmp_path / "H"),
        PYTHONWARNINGS="ignore",
        PYTHONPATH=os.pathsep.join([str(REPO / "tests"), str(REPO)]),
    )  # the tests, this checkout
    return env


def _left(tmp_path: Path) -> list[str]:
    """What is in the temporary folder, and Jupyter's runtime folder (connection files), now."""
    runtime = tmp_path / "H" / ".local" / "share" / "jupyter" / "runtime"
    return sorted(
        str(p.relative_to(tmp_path)) for p in [*(tmp_path / "T").rglob("*"), *(runtime.rglob("*") if runtime.is_dir() else [])]
    )


def _fmat(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "fmat.cli", *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("ok, status", [(True, 0), (False, 1)])
def test_a_page_without_quarto_leaves_nothing_when_it_ends(tmp_path, ok, status):
    """A page written without Quarto (a small Page; the page functions: test_reports_content.py), or
    one whose input is missing."""
    code = (
        "import fmat_replication.pages.render as r; from test_report import small_page; _b = r.build_page; "
        f"r.build_page = lambda kind, inputs: small_page() if {ok} else _b(kind, inputs); "
        "r.render_page('study', 'r.html', {'study': '2A', 'inputs': {'study_file': 'none.yaml'}}, engine='offline')"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600
    )
    assert res.returncode == status, res.stderr[-3000:]
    assert ok or "the study page needs drawn, figures, oov, paper" in res.stderr
    assert (tmp_path / "r.html").exists() == ok
    assert _left(tmp_path) == []


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, 128 + signal.SIGTERM)])
def test_a_quarto_render_leaves_nothing_when_it_is_stopped(tmp_path, sig, status):
    """Stopped while Quarto runs (it wrote into its TMPDIR), as Ctrl-C stops the terminal's
    foreground process group (Quarto gets SIGINT from the terminal), or as `kill` or a job killer
    sends SIGTERM to the render alone (it passes SIGTERM on to Quarto): Quarto ends and removes
    its own files, the render's folder goes, no page is written."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "quarto"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = "--version" ]; then echo 1.7.34; exit 0; fi
mkdir "$TMPDIR/quarto-session-x"
trap 'kill $!; rm -r "$TMPDIR/quarto-session-x"; exit 1' INT TERM
echo "$$" > {tmp_path}/quarto-started
sleep 300 &
wait
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = _env(tmp_path)
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
    # Ctrl-C as a terminal delivers it: the default handler, whatever this test process inherited
    # (CI saw both SIGINT cases run out their 120 s in the full suite, SIGINT ignored in the child)
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "import fmat_replication.pages.render as r; from test_report import small_page; "
        "r.build_page = lambda kind, inputs: small_page(); r.render_page('study', 'r.html', {'study': '2A'})"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    started = tmp_path / "quarto-started"
    try:
        while not (started.exists() and started.read_text().strip()):
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.1)
        quarto = int(started.read_text())
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == status, out[-3000:]
    assert not (tmp_path / "r.html").exists()
    assert _left(tmp_path) == []
    for _ in range(50):
        if not Path(f"/proc/{quarto}").exists() or "\nState:\tZ" in Path(f"/proc/{quarto}/status").read_text():
            break
        time.sleep(0.2)
    assert not Path(f"/proc/{quarto}").exists() or "\nState:\tZ" in Path(f"/proc/{quarto}/status").read_text()


def test_other_commands_leave_nothing(tmp_path, tiny):
    from fmat.design import write_query_table

    model = shutil.copytree(tiny["bert-uncased"], tmp_path / "m")
    write_query_table(make_query("The [MASK] is here.", MASK={"M": ["man"], "F": ["woman"]}), tmp_path / "q.csv")
    for args, status in (
        (["query", "The [MASK] works.", "--mask", "M=man", "--mask", "F=woman", "-o", "q2.csv"], 0),
        (["run", "q.csv", "-m", str(model), "-o", "s.parquet", "--no-progress"], 0),
        (["summary", "s.parquet", "-o", "lpr.csv"], 0),
        (["run", "q.csv", "-m", "no-such-model", "-o", "x.parquet", "--no-progress"], 2),
        (["check", "The [MASK] is here.", "-m", str(model)], 0),
    ):
        res = _fmat(tmp_path, *args)
        assert res.returncode == status, (args, res.stderr[-3000:])
        assert _left(tmp_path) == [], args
