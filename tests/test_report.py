"""Report pages as plain functions (fmat_replication.pages): the Page and its two writings
(markdown for Quarto, HTML without it), the Quarto documents reports/*.qmd, choosing the engine,
Quarto's command (a stand-in quarto here; a real one in tests/test_quarto.py), its errors and
timeout, atomic pages; and the installed library keeps no notebook machinery."""

from __future__ import annotations

import errno
import os
import re
import stat
import textwrap
from pathlib import Path

import pytest
import yaml

import fmat_replication.pages.render as render
from fmat.cli import main
from fmat.errors import FmatError, InputError, RenderError
from fmat_replication.pages.__main__ import USAGE
from fmat_replication.pages.__main__ import main as pages_main
from fmat_replication.pages.html import environment
from fmat_replication.pages.overview import TITLE as INDEX_TITLE
from fmat_replication.pages.page import Heading, Page, page_path
from fmat_replication.pages.render import OUTPUT_FIX, choose_engine, render_page, render_quarto
from fmat_replication.pages.study import TITLE as STUDY_TITLE

REPO = Path(__file__).resolve().parents[1]


#: a page's template (issue 53): it extends the document, writes its headings with the macro and
#: its sentences itself; the context holds data only
SMALL = """{% extends "document.html.j2" %}
{% from "macros.html.j2" import heading with context %}
{% block content %}
<style>p {color: red}</style>
{{ heading(2, "first", "First section") }}
<p>Plain <em>words</em> with <code>code</code> &amp; {{ words }}.</p>
<table class='probe'><tr><td>{{ cell }}</td></tr></table>
{{ heading(2, "second", "Second * section") }}
{% if more %}{{ heading(3, "third", "Third") }}{% endif %}
<pre>{{ backticks }}</pre>
{% endblock %}
"""


def small_page(**context) -> Page:
    ctx = {"words": "<angle brackets>", "cell": "x & y", "more": False, "backticks": "```three``` and ````four````", **context}
    return Page("A <small> page", environment().from_string(SMALL), ctx)


# --------------------------------------------------------------------------- the Page


def test_markdown_has_headings_for_the_toc_and_html_in_raw_blocks():
    """For Quarto the template writes the markdown itself (no HTML read back): each heading a
    markdown heading, the content between them in raw blocks whose fence is longer than any run
    of backticks inside (here: a four-backtick run, so five), values escaped as in HTML."""
    md = small_page().markdown()
    assert "\n## First section {#first}\n" in md and "\n## Second \\* section {#second}\n" in md
    assert md.startswith("`````{=html}\n<style>p {color: red}</style>\n") and md.endswith("\n`````\n")
    assert "`````{=html}\n<p>Plain <em>words</em> with <code>code</code> &amp; &lt;angle brackets&gt;.</p>\n" in md
    assert "<table class='probe'><tr><td>x &amp; y</td></tr></table>" in md
    assert "<pre>```three``` and ````four````</pre>" in md
    assert "{#third}" not in md and "<h2" not in md
    assert "```{=html}\n<pre>plain</pre>" in small_page(backticks="plain").markdown()  # no backticks inside: three
    assert "\n### Third {#third}\n" in small_page(more=True).markdown()


def test_the_toc_is_the_headings_the_template_wrote():
    assert small_page().toc() == [Heading(2, "First section", "first"), Heading(2, "Second * section", "second")]
    assert [h.id for h in small_page(more=True).toc()] == ["first", "second", "third"]


def test_html_page_is_self_contained_with_title_block_and_toc():
    html = small_page().html()
    assert "<title>A &lt;small&gt; page</title>" in html and '<h1 class="title">A &lt;small&gt; page</h1>' in html
    toc = re.search(r'<nav id="TOC" role="doc-toc">(.*?)</nav>', html, re.S).group(1)
    assert re.findall(r'<a href="#([^"]+)">([^<]+)</a>', toc) == [("first", "First section"), ("second", "Second * section")]
    for anchor in ("first", "second"):
        assert f'<h2 id="{anchor}">' in html
    # the content in order, values escaped
    order = [
        "<style>p {color: red}</style>",
        'id="first"',
        "Plain <em>words</em> with <code>code</code> &amp; &lt;angle",
        "<table class='probe'><tr><td>x &amp; y</td></tr></table>",
        'id="second"',
        "<pre>```three```",
    ]
    positions = [html.index(x) for x in order]
    assert positions == sorted(positions)
    assert "{=html}" not in html and "## " not in html
    assert not re.search(r"<(script|img|link)[^>]+(src|href)=[\"'](?!data:)", html)  # nothing from outside


