"""Issue 35: the workflow's messages fit where they are shown, and faults that came late (in a
job, or in Snakemake's words) are stopped by the configuration check before any job.

Dry runs in a temporary working folder (nothing is written into the repository).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fmat.errors import InputError

REPO = Path(__file__).resolve().parents[1]
STUDIES_DIR = str(REPO / "config" / "studies")


def snakemake(tmp_path: Path, *args, config: dict | None = None) -> subprocess.CompletedProcess:
    files = [str(REPO / "config" / "config.yaml")]
    if config is not None:
        extra = tmp_path / "extra.yaml"
        extra.write_text(yaml.safe_dump({"studies_dir": STUDIES_DIR, **config}), encoding="utf-8")
        files.append(str(extra))
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--configfile", *files, *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def _clean(out: str) -> None:
    assert "Traceback" not in out and 'File "' not in out and "common.smk" not in out, out


# ----------------------------------------------------------------------------- score groups


def test_a_clash_with_the_paper_group_says_where_paper_comes_from(tmp_path):
    """The user never wrote `paper`: config/config.yaml did, and Snakemake merged it in."""
    res = snakemake(tmp_path, "-n", config={"studies": ["2A", "X1"], "score_groups": {"mine": ["2A"]}})
    assert res.returncode == 2, res.stdout[-3000:]
    assert (
        f"study '2A' is in two score groups: 'paper' (from {REPO / 'config' / 'config.yaml'}) and 'mine' "
        f"(from {tmp_path / 'extra.yaml'})"
    ) in res.stdout, res.stdout
    # the fix names only the file read last (the user's), never config/config.yaml, which is read first
    fix = res.stdout[res.stdout.index("fix:") :]
    assert (
        f"take '2A' out of 'mine' in {tmp_path / 'extra.yaml'}, or give the group 'paper' again in {tmp_path / 'extra.yaml'}"
        in fix
    ), fix
    _clean(res.stdout)


def test_a_group_name_with_a_dash_is_allowed_and_the_message_says_what_is(tmp_path):
    """`my-group` was refused while the message said `-` is allowed; a rule score_my-group runs
    (the name reaches only the rule's name and its log folder)."""
    res = snakemake(tmp_path, "-n", config={"studies": ["X1"], "score_groups": {"my-group": ["X1"]}})
    assert res.returncode == 0, res.stdout[-3000:]
    assert "score_my-group" in res.stdout
    res = snakemake(tmp_path, "-n", config={"studies": ["X1"], "score_groups": {"my.group": ["X1"]}})
    assert res.returncode == 2, res.stdout[-3000:]
    assert "'my.group' is not allowed here; allowed: a group name of letters, digits, _ and -" in res.stdout
    assert ". _ -" not in res.stdout
    _clean(res.stdout)


# ----------------------------------------------------------------------------- faults that came late


def test_one_model_is_refused_at_the_configuration_check(tmp_path):
    """One model ran scoring, agreement and the model cards, then failed in the reliability job
    ("ICC needs at least 2 raters"); now the dry run stops, naming the file and the key."""
    res = snakemake(tmp_path, "-n", config={"models": ["bert-base-uncased"], "studies": ["2A"]})
    assert res.returncode == 2, res.stdout[-3000:]
    assert (
        f"invalid configuration: {tmp_path / 'extra.yaml'}: config.models: the configuration lists 1 model "
        "(bert-base-uncased); the workflow needs at least 2"
    ) in res.stdout, res.stdout
    assert "fix: list two or more models" in res.stdout and "fmat run" in res.stdout
    _clean(res.stdout)
    from fmat_replication.config import validate_config

    with pytest.raises(InputError, match="needs at least 2"):
        validate_config(
            {"models": ["bert-base-uncased"], "studies": ["2A"], "studies_dir": STUDIES_DIR}, load_studies=False, min_models=2
        )
    assert snakemake(tmp_path, "-n", config={"models": ["bert-base-uncased", "roberta-base"], "studies": ["2A"]}).returncode == 0


def test_a_profile_switch_that_is_neither_true_nor_false_is_refused(tmp_path):
    """`keep-going: maybe` was taken without a word; now the file, its line and the key are named."""
    profile = tmp_path / "myprofile"
    profile.mkdir()
    (profile / "config.yaml").write_text("cores: 1\nprintshellcmds: true\nkeep-going: maybe\n", encoding="utf-8")
    res = snakemake(tmp_path, "-n", "--profile", str(profile), config={"studies": ["X1"]})
    assert res.returncode == 2, res.stdout[-3000:]
    assert (f"invalid profile: {profile / 'config.yaml'}: line 3: keep-going: 'maybe' is neither true nor false") in res.stdout, (
        res.stdout
    )
    assert "fix: write keep-going: true or keep-going: false" in res.stdout
    _clean(res.stdout)
    (profile / "config.yaml").write_text("cores: 1\nkeep-going: yes\n", encoding="utf-8")
    assert snakemake(tmp_path, "-n", "--profile", str(profile), config={"studies": ["X1"]}).returncode == 0
    from fmat_replication.config import check_profile

    for shipped in sorted((REPO / "profiles").glob("*/config.yaml")):
        check_profile(shipped)


@pytest.mark.parametrize("folder", ["results", "results/lpr"])
def test_a_read_only_results_folder_is_named_before_any_job(tmp_path, folder):
    """results/ on a read-only file system (a private tmpfs, remounted read-only): Snakemake failed
    in the first job; now the snakemake command says which folder and what to do, exit 2. Issue
    44: a read-only folder inside results/ (results/lpr/) too, not only results/ itself."""
    assert shutil.which("unshare"), "the test needs unshare (util-linux)"
    (tmp_path / folder).mkdir(parents=True)
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"studies_dir": STUDIES_DIR, "studies": ["X1"]}), encoding="utf-8")
    script = f'mount -t tmpfs -o size=64k tmpfs {folder} && mount -o remount,ro {folder} && "$@"'
    res = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            script,
            "sh",
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--configfile",
            str(REPO / "config" / "config.yaml"),
            str(REPO / "config" / "demo.yaml"),
            str(extra),
            "--cores",
            "1",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stdout[-3000:]
    assert (
        f"invalid working folder: {tmp_path / folder}: the workflow writes into results/, and "
        f"{tmp_path / folder} cannot be written: its file system is read-only"
    ) in res.stdout, res.stdout
    assert "fix: run the workflow in a working folder you may write" in res.stdout
    _clean(res.stdout)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    "content, said",
    [
        ("- models\n- studies\n", "config/config.yaml: line 1: the config file is a list, not a mapping of keys"),
        ("studies:\n\t- 2A\n", "config/config.yaml: line 2: a tab on this line"),
        (None, "config/config.yaml: there is no config file config/config.yaml"),
    ],
)
def test_the_workflows_own_config_file_is_checked_first(tmp_path, content, said):
    """Snakemake's own words named no file or line ('Config file must be given as JSON or YAML
    with keys at top level'), or none at all for a missing file; the workflow checks its
    config/config.yaml first. (A --configfile is read by Snakemake before the workflow runs:
    docs/workflow.md says so.)"""
    if content is not None:
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "config.yaml").write_text(content, encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-n"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stdout[-3000:]
    assert f"invalid configuration: {said}" in res.stdout and "fix:" in res.stdout, res.stdout[-3000:]
    _clean(res.stdout)


@pytest.mark.parametrize("target", ["demo", "replicate"])
@pytest.mark.parametrize(
    "content, said",
    [
        (None, "{path}: there is no config file {path}"),
        ("studies:\n\t- 2A\n", "{path}: line 2: a tab on this line"),
        ("- studies\n", "{path}: line 1: the config file is a list, not a mapping of keys"),
    ],
)
def test_make_checks_a_config_of_ones_own_first(tmp_path, target, content, said):
    """Issue 44: Snakemake reads a --configfile itself, before any workflow code, and gave its own
    FileNotFoundError traceback or a message without file and line. The documented commands
    (docs/workflow.md, "A configuration of your own": make demo/replicate CONFIG=FILE) check the
    file first: file, line and fix, exit 2, and Snakemake is never started."""
    path = tmp_path / "my.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    venv = Path(sys.executable).parent.parent
    res = subprocess.run(
        ["make", "-C", str(REPO), "-o", f"{venv}/.fmat-env", f"VENV={venv}", target, f"CONFIG={path}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stdout[-3000:]
    assert f"invalid configuration: {said.format(path=path)}" in res.stdout, res.stdout
    assert "fix:" in res.stdout and 'snakemake" --profile' not in res.stdout  # stopped before snakemake
    _clean(res.stdout)
