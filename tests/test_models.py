"""fmat.models: safe loading, BERT_* verbs, download with a fake hub, and the CLI."""

from __future__ import annotations

import hashlib
import os
import shutil
import types
from pathlib import Path

import pandas as pd
import pytest
import torch

from fmat import models as M
from fmat.errors import ModelError

torch.set_num_threads(1)

from test_scoring import tiny_models  # noqa: E402  (shared session build)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


def test_load_local_folder_and_errors(tiny, tmp_path):
    model, tok = M.load_masked_lm(tiny["roberta"], device="cpu")
    assert type(model).__name__ == "RobertaForMaskedLM" and not model.training
    assert tok.mask_token == "<mask>"
    with pytest.raises(ModelError, match="not found"):
        M.load_masked_lm(tmp_path / "nope")
    incomplete = tmp_path / "incomplete"
    incomplete.mkdir()
    shutil.copy(Path(tiny["bert-uncased"]) / "config.json", incomplete / "config.json")
    with pytest.raises(ModelError, match="no weights"):
        M.load_masked_lm(incomplete)


def test_not_a_masked_lm(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=50, n_positions=16)).save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="not a masked language model"):
        M.load_masked_lm(tmp_path)


def test_hub_model_absent_offline(tmp_path):
    with pytest.raises(ModelError, match="fmat download"):
        M.load_masked_lm("someone/not-downloaded-model", cache_dir=tmp_path)


def test_info(tiny):
    df = M.info({"bert": tiny["bert-uncased"], "albert": tiny["albert"]})
    assert list(df.columns) == ["model", "type", "param", "vocab", "embed", "layer", "heads", "mask", "created"]
    from transformers import AutoModelForMaskedLM

    ref = AutoModelForMaskedLM.from_pretrained(tiny["albert"])
    row = df.set_index("model").loc["albert"]
    assert row["type"] == "albert" and row["layer"] == 2 and row["heads"] == 2
    assert row["param"] == sum(p.numel() for p in ref.parameters())
    assert row["embed"] == ref.config.embedding_size and row["mask"] == "[MASK]"


def test_vocab_uses_scoring_rules(tiny):
    df = M.vocab({"r": tiny["roberta"], "a": tiny["albert"]}, ["man", "zyzzogeton"])
    by = df.set_index(["model", "M_word"])
    assert by.loc[("r", "man"), "token"] == "Ġman" and by.loc[("r", "man"), "in_vocab"]
    assert by.loc[("a", "man"), "token"] == "▁man"
    assert not by.loc[("r", "zyzzogeton"), "in_vocab"]
    assert by.loc[("r", "zyzzogeton"), "token"].endswith("(out-of-vocabulary)")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny["roberta"])
    assert by.loc[("r", "man"), "token_id"] == tok.convert_tokens_to_ids("Ġman")


def test_fill_mask_check_matches_pipeline(tiny):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    df = M.fill_mask_check("Paris is the [MASK] of France.", {"b": tiny["bert-cased"]}, top=3)
    tok = AutoTokenizer.from_pretrained(tiny["bert-cased"])
    ref = pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(tiny["bert-cased"]), tokenizer=tok)(
        "Paris is the [MASK] of France.", top_k=3
    )
    assert list(df.columns) == ["model", "score", "token", "token_str", "sequence"]
    assert df["token"].tolist() == [r["token"] for r in ref]
    assert df["score"].tolist() == pytest.approx([r["score"] for r in ref], rel=1e-5)


# ----------------------------------------------------------------------------- download (fake hub)


class FakeHub:
    """Stands in for huggingface_hub: serves a tiny model folder as a repository snapshot."""

    def __init__(self, src: Path, cache: Path):
        self.src, self.cache, self.calls = src, cache, []

    def model_info(self, model, revision):
        files = [f.name for f in self.src.iterdir()] + ["flax_model.msgpack", "onnx/model.onnx"]
        return types.SimpleNamespace(sha="a" * 40, siblings=[types.SimpleNamespace(rfilename=f) for f in files])

    def snapshot_download(self, repo_id, revision, cache_dir, allow_patterns):
        self.calls.append((repo_id, revision, tuple(allow_patterns)))
        dest = self.cache / repo_id.replace("/", "--") / revision
        dest.mkdir(parents=True, exist_ok=True)
        for f in allow_patterns:
            shutil.copy(self.src / f, dest / f)
        return str(dest)


