"""Issue 29: workflow faults that used to hang, run late or blame the wrong place, each stopped
by the configuration check before any job: `--cores 0` (hung in silence), `device: cuda` on a
machine without a GPU (failed only inside the scoring job, naming a CLI flag), a `--config`
error (blamed on config/config.yaml), a model id with `..` (passed the schema, then blamed the
network), a `score_groups` member without a study file (ignored in silence).

Every run is a dry run in a temporary working folder (nothing is written into the repository).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
STUDIES_DIR = str(REPO / "config" / "studies")


def dry_run(tmp_path: Path, *args, config: dict | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    files = [str(REPO / "config" / "config.yaml")]
    if config is not None:
        extra = tmp_path / "extra.yaml"
        extra.write_text(yaml.safe_dump({"studies_dir": STUDIES_DIR, **config}), encoding="utf-8")
        files.append(str(extra))
    e = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--configfile", *files, *args],
        cwd=tmp_path,
        env=e,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def _clean(out: str) -> None:
    assert "Traceback" not in out and 'File "' not in out and "common.smk" not in out, out


@pytest.mark.parametrize("flag", ["--cores"])
def test_zero_cores_stop_at_once(tmp_path, flag):
    """`--cores 0` made Snakemake wait for ever for a core (make demo CORES=0 too); now exit 2.
    A run, not a dry run: the run is what hung (the subprocess timeout ends a regression)."""
    res = dry_run(tmp_path, flag, "0", "--config", f"studies_dir={STUDIES_DIR}", "studies=[2A]")
    assert res.returncode == 2, res.stdout[-3000:]
    assert f"invalid command line: {flag} 0: no job could ever start" in res.stdout
    assert f"fix: give {flag} N (N of 1 or more)" in res.stdout
    _clean(res.stdout)
    assert not (tmp_path / "results").exists()


def test_cuda_without_a_gpu_fails_at_the_config_check_naming_the_key(tmp_path):
    """No GPU here (CUDA_VISIBLE_DEVICES hides any): the check names the file, the key and the values to use."""
    res = dry_run(tmp_path, "-n", config={"device": "cuda", "studies": ["2A"]}, env={"CUDA_VISIBLE_DEVICES": ""})
    assert res.returncode == 2, res.stdout[-3000:]
    assert (
        f"invalid configuration: {tmp_path / 'extra.yaml'}: config.device: device 'cuda': this machine has "
        "no CUDA GPU" in res.stdout
    ), res.stdout
    assert "fix: set device: auto" in res.stdout and "device: cpu" in res.stdout and "--device" not in res.stdout
    _clean(res.stdout)


def test_check_device_names_the_gpus_there_are(monkeypatch):
    import torch

    from fmat_replication.config import check_device

    check_device("auto")
    check_device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    check_device("cuda:1")
    with pytest.raises(InputError, match=r"has 2 CUDA GPU\(s\)") as caught:
        check_device("cuda:2", where="my.yaml: config.device")
    assert caught.value.where == "my.yaml: config.device" and "cuda:0 to cuda:1" in caught.value.fix


def test_a_config_error_from_the_command_line_is_blamed_on_config(tmp_path):
    """`--config studies=[2A,5Z]`: the error names --config, not config/config.yaml (which also sets studies)."""
    res = dry_run(tmp_path, "-n", "--config", f"studies_dir={STUDIES_DIR}", "studies=[2A,5Z]")
    assert res.returncode == 2, res.stdout[-3000:]
    assert "invalid configuration: --config studies=...: config.studies[1]: unknown study '5Z'" in res.stdout
    assert "config.yaml" not in res.stdout.split("invalid configuration:", 1)[1]
    _clean(res.stdout)


@pytest.mark.parametrize("name", ["a/../../tmp/evil", "../evil", "a/b/c", "a//b", "/abs"])
def test_a_model_id_that_is_a_path_is_refused_by_the_schema(name):
    from fmat_replication.config import validate_config

    for entry in (name, {"name": name}):
        with pytest.raises(InputError, match="not allowed here") as caught:
            validate_config({"models": [entry], "studies": ["2A"], "studies_dir": STUDIES_DIR}, load_studies=False)
        assert caught.value.where == "config.models[0]" + ("" if isinstance(entry, str) else ".name")
        assert "no '..'" in str(caught.value)
    validate_config(
        {"models": ["vinai/bertweet-base", "bert-base-uncased", "a.b_c-d"], "studies": ["2A"], "studies_dir": STUDIES_DIR},
        load_studies=False,
    )


def test_a_model_id_that_is_a_path_stops_the_dry_run(tmp_path):
    res = dry_run(tmp_path, "-n", config={"models": ["bert-base-uncased", "a/../../tmp/evil"], "studies": ["2A"]})
    assert res.returncode == 2, res.stdout[-3000:]
    assert f"{tmp_path / 'extra.yaml'}: config.models[1]: 'a/../../tmp/evil' is not allowed here" in res.stdout
    _clean(res.stdout)


def test_a_score_group_member_without_a_study_file_is_an_error(tmp_path):
    """A typo in a used group (X3 for X2) stops the dry run; a group none of whose studies runs
    is not checked, and a member the repository ships (the paper's group with a studies_dir that
    holds only some of its studies) is not an error."""
    res = dry_run(tmp_path, "-n", config={"studies": ["X1"], "score_groups": {"examples": ["X1", "X3"]}})
    assert res.returncode == 2, res.stdout[-3000:]
    assert (
        f"{tmp_path / 'extra.yaml'}: config.score_groups.examples[1]: score group 'examples' lists study "
        f"'X3', which has no study file"
    ) in res.stdout, res.stdout
    assert "fix: correct the study id" in res.stdout
    _clean(res.stdout)
    from fmat_replication.config import validate_config

    own = {
        "models": ["bert-base-uncased"],
        "studies": ["X1"],
        "studies_dir": STUDIES_DIR,
        "score_groups": {"paper": ["1A", "NOT-HERE"], "mine": ["X1"]},
    }
    assert validate_config(own, load_studies=False, repo=REPO)["score_groups"] == own["score_groups"]
    subset = tmp_path / "subset"
    subset.mkdir()
    (subset / "3D.yaml").write_bytes((REPO / "config" / "studies" / "3D.yaml").read_bytes())
    paper = {
        "models": ["bert-base-uncased"],
        "studies": ["3D"],
        "studies_dir": str(subset),
        "score_groups": {"paper": ["1A", "3D"]},
    }
    validate_config(paper, load_studies=False, repo=REPO)
    with pytest.raises(InputError, match="lists study 'X3', which has no study file"):
        validate_config({**paper, "score_groups": {"paper": ["X3", "3D"]}}, load_studies=False, repo=REPO)