def test_page_path_holds_no_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "config").mkdir()
    monkeypatch.chdir(tmp_path)
    assert page_path(tmp_path / "config" / "2A.yaml") == "config/2A.yaml"
    assert page_path("config/2A.yaml") == "config/2A.yaml"
    assert page_path("/elsewhere/studies/2A.yaml") == "2A.yaml"


# --------------------------------------------------------------------------- the Quarto documents


def _document(name: str) -> tuple[dict, str]:
    """A document's YAML header and what follows it."""
    text = (REPO / "reports" / name).read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body


@pytest.mark.parametrize("name, kind, title", [("study.qmd", "study", STUDY_TITLE), ("index.qmd", "index", INDEX_TITLE)])
def test_each_document_names_its_page_and_the_filter_and_runs_no_kernel(name, kind, title):
    """reports/*.qmd (issue 53): the page function's title, self-contained HTML with a table of
    contents; no code cell and no Jupyter key (rendering by hand needs no kernel); the page comes
    from the Lua filter reports/page.lua, which runs `python3 -m fmat_replication.pages KIND [STUDY]`."""
    header, body = _document(name)
    assert header["title"] == title and not body.strip()
    assert not {"jupyter", "execute", "engine"} & set(header), header
    html = header["format"]["html"]
    assert html["embed-resources"] is True and html["toc"] is True and html["toc-location"] == "body"
    assert header["filters"] == ["page.lua"] and header["fmat-page"] == kind
    assert ("study" in header) == (kind == "study")
    lua = (REPO / "reports" / "page.lua").read_text(encoding="utf-8")
    assert '"python3", args' in lua and '"fmat_replication.pages"' in lua and "doc.meta.study" in lua
    assert set(render.BY_HAND_KEYS) >= set(header) - {"title", "format"}  # the rule's page.md: title and format only


@pytest.mark.parametrize("args", [[], ["study"], ["nope"], ["index", "2A"], ["study", "2A", "x"]])
def test_the_page_module_names_the_usage_for_a_wrong_page(args, capsys):
    assert pages_main(args) == 2
    assert USAGE in capsys.readouterr().err


# --------------------------------------------------------------------------- engines and writing


