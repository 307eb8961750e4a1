"""A plain `snakemake --configfile FILE` (issue 55): Snakemake 9 reads FILE while it parses its
command line, before the Snakefile runs, so a missing file, a list or a tab gets Snakemake's own
message. The docs name the checked route (`make ... CONFIG=FILE`, or `python -m
fmat_replication.check_config` first); that check names each of these with the file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECK = "python -m fmat_replication.check_config config/config.yaml"


@pytest.mark.parametrize(
    "text, says",
    [(None, "there is no config file"), ("- 3A\n- 3B\n", "line 1: the config file is a list"), ("a:\n\tb: 1\n", "line 2: a tab")],
    ids=["missing", "list", "tab"],
)
def test_the_documented_check_names_what_snakemake_reports_first(tmp_path, text, says):
    path = tmp_path / "my.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "fmat_replication.check_config", "config/config.yaml", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert f"invalid configuration: {path}: " in res.stderr and says in res.stderr and "fix:" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


def test_the_docs_say_which_route_is_checked():
    workflow = " ".join((REPO / "docs" / "workflow.md").read_text(encoding="utf-8").split())
    assert "that is the checked route" in workflow and f"`{CHECK} FILE`" in workflow
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "the checked route" in readme and f"`{CHECK} FILE`" in readme
