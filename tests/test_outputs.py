"""Issue 29: no output destroys an input or a special file, and the failures of the environment
(a full disk, a read-only folder, no model cache yet, an output that is a folder...) end in a
sentence with exit 2, never in "unexpected error".

Every check of an output happens before any work (fmat.commands._common.check_files, with
fmat.io.check_output): the tests prove it by making the work itself fail loudly (a scoring
function that raises, a model that does not exist) and seeing the output's error instead.

A full disk and a read-only file system are real: a tiny tmpfs mounted in a private user and
mount namespace (``unshare``, util-linux), which disappears with the command.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fmat.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]
QUERY = [
    "query",
    "The [MASK] works as a {TARGET}.",
    "--mask",
    "Male=man",
    "--mask",
    "Female=woman",
    "--target",
    "Occ=nurse,engineer",
]


@pytest.fixture
def files(tmp_path):
    """A query table, a study file, a vectors file and a pairs file."""
    q = tmp_path / "q.csv"
    assert main([*QUERY, "-o", str(q)]) == 0
    study = tmp_path / "s.yaml"
    shutil.copy(REPO / "config" / "studies" / "3D.yaml", study)
    vectors = tmp_path / "v.txt"
    vectors.write_text("man 0.1 0.2\nwoman 0.2 0.1\n", encoding="utf-8")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("x\ty\n", encoding="utf-8")
    scores = tmp_path / "s.parquet"
    pd.read_csv(q).to_parquet(scores)
    return {"q": q, "study": study, "vectors": vectors, "pairs": pairs, "scores": scores}


def _bytes(paths):
    return {p: Path(p).read_bytes() for p in paths}


# ----------------------------------------------------------------------------- declared files


OUTPUT_DESTS = {"output", "summary", "dest", "cache", "lock"}
INPUT_DESTS = {"queries", "scores", "table", "study", "pairs", "vectors", "items", "male", "female", "S", "T", "A", "B", "world"}


def test_every_command_declares_the_files_it_reads_and_writes():
    """A new command with -o cannot forget the check: every output and input argument of every
    subcommand is declared (fmat.commands._common.files)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    checked = 0
    for name, p in sub.choices.items():
        dests = {a.dest for a in p._actions}
        outputs = p.get_default("io_outputs") or {}
        inputs = p.get_default("io_inputs") or ()
        for dest in dests & OUTPUT_DESTS:
            assert dest in outputs, (name, dest)
            checked += 1
        for dest in dests & INPUT_DESTS:
            assert dest in inputs, (name, dest)
    assert checked >= 15, checked


# ----------------------------------------------------------------------------- output = input


def _same_file_cases(f):
    q, study, vec, pairs, scores = (str(f[k]) for k in ("q", "study", "vectors", "pairs", "scores"))
    return {
        "summary -o its scores": (["summary", scores, "-o", scores], scores),
        "summary -o its study file": (["summary", scores, "--study", study, "-o", study], study),
        "run -o its queries": (["run", q, "-m", "no-such/model", "-o", q], q),
        "lpbs --summary its queries": (["lpbs", q, "-m", "no-such/model", "--summary", q], q),
        "query -o its study file": (["query", "--study", study, "-o", study], study),
        "reliability -o its table": (["reliability", q, "-o", q], q),
        "agreement -o its pairs": (["agreement", "-m", "no-such/model", "--pairs", pairs, "-o", pairs], pairs),
        "wefat --cache its vectors": (
            ["wefat", "--vectors", vec, "--items", "man", "--male", "man", "--female", "woman", "--cache", vec],
            vec,
        ),
        "weat --cache its vectors": (["weat", "--vectors", vec, "--S", "man", "--A", "woman", "--cache", vec], vec),
    }


@pytest.mark.parametrize("case", list(_same_file_cases({k: "x" for k in ("q", "study", "vectors", "pairs", "scores")})))
def test_an_output_that_is_an_input_is_refused_before_any_work(case, files, capsys, monkeypatch):
    """Issue 29, item 3: `fmat summary s.parquet -o s.parquet` replaced the raw scores with 2 LPR
    rows; now every command refuses, before reading or scoring anything, and the input keeps its bytes."""
    import fmat.runner

    def no_work(*a, **k):
        raise AssertionError("the command did work before checking its output")

    monkeypatch.setattr(fmat.runner, "run", no_work)
    argv, victim = _same_file_cases(files)[case]
    before = _bytes(files.values())
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"is the input file {victim}" in err and "writing it would destroy the input" in err, err
    assert "fix: write the output to another file" in err and "unexpected" not in err
    assert _bytes(files.values()) == before


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_an_output_linked_to_an_input_is_the_same_file(link, files, capsys):
    q = files["q"]
    out = q.with_name("out.csv")
    (out.symlink_to(q) if link == "symbolic" else os.link(q, out))
    before = q.read_bytes()
    assert main(["run", str(q), "-m", "no-such/model", "-o", str(out)]) == 2
    assert f"is the input file {q}" in capsys.readouterr().err
    assert q.read_bytes() == before


