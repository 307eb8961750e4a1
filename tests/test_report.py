"""Report rendering: the percent-format source and Quarto's cell options, the offline path
(which implements them), the Quarto command (a stand-in quarto here; real Quarto in
tests/test_quarto.py), errors, atomic pages and Ctrl-C."""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fmat.report as report
from fmat.cli import main
from fmat.errors import FmatError, InputError, RenderError
from fmat.report import _RAW_HTML, cell_options, check_source, choose_engine, front_matter, page_path, raw_html, render

GOOD = textwrap.dedent('''\
    # %% [markdown]
    # ---
    # title: "Study report"
    # format:
    #   html:
    #     embed-resources: true
    # execute:
    #   echo: false
    # ---

    # %%
    #| tags: [parameters]
    study = "2A"

    # %%
    #| label: demo
    import matplotlib.pyplot as plt
    from fmat.report import show
    print(f"STUDY-IS-{study}")
    show("<table class='probe'><tr><td>x &amp; y</td></tr></table>")
    plt.plot([1, 2, 3])
    plt.show()

    # %% [markdown]
    # Some text under the figure.
    ''')

#: every cell option both renderers implement, with its effect on the page
OPTIONS = textwrap.dedent('''\
    # %% [markdown]
    # ---
    # title: "Options"
    # format:
    #   html:
    #     embed-resources: true
    #     toc: true
    # execute:
    #   echo: false
    #   warning: false
    # ---

    # %%
    #| tags: [parameters]
    word = "PARAM-DEFAULT"

    # %%
    #| label: shown
    import warnings
    from fmat.report import show
    show(f"<p id='param'>{word}</p>")
    warnings.warn("WARNING-HIDDEN")

    # %% [markdown]
    # ## First section
    #
    # Text of the first section.

    # %%
    #| include: false
    print("INCLUDE-FALSE-OUTPUT")

    # %%
    #| output: false
    print("OUTPUT-FALSE-OUTPUT")

    # %%
    #| echo: true
    print("ECHO" + "-TRUE-OUTPUT")

    # %% [markdown]
    # ## Second section

    # %%
    #| warning: true
    import warnings
    warnings.warn("WARNING-SHOWN")
    ''')


@pytest.fixture
def good(tmp_path) -> Path:
    p = tmp_path / "report.py"
    p.write_text(GOOD)
    return p


def test_front_matter_parsed(good):
    meta = front_matter(good.read_text())
    assert meta["title"] == "Study report"
    assert meta["format"]["html"]["embed-resources"] is True


def test_good_source_passes(good):
    assert check_source(good) == []


def test_cell_options_are_yaml_as_quarto_reads_them():
    assert cell_options("#| tags: [parameters]\n#| label: x\nx = 1\n") == ({"tags": ["parameters"], "label": "x"}, 2)
    assert cell_options("x = 1\n#| echo: true\n") == ({}, 0)
    with pytest.raises(InputError, match="not YAML"):
        cell_options("#| tags: [parameters\nx = 1\n")
    with pytest.raises(InputError, match="key: value"):
        cell_options("#| just words\n")


