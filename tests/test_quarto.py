"""Rendering with a real Quarto (slow tier; skipped, saying why, without `quarto` on PATH;
CI has Quarto and sets FMAT_REQUIRE_QUARTO=1, so there they run). The demo's pages through
the workflow: tests/test_workflow.py::test_demo_pages_with_quarto.

The cheap check that the two renderers give the same page: a study page and the overview of the
small fixture of tests/test_reports_content.py, written with Quarto (reports/*.qmd) and without
it (the Jinja2 template), opened in Chromium, their outlines compared.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import needs_quarto
from test_reports_content import MODELS, STUDIES, _common, _index, _render, _study, results_dir  # noqa: F401

from fmat.errors import RenderError
from fmat_replication.pages.render import render_page, render_quarto

pytestmark = [pytest.mark.slow, needs_quarto]

REPO = Path(__file__).resolve().parents[1]

#: a document's front matter (what the rule's render takes from reports/*.qmd)
DOC = textwrap.dedent("""\
    ---
    title: "A page"
    format:
      html:
        embed-resources: true
    jupyter: python3
    execute:
      echo: false
    ---

    ```{python}
    print("this cell is the by-hand document's, not run by the rule's render")
    ```
    """)

#: a page's markdown (what Page.markdown writes): a heading and a raw HTML block
BODY = "## Results {#results}\n\n```{=html}\n<p class='probe'>r = <b>0.74</b>, x &amp; $(touch bad)</p>\n```\n"

#: the environment of a render in a subprocess: this checkout's code
CHECKOUT = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def test_quarto_is_the_tested_release(quarto):
    out = subprocess.run([quarto, "--version"], capture_output=True, text=True, timeout=120).stdout.strip()
    assert re.fullmatch(r"1\.\d+\.\d+", out), out


def test_a_page_with_and_without_quarto_has_the_same_outline(quarto, repo, results_dir, monkeypatch):  # noqa: F811
    """Study 2A (demo banner, Table 6, two figures) and the overview, both ways: the same headings,
    table of contents, tables, figures, captions and verdict cells; both pass the browser checks."""
    from browser_pages import check_pages

    pages = {}
    for engine in ("quarto", "offline"):
        _render(results_dir, "study", f"{engine}-2A.html", {**_common(repo), **_study(repo, "2A")}, monkeypatch, engine=engine)
        _render(results_dir, "index", f"{engine}-index.html", {**_common(repo), **_index(repo)}, monkeypatch, engine=engine)
        pages[engine] = [results_dir / "reports" / f"{engine}-{p}.html" for p in ("2A", "index")]
    for engine in pages:
        text = pages[engine][0].read_text(encoding="utf-8")
        assert "{=html}" not in text and "import pandas" not in text, engine  # raw blocks, no code shown
        assert str(repo) not in text and str(results_dir) not in text, engine  # no local path
    q2a, o2a = check_pages([pages["quarto"][0], pages["offline"][0]], expect=["#verdict", "nav#TOC", "img.paper-figure"])
    qindex, oindex = check_pages([pages["quarto"][1], pages["offline"][1]], expect=["nav#TOC", "img.paper-figure"])
    for q, o in ((q2a, o2a), (qindex, oindex)):
        assert q.ok and o.ok, (q, o)
        assert q.outline == o.outline, (q.path, q.outline, o.outline)
        assert q.title == o.title
    assert q2a.outline["toc"] == [
        "The verdict",
        "Planted and recovered",
        "Effect: attitude_weat",
        "The paper's table, with ours",
        "Printed in the text",
        "Figures",
        "Reliability",
        "Design",
        "Models",
        "Out-of-vocabulary and dropped words",
        "Notes",
    ]
    assert q2a.outline["figures"] == 2 and q2a.outline["banner"] == 1 and sum(q2a.outline["verdicts"].values())


def documented_quarto_block() -> str:
    """docs/reports.md's by-hand block (marked not-run there: this test runs it as written)."""
    text = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    return re.search(r"```bash\n(export PATH=.*?)```", text, re.S).group(1)