def test_engines(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert choose_engine("auto") == "offline"
    with pytest.raises(InputError, match="quarto is not on PATH") as err:
        choose_engine("quarto")
    assert "install Quarto" in err.value.fix and "report_engine=offline" in err.value.fix
    with pytest.raises(InputError, match="unknown report engine 'pdf'"):
        choose_engine("pdf")


def test_offline_page_is_the_page_functions_html(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    seen = {}

    def build(kind, inputs):
        seen.update(kind=kind, inputs=dict(inputs))
        return small_page()

    monkeypatch.setattr(render, "build_page", build)
    out = tmp_path / "site" / "2A.html"
    assert render_page("study", out, {"study": "2A", "scores": ["a.parquet", "b.parquet"]}) == "offline"
    assert seen == {"kind": "study", "inputs": {"study": "2A", "scores": ["a.parquet", "b.parquet"]}}
    assert out.read_text(encoding="utf-8") == small_page().html()


def test_a_full_disk_leaves_no_truncated_page(tmp_path, monkeypatch):
    """The page goes through fmat.io.atomic_path: a write that fails half way (ENOSPC) leaves
    the previous page, no partial file, and a sentence that says what to do in the workflow."""
    from pathlib import Path as P

    real = P.write_text

    def half_then_full(self, text, *a, **k):
        real(self, text[:100], *a, **k)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(render, "build_page", lambda kind, inputs: small_page())
    out = tmp_path / "site" / "r.html"
    out.parent.mkdir()
    out.write_text("THE PREVIOUS PAGE")
    monkeypatch.setattr(P, "write_text", half_then_full)
    with pytest.raises(FmatError, match="No space left on device") as err:
        render_page("study", out, {}, engine="offline")
    monkeypatch.setattr(P, "write_text", real)
    assert err.value.where == str(out.resolve()) and err.value.fix.startswith(OUTPUT_FIX)
    assert "-o" not in err.value.fix and "snakemake" in err.value.fix
    assert out.read_text() == "THE PREVIOUS PAGE"
    assert sorted(f.name for f in out.parent.iterdir()) == ["r.html"]


def test_a_missing_or_unknown_argument_names_it(tmp_path):
    with pytest.raises(InputError, match="the study page needs the input.s. inputs; takes no input scores\n") as err:
        render_page("study", tmp_path / "x.html", {"study": "2A", "scores": []}, engine="offline")
    assert err.value.where == "inputs, scores" and "study_page" in err.value.fix
    inputs = {"study_file": "a", "paper": "b", "replication": "c", "stats": "d", "status": "e", "figures": "f", "drawn": "g"}
    with pytest.raises(InputError, match="the study page takes no input scores; needs oov") as err:
        render_page("study", tmp_path / "x.html", {"study": "2A", "inputs": {**inputs, "scores": []}}, engine="offline")
    assert err.value.where == "scores, oov" and "STUDY_INPUTS" in err.value.fix
    with pytest.raises(InputError, match="unknown page 'intro'"):
        render_page("intro", tmp_path / "x.html", {}, engine="offline")


def test_a_missing_input_names_it(repo, tmp_path):
    with pytest.raises(InputError, match="page input 'status': .*nope.json not found") as err:
        render_page(
            "study",
            tmp_path / "x.html",
            {
                "study": "2A",
                "inputs": {
                    "study_file": repo / "config" / "studies" / "2A.yaml",
                    "paper": repo / "config" / "paper_results.tsv",
                    "replication": tmp_path,
                    "stats": tmp_path,
                    "status": tmp_path / "nope.json",
                    "figures": tmp_path,
                    "drawn": tmp_path,
                    "oov": tmp_path,
                },
            },
            engine="offline",
        )
    assert err.value.where == "status" and "snakemake" in err.value.fix
    assert not (tmp_path / "x.html").exists()


def test_the_rule_passes_its_inputs_as_they_are(tmp_path, monkeypatch):
    """fmat_replication.report_stage.report_page (scripts/report.py): the rule's inputs go to the
    page as its ``inputs``, lists stay lists (one score table is a list of one), no world file
    is left out, the document is not a page input, a study id makes a study page."""
    from fmat_replication import report_stage
    from fmat_replication.report_stage import report_page

    seen = []
    monkeypatch.setattr(report_stage, "render_page", lambda kind, out, args, **k: seen.append((kind, args, k)) or "offline")
    report_page(
        "2A.html",
        {"source": "reports/study.qmd", "stats": "s.parquet", "scores": ["a.parquet"], "recovery": []},
        {"study": "2A", "device": "cpu"},
        engine="offline",
        log="l.log",
    )
    report_page("index.html", {"stats": ("x", Path("y")), "recovery": "r.parquet"}, {"studies": ["1A", "2A"]})
    assert seen[0] == (
        "study",
        {"inputs": {"stats": "s.parquet", "scores": ["a.parquet"]}, "study": "2A", "device": "cpu"},
        {"engine": "offline", "log_file": "l.log"},
    )
    assert seen[1][:2] == ("index", {"inputs": {"stats": ["x", "y"], "recovery": "r.parquet"}, "studies": ["1A", "2A"]})


# --------------------------------------------------------------------------- Quarto's command (a stand-in)


def _fake_quarto(tmp_path: Path, body: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "quarto"
    fake.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return bindir


def test_quarto_command_line(tmp_path, monkeypatch):
    """With quarto on PATH: `quarto render page.md --to html --output NAME` on a markdown document
    in a temporary folder: the front matter of reports/study.qmd (its title and format) without its
    by-hand keys (the filter, the page), then the page's markdown (the same Page the template writes). Quarto's own
    markdown engine: no kernel, so nothing of Jupyter or Python is set for it (no QUARTO_PYTHON,
    JUPYTER_PATH or TMPDIR of ours; its environment is the rule's)."""
    record = tmp_path / "record"
    bindir = _fake_quarto(
        tmp_path,
        f"""\
        if [ "$1" = "--version" ]; then echo 9.9.9; exit 0; fi
        echo "$@" > {record}.args
        env > {record}.env
        cp "$2" {record}.md
        echo "<html>quarto</html>" > "$6"
        """,
    )
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    for name in ("QUARTO_PYTHON", "JUPYTER_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(render, "build_page", lambda kind, inputs: small_page())
    assert choose_engine("auto") == "quarto"
    out = tmp_path / "final.html"
    in_reports = sorted(p.name for p in (REPO / "reports").iterdir())  # a page rendered there by hand may be
    assert render_page("study", out, {"study": "1A"}) == "quarto"
    assert Path(f"{record}.args").read_text().split() == ["render", "page.md", "--to", "html", "--output", "final.html"]
    env = dict(line.split("=", 1) for line in Path(f"{record}.env").read_text().splitlines() if "=" in line)
    assert not {"QUARTO_PYTHON", "JUPYTER_PATH"} & set(env) and env.get("TMPDIR") == os.environ.get("TMPDIR")
    document = Path(f"{record}.md").read_text()
    header = yaml.safe_load(document.split("---\n")[1])
    qmd = yaml.safe_load((REPO / "reports" / "study.qmd").read_text().split("---\n")[1])
    assert header == {k: v for k, v in qmd.items() if k not in render.BY_HAND_KEYS} and set(header) == {"title", "format"}
    assert document.endswith("---\n\n" + small_page().markdown())
    assert "{python}" not in document
    assert out.read_text().strip() == "<html>quarto</html>"
    assert sorted(p.name for p in (REPO / "reports").iterdir()) == in_reports  # the render left nothing in reports/
    assert {"README.md", "index.qmd", "study.qmd", "page.lua"} <= set(in_reports)


QUARTO_FAILS = """\
    if [ "$1" = "--version" ]; then echo 1.7.34; exit 0; fi
    echo "Starting python3 kernel...Done"
    echo "ERROR: Validation of YAML cell metadata failed."
    echo "ERROR: (line 13, columns 10--26) Field \\"tags\\" has value '[\\"parameters\\"]', which must instead be an array"
    echo "a line only in the log"
    exit 1
    """


def test_quarto_failure_is_quartos_own_words_and_the_log(tmp_path, monkeypatch):
    bindir = _fake_quarto(tmp_path, QUARTO_FAILS)
    monkeypatch.setattr(render, "build_page", lambda kind, inputs: small_page())
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "p.html"
    with pytest.raises(RenderError) as err:
        render_page("study", out, {"study": "2A"})
    text = str(err.value)
    assert "Quarto could not render study.qmd (exit status 1)" in text
    assert "ERROR: Validation of YAML cell metadata failed." in text and 'Field "tags"' in text
    log = tmp_path / "p.html.quarto.log"
    assert f"Quarto's full output: {log}" in text and "a line only in the log" in log.read_text()
    assert "report_engine=offline" in err.value.fix and not out.exists()
    # the workflow names its own log, where the lines went through logging
    with pytest.raises(RenderError, match="Quarto's full output: logs/report/2A.log"):
        render_page("study", out, {"study": "2A"}, log_file="logs/report/2A.log")


def test_quarto_past_its_time_is_stopped_and_says_so(tmp_path, monkeypatch):
    bindir = _fake_quarto(
        tmp_path,
        """\
        if [ "$1" = "--version" ]; then echo 1.7.34; exit 0; fi
        echo "Starting python3 kernel...Done"
        sleep 300
        """,
    )
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(render, "build_page", lambda kind, inputs: small_page())
    import time

    t = time.monotonic()
    with pytest.raises(RenderError, match=r"Quarto could not render index.qmd \(stopped after 2 s\)"):
        render_page("index", tmp_path / "index.html", {"studies": []}, timeout=2)
    assert time.monotonic() - t < 60 and not (tmp_path / "index.html").exists()


def test_render_quarto_names_a_missing_document(tmp_path):
    with pytest.raises(InputError, match="no Quarto document"):
        render_quarto(tmp_path / "nope.qmd", tmp_path / "x.html", "")


# --------------------------------------------------------------------------- no notebook machinery in fmat


def test_the_library_has_no_report_command_or_notebook_renderer(capsys):
    """Issue 33: the pages are the replication's; the installed library renders no notebook."""
    assert not (REPO / "fmat" / "report.py").exists() and not (REPO / "fmat" / "templates" / "fmat_html").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["report", "reports/study.qmd"])
    assert exit_.value.code == 2 and "invalid choice: 'report'" in capsys.readouterr().err
    words = ("jupytext", "papermill", "nbconvert", "nbclient")
    for path in [*(REPO / "fmat").rglob("*.py"), *(REPO / "fmat_replication").rglob("*.py"), REPO / "scripts" / "report.py"]:
        text = path.read_text(encoding="utf-8")
        assert not [w for w in words if re.search(rf"\b(import|from) {w}\b", text)], path
    tomllib = __import__("tomllib")
    library = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    replication = tomllib.loads((REPO / "fmat_replication" / "pyproject.toml").read_text())["project"]["dependencies"]
    kernel = (*words, "ipykernel")
    assert not [d for d in library + replication if re.split(r"[<>=!~ ]", d)[0] in kernel]  # no notebook, no kernel (issue 53)


def test_the_pages_lie_side_by_side_for_snakemake_report(tmp_path):
    """rule report_pages: the pages copied into one folder (snakemake --report keeps a folder's
    files together, so "index.html" and "2A.html" links between them resolve), byte for byte."""
    from fmat_replication.report_stage import bundle_pages

    pages = []
    for name, text in (("2A.html", "<a href='index.html'>back</a>"), ("index.html", "<a href='2A.html'>2A</a>")):
        (tmp_path / "reports").mkdir(exist_ok=True)
        (tmp_path / "reports" / name).write_text(text)
        pages.append(tmp_path / "reports" / name)
    copies = bundle_pages(pages, tmp_path / "bundle")
    assert sorted(p.name for p in (tmp_path / "bundle").iterdir()) == ["2A.html", "index.html"] == sorted(p.name for p in copies)
    assert all((tmp_path / "bundle" / p.name).read_bytes() == p.read_bytes() for p in pages)
