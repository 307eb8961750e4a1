"""``fmat study`` on tiny models: nothing computed is lost when a later step fails, the failure
names the models and words that caused it, and the printed command resumes from the kept
scores (issue 34)."""

from __future__ import annotations

import shlex
import textwrap

import pandas as pd
import pytest

from fmat.cli import main
from fmat.tiny import build_tiny_model

WORDS = ["man", "woman", "nurse", "engineer", "doctor", "works", "as", "is", "the", "a", "an"]

STUDY = textwrap.dedent("""\
    id: S1
    title: Gender and occupations
    queries:
      - query: "The [MASK] works as {TARGET}."
        MASK: {Male: [man], Female: [woman]}
        TARGET:
          Occupation:
            - {phrase: a nurse, item: nurse}
            - {phrase: an engineer, item: engineer}
            - {phrase: a doctor, item: doctor}
      - query: "The [MASK] is {TARGET}."
        MASK: {Male: [man], Female: [woman]}
        TARGET:
          Occupation: [nurse, engineer, doctor]
    lpr: {target_pair: false}
    reliability: {item: query, by: [model]}
    """)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two tiny models; the second has no whole-word token for 'woman' (so it has no LPR)."""
    root = tmp_path_factory.mktemp("study_models")
    a = build_tiny_model(root / "tiny-a", "bert-uncased", WORDS, seed=1)
    b = build_tiny_model(root / "tiny-b", "bert-uncased", [w for w in WORDS if w != "woman"], seed=2)
    return str(a), str(b)


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    """A second model that scores every word (another tokenizer family)."""
    return str(build_tiny_model(tmp_path_factory.mktemp("study_other") / "tiny-d", "roberta", WORDS, seed=3))


@pytest.fixture()
def study(tmp_path):
    path = tmp_path / "S1.yaml"
    path.write_text(STUDY, encoding="utf-8")
    return path


def test_a_failing_reliability_step_keeps_the_tables_and_says_how_to_resume(tiny, study, tmp_path, capsys, monkeypatch):
    a, b = tiny
    out = tmp_path / "out"
    rc = main(["study", str(study), "-m", a, "-m", b, "-o", str(out), "--device", "cpu", "--threads", "1"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "the reliability step failed" in err and "ICC needs at least 2" in err
    # the cause: which model, which word
    assert "model tiny-b" in err and "'woman'" in err, err
    # the tables computed before the failure are kept
    for name in ("queries", "scores", "lpr"):
        assert (out / f"{name}.parquet").is_file(), name
    scores = pd.read_parquet(out / "scores.parquet")
    assert set(scores["model"].astype(str)) == {"tiny-a", "tiny-b"} and len(scores) == 24
    assert not (out / "reliability.parquet").exists()
    # a resumable command, printed in full
    line = next(x for x in err.splitlines() if "--resume" in x)
    command = shlex.split(line[line.index("fmat study") :])
    assert command[:2] == ["fmat", "study"] and command[-1] == "--resume"

    # resuming without the model that has no LPR: tiny-a's scores are reused, nothing is scored again
    import fmat.runner

    def no_scoring(*args, **kwargs):
        raise AssertionError("a model was scored again although its scores were kept")

    monkeypatch.setattr(fmat.runner, "score_tables", no_scoring)
    args = command[1:]
    i = args.index(b)
    del args[i - 1 : i + 1]
    assert main(args) == 0, capsys.readouterr().err
    stats = pd.read_parquet(out / "stats.parquet")
    alpha = stats[(stats["statistic"] == "alpha") & (stats["model"] == "tiny-a")]["value"]
    assert len(alpha) == 1 and alpha.notna().all()
    assert set(pd.read_parquet(out / "scores.parquet")["model"].astype(str)) == {"tiny-a"}


def test_resume_scores_again_what_is_not_of_this_study(tiny, study, tmp_path, capsys):
    """--resume reuses only a model's rows that are this study's queries."""
    a, _ = tiny
    out = tmp_path / "out"
    assert main(["study", str(study), "-m", a, "-o", str(out), "--device", "cpu", "--no-progress"]) == 0
    first = pd.read_parquet(out / "scores.parquet")
    study.write_text(STUDY.replace("[nurse, engineer, doctor]", "[nurse, doctor]"), encoding="utf-8")
    assert main(["study", str(study), "-m", a, "-o", str(out), "--device", "cpu", "--no-progress", "--resume"]) == 0
    again = pd.read_parquet(out / "scores.parquet")
    assert len(again) == len(first) - 2
    assert "engineer" not in set(again[again["query"].astype(str) == "The [MASK] is {TARGET}."]["T_word"].astype(str))


def test_resume_of_an_lpbs_study_scores_again_scores_without_priors(tiny, study, tmp_path, capsys):
    """A study switched to score: {method: lpbs} and resumed: the kept scores (method fmat) have no
    priors, so they are scored again; before, --resume reused them and the LPR step failed with
    "scores have no 'prior' column" after every model was loaded."""
    a, _ = tiny
    out = tmp_path / "out"
    common = ["-m", a, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"]
    assert main(["study", str(study), *common]) == 0, capsys.readouterr().err
    assert "prior" not in pd.read_parquet(out / "scores.parquet").columns
    study.write_text(STUDY + "score: {method: lpbs}\n", encoding="utf-8")
    assert main(["study", str(study), *common, "--resume"]) == 0, capsys.readouterr().err
    scores = pd.read_parquet(out / "scores.parquet")
    assert {"prior", "logp_prior"} <= set(scores.columns) and scores["prior"].between(0, 1).all()
    assert pd.read_parquet(out / "lpr.parquet")["LPR"].notna().any()


def test_fmat_study_shows_progress_as_fmat_run(tiny, study, tmp_path, capsys):
    a, _ = tiny
    assert main(["study", str(study), "-m", a, "-o", str(tmp_path / "out"), "--device", "cpu"]) == 0
    err = capsys.readouterr().err
    assert "tiny-a:" in err and "/6 [" in err and "sent/s" in err, err  # the tqdm bar of fmat run


def test_report_writes_one_self_contained_page_of_ones_own_study(tiny, other, study, tmp_path, capsys):
    """fmat study --report: the study's own title (escaped), its design, LPRs, reliability and a
    figure inside the file; nothing about the paper, nothing fetched."""
    import re

    study.write_text(STUDY.replace("title: Gender and occupations", "title: Gender <and> occupations"), encoding="utf-8")
    a, _ = tiny
    out = tmp_path / "out"
    assert (
        main(["study", str(study), "-m", a, "-m", other, "-o", str(out), "--device", "cpu", "--no-progress", "--report"]) == 0
    ), capsys.readouterr().err
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<title>Gender &lt;and&gt; occupations</title>" in page
    for section in ('id="design"', 'id="lpr"', 'id="reliability"', 'id="models"'):
        assert section in page
    assert "The [MASK] works as {TARGET}." in page and "tiny-d" in page
    assert re.search(r'<img class="lpr-figure" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', page)
    stats = pd.read_parquet(out / "stats.parquet")
    # alpha is shown as a number over 4 rows or more; over fewer, NA with the reason (issue 54)
    alpha = stats[(stats["statistic"] == "alpha") & (stats["model"] == "tiny-a")].iloc[0]
    if alpha["n"] < 4:
        assert f"<td>NA</td><td>NA</td><td>NA</td><td>{int(alpha['n'])}</td><td>NA: alpha over {int(alpha['n'])} rows" in page
        assert f"<td>{alpha['value']:.3f}</td>" not in page
    else:
        assert f"{alpha['value']:.3f}" in page
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)  # a figure's bytes may spell "bAo" by chance
    assert not re.search(r"Bao|paper|replicat", text, re.I)
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # self-contained


def test_a_page_path_that_cannot_be_written_is_refused_before_any_model_loads(tiny, other, study, tmp_path, capsys, monkeypatch):
    """Issue 44: report.html a link to /dev/full was refused only after all the scoring, with a
    fix that could not be followed (the page's name is fixed). Now before any model loads."""
    import fmat.runner

    def no_scoring(*args, **kwargs):
        raise AssertionError("a model was scored although the page cannot be written")

    monkeypatch.setattr(fmat.runner, "score_tables", no_scoring)
    a, _ = tiny
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").symlink_to("/dev/full")
    rc = main(["study", str(study), "-m", a, "-m", other, "-o", str(out), "--device", "cpu", "--threads", "1", "--report"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"{out / 'report.html'} is a device; fmat writes only regular files" in err, err
    page = out / "report.html"
    assert f"fix: fmat study writes report.html under that fixed name: move {page} away, or give another output folder" in err
    assert not (out / "queries.parquet").exists()


def test_a_full_disk_at_the_page_keeps_the_tables_and_prints_the_resume_command(
    tiny, other, study, tmp_path, capsys, monkeypatch
):
    """Issue 44: a full disk (or any failure of the environment) after the scoring printed no
    --resume command, unlike the other late failures. (The full disk is simulated at the page
    step: a real one, during scoring, is tests/test_outputs.py's.)"""
    import errno

    import fmat.study_page

    def full(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(fmat.study_page, "write_study_page", full)
    a, _ = tiny
    out = tmp_path / "out"
    rc = main(["study", str(study), "-m", a, "-m", other, "-o", str(out), "--device", "cpu", "--threads", "1", "--report"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "the report page step failed: no space left on the device" in err and "kept:" in err, err
    assert "free some space" in err and "unexpected error" not in err
    line = next(x for x in err.splitlines() if "--resume" in x)
    assert shlex.split(line[line.index("fmat study") :])[-2:] == ["--report", "--resume"]
    for name in ("queries", "scores", "lpr", "reliability", "stats"):
        assert (out / f"{name}.parquet").is_file(), name


OTHER = STUDY.replace("id: S1", "id: S2").replace("Gender and occupations", "Another study")


def test_another_studys_folder_is_refused_or_replaced_whole_with_force(tiny, other, study, tmp_path, capsys):
    """Issue 42: `-o` into another study's folder replaced its tables one by one without a word and
    left its old report.html beside them. Now refused before any model loads; --force removes the
    other run's files first (and only them), so the two runs are never mixed."""
    a, _ = tiny
    out = tmp_path / "out"
    common = ["-m", a, "-m", other, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"]
    assert main(["study", str(study), *common, "--report"]) == 0, capsys.readouterr().err
    (out / "mine.txt").write_text("the user's own file", encoding="utf-8")
    assert main(["study", str(study), *common]) == 0, capsys.readouterr().err  # the same study again: fine
    s2 = tmp_path / "S2.yaml"
    s2.write_text(OTHER, encoding="utf-8")
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert main(["study", str(s2), *common]) == 2
    err = capsys.readouterr().err
    assert "holds the files of a run of `fmat study` on study 'S1'" in err and "--force" in err, err
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before  # nothing touched
    assert main(["study", str(s2), *common, "--force"]) == 0, capsys.readouterr().err
    assert not (out / "report.html").exists()  # S1's page is gone, not left beside S2's tables
    assert (out / "mine.txt").read_text(encoding="utf-8") == "the user's own file"
    assert set(pd.read_parquet(out / "queries.parquet")["query"].astype(str)) == {
        "The [MASK] works as {TARGET}.",
        "The [MASK] is {TARGET}.",
    }


def test_ctrl_c_says_what_was_kept_and_how_to_go_on(tiny, other, study, tmp_path, capsys, monkeypatch):
    """Issue 42: Ctrl-C printed only "interrupted", though the finished tables were kept and
    --resume works. Now it names what was kept and prints the command that goes on."""
    import fmat.runner

    real = fmat.runner.score_tables

    def interrupted_at_the_second_model(source, *args, **kwargs):
        if source == other:
            raise KeyboardInterrupt
        yield from real(source, *args, **kwargs)

    monkeypatch.setattr(fmat.runner, "score_tables", interrupted_at_the_second_model)
    a, _ = tiny
    out = tmp_path / "out"
    rc = main(["study", str(study), "-m", a, "-m", other, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 130, err
    assert f"fmat study: interrupted; kept: {out / 'queries.parquet'}, {out / 'scores.parquet'}" in err, err
    line = next(x for x in err.splitlines() if "--resume" in x)
    command = shlex.split(line[line.index("fmat study") :])
    monkeypatch.setattr(fmat.runner, "score_tables", real)
    assert main(command[1:]) == 0, capsys.readouterr().err
    assert set(pd.read_parquet(out / "scores.parquet")["model"].astype(str)) == {"tiny-a", "tiny-d"}


def test_force_removes_only_what_the_run_recorded_and_refuses_a_users_file_of_our_name(tiny, study, tmp_path, capsys):
    """Issue 55: --force removed every file named like one of fmat's, whoever wrote it. Now the
    run record lists what each run wrote: --force removes those, and a file of the user's that
    bears one of our names (not in the record) is named as theirs and survives, --force included."""
    import json

    a, _ = tiny
    out = tmp_path / "out"
    common = ["-m", a, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"]
    assert main(["study", str(study), *common]) == 0, capsys.readouterr().err  # S1, no page
    record = json.loads((out / ".fmat-run.json").read_text(encoding="utf-8"))
    assert record["command"] == "study" and record["study"] == "S1"
    assert sorted(record["files"]) == sorted(f"{t}.parquet" for t in ("queries", "scores", "lpr", "reliability", "stats"))
    (out / "report.html").write_text("<p>my own notes</p>", encoding="utf-8")  # the user's, named like our page
    (out / "scores.csv").write_text("my,own\n1,2\n", encoding="utf-8")  # the user's, in a format S1 did not write
    s2 = tmp_path / "S2.yaml"
    s2.write_text(OTHER, encoding="utf-8")
    for force in ([], ["--force"]):
        assert main(["study", str(s2), *common, "--report", *force]) == 2
        err = capsys.readouterr().err
        assert "holds report.html, which no fmat run recorded as its own" in err and "your file" in err, err
        assert "--force included" in err, err
        assert (out / "queries.parquet").is_file()  # refused before anything is removed
    assert main(["study", str(s2), *common, "--force"]) == 0, capsys.readouterr().err  # no page: nothing of theirs in the way
    assert (out / "report.html").read_text(encoding="utf-8") == "<p>my own notes</p>"
    assert (out / "scores.csv").read_text(encoding="utf-8") == "my,own\n1,2\n"
    assert json.loads((out / ".fmat-run.json").read_text(encoding="utf-8"))["study"] == "S2"


def test_a_users_tables_without_a_record_are_theirs_even_with_force(tiny, study, tmp_path, capsys):
    """A folder of tables no fmat run recorded (the user's own scores.parquet): not removed by
    --force; the refusal names them as the user's and offers --resume (they may be this study's)."""
    a, _ = tiny
    out = tmp_path / "out"
    out.mkdir()
    (out / "scores.parquet").write_bytes(b"the user's own table")
    rc = main(["study", str(study), "-m", a, "-o", str(out), "--device", "cpu", "--no-progress", "--force"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "holds scores.parquet, which no fmat run recorded as its own" in err and "--resume" in err, err
    assert (out / "scores.parquet").read_bytes() == b"the user's own table"


def test_the_run_record_is_never_written_through_a_link(tiny, study, tmp_path, capsys):
    """Issue 55: a .fmat-run.json replaced by a link to a user's file: `fmat study --resume`
    wrote the record into that file. Now refused with a clear error; the file is untouched."""
    a, _ = tiny
    out = tmp_path / "out"
    common = ["-m", a, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"]
    assert main(["study", str(study), *common]) == 0, capsys.readouterr().err
    theirs = tmp_path / "diary.txt"
    theirs.write_text("dear diary", encoding="utf-8")
    (out / ".fmat-run.json").unlink()
    (out / ".fmat-run.json").symlink_to(theirs)
    assert main(["study", str(study), *common, "--resume"]) == 2
    err = capsys.readouterr().err
    assert ".fmat-run.json is a symbolic link" in err and "remove the link" in err, err
    assert theirs.read_text(encoding="utf-8") == "dear diary"
    assert (out / ".fmat-run.json").is_symlink()


def test_a_damaged_run_record_is_called_damaged_and_resume_reuses_the_scores(tiny, study, tmp_path, capsys, monkeypatch):
    """Issue 55: a record cut to 15 bytes was "an earlier run that did not record its study", and
    the fix offered --force, which deletes scores that --resume reuses. Now it is called damaged,
    the fix offers --resume, and --resume reuses the scores and writes a new record."""
    import json

    import fmat.runner

    a, _ = tiny
    out = tmp_path / "out"
    common = ["-m", a, "-o", str(out), "--device", "cpu", "--threads", "1", "--no-progress"]
    assert main(["study", str(study), *common]) == 0, capsys.readouterr().err
    record = out / ".fmat-run.json"
    for damage in (
        record.read_bytes()[:15],
        b"[1, 2]\n",
        b'{"command": "study"}\n',
        b'{"command": "study", "study": "S1", "files": ["../x"]}',
    ):
        record.write_bytes(damage)
        assert main(["study", str(study), *common]) == 2
        err = capsys.readouterr().err
        assert ".fmat-run.json is damaged" in err and "add --resume" in err and "--force" not in err, (damage, err)
        assert (out / "scores.parquet").is_file()

    def no_scoring(*args, **kwargs):
        raise AssertionError("a model was scored again although its scores were kept")

    monkeypatch.setattr(fmat.runner, "score_tables", no_scoring)
    assert main(["study", str(study), *common, "--resume"]) == 0, capsys.readouterr().err
    assert json.loads(record.read_text(encoding="utf-8"))["study"] == "S1"
