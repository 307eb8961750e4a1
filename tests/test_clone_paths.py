"""Issue 29: the workflow in a clone whose path holds a space and a `$(...)`, moved afterwards,
with an intermediate deleted or damaged.

The demo configuration (tiny models, criteria from the repository's data/mirror) on two
studies (1A, which reads criterion tables, and 3D) and two models, run once from a copy of this
checkout (its tracked and untracked files, as `git clone` of a working tree would give) at
``<tmp>/a b$(touch pwned)c/fmat``, with ``studies_dir`` a folder named ``s $(touch pwned)``:

- no rule puts a path through a shell unquoted: nothing named ``pwned`` is created, and every
  job succeeds, every page renders (the report rules' shell commands used to break on the space);
- moving the finished project (another path, as a copy to another machine or a cluster node that
  mounts it elsewhere) reruns nothing: no rule's input or params holds an absolute path;
- a deleted score table is rebuilt by running the same command again (docs/resuming.md), and a
  damaged one stops its reader with the file named and that same fix.

Marked slow (a few minutes on two cores).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import needs_quarto

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
WEIRD = "a b$(touch pwned)c"  # a space and a command substitution, as a folder name
STUDIES_DIR = "config/s $(touch pwned)"
MODELS = [{"name": "tiny-bert-base-uncased", "tiny": "bert-uncased"}, {"name": "tiny-roberta-base", "tiny": "roberta"}]
SMALL = {
    "studies": ["1A", "3D"],
    "models": MODELS,
    "studies_dir": STUDIES_DIR,
    "world": None,
}  # untrained tiny models: this test is about paths, not the science
SCORE = "results/scores/3D/tiny-roberta-base.parquet"


def copy_checkout(dest: Path) -> None:
    """This checkout's files (tracked, and untracked but not ignored), times kept: what a clone of
    the working tree holds."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            check=True,
            timeout=60,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def snakemake(repo: Path, *args, timeout: int = 1500, path: str | None = None) -> subprocess.CompletedProcess:
    """The demo, from the clone's own folder, as a user runs it (its profiles/default applies);
    ``path``: the PATH it runs with (default: this one)."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--configfile", "config/demo.yaml", "small.yaml", *args],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **({"PATH": path} if path else {})},
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    root = tmp_path_factory.mktemp("paths")
    repo = root / WEIRD / "fmat"
    copy_checkout(repo)
    shutil.copytree(REPO / "config" / "studies", repo / STUDIES_DIR)
    (repo / "small.yaml").write_text(yaml.safe_dump(SMALL), encoding="utf-8")
    res = snakemake(repo, "--cores", "2")
    return root, repo, res


def _pwned(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("pwned")]


def test_nothing_runs_from_a_folder_name(finished):
    root, repo, res = finished
    assert _pwned(root) == [], res.stdout[-4000:]
    assert not Path("pwned").exists()


def test_every_job_succeeds_and_every_page_renders(finished):
    root, repo, res = finished
    assert res.returncode == 0, res.stdout[-6000:]
    for page in ("1A", "3D", "index"):
        html = repo / "results" / "reports" / f"{page}.html"
        assert html.stat().st_size > 10_000, page
        assert "unrecognized arguments" not in (repo / "logs" / "report" / f"{page}.log").read_text()
    for study in ("1A", "3D"):
        stats = pd.read_parquet(repo / "results" / "analysis" / study / "stats.parquet")
        assert {"ICC_average", "ICC_single"} <= set(stats["statistic"])
    assert (repo / "resources" / "criteria" / "wefat_1A.parquet").exists()  # the mirror, a relative path


def _moved_copy(root: Path, repo: Path, name: str) -> Path:
    dest = root / name / "fmat"
    shutil.copytree(repo, dest, symlinks=True)  # copy2: file times kept, as rsync -a or cp -a
    return dest


def test_moving_the_finished_project_reruns_nothing(finished):
    root, repo, res = finished
    assert res.returncode == 0, res.stdout[-3000:]
    moved = _moved_copy(root, repo, "elsewhere")
    dry = snakemake(moved, "-n")
    assert dry.returncode == 0, dry.stdout[-3000:]
    assert "Nothing to be done" in dry.stdout, dry.stdout[-6000:]


def test_a_deleted_or_damaged_score_table_is_rebuilt_by_the_same_command(finished):
    """docs/resuming.md: delete (or find damaged) an intermediate, run the same command again."""
    root, repo, res = finished
    assert res.returncode == 0, res.stdout[-3000:]
    work = _moved_copy(root, repo, "resume")
    score, lpr = work / SCORE, work / "results" / "lpr" / "3D.parquet"
    good, lpr_before = score.read_bytes(), lpr.stat().st_mtime_ns

    score.unlink()
    dry = snakemake(work, "-n")
    assert "score_paper" in dry.stdout and "Missing output files" in dry.stdout, dry.stdout[-4000:]
    run = snakemake(work, "--cores", "2")
    assert run.returncode == 0, run.stdout[-4000:]
    assert score.read_bytes() == good  # the same table again
    assert lpr.stat().st_mtime_ns > lpr_before  # and what reads it was redone
    assert "Nothing to be done" in snakemake(work, "-n").stdout

    score.write_bytes(b"PAR1 not really a parquet file")  # damaged (and now newer than its readers)
    run = snakemake(work, "--cores", "2")
    assert run.returncode != 0
    log = (work / "logs" / "lpr" / "3D.log").read_text(encoding="utf-8")
    assert f"{SCORE}: the parquet file is truncated or damaged" in log, log
    assert "delete it and run the same snakemake command again" in log and "give a parquet table" not in log
    score.unlink()  # the fix the message gives
    run = snakemake(work, "--cores", "2")
    assert run.returncode == 0, run.stdout[-4000:]
    assert score.read_bytes() == good
    assert "Nothing to be done" in snakemake(work, "-n").stdout


def test_snakemake_report_holds_the_pages(finished):
    """`snakemake --report report.zip` (the convention of Snakemake workflows) on the finished run:
    the study pages and the overview are in it (rule report_pages marks them report(), with the
    captions of report/), byte for byte the pages the run wrote, side by side in one folder."""
    import zipfile

    root, repo, res = finished
    assert res.returncode == 0, res.stdout[-3000:]
    work = _moved_copy(root, repo, "report")
    run = snakemake(work, "--report", "report.zip")
    assert run.returncode == 0, run.stdout[-4000:]
    with zipfile.ZipFile(work / "report.zip") as zf:
        names = zf.namelist()
        folders = set()
        for page in ("1A", "3D", "index"):
            held = [n for n in names if n.startswith("report/data/") and n.endswith(f"/{page}.html")]
            assert len(held) == 1, (page, names)
            assert zf.read(held[0]) == (work / "results" / "reports" / f"{page}.html").read_bytes(), page
            folders.add(held[0].rsplit("/", 1)[0])
        assert len(folders) == 1, folders  # side by side: "index.html" and "1A.html" links resolve (issue 41)
        assert any(n.endswith(".svg") for n in names)  # the figures rules' figures, report() items too
        text = zf.read("report/report.html").decode("utf-8", "replace")
        zf.extractall(work / "unpacked")
    for caption in ("The overview: paper vs ours per study", "The report page of study"):
        assert caption in text, caption
    # each figure's caption is its own, written from the data (figures.json), not its kind's
    import json

    for study in ("1A", "3D", "index"):
        for item in json.loads((work / "results" / "figures" / study / "figures.json").read_text(encoding="utf-8")):
            if item["file"]:
                assert f"{item['title']}. {item['caption'][:40]}" in text, (study, item)
    assert "system-message" not in text  # no caption broke reStructuredText
    # in Chromium, as the report's viewer shows a page: its links lead to the pages beside it
    from browser_pages import follow_report_links

    viewer = work / "unpacked" / "report" / "report.html"
    page = held[0].replace("report/", "", 1).replace("index.html", "1A.html")
    seen = follow_report_links(viewer, page, ["a[href='index.html']", "a.study-link[href='3D.html']"])
    assert [u.rsplit("/", 1)[1] for u in seen["urls"]] == ["index.html", "3D.html"], seen
    assert seen["titles"][1].endswith("study report") and seen["console_errors"] == [], seen
    assert _pwned(root) == []


@needs_quarto
def test_the_quarto_pages_inside_snakemake_report_raise_no_errors(finished, quarto):
    """Issue 41: the pages rendered with Quarto (report_engine: quarto), inside `snakemake
    --report report.zip` as its viewer shows them: the links lead to the pages beside them, and
    neither the report nor a page raises a JavaScript error (the single-file `report.html` form,
    where Quarto's page script cannot use localStorage, is not the one the docs give)."""
    import zipfile

    root, repo, res = finished
    assert res.returncode == 0, res.stdout[-3000:]
    work = _moved_copy(root, repo, "quarto-report")
    env_path = os.pathsep.join([str(Path(quarto).parent), os.environ.get("PATH", "")])
    quarto_cfg = ("--config", "report_engine=quarto")
    run = snakemake(work, "--cores", "2", *quarto_cfg, "--forcerun", "report_study", "report_index", path=env_path)
    assert run.returncode == 0, run.stdout[-4000:]
    assert "with quarto ->" in (work / "logs" / "report" / "1A.log").read_text(encoding="utf-8")
    rep = snakemake(work, *quarto_cfg, "--report", "report.zip", path=env_path)
    assert rep.returncode == 0, rep.stdout[-4000:]
    with zipfile.ZipFile(work / "report.zip") as zf:
        held = [n for n in zf.namelist() if n.startswith("report/data/") and n.endswith("/1A.html")]
        assert len(held) == 1 and b"quarto" in zf.read(held[0]).lower()[:20000], held
        zf.extractall(work / "unpacked")
    from browser_pages import follow_report_links

    seen = follow_report_links(
        work / "unpacked" / "report" / "report.html",
        held[0].replace("report/", "", 1),
        ["a[href='index.html']", "a[href='3D.html']"],
    )
    assert [u.rsplit("/", 1)[1] for u in seen["urls"]] == ["index.html", "3D.html"], seen
    assert seen["console_errors"] == [], seen