@pytest.mark.parametrize("mutate, fragment", [
    (lambda s: s.replace("embed-resources: true", "embed-resources: false"), "embed-resources"),
    (lambda s: s.replace("#| tags: [parameters]\n", ""), "tagged 'parameters'"),
    (lambda s: s.replace("#   echo: false", "#   echo: false\n#   freeze: auto"), "freeze"),
    (lambda s: s.replace('# title: "Study report"\n', ""), "title"),
    (lambda s: s.replace("# ---\n\n# %%\n", "\n# %%\n", 1), "not closed"),
    (lambda s: s.replace("# Some text", "Some text"), "not commented"),
    (lambda s: s.replace("import matplotlib.pyplot as plt\n", "import matplotlib.pyplot as plt\n#| echo: true\n"),
     "after code"),
    # the issue: Quarto reads percent-header metadata as a string and its validation fails
    (lambda s: s.replace("# %%\n#| tags: [parameters]\n", '# %% tags=["parameters"]\n'), "#| tags: [parameters]"),
    (lambda s: s.replace("#| tags: [parameters]", "#| tags: parameters"), "list of strings"),
    (lambda s: s.replace("#| label: demo", "#| label: fig-demo"), "Figure 1"),       # stray captions
    (lambda s: s.replace("#| label: demo", "#| label: demo\n#| fig-cap: A line"), "fig-cap"),
    (lambda s: s.replace("#| label: demo", "#| output: asis"), "output: asis"),
])
def test_bad_sources_are_named(tmp_path, mutate, fragment):
    p = tmp_path / "bad.py"
    text = mutate(GOOD)
    assert text != GOOD, "the mutation changed nothing"
    p.write_text(text)
    problems = check_source(p)
    assert problems, "the broken source passed the check"
    assert any(fragment in msg for msg in problems), problems


def test_reports_in_repo_are_valid(repo):
    sources = sorted((repo / "reports").glob("*.py"))
    assert {s.stem for s in sources} >= {"study", "index"}
    for src in sources:
        assert check_source(src) == [], src
        text = src.read_text(encoding="utf-8")
        assert "display(HTML" not in text  # a text/html output makes Quarto load require.js from a CDN


@pytest.mark.parametrize("text", ["<p>plain</p>", "<code>```x```</code>", "<pre>````four````</pre>", ""])
def test_raw_html_is_a_pandoc_raw_block_the_offline_path_reads_back(text):
    bundle = raw_html(text)
    assert list(bundle) == ["text/markdown"]                  # no text/html: Quarto adds no CDN script
    md = bundle["text/markdown"]
    fence = md.split("{=html}")[0]
    assert set(fence) == {"`"} and len(fence) >= 3 and len(fence) > max(map(len, re.findall("`+", text)), default=0)
    m = _RAW_HTML.match(md)
    assert m and m.group(2) == text


def test_page_path_holds_no_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "config").mkdir()
    monkeypatch.chdir(tmp_path)
    assert page_path(tmp_path / "config" / "2A.yaml") == "config/2A.yaml"
    assert page_path("config/2A.yaml") == "config/2A.yaml"
    assert page_path("/elsewhere/studies/2A.yaml") == "2A.yaml"


# --------------------------------------------------------------------------- the offline path


def test_offline_render_is_self_contained(good, tmp_path):
    out = tmp_path / "out" / "r.html"
    used = render(good, out, {"study": "3A"}, engine="offline", cwd=tmp_path)
    assert used == "offline"
    html = out.read_text()
    assert "STUDY-IS-3A" in html and "STUDY-IS-2A" not in html  # parameter injected
    # the figure itself, embedded (nbconvert's CSS also holds a data:image/png, so match the tag)
    assert re.search(r'<img[^>]+src="data:image/png;base64,', html)
    assert not re.search(r"<(script|img)[^>]+src=[\"'](?!data:)", html)           # nothing loaded from outside
    assert not re.search(r"<link[^>]+href=[\"'](?!data:)", html)
    assert '<h1 class="title">Study report</h1>' in html and "<title>Study report</title>" in html
    assert "import matplotlib.pyplot" not in html                # echo: false hides code
    assert re.search(r"<table class=[\"']probe[\"']><tr><td>x &amp; y</td></tr></table>", html)  # show(): the HTML
    assert "{=html}" not in html
    assert 'id="TOC"' not in html                                # no toc: true, no table of contents


