"""``fmat query`` and ``fmat summary``: exit codes, outputs, help texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmat.cli import main
from fmat.design import query, read_query_table, read_r_table

DATA = Path(__file__).parent / "data"


def test_query_from_options_writes_csv(tmp_path, capsys):
    out = tmp_path / "q.csv"
    rc = main(
        [
            "query",
            "The [MASK] works as a {TARGET}.",
            "--mask",
            "Male=man",
            "--mask",
            "Female=woman",
            "--target",
            "Occ=nurse, engineer",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    assert "wrote 4 rows" in capsys.readouterr().out
    expected = query(
        "The [MASK] works as a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Occ": ["nurse", "engineer"]}
    )
    pd.testing.assert_frame_equal(read_query_table(out), expected)


def test_query_several_sentences_and_attrib_preview(capsys):
    rc = main(
        [
            "query",
            "[MASK] is {ATTRIB}.",
            "[MASK] seems {ATTRIB}.",
            "--mask",
            "Male=he",
            "--mask",
            "Female=she",
            "--attrib",
            "Warm=kind",
            "--attrib",
            "Cold=cold",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "qid" in printed and "Warm-Cold.1" in printed


def test_query_from_study_file(tmp_path):
    out = tmp_path / "q.parquet"
    assert main(["query", "--study", str(DATA / "studies" / "EX1.yaml"), "-o", str(out)]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 2 * 2 + 2 * 2 * 2 and list(df.columns)[0] == "qid"
    assert main(["query", "--study", str(DATA / "studies" / "EX1.yaml"), "--check"]) == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["query", "no mask", "--mask", "A=x"], "has no [MASK]"),
        (["query", "[MASK] x", "--mask", "A=x,y", "--mask", "B=z"], "A has 2, B has 1"),
        (["query", "[MASK] x", "--mask", "A"], "cannot read group 'A'"),
        (["query", "[MASK] x", "--mask", "A=x", "--mask", "A=y"], "group 'A' is given twice"),
        (["query", "[MASK] {TARGET}", "--mask", "A=x"], "no TARGET groups"),
        (["query"], "no query given"),
        (["query", "--check"], "--check needs --study"),
        (["query", "x [MASK]", "--study", "s.yaml"], "cannot be combined"),
        (["query", "--study", "missing/none.yaml"], "study file not found"),
        (["summary", "missing.parquet"], "file not found"),
    ],
)
def test_bad_input_exits_2_without_traceback(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "error:" in err


def test_check_lists_problems(tmp_path, capsys):
    bad = tmp_path / "B1.yaml"
    bad.write_text("id: B1\ntitle: x\ncolour: red\nqueries:\n  - query: '[MASK] x'\n    MASK: {A: [a]}\nscore: {method: magic}\n")
    assert main(["query", "--study", str(bad), "--check"]) == 2
    err = capsys.readouterr().err
    assert "2 problem(s)" in err and "'colour'" in err and "'magic'" in err


def test_summary_of_r_scores_matches_r(tmp_path):
    out = tmp_path / "lpr.csv"
    assert main(["summary", str(DATA / "r_fmat" / "scores_MT.csv"), "--no-mask-pair", "-o", str(out)]) == 0
    got = read_r_table(out)
    expected = read_r_table(DATA / "r_fmat" / "lpr_MT_FTT.csv")
    assert list(got.columns) == list(expected.columns)
    assert got["T_word"].tolist() == expected["T_word"].tolist()
    np.testing.assert_allclose(got["LPR"].astype(float), expected["LPR"].astype(float), rtol=1e-12)


def test_summary_parquet_and_study_options(tmp_path):
    scores = read_query_table(DATA / "r_fmat" / "query_MT.csv")
    scores.insert(0, "model", "m")
    scores["prob"] = np.linspace(0.01, 0.3, len(scores))
    path = tmp_path / "scores.parquet"
    scores.to_parquet(path)
    out = tmp_path / "lpr.parquet"
    assert main(["summary", str(path), "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == 8  # 2 queries x 2 mask pairs x 2 target pairs
    assert main(["summary", str(path), "--no-target-pair", "--no-mask-pair", "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == len(scores)
    # options from a study file's lpr block (EX1: target_pair false)
    assert main(["summary", str(path), "--study", str(DATA / "studies" / "EX1.yaml"), "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == 16  # 2 queries x 2 mask pairs x 4 target words
    # one MASK group cannot be mask-paired: exit 2 with what to do
    one = scores[scores["MASK"] == "Male"]
    one.to_parquet(path)
    assert main(["summary", str(path)]) == 2


@pytest.mark.parametrize("command", ["query", "summary"])
def test_help_teaches_with_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "examples:" in text and f"fmat {command} " in text


@pytest.mark.parametrize(
    "command", [["run", "q.parquet"], ["lpbs", "q.parquet"], ["agreement"], ["study", "s.yaml", "-o", "out"]]
)
@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--batch-size", "0", "0 is less than 1"),
        ("--max-tokens", "many", "'many' is not a whole number"),
        ("--threads", "-2", "-2 is less than 1"),
    ],
)
def test_scoring_commands_check_batch_and_thread_numbers_first(command, flag, value, message, capsys):
    # the model does not exist: the error must come from the flag, before anything is loaded
    with pytest.raises(SystemExit) as exit_:
        main(command + ["-m", "no/such-model", flag, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: {message}" in err


def test_study_command_checks_the_study_file_then_the_models_before_loading(tmp_path, capsys, monkeypatch):
    """fmat study: a bad study file is named first (before any model is looked at), a model path
    that is no folder is named as such, and neither reaches the model loader."""
    import fmat.runner

    monkeypatch.setattr(fmat.runner, "load_masked_lm", lambda *a, **k: pytest.fail("a model was loaded"))
    bad = tmp_path / "S.yaml"
    bad.write_text('id: S\ntitle: t\nqueries:\n  - query: "[MASK] is here."\n    MASK: {A: [he], B: [she, her]}\n')
    assert main(["study", str(bad), "-m", str(tmp_path / "no-model"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "unequal numbers of words" in err and "no model folder" not in err
    bad.write_text('id: S\ntitle: t\nqueries:\n  - query: "[MASK] is here."\n    MASK: {A: [he], B: [she]}\n')
    assert main(["study", str(bad), "-m", str(tmp_path / "no-model"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--model" in err and f"there is no model folder {tmp_path / 'no-model'}" in err and "fix:" in err
