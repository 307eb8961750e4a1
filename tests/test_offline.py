"""Issue 35: no command described as offline opens a network connection.

`fmat run -m bert-base-uncased` without HF_HUB_OFFLINE, and `fmat run -m models/my-bert` (a
mistyped local folder), sent a request to $HF_ENDPOINT (huggingface_hub's agent-harness
registry) before saying the model is not cached. Here every offline command runs with
$HF_ENDPOINT at a local server that records every connection it accepts, HF_HUB_OFFLINE unset,
and the server must have seen none. Messages that fit: an invalid config.json in a local folder
is not "not in the local cache"; `fmat download ../x` is an invalid model id, refused before
going online.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from local_server import local_server
from test_scoring import make_query, tiny_models

from fmat.errors import ModelError


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


@pytest.fixture
def recorder():
    """(url, connections): a local server that records every connection it accepts (and the
    first line sent on it), then answers 404."""
    seen: list[str] = []

    def record(conn):
        with conn:
            conn.settimeout(2)
            try:
                first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
            except OSError:
                first = "(nothing sent)"
            seen.append(first)
            try:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass

    with local_server(record) as url:
        yield url, seen


def _fmat(args, cwd, endpoint, home):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "HF_HUB_CACHE", "FMAT_MODELS_LOCK")
    }
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(home), PYTHONWARNINGS="ignore")
    return subprocess.run(
        [sys.executable, "-m", "fmat.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )


def test_offline_commands_open_no_connection(recorder, tiny, tmp_path):
    from fmat.design import write_query_table

    url, seen = recorder
    folder = shutil.copytree(tiny["bert-uncased"], tmp_path / "my-bert")
    (tmp_path / "models").mkdir()  # a models/ folder, but not models/my-bert: the mistyped path
    write_query_table(make_query("The [MASK] is here.", MASK={"M": ["man"], "F": ["woman"]}), tmp_path / "q.csv")
    home = tmp_path / "hf"
    cases = [  # (args, exit status, text expected on stderr)
        (["run", "q.csv", "-m", "bert-base-uncased", "-o", "s1.csv", "--no-progress"], 2, "is not in the local model cache"),
        (
            ["run", "q.csv", "-m", "models/my-bert", "-o", "s2.csv", "--no-progress"],
            2,
            "there is no folder models/my-bert either",
        ),
        (["info", "-m", "bert-base-uncased"], 2, "is not in the local model cache"),
        (["vocab", "man", "-m", "bert-base-uncased"], 2, "is not in the local model cache"),
        (["check", "The [MASK] is here.", "-m", "bert-base-uncased"], 2, "is not in the local model cache"),
        (["download", "../x"], 2, "is not a Hugging Face model id"),
        (["run", "q.csv", "-m", str(folder), "-o", "s3.csv", "--no-progress"], 0, ""),
        (["info", "-m", str(folder)], 0, ""),
    ]
    for args, status, text in cases:
        res = _fmat(args, tmp_path, url, home)
        assert seen == [], (args, seen)
        assert res.returncode == status, (args, res.stderr[-2000:])
        assert text in res.stderr and "unexpected error" not in res.stderr, (args, res.stderr[-2000:])
        assert "couldn't connect" not in res.stderr and "cannot reach" not in res.stderr, res.stderr
    assert (tmp_path / "s3.csv").exists()


def test_an_invalid_config_json_in_a_local_folder_is_named_as_such(tiny, tmp_path):
    from fmat.runner import run

    folder = shutil.copytree(tiny["bert-uncased"], tmp_path / "my-bert")
    (folder / "config.json").write_text('{"model_type": "bert",', encoding="utf-8")
    with pytest.raises(ModelError) as err:
        run({"m": str(folder)}, make_query("The [MASK] is here.", MASK={"M": ["man"], "F": ["woman"]}), progress=False)
    text = str(err.value)
    assert f"cannot read the model folder {folder}" in text and "config.json" in text
    assert "not in the local" not in text and "fmat download" not in err.value.fix
    assert "config.json" in err.value.fix


def test_download_refuses_an_invalid_model_id_before_going_online(tmp_path, monkeypatch):
    from fmat import models as M
    from fmat.errors import InputError

    monkeypatch.setattr(M, "_hub_model_info", lambda *a, **k: pytest.fail("went online"))
    for bad in ("../x", "a/b/c", "my model"):
        with pytest.raises(InputError, match="is not a Hugging Face model id") as err:
            M.download(bad, cache_dir=str(tmp_path / "hf"))
        assert "local model folder needs no download" in err.value.fix
    assert not Path(tmp_path / "hf").exists()
