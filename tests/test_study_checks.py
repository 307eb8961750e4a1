"""Mistakes caught where they are made, and the command line's small promises (issue 34):
analysis names, NFC words and look-alikes, a mistyped model, a semicolon CSV, --debug
anywhere, warnings that point at the user's call, fixes in command-line words."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
import warnings

import pandas as pd
import pytest

import fmat
import fmat.models as M
from fmat.cli import build_parser, main
from fmat.errors import InputError, ModelError
from fmat.scoring import OOVWarning
from fmat.tiny import build_tiny_model

NAIVE_NFD = "nai\u0308ve"  # "naïve" as macOS or a PDF paste it: i + COMBINING DIAERESIS
NAIVE_NFC = "na\u00efve"


def test_an_analysis_registered_once_is_known_to_every_check(tmp_path):
    """The analyses are library code (fmat.analyses) and their registry is the only list of
    names: a function registered there is accepted by the study-file check, with its options
    checked against its signature, and no other list needs editing."""
    from fmat import analyses
    from fmat.study import check_analysis_name

    with pytest.raises(InputError, match="unknown analysis 'my_count'"):
        check_analysis_name("my_count", {})

    @analyses.register("my_count")
    def my_count(data, *, group: str = "M"):
        return analyses.AnalysisOutput(stats=pd.DataFrame())

    try:
        check_analysis_name("my_count", {"group": "F"})
        with pytest.raises(InputError, match=r"no option\(s\) 'grup' \(did you mean 'group'\?\)"):
            check_analysis_name("my_count", {"grup": "F"})
        assert "my_count" in analyses.available()
    finally:
        analyses._REGISTRY.pop("my_count", None)


def test_words_and_queries_are_nfc():
    q = fmat.query(f"The {NAIVE_NFD} [MASK] is {{TARGET}}.", MASK={"M": ["man"], "F": ["woman"]}, TARGET={"T": [NAIVE_NFD]})
    assert q["T_word"].astype(str).tolist() == [NAIVE_NFC] * 2
    assert NAIVE_NFC in str(q["query"].iloc[0])


def test_a_study_file_and_a_query_table_are_read_as_nfc(tmp_path):
    from fmat.design import read_query_table
    from fmat.study import load_study

    path = tmp_path / "N.yaml"
    path.write_text(
        'id: N\ntitle: t\nqueries:\n  - query: "The [MASK] is {TARGET}."\n'
        "    MASK: {M: [man], F: [woman]}\n"
        f"    TARGET: {{T: [{{phrase: a {NAIVE_NFD} one, item: {NAIVE_NFD}}}, nurse]}}\n"
        "lpr: {target_pair: false}\n",
        encoding="utf-8",
    )
    s = load_study(path)
    assert f"a {NAIVE_NFC} one" in set(s.queries["T_word"].astype(str))
    assert s.queries.attrs["item_keys"]["T_word"] == {f"a {NAIVE_NFC} one": NAIVE_NFC}
    csv = tmp_path / "q.csv"
    csv.write_text(
        f"query,MASK,M_pair,M_word\n[MASK] is {NAIVE_NFD}.,Male,1,he\n[MASK] is {NAIVE_NFD}.,Female,1,she\n", encoding="utf-8"
    )
    assert unicodedata.is_normalized("NFC", str(read_query_table(csv)["query"].iloc[0]))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(
        build_tiny_model(
            tmp_path_factory.mktemp("look") / "tiny-bert", "bert-uncased", ["man", "woman", "nurse", "is", "the", "a"], seed=1
        )
    )


def _user_call(model, q):
    return fmat.run([model], q, progress=False)  # the line a warning must point at


def test_an_oov_word_that_only_looks_like_a_vocabulary_entry_shows_code_points(tiny):
    q = fmat.query("The [MASK] is a nurse.", MASK={"M": ["man"], "F": ["\uff57\uff4f\uff4d\uff41\uff4e"]})  # full-width
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _user_call(tiny, q)
    oov = [w for w in seen if issubclass(w.category, OOVWarning)]
    assert len(oov) == 1
    text = str(oov[0].message)
    assert "U+FF57" in text and "U+0077 U+006F U+006D U+0061 U+006E" in text and "looks the same" in text, text
    # the warning points at the user's call, not at fmat's source
    assert oov[0].filename == __file__, oov[0].filename
    assert "fmat.run([model], q" in open(oov[0].filename).read().splitlines()[oov[0].lineno - 1]


def test_a_mistyped_model_is_offered_the_nearest_cached_names(tmp_path, monkeypatch):
    monkeypatch.setattr(M, "cached_models", lambda cache=None: ["google-bert/bert-base-uncased", "roberta-base"])
    with pytest.raises(ModelError) as err:
        M.load_masked_lm("bert-base-uncase", cache_dir=tmp_path)
    assert "did you mean 'google-bert/bert-base-uncased'" in str(err.value)
    with pytest.raises(ModelError) as err:
        M.load_masked_lm("robrta-base", cache_dir=tmp_path)
    assert "did you mean 'roberta-base'" in str(err.value)


def test_a_semicolon_csv_is_named_in_the_fix(tmp_path, capsys):
    path = tmp_path / "lpr.csv"
    path.write_text("model;query;LPR\na;q;1.5\n", encoding="utf-8")
    assert main(["reliability", str(path)]) == 2
    err = capsys.readouterr().err
    assert "semicolon" in err and "write.csv2" in err and str(path) in err, err
    q = tmp_path / "q.csv"
    q.write_text('query;MASK;M_pair;M_word\n"[MASK] is here.";Male;1;he\n', encoding="utf-8")
    with pytest.raises(InputError, match="semicolon"):
        fmat.design.read_query_table(q)


def test_debug_is_accepted_after_the_subcommand(tmp_path):
    missing = str(tmp_path / "none.csv")
    assert build_parser().parse_args(["reliability", missing, "--debug"]).debug is True
    assert build_parser().parse_args(["--debug", "reliability", missing]).debug is True
    assert build_parser().parse_args(["reliability", missing]).debug is False
    with pytest.raises(InputError):  # --debug: the error is raised (traceback), not printed
        main(["reliability", missing, "--debug"])


def test_reliability_help_names_only_commands_that_exist(capsys):
    with pytest.raises(SystemExit):
        main(["reliability", "--help"])
    out = capsys.readouterr().out
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    import re

    named = set(re.findall(r"\bfmat ([a-z][a-z-]+)", out))
    assert named and named <= commands, named - commands


def test_cli_fixes_name_the_flag(tmp_path, capsys):
    scores = tmp_path / "s.csv"
    scores.write_text(
        "model,query,MASK,M_pair,M_word,TARGET,T_pair,T_word,prob\n"
        "m,[MASK] is {TARGET}.,Male,1,he,Occ,1,nurse,0.2\n"
        "m,[MASK] is {TARGET}.,Female,1,she,Occ,1,nurse,0.3\n",
        encoding="utf-8",
    )
    assert main(["summary", str(scores)]) == 2
    err = capsys.readouterr().err
    assert "--no-target-pair" in err, err


def test_cli_warnings_name_the_command_not_fmats_source(tiny, tmp_path):
    q = tmp_path / "q.csv"
    q.write_text(
        "query,MASK,M_pair,M_word\nThe [MASK] is a nurse.,Male,1,man\nThe [MASK] is a nurse.,Female,1,womanly\n", encoding="utf-8"
    )
    res = subprocess.run(
        [sys.executable, "-m", "fmat.cli", "run", str(q), "-m", tiny, "-o", str(tmp_path / "s.parquet"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    assert "fmat run: warning: model" in res.stderr and "womanly" in res.stderr, res.stderr
    assert "fmat/" not in res.stderr.replace("fmat run:", ""), res.stderr


def test_identical_raters_are_an_input_error_not_a_crash():
    """The same model given twice (two folders): ICC is undefined; said so (exit 2), no ZeroDivisionError."""
    import numpy as np

    from fmat.stats.icc import icc

    with pytest.raises(InputError, match="given twice"):
        icc(np.array([[1.0, 1.0], [2.0, 2.0], [3.5, 3.5]]))


def test_fmat_study_check_checks_the_study_file_alone(tmp_path, capsys):
    """fmat study STUDY --check: the study file only (no model, no output folder); a misspelt
    analysis name is refused there with the nearest name."""
    from conftest import REPO

    assert main(["study", str(REPO / "tests" / "data" / "studies" / "EX1.yaml"), "--check"]) == 0
    assert "valid" in capsys.readouterr().out
    bad = tmp_path / "EX9.yaml"
    bad.write_text(
        (REPO / "tests" / "data" / "studies" / "EX1.yaml")
        .read_text(encoding="utf-8")
        .replace("id: EX1", "id: EX9")
        .replace("name: factual_wefat ", "name: factual_wefta "),
        encoding="utf-8",
    )
    assert main(["study", str(bad), "--check"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "did you mean 'factual_wefat'" in err, err
    assert main(["study", str(REPO / "tests" / "data" / "studies" / "EX1.yaml")]) == 2  # without --check:
    assert "-m/--model and -o/--output are required" in capsys.readouterr().err  # models and folder needed


def test_a_misspelt_option_value_is_refused_before_any_model_loads(tmp_path, capsys):
    """An option with a closed set of values (``typing.Literal`` in the analysis's signature:
    ``inference``, ``effect_size``, ``anova``, ``century_model``) is checked with the study file,
    by ``fmat study --check`` and before ``fmat study`` loads a model: the file, the field, the
    nearest value and the values allowed."""
    from conftest import REPO

    from fmat import analyses

    assert analyses.option_values("factual_wefat", "inference") == ("paper", "disattenuated", "crossed")
    assert analyses.option_values("stereotype_pairs", "inference") == ("paper", "sentence", "crossed")
    assert analyses.option_values("attitude_weat", "effect_size") == ("pooled_sd", "sigma")
    assert analyses.option_values("change_over_time", "century_model") == ("pairwise", "joint")
    assert analyses.option_values("factual_wefat", "criterion") == ()  # open: any table
    text = (REPO / "tests" / "data" / "studies" / "EX1.yaml").read_text(encoding="utf-8").replace("id: EX1", "id: EX8")
    good = tmp_path / "EX8.yaml"
    good.write_text(
        text.replace("standardize_within: [model, query]}", "standardize_within: [model, query], inference: disattenuated}")
    )
    assert main(["study", str(good), "--check"]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad" / "EX8.yaml"
    bad.parent.mkdir()
    bad.write_text(
        text.replace("standardize_within: [model, query]}", "standardize_within: [model, query], inference: disatenuated}")
    )
    assert main(["study", str(bad), "--check"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: analysis.options.inference" in err and "did you mean 'disattenuated'" in err, err
    assert "'paper', 'disattenuated'" in err
    # the full command refuses it the same way, before the (missing) model is looked for
    assert main(["study", str(bad), "-m", str(tmp_path / "no-such-model"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "analysis.options.inference" in err and "no-such-model" not in err, err