def test_offline_render_implements_the_cell_options(tmp_path):
    src = tmp_path / "options.py"
    src.write_text(OPTIONS)
    assert check_source(src) == []
    out = tmp_path / "options.html"
    render(src, out, {"word": "PARAM-GIVEN"}, engine="offline", cwd=tmp_path)
    html = out.read_text()
    assert re.search(r"<p id=[\"']param[\"']>PARAM-GIVEN</p>", html) and "PARAM-DEFAULT" not in html
    assert "INCLUDE-FALSE-OUTPUT" not in html                   # include: false: neither code nor output
    assert "OUTPUT-FALSE-OUTPUT" not in html                    # output: false
    assert "ECHO-TRUE-OUTPUT" in html and html.count("-TRUE-OUTPUT") == 2  # echo: true: the code too
    assert "WARNING-HIDDEN" not in html                         # execute.warning: false
    assert "WARNING-SHOWN" in html                              # ... but #| warning: true in that cell
    assert "INCLUDE-FALSE" not in html and "OUTPUT-FALSE" not in html  # (their code, echo: false)
    # the table of contents: each level-2 heading, linked to the id nbconvert gives it
    toc = re.search(r'<nav id="TOC" role="doc-toc">(.*?)</nav>', html, re.S).group(1)
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', toc)
    assert [t for _, t in links] == ["First section", "Second section"]
    for anchor, _ in links:
        assert f'id="{anchor}"' in html


def test_offline_render_failure_names_the_cell_and_keeps_the_old_page(tmp_path):
    p = tmp_path / "r.py"
    p.write_text(GOOD.replace('print(f"STUDY-IS-{study}")', 'raise RuntimeError("boom in the cell")'))
    out = tmp_path / "r.html"
    out.write_text("THE PREVIOUS PAGE")
    with pytest.raises(RenderError, match=r"cell \d+ \('demo'\) of r.py raised RuntimeError: boom in the cell"):
        render(p, out, {}, engine="offline", cwd=tmp_path)
    assert out.read_text() == "THE PREVIOUS PAGE"
    assert [f.name for f in tmp_path.iterdir() if f.name.startswith(".r.html")] == []  # no temporary left


def test_a_full_disk_leaves_no_truncated_page(good, tmp_path, monkeypatch):
    """The page goes through fmat.io.atomic_path: a write that fails half way (ENOSPC) leaves
    the previous page, no partial file, and a sentence instead of a traceback."""
    def half_then_full(src, dst, *a, **k):
        Path(dst).write_bytes(Path(src).read_bytes()[:100])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    out = tmp_path / "site" / "r.html"
    out.parent.mkdir()
    out.write_text("THE PREVIOUS PAGE")
    monkeypatch.setattr(report.shutil, "copyfile", half_then_full)
    with pytest.raises(FmatError, match="No space left on device") as err:
        render(good, out, {}, engine="offline", cwd=tmp_path)
    assert err.value.where == str(out.resolve()) and "free disk space" in err.value.fix
    assert out.read_text() == "THE PREVIOUS PAGE"
    assert sorted(f.name for f in out.parent.iterdir()) == ["r.html"]
    # issue 35: the workflow's page job has no -o to choose; its fix says what fits there
    from fmat_replication.report import render_page

    with pytest.raises(FmatError, match="No space left on device") as err:
        render_page(good, out, {}, {}, engine="offline")
    assert "-o" not in err.value.fix and "results/" in err.value.fix and "snakemake" in err.value.fix
    assert out.read_text() == "THE PREVIOUS PAGE"


def test_the_kernel_is_this_python_even_when_the_user_has_another_python3_kernel(good, tmp_path, monkeypatch):
    """A user's own `python3` kernel spec (here: one that cannot start) does not win over the
    kernel of the Python that renders (fmat.report.write_kernel)."""
    home = tmp_path / "jupyter-data"
    bad = home / "kernels" / "python3"
    bad.mkdir(parents=True)
    (bad / "kernel.json").write_text(json.dumps({"argv": ["/nonexistent/python", "-m", "ipykernel_launcher", "-f",
                                                          "{connection_file}"], "display_name": "broken",
                                                 "language": "python"}))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home))
    monkeypatch.setenv("JUPYTER_PATH", str(home))
    out = tmp_path / "r.html"
    render(good, out, {}, engine="offline", cwd=tmp_path)
    assert "STUDY-IS-2A" in out.read_text()
    spec = report.kernel_spec()
    assert spec["argv"][0] == sys.executable and spec["language"] == "python"
    assert spec["env"]["PYTHONPATH"].split(os.pathsep)[0] == str(Path(report.__file__).resolve().parents[1])


