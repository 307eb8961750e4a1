"""Report rendering: percent-format structure checks, the offline path, and the quarto command."""
from __future__ import annotations

import os
import re
import stat
import textwrap
from pathlib import Path

import pytest

from fmat.cli import main
from fmat.errors import InputError
from fmat.report import check_source, choose_engine, front_matter, render

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

    # %% tags=["parameters"]
    study = "2A"

    # %%
    #| label: fig-demo
    #| fig-cap: "A line"
    import matplotlib.pyplot as plt
    print(f"STUDY-IS-{study}")
    plt.plot([1, 2, 3])
    plt.show()

    # %% [markdown]
    # Some text under the figure.
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


@pytest.mark.parametrize("mutate, fragment", [
    (lambda s: s.replace("embed-resources: true", "embed-resources: false"), "embed-resources"),
    (lambda s: s.replace('tags=["parameters"]', ""), "parameters"),
    (lambda s: s.replace("#   echo: false", "#   echo: false\n#   freeze: auto"), "freeze"),
    (lambda s: s.replace('# title: "Study report"\n', ""), "title"),
    (lambda s: s.replace("# ---\n\n# %% tags", "\n# %% tags", 1), "not closed"),
    (lambda s: s.replace("# Some text", "Some text"), "not commented"),
    (lambda s: s.replace('import matplotlib.pyplot as plt\n', 'import matplotlib.pyplot as plt\n#| echo: true\n'), "after code"),
])
def test_bad_sources_are_named(tmp_path, mutate, fragment):
    p = tmp_path / "bad.py"
    p.write_text(mutate(GOOD))
    problems = check_source(p)
    assert problems, "the broken source passed the check"
    assert any(fragment in msg for msg in problems), problems


def test_reports_in_repo_are_valid(repo):
    sources = sorted((repo / "reports").glob("*.py"))
    assert {s.stem for s in sources} >= {"study", "index"}
    for src in sources:
        assert check_source(src) == [], src


def test_offline_render_is_self_contained(good, tmp_path):
    out = tmp_path / "out" / "r.html"
    used = render(good, out, {"study": "3A"}, engine="offline", cwd=tmp_path)
    assert used == "offline"
    html = out.read_text()
    assert "STUDY-IS-3A" in html and "STUDY-IS-2A" not in html  # parameter injected
    # the figure itself, embedded (nbconvert's CSS also holds a data:image/png, so match the tag)
    assert re.search(r'<img[^>]+src="data:image/png;base64,', html)
    assert 'src="http' not in html                               # no CDN script
    assert "<h1>Study report</h1>" in html
    assert "import matplotlib.pyplot" not in html                # echo: false hides code


def test_offline_render_failure_raises(tmp_path):
    p = tmp_path / "r.py"
    p.write_text(GOOD.replace('print(f"STUDY-IS-{study}")', 'raise RuntimeError("boom")'))
    with pytest.raises(Exception):
        render(p, tmp_path / "r.html", {}, engine="offline", cwd=tmp_path)
    assert not (tmp_path / "r.html").exists()


def test_quarto_command_line(good, tmp_path, monkeypatch):
    """With quarto on PATH, render calls `quarto render SRC --to html --output NAME -P k:v`."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "args.txt"
    fake = bindir / "quarto"
    fake.write_text(textwrap.dedent(f'''\
        #!/bin/sh
        echo "$@" > {record}
        out=""
        while [ $# -gt 0 ]; do
          if [ "$1" = "--output" ]; then out="$2"; fi
          shift
        done
        echo "<html>quarto</html>" > "$out"
        '''))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert choose_engine("auto") == "quarto"
    out = tmp_path / "final.html"
    used = render(good, out, {"study": "1A", "results": "results"}, cwd=tmp_path)
    assert used == "quarto"
    args = record.read_text().split()
    assert args[0] == "render" and args[1].endswith("report.py")
    assert args[args.index("--to") + 1] == "html"
    assert args[args.index("--output") + 1] == "final.html"
    assert "study:1A" in args and "results:results" in args
    assert out.read_text().strip() == "<html>quarto</html>"


def test_engine_errors(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert choose_engine("auto") == "offline"
    with pytest.raises(InputError):
        choose_engine("quarto")
    with pytest.raises(InputError):
        choose_engine("pdf")


def test_cli_check_and_bad_param(good, capsys):
    assert main(["report", str(good), "--check"]) == 0
    assert main(["report", str(good), "-o", "x.html", "-P", "nocolon"]) == 2
    assert "key:value" in capsys.readouterr().err
