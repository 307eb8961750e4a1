"""Rendering with a real Quarto (slow tier; skipped, saying why, without `quarto` on PATH;
CI has Quarto and sets FMAT_REQUIRE_QUARTO=1, so there they run). The demo's pages through
the workflow: tests/test_workflow.py::test_demo_pages_with_quarto."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser_pages import check_pages
from conftest import needs_quarto
from test_report import GOOD, OPTIONS, ctrl_c_during_a_cell

from fmat.cli import main
from fmat.errors import InputError
from fmat.report import render

pytestmark = [pytest.mark.slow, needs_quarto]


def test_quarto_is_the_tested_release(quarto):
    out = subprocess.run([quarto, "--version"], capture_output=True, text=True, timeout=120).stdout.strip()
    assert re.fullmatch(r"1\.\d+\.\d+", out), out


def test_the_cell_options_mean_the_same_to_quarto_and_offline(quarto, tmp_path):
    """OPTIONS (tests/test_report.py) with both renderers: the same outputs shown and hidden,
    the same sections and table of contents, nothing loaded from outside the page."""
    src = tmp_path / "options.py"
    src.write_text(OPTIONS)
    pages = {}
    for engine in ("quarto", "offline"):
        pages[engine] = tmp_path / f"{engine}.html"
        assert render(src, pages[engine], {"word": "PARAM-GIVEN"}, engine=engine, cwd=tmp_path) == engine
    for engine, page in pages.items():
        html = page.read_text()
        assert re.search(r"<p id=[\"']param[\"']>PARAM-GIVEN</p>", html) and "PARAM-DEFAULT" not in html, engine
        assert "INCLUDE-FALSE-OUTPUT" not in html and "OUTPUT-FALSE-OUTPUT" not in html, engine
        assert "ECHO-TRUE-OUTPUT" in html and html.count("-TRUE-OUTPUT") == 2, engine
        assert "WARNING-HIDDEN" not in html and "WARNING-SHOWN" in html, engine
    q, o = check_pages([pages["quarto"], pages["offline"]], expect=["#param", "nav#TOC"])
    assert q.ok and o.ok, (q, o)
    assert q.outline == o.outline
    assert q.outline["toc"] == ["First section", "Second section"]


def test_a_failing_cell_is_quartos_own_error_not_unexpected(quarto, tmp_path, capsys):
    src = tmp_path / "r.py"
    src.write_text(GOOD.replace('print(f"STUDY-IS-{study}")', 'raise ValueError("broken on purpose")'))
    out = tmp_path / "r.html"
    assert main(["report", str(src), "-o", str(out), "--engine", "quarto"]) == 2
    err = capsys.readouterr().err
    assert "Quarto could not render r.py (exit status 1)" in err
    assert "An error occurred while executing" in err and "ValueError: broken on purpose" in err
    log = tmp_path / "r.html.quarto.log"
    assert f"Quarto's full output: {log}" in err and "broken on purpose" in log.read_text()
    assert "unexpected error" not in err and not out.exists()


def test_quarto_gets_this_python_even_without_jupyter_on_path(quarto, tmp_path):
    """A bare PATH (no venv, no python3 with Jupyter on it): QUARTO_PYTHON and the kernel spec
    still lead Quarto to this Python (the issue: "No module named 'nbformat'")."""
    src = tmp_path / "r.py"
    src.write_text(GOOD)
    out = tmp_path / "r.html"
    env = {"PATH": f"{Path(quarto).parent}:/usr/bin:/bin", "HOME": str(Path.home())}
    res = subprocess.run([sys.executable, "-m", "fmat.cli", "report", str(src), "-o", str(out), "-P", "study:3C"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "with quarto" in res.stdout and "STUDY-IS-3C" in out.read_text()


def test_ctrl_c_stops_quarto_during_a_cell(quarto, tmp_path):
    ctrl_c_during_a_cell(tmp_path, "quarto")


def test_invalid_source_stops_before_quarto_runs(quarto, tmp_path):
    """The issue's source (metadata in the percent header) is refused with the fix, before Quarto
    fails on it."""
    src = tmp_path / "old.py"
    src.write_text(GOOD.replace("# %%\n#| tags: [parameters]\n", '# %% tags=["parameters"]\n'))
    with pytest.raises(InputError, match=r"#\| tags: \[parameters\]"):
        render(src, tmp_path / "old.html", engine="quarto", cwd=tmp_path)
    assert not (tmp_path / "old.html").exists()
