"""The single-page Snakemake lines of docs/reports.md, dry-run as written (with -n added): the
target reaches Snakemake (it is not taken for a second config file by --configfile) and asks
for that one page and what it needs, not the whole workflow."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def documented_lines() -> list[str]:
    text = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(snakemake --profile profiles/default results/reports/2A\.html.*?)```", text, re.S).group(1)
    return [ln.split("#")[0].strip() for ln in block.splitlines() if ln.strip()]


@pytest.mark.parametrize("line", documented_lines())
def test_a_documented_single_page_command_asks_for_that_page(line):
    args = shlex.split(line)
    assert args[0] == "snakemake"
    res = subprocess.run([SNAKEMAKE, *args[1:], "-n"], cwd=REPO, capture_output=True, text=True, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:", 1)[-1], re.M)) if "Job stats:" in out else {}
    # a finished run: nothing to do (or only the forced page); otherwise the page and its inputs
    assert "all" not in jobs and "report_index" not in jobs, jobs
    assert jobs.get("report_study") in (None, "1"), jobs
    assert "report_study" in jobs or "Nothing to be done" in out, out[-2000:]
