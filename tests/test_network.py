"""Issue 29: every network call has a timeout (fmat.net).

A stalled endpoint -- a local socket that accepts every connection and never answers, as a
stalled proxy does -- used to hang `fmat download` and the workflow's download job without
limit. Now each fails after the configured timeout with the way to work offline. Every test
here stops by itself: the commands run under a subprocess timeout far above the configured one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from local_server import local_server

from fmat import net
from fmat.errors import InputError, OfflineError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def stalled():
    """http://127.0.0.1:PORT of a server that accepts every connection and never answers."""
    held = []
    with local_server(held.append) as url:  # kept open, never read from, never written to
        yield url
    for conn in held:
        conn.close()


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_ENDPOINT", net.TIMEOUT_ENV)}
    env.update(PYTHONWARNINGS="ignore", **extra)
    return env


def test_the_default_timeout_is_at_most_a_minute_and_configurable(monkeypatch):
    from fmat_replication.config import _schema

    monkeypatch.delenv(net.TIMEOUT_ENV, raising=False)
    assert 0 < net.timeout() <= 60
    assert 0 < _schema()["properties"]["hub_timeout"]["default"] <= 60
    assert yaml.safe_load((REPO / "config" / "config.yaml").read_text())["hub_timeout"] <= 60
    monkeypatch.setenv(net.TIMEOUT_ENV, "7.5")
    assert net.timeout() == 7.5 and net.timeout(3) == 3.0
    for bad in ("soon", "0", "-1", "inf"):
        monkeypatch.setenv(net.TIMEOUT_ENV, bad)
        with pytest.raises(InputError, match=r"\$FMAT_NETWORK_TIMEOUT"):
            net.timeout()


def test_hub_timeouts_bound_every_request_and_are_undone():
    """Inside the block the shared huggingface_hub client caps each request; after it, nothing is left."""
    import httpx2
    from huggingface_hub import constants, get_session

    before = (list(get_session().event_hooks["request"]), constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT)
    xet_before = constants.HF_HUB_DISABLE_XET
    with net.hub_timeouts(4):
        request = httpx2.Request(
            "GET", "http://127.0.0.1:9/", extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"))}
        )
        for hook in get_session().event_hooks["request"]:
            if getattr(hook, "fmat_bound", False):
                hook(request)
        assert request.extensions["timeout"] == dict.fromkeys(("connect", "read", "write", "pool"), 4)
        assert constants.HF_HUB_DOWNLOAD_TIMEOUT == 4 and constants.HF_HUB_ETAG_TIMEOUT == 4
        # hf_xet (its own Rust client, out of reach of the hook) is not used: files come over HTTP
        from huggingface_hub.utils._runtime import is_xet_available

        assert is_xet_available() is False
    after = (list(get_session().event_hooks["request"]), constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT)
    assert after == before and constants.HF_HUB_DISABLE_XET == xet_before


def test_fmat_download_from_a_stalled_hub_stops_with_the_offline_fix(stalled, tmp_path):
    """$HF_ENDPOINT is the stalled socket; FMAT_NETWORK_TIMEOUT=2, then --timeout 1 (which wins)."""
    for extra, seconds in (
        (["--cache-dir", str(tmp_path / "hf")], "2"),
        (["--cache-dir", str(tmp_path / "hf"), "--timeout", "1"], "1"),
    ):
        res = subprocess.run(
            [sys.executable, "-m", "fmat.cli", "download", "bert-base-uncased", *extra],
            cwd=tmp_path,
            env=_env(HF_ENDPOINT=stalled, **{net.TIMEOUT_ENV: "2"}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=180,
        )
        assert res.returncode == 2, res.stderr
        assert f"the Hugging Face hub did not answer within {seconds} s for 'bert-base-uncased'" in res.stderr, res.stderr
        assert "HF_HUB_OFFLINE=1" in res.stderr and "--timeout" in res.stderr and "Traceback" not in res.stderr


def test_criteria_and_agreement_downloads_from_a_stalled_server(stalled, tmp_path):
    from fmat.agreement import download_pairs
    from fmat_replication.criteria import download

    dest = tmp_path / "raw" / "table.xlsx"
    with pytest.raises(OfflineError, match="the server did not answer within 1 s") as caught:
        download(f"{stalled}/cpsaat11.xlsx", dest, timeout=1)
    assert "mirror_dir" in caught.value.fix
    assert not dest.exists() and not list(dest.parent.glob("*.tmp"))
    with pytest.raises(OfflineError, match="timed out") as caught:
        download_pairs(tmp_path / "pairs.tsv", url=f"{stalled}/pairs.tsv", timeout=1)
    assert "agreement.pairs" in caught.value.fix and not (tmp_path / "pairs.tsv").exists()


def test_the_workflow_download_job_from_a_stalled_hub_stops_with_the_offline_fix(stalled, tmp_path):
    """The download_model job with HF_ENDPOINT at the stalled socket and hub_timeout: 2."""
    (tmp_path / "config").symlink_to(REPO / "config", target_is_directory=True)
    cfg = tmp_path / "stalled.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "models": ["bert-base-uncased", "roberta-base"],
                "studies": ["2A"],
                "hub_timeout": 2,
                "cache_dir": str(tmp_path / "hf"),
            }
        ),
        encoding="utf-8",
    )
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--configfile",
            str(REPO / "config" / "config.yaml"),
            str(cfg),
            "--cores",
            "1",
            "resources/models/bert-base-uncased.json",
        ],
        cwd=tmp_path,
        env=_env(HF_ENDPOINT=stalled),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert res.returncode != 0, res.stdout[-3000:]
    assert "Error in rule download_model" in res.stdout
    log = (tmp_path / "logs" / "download_model" / "bert-base-uncased.log").read_text(encoding="utf-8")
    assert "the Hugging Face hub did not answer within 2 s for 'bert-base-uncased'" in log, log
    assert "make demo" in log and "HF_HUB_OFFLINE=1" in log and "Traceback" not in log
    assert not (tmp_path / "resources" / "models" / "bert-base-uncased.json").exists()  # nothing downstream starts