def test_study_folder_output_must_be_a_folder(files, capsys):
    before = files["study"].read_bytes()
    assert main(["study", str(files["study"]), "-m", "no-such/model", "-o", str(files["study"])]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert files["study"].read_bytes() == before


def test_two_outputs_that_are_one_file_are_refused(files, capsys):
    out = files["q"].with_name("both.parquet")
    assert main(["lpbs", str(files["q"]), "-m", "no-such/model", "-o", str(out), "--summary", str(out)]) == 2
    assert "--summary and -o/--output are the same file" in capsys.readouterr().err


# ----------------------------------------------------------------------------- what -o may be


def test_special_files_and_folders_are_never_replaced(tmp_path, capsys):
    """A folder, a FIFO, a device (also behind a symbolic link) as -o: refused, left as they were.
    (As root, `-o /dev/full` had turned the system's /dev/full into a regular file.)"""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "null.csv"
    link.symlink_to(os.devnull)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, what in (
        (folder, "is a folder, not a file"),
        (fifo, "is a FIFO"),
        (os.devnull, "is a device"),
        (link, "is a device"),
    ):
        assert main([*QUERY, "-o", str(target)]) == 2, target
        err = capsys.readouterr().err
        assert what in err and "fix:" in err and "unexpected" not in err, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert link.is_symlink() and list(folder.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_standard_output_as_a_file_name_is_refused(tmp_path):
    """`-o /proc/self/fd/1` with the output piped: a FIFO behind a link, refused."""
    res = subprocess.run(
        [sys.executable, "-m", "fmat.cli", *QUERY, "-o", "/proc/self/fd/1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert "is a FIFO" in res.stderr and res.stdout == ""


@pytest.mark.parametrize("name", ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1", "run.log"])
def test_standard_output_redirected_to_a_file_keeps_the_log(tmp_path, name):
    """Issue 35: `( echo before; fmat query ... -o /dev/stdout; echo after ) >> run.log` gave run.log a
    new inode holding only the table (the earlier lines and everything after were lost). Now refused
    (exit 2), and run.log keeps every line, in place."""
    log = tmp_path / "run.log"
    log.write_text("before\n", encoding="utf-8")
    inode = log.stat().st_ino
    with open(log, "a", encoding="utf-8") as out:
        res = subprocess.run(
            [sys.executable, "-m", "fmat.cli", *QUERY, "-o", name, "--format", "csv"],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
        out.write("after\n")
    text = log.read_text(encoding="utf-8")
    assert res.returncode == 2, text
    assert log.stat().st_ino == inode and text.startswith("before\n") and text.endswith("after\n"), text
    assert "standard output, redirected to the file" in text and str(log) in text and "fix:" in text, text
    assert "M_pair" not in text and [p.name for p in tmp_path.iterdir()] == ["run.log"]


def test_a_symbolic_link_is_written_through(tmp_path):
    """The documented choice (README, "On the command line"): the link stays, its target gets the table."""
    real = tmp_path / "data" / "real.csv"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "latest.csv"
    link.symlink_to(real)
    dangling = tmp_path / "new.csv"
    dangling.symlink_to(tmp_path / "data" / "created.csv")
    for out, target in ((link, real), (dangling, tmp_path / "data" / "created.csv")):
        assert main([*QUERY, "-o", str(out)]) == 0
        assert out.is_symlink() and len(pd.read_csv(target)) == 4
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["created.csv", "real.csv"]


def test_an_existing_regular_output_is_replaced(tmp_path, capsys):
    """The documented outcome (README, "On the command line"): like R's write.csv, an existing file
    is overwritten (atomically)."""
    out = tmp_path / "q.csv"
    out.write_text("something else\n", encoding="utf-8")
    assert main([*QUERY, "-o", str(out)]) == 0
    assert "wrote 4 rows" in capsys.readouterr().out
    assert len(pd.read_csv(out)) == 4


def test_an_unknown_extension_is_refused_before_scoring(files, capsys, monkeypatch):
    """`-o out.xlsx` used to be refused after all the scoring."""
    import fmat.runner

    monkeypatch.setattr(fmat.runner, "run", lambda *a, **k: pytest.fail("scored before checking -o"))
    assert main(["run", str(files["q"]), "-m", "no-such/model", "-o", str(files["q"].with_name("out.xlsx"))]) == 2
    err = capsys.readouterr().err
    assert "-o/--output" in err and "cannot read or write a .xlsx table" in err and "fix: use one of" in err


@pytest.mark.parametrize("top", ["-3", "0"])
def test_top_must_be_at_least_one(top, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["check", "Paris is the [MASK] of France.", "-m", "no-such/model", "--top", top])
    assert exit_.value.code == 2
    assert f"argument --top: {top} is less than 1" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the model cache


def test_no_model_cache_yet(tmp_path, capsys, monkeypatch):
    """`fmat remove` and `fmat info` before anything was downloaded: a sentence naming the cache."""
    empty = tmp_path / "hf" / "hub"
    assert main(["remove", "bert-base-uncased", "--cache-dir", str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"there is no model cache at {empty}" in err and "fix:" in err and "unexpected" not in err
    assert main(["info", "-m", "bert-base-uncased", "--cache-dir", str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"is not in the local model cache ({empty})" in err and "fmat download bert-base-uncased" in err


def test_a_cache_folder_that_cannot_be_made(tmp_path, capsys):
    """A cache_dir under a file: `fmat download` says so before going online; set_cache_folder
    (the workflow's cache_dir) too."""
    from fmat.errors import InputError
    from fmat.models import set_cache_folder

    blocker = tmp_path / "afile"
    blocker.write_text("", encoding="utf-8")
    assert main(["download", "bert-base-uncased", "--cache-dir", str(blocker / "hf")]) == 2
    err = capsys.readouterr().err
    assert f"{blocker} is a file, not a folder" in err and "--cache-dir" in err and "cache_dir" in err
    with pytest.raises(InputError, match="cannot create the model cache folder") as caught:
        set_cache_folder(blocker / "hf")
    assert "cache_dir (workflow configuration)" in caught.value.fix


# ----------------------------------------------------------------------------- a full or read-only disk


def _unshare_ok() -> bool:
    return shutil.which("unshare") is not None


def fmat_on_tmpfs(tmp_path: Path, args: list[str], *, mode: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``fmat ARGS`` in a private mount namespace where ``tmp_path/mnt`` is a 64 KiB tmpfs,
    filled up (``mode="full"``) or read-only (``mode="ro"``). Returns the result and what was
    left in the mount afterwards (listed from inside: the mount ends with the command)."""
    assert _unshare_ok(), "the test needs unshare (util-linux)"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    q = shlex.quote(str(mnt))
    prepare = {"full": f"(dd if=/dev/zero of={q}/filler bs=4k >/dev/null 2>&1; true)", "ro": f"mount -o remount,ro {q}"}[mode]
    script = f'mount -t tmpfs -o size=64k tmpfs {q} && {prepare} && "$@"; rc=$?; echo LEFT: $(ls -A {q}); exit $rc'
    cmd = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", sys.executable, "-m", "fmat.cli", *args]
    res = subprocess.run(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    left = res.stdout.rsplit("LEFT:", 1)[-1].split() if "LEFT:" in res.stdout else None
    return res, left


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from test_scoring import tiny_models

    return tiny_models(tmp_path_factory)["bert-uncased"]


def test_a_full_disk_during_scoring_is_a_sentence(tmp_path, tiny_bert):
    """The scores are computed, then the disk is full: exit 2 naming the output, no temporary file left."""
    q = tmp_path / "q.csv"
    assert main([*QUERY, "-o", str(q)]) == 0
    out = tmp_path / "mnt" / "scores.parquet"
    res, left = fmat_on_tmpfs(
        tmp_path, ["run", str(q), "-m", tiny_bert, "--device", "cpu", "--no-progress", "-o", str(out)], mode="full"
    )
    assert res.returncode == 2, res.stderr
    assert f"{out}: no space left on the device" in res.stderr, res.stderr
    assert "fix: free some space" in res.stderr and "unexpected" not in res.stderr and "Traceback" not in res.stderr
    assert left == ["filler"], res.stdout


def test_a_read_only_output_folder_is_refused_before_any_work(tmp_path):
    out = tmp_path / "mnt" / "q.csv"
    res, left = fmat_on_tmpfs(tmp_path, [*QUERY, "-o", str(out)], mode="ro")
    assert res.returncode == 2, res.stderr
    assert f"cannot write into the folder {out.parent}: its file system is read-only" in res.stderr, res.stderr
    assert "unexpected" not in res.stderr and left == []


def test_os_errors_become_sentences_in_one_place():
    """fmat.errors.os_error: the classes the CLI's handler (and the workflow's scripts) turn into
    exit 2 with what, where and fix; anything else stays a bug (None: the traceback is shown)."""
    import errno

    from fmat.errors import os_error

    for code, what in (
        (errno.ENOSPC, "no space left"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "permission denied"),
        (errno.EISDIR, "folder, not a file"),
    ):
        err = os_error(OSError(code, os.strerror(code), "/some/out.parquet"))
        assert what in err.message and err.where == "/some/out.parquet" and err.fix, code
    assert os_error(ValueError("a bug")) is None
    assert os_error(OSError(errno.EIO, "I/O error")) is None


def test_the_cli_handler_maps_an_os_error_to_exit_2(tmp_path, capsys, monkeypatch):
    """A permission error raised deep inside a command (here: writing the table) is exit 2 with the
    file and the fix, not 'unexpected error' (the handler in fmat.cli.main, for every command)."""
    import errno

    import fmat.commands._common

    def denied(df, path, fmt=None):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(fmat.commands._common, "write_table", denied)  # what `fmat query -o` writes with
    out = tmp_path / "q.csv"
    assert main([*QUERY, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: permission denied" in err and "fix:" in err and "unexpected" not in err