def test_download_writes_lock(tiny, tmp_path, monkeypatch):
    hub = FakeHub(Path(tiny["bert-uncased"]), tmp_path / "cache")
    monkeypatch.setattr(M, "_hub_model_info", hub.model_info)
    monkeypatch.setattr(M, "_hub_snapshot_download", hub.snapshot_download)
    lock = tmp_path / "models.lock.tsv"
    out = M.download("org/tiny-bert", lock_path=lock)
    assert hub.calls[0][1] == "a" * 40  # downloads the resolved commit
    files = hub.calls[0][2]
    assert "model.safetensors" in files and "config.json" in files
    assert not any(f.endswith((".msgpack", ".onnx")) for f in files)
    df = M.read_lock(lock)
    assert list(df.columns) == M.LOCK_COLUMNS and df["model"].tolist() == ["org/tiny-bert"]
    sha = hashlib.sha256((Path(tiny["bert-uncased"]) / "model.safetensors").read_bytes()).hexdigest()
    assert df["sha256"].iloc[0] == sha and df["commit"].iloc[0] == "a" * 40
    assert M.locked_commit("org/tiny-bert", lock) == "a" * 40
    M.download("org/tiny-bert", lock_path=lock)  # replaces, not duplicates
    assert len(M.read_lock(lock)) == 1
    assert out["revision"].iloc[0] == "main"


def test_download_offline_error(monkeypatch):
    def boom(model, revision):
        raise ConnectionError("no network")

    monkeypatch.setattr(M, "_hub_model_info", boom)
    from fmat.errors import OfflineError

    with pytest.raises(OfflineError, match="hub"):
        M.download("bert-base-uncased")


def test_locked_revision_is_used_offline(tmp_path, monkeypatch):
    seen = {}
    import transformers

    def fake(path, **kw):
        seen.update(kw, path=path)
        raise OSError("not cached")

    lock = tmp_path / "lock.tsv"
    pd.DataFrame([{"model": "org/m", "revision": "main", "commit": "b" * 40, "files": "", "sha256": "", "date": ""}]).to_csv(
        lock, sep="\t", index=False
    )
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", fake)
    with pytest.raises(ModelError, match="fmat download org/m"):
        M.load_masked_lm("org/m", lock_path=lock)
    assert seen["revision"] == "b" * 40 and seen["local_files_only"] is True
    assert seen["trust_remote_code"] is False


def test_set_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.warns(UserWarning, match="already imported"):  # transformers is imported in this session
        M.set_cache_folder(tmp_path / "hf")
    assert os.environ["HF_HOME"] == str((tmp_path / "hf").resolve())
    assert M.cache_dir() == (tmp_path / "hf").resolve() / "hub"


def test_remove_refuses_folders(tiny):
    with pytest.raises(ModelError, match="local folder"):
        M.remove([tiny["bert-uncased"]])


# ----------------------------------------------------------------------------- CLI


def test_cli_info_vocab_check_run(tiny, tmp_path, capsys):
    from fmat.cli import main
    from fmat.design import query, write_query_table

    assert main(["info", "-m", tiny["distilbert"], "-o", str(tmp_path / "info.csv")]) == 0
    assert pd.read_csv(tmp_path / "info.csv")["type"].tolist() == ["distilbert"]
    assert main(["vocab", "-m", tiny["bertweet"], "man", "zyzzogeton", "-o", str(tmp_path / "v.tsv")]) == 0
    assert pd.read_csv(tmp_path / "v.tsv", sep="\t")["in_vocab"].tolist() == [True, False]
    assert main(["check", "Paris is the [MASK] of France.", "-m", tiny["albert"], "--top", "2"]) == 0
    q = query("The [MASK] is a {TARGET}.", MASK={"M": ["man"], "F": ["woman"]}, TARGET={"O": ["doctor", "nurse"]})
    write_query_table(q, tmp_path / "q.parquet")
    assert (
        main(
            [
                "run",
                str(tmp_path / "q.parquet"),
                "-m",
                tiny["bert-uncased"],
                "-m",
                tiny["roberta"],
                "-o",
                str(tmp_path / "s.csv"),
                "--no-progress",
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    s = pd.read_csv(tmp_path / "s.csv")
    assert len(s) == 8 and s["prob"].between(0, 1).all()
    assert main(["run", str(tmp_path / "q.parquet"), "-m", str(tmp_path / "missing")]) == 2
    assert "model folder not found" in capsys.readouterr().err