def test_a_document_renders_by_hand_as_the_docs_say(quarto, repo, results_dir, tmp_path, monkeypatch):  # noqa: F811
    """After a run, the documented `quarto render reports/study.qmd -M study:2A --output 2A.html`
    and `quarto render reports/index.qmd` from the project folder, as written, with no Jupyter
    kernel (issue 53: the documents have no code cell; their filter runs `python3 -m
    fmat_replication.pages`): the documents find results/... and config/... above reports/ (the
    rules' own declaration of the inputs), fmat_replication imported as installed (no
    PYTHONPATH); --output puts the page beside the
    document, nothing else is left in the project; the DEMO banner comes from the results (2A's
    scores were recorded as a demo's, 1A's not), not from a parameter."""
    from fmat_replication.pages.drawing import draw_index, draw_study
    from fmat_replication.pages.inputs import hand_inputs

    root = tmp_path / "project"
    shutil.copytree(results_dir / "results", root / "results")
    shutil.rmtree(root / "results" / "figures", ignore_errors=True)  # drawn again below, as the rules do
    (root / "reports").mkdir()
    for name in ("study.qmd", "index.qmd", "page.lua"):
        shutil.copy2(repo / "reports" / name, root / "reports" / name)
    (root / "config").symlink_to(repo / "config", target_is_directory=True)
    monkeypatch.chdir(root)  # the figures, as rules report_figures draw them
    for s in STUDIES:
        inputs = hand_inputs("study", s)
        draw_study(s, inputs, inputs["drawn"])
    draw_index(STUDIES, hand_inputs("index"), hand_inputs("index")["drawn"])
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)  # the project's make env
    before.append(".venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QUARTO_PYTHON")}
    block = documented_quarto_block()
    assert "-M study:2A --output 2A.html" in block and "quarto render index.qmd" in block, block
    for script in (block, block.replace("2A", "1A")):  # 1A: scores not recorded as a demo's
        res = subprocess.run(["bash", "-e", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, (script, (res.stdout + res.stderr)[-3000:])
    after = sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".venv" not in p.parts[len(root.parts) :][:1])
    assert sorted(set(after) - set(before)) == ["reports/1A.html", "reports/2A.html", "reports/index.html"]
    page = (root / "reports" / "2A.html").read_text(encoding="utf-8")
    # the rule's render (the page's markdown, Quarto's markdown engine, no kernel): the same bytes
    render_page("study", tmp_path / "rule-2A.html", {"study": "2A", "inputs": hand_inputs("study", "2A")}, engine="quarto")
    assert (tmp_path / "rule-2A.html").read_text(encoding="utf-8") == page
    assert "Study 2A: " in page and "Flower" in page and "0.950" in page and "zyzzyva" in page
    assert "demo-banner" in page and "demo-banner" not in (root / "reports" / "1A.html").read_text(encoding="utf-8")
    assert str(root) not in page and str(repo) not in page
    index = (root / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(f"href='{s}.html'" in index or f'href="{s}.html"' in index for s in STUDIES)
    assert all(m in index for m in MODELS) and "demo-banner" in index


def test_the_markdown_renders_beside_nothing(quarto, tmp_path):
    """The rule's render: the page's markdown under the document's front matter, Quarto's markdown
    engine (no kernel: the document's Python cell is not run), the page written to ``out``, nothing
    left beside the document or in the working folder."""
    src = tmp_path / "doc.qmd"
    src.write_text(DOC)
    out = tmp_path / "out" / "doc.html"
    render_quarto(src, out, BODY)
    text = out.read_text(encoding="utf-8")
    assert "<title>A page</title>" in text and "r = <b>0.74</b>, x &amp; $(touch bad)" in text and 'id="results"' in text
    assert "by-hand document" not in text
    assert not (tmp_path / "bad").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.qmd", "out"]  # nothing beside the source


def test_a_failing_render_is_quartos_own_error_and_the_log(quarto, tmp_path):
    src = tmp_path / "doc.qmd"
    src.write_text(DOC.replace("embed-resources: true", "embed-resources: true\n    toc: [not, a, boolean]"))
    out = tmp_path / "doc.html"
    out.write_text("THE PREVIOUS PAGE")
    with pytest.raises(RenderError) as err:
        render_quarto(src, out, BODY)
    text = str(err.value)
    assert "Quarto could not render doc.qmd (exit status 1)" in text
    assert "ERROR" in text and "toc" in text
    log = tmp_path / "doc.html.quarto.log"
    assert f"Quarto's full output: {log}" in text and "toc" in log.read_text()
    assert out.read_text() == "THE PREVIOUS PAGE"


def test_the_render_needs_no_python_on_path(quarto, tmp_path):
    """A bare PATH (no venv, no python3 with Jupyter on it), as a rule called from
    .venv/bin/snakemake without an activated venv runs: Quarto's markdown engine needs no Python,
    so nothing of ours (QUARTO_PYTHON, a kernel spec) has to lead it to one."""
    src = tmp_path / "doc.qmd"
    src.write_text(DOC)
    code = f"from fmat_replication.pages.render import render_quarto; render_quarto({str(src)!r}, 'doc.html', {BODY!r})"
    env = {"PATH": f"{Path(quarto).parent}:/usr/bin:/bin", "HOME": str(Path.home()), **CHECKOUT}
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "r = <b>0.74</b>" in (tmp_path / "doc.html").read_text()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        found += [int(c) for c in children.read_text().split()] if children.exists() else []
    return found


@pytest.mark.parametrize("sig, status, group", [(signal.SIGINT, 1, True), (signal.SIGTERM, 128 + signal.SIGTERM, False)])
def test_a_stopped_render_stops_quarto_and_leaves_nothing(quarto, tmp_path, sig, status, group):
    """Ctrl-C (SIGINT to the terminal's foreground group: the render and Quarto) or SIGTERM (to the
    render alone, as `kill` sends it) while Quarto renders (its session folder is in TMPDIR): the
    render ends with no page, Quarto is gone and TMPDIR is empty: Quarto removed its own session
    folder (it does so on SIGINT and SIGTERM), the render its folder with the markdown."""
    src = tmp_path / "doc.qmd"
    src.write_text(DOC)
    (tmp_path / "T").mkdir()
    # Ctrl-C as a terminal delivers it: the default handler, whatever this test process inherited
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"from fmat_replication.pages.render import render_quarto; render_quarto({str(src)!r}, 'doc.html', {BODY!r})"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path / "T"), **CHECKOUT}
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        for _ in range(2400):  # Quarto's session folder: Quarto is rendering
            if [p for p in (tmp_path / "T").rglob("quarto-session*")] or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[0]
        quartos = _children(proc.pid)
        assert quartos
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode in (status, -sig), output[-3000:]
    assert not (tmp_path / "doc.html").exists()
    assert not [q for q in quartos if _alive(q)]
    assert list((tmp_path / "T").iterdir()) == []