def _sleeping_source(tmp_path: Path) -> Path:
    src = tmp_path / "slow.py"
    src.write_text(GOOD.replace('print(f"STUDY-IS-{study}")', textwrap.dedent('''\
        import os, pathlib, time
        pathlib.Path("kernel.pid").write_text(str(os.getpid()))
        time.sleep(600)''')))
    return src


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def ctrl_c_during_a_cell(tmp_path: Path, engine: str, env: dict | None = None) -> None:
    """`fmat report` on a source whose cell sleeps 600 s; Ctrl-C (SIGINT) once the cell runs.
    The command must end with 130 long before the cell would (the test's 300 s limit), with
    no page and no kernel left."""
    import time

    src = _sleeping_source(tmp_path)
    out = tmp_path / "slow.html"
    proc = subprocess.Popen([sys.executable, "-m", "fmat.cli", "report", str(src), "-o", str(out),
                             "--engine", engine], cwd=tmp_path, env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pid_file = tmp_path / "kernel.pid"
    for _ in range(1200):  # the cell has started when the kernel wrote its pid
        if pid_file.exists() and pid_file.read_text().strip() or proc.poll() is not None:
            break
        time.sleep(0.25)
    assert proc.poll() is None, proc.communicate()[0]
    kernel = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, output
    assert "interrupted" in output and "unexpected error" not in output
    assert not out.exists()
    for _ in range(100):  # the orphaned kernel notices its parent is gone (ipykernel polls each second)
        if not _alive(kernel):
            break
        time.sleep(0.2)
    assert not _alive(kernel), f"kernel {kernel} still running"


def test_ctrl_c_stops_the_offline_render_during_a_cell(tmp_path):
    ctrl_c_during_a_cell(tmp_path, "offline")


# --------------------------------------------------------------------------- engines, Quarto's command


def _fake_quarto(tmp_path: Path, body: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "quarto"
    fake.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return bindir


def test_quarto_command_line(good, tmp_path, monkeypatch):
    """With quarto on PATH: `quarto render SRC --to html --output NAME --execute-params FILE`
    (parameters in a YAML file: strings stay strings), run with QUARTO_PYTHON = this Python and
    JUPYTER_PATH leading to a python3 kernel of this Python."""
    record = tmp_path / "record"
    bindir = _fake_quarto(tmp_path, f'''\
        if [ "$1" = "--version" ]; then echo 9.9.9; exit 0; fi
        echo "$@" > {record}.args
        env > {record}.env
        out=""; params=""
        while [ $# -gt 0 ]; do
          case "$1" in --output) out="$2";; --execute-params) params="$2";; esac
          shift
        done
        cp "$params" {record}.params
        cp "$(echo "$JUPYTER_PATH" | cut -d: -f1)/kernels/python3/kernel.json" {record}.kernel
        echo "<html>quarto</html>" > "$out"
        ''')
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert choose_engine("auto") == "quarto"
    out = tmp_path / "final.html"
    used = render(good, out, {"study": "1A", "config_hash": "1e5", "demo": "false", "path": "a b/$(touch x)"},
                  cwd=tmp_path)
    assert used == "quarto"
    args = Path(f"{record}.args").read_text().split()
    assert args[0] == "render" and args[1].endswith("report.py")
    assert args[args.index("--to") + 1] == "html"
    assert args[args.index("--output") + 1] == "final.html"
    assert args[args.index("--execute-dir") + 1] == str(tmp_path)
    import yaml

    assert yaml.safe_load(Path(f"{record}.params").read_text()) == {
        "study": "1A", "config_hash": "1e5", "demo": "false", "path": "a b/$(touch x)"}
    env = dict(line.split("=", 1) for line in Path(f"{record}.env").read_text().splitlines() if "=" in line)
    assert env["QUARTO_PYTHON"] == sys.executable
    kernel = json.loads(Path(f"{record}.kernel").read_text())
    assert kernel["argv"][:3] == [sys.executable, "-m", "ipykernel_launcher"]
    assert out.read_text().strip() == "<html>quarto</html>"
    assert not (tmp_path / "x").exists()


def test_quarto_failure_is_quartos_own_words_and_the_log(good, tmp_path, monkeypatch, capsys):
    bindir = _fake_quarto(tmp_path, '''\
        if [ "$1" = "--version" ]; then echo 1.7.34; exit 0; fi
        echo "Starting python3 kernel...Done"
        echo "ERROR: Validation of YAML cell metadata failed."
        echo "ERROR: (line 13, columns 10--26) Field \\"tags\\" has value '[\\"parameters\\"]', which must instead be an array"
        echo "a line only in the log"
        exit 1
        ''')
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "p.html"
    assert main(["report", str(good), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Quarto could not render report.py (exit status 1)" in err
    assert "ERROR: Validation of YAML cell metadata failed." in err and 'Field "tags"' in err
    log = tmp_path / "p.html.quarto.log"
    assert f"Quarto's full output: {log}" in err and "a line only in the log" in log.read_text()
    assert "unexpected error" not in err and "Traceback" not in err and not out.exists()
    # the workflow names its own log, where the lines went through logging
    with pytest.raises(RenderError, match="Quarto's full output: logs/report/2A.log"):
        render(good, out, {}, log_file="logs/report/2A.log")


def test_quarto_engine_without_quarto_names_the_fix(good, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert choose_engine("auto") == "offline"
    with pytest.raises(InputError, match="quarto is not on PATH"):
        choose_engine("quarto")
    with pytest.raises(InputError):
        choose_engine("pdf")
    assert main(["report", str(good), "-o", str(tmp_path / "x.html"), "--engine", "quarto"]) == 2
    assert "install Quarto" in capsys.readouterr().err


def test_without_quarto_the_offline_path_is_taken(good, tmp_path):
    """`fmat report` (engine auto) with no quarto anywhere on PATH renders offline and says so."""
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if d and not (Path(d) / "quarto").exists())
    assert shutil.which("quarto", path=path) is None
    out = tmp_path / "page.html"
    res = subprocess.run([sys.executable, "-m", "fmat.cli", "report", str(good), "-o", str(out), "-P", "study:4B"],
                         cwd=tmp_path, env={**os.environ, "PATH": path}, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert f"rendered {good} with offline -> {out}" in res.stdout
    assert "STUDY-IS-4B" in out.read_text()


def test_a_missing_extra_names_what_to_install(good, tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jupytext" else real(name, *a))
    assert main(["report", str(good), "-o", str(tmp_path / "x.html"), "--engine", "offline"]) == 2
    err = capsys.readouterr().err
    assert "needs jupytext" in err and "pip install 'fmat[workflow]'" in err and "unexpected error" not in err


def test_cli_check_bad_param_and_missing_source(good, tmp_path, capsys):
    assert main(["report", str(good), "--check"]) == 0
    assert main(["report", str(good), "-o", "x.html", "-P", "nocolon"]) == 2
    assert "key:value" in capsys.readouterr().err
    missing = tmp_path / "reports" / "nope.py"
    assert main(["report", str(missing), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no report source" in err and "fix:" in err and "unexpected error" not in err
    assert main(["report", str(missing), "--check"]) == 2
    assert "no report source" in capsys.readouterr().err
