"""The README's install blocks work as written on a fresh venv (issue 54).

A new venv's pip can be old (Python 3.11's ensurepip gives pip 23.2, which has no ``--group``):
the README's line ``pip install ... --group dev`` failed there ("no such option: --group"). The
blocks of "Installing the library" (marked not-run in tests/test_docs.py, because they fill a
``.venv`` from the package index) run here, in order, in a copy of the clone with a genuinely new
venv (``python3 -m venv``, no system site-packages; pip's cache is reused). Then ``fmat power``
runs from that venv. Slow tier: minutes (torch and the dependencies are installed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def install_blocks() -> list[str]:
    """The bash blocks of README.md's "Installing the library" section, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Installing the library", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


def test_the_install_section_has_the_blocks_this_test_runs():
    blocks = install_blocks()
    assert len(blocks) == 2 and "python3 -m venv .venv" in blocks[0] and "--group dev" in blocks[1]
    # pip is upgraded before any line that needs a new pip
    lines = [ln.split("#")[0] for b in blocks for ln in b.splitlines()]  # the commands, without their comments
    upgrade = next(i for i, ln in enumerate(lines) if "install --upgrade pip" in ln)
    assert upgrade < next(i for i, ln in enumerate(lines) if "--group" in ln)
    assert upgrade == 1  # right after the venv is made


def _clone(dest: Path) -> None:
    """The clone's files (tracked and untracked, not ignored), as a fresh clone would have them."""
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, names):
        src = REPO / os.fsdecode(name)
        if src.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))


@pytest.mark.slow
def test_the_readme_install_blocks_run_on_a_fresh_venv(tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    _clone(clone)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    python3 = shutil.which("python3", path=env["PATH"]) or sys.executable
    for k, block in enumerate(install_blocks()):
        script = block.replace("python3 -m venv", f"{python3} -m venv")
        res = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=1800,
        )
        assert res.returncode == 0, f"README install block {k + 1} exited {res.returncode}:\n{res.stdout[-4000:]}"
        if k == 0:  # the library's install: fmat power needs nothing more (the replication is not installed yet)
            world = clone / "config" / "world.yaml"
            study = clone / "config" / "studies" / "3A.yaml"
            run = subprocess.run(
                [str(clone / ".venv" / "bin" / "fmat"), "power", str(study), "--world", str(world), "-o", str(tmp_path / "p")]
                + ["--worlds", "1", "--models", "3", "--items", "9"],
                cwd=clone,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    check = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "-c", "import fmat, fmat_replication, pytest, hypothesis; print('ok')"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.stdout.strip() == "ok", check.stderr
