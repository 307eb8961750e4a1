"""Loading refuses what is not a masked LM with its head, and weights that are not what they claim.

Issue 26: a ``BertModel`` save, a ``BertForSequenceClassification`` save, a truncated vocabulary,
resized or unused checkpoint weights are refused with a ModelError naming the folder, what is
missing and the fix, before any scoring; a correct checkpoint loads silently.
Issue 29 (item 2): damaged safetensors and pickle files, non-finite logits, weights whose
sha256 is not the lock's (a swap that keeps the file time, as ``cp -p`` does), and damaged
markers and lock files each stop with a message naming the file and the fix (one test per
class; the CLI's exit 2, never "unexpected error").
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
import torch

from fmat import models as M
from fmat.errors import InputError, ModelError
from fmat.runner import run

torch.set_num_threads(1)

from test_scoring import make_query, tiny_models  # noqa: E402  (shared session build)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


@pytest.fixture()
def data():
    return make_query("The [MASK] is here.", MASK={"M": ["man"], "F": ["woman"]})


def _copy(src, dst) -> Path:
    shutil.copytree(src, dst)
    return Path(dst)


def _save_with_tokenizer(model, src, dst) -> Path:
    model.save_pretrained(dst)
    for f in Path(src).iterdir():
        if f.name not in ("config.json", "model.safetensors"):
            shutil.copy(f, dst / f.name)
    return Path(dst)


# ----------------------------------------------------------------------------- not a masked LM with its head


@pytest.mark.parametrize("kind", ["BertModel", "BertForSequenceClassification"])
def test_a_checkpoint_without_its_mlm_head_is_refused(tiny, tmp_path, data, kind):
    import transformers

    config = transformers.BertConfig.from_pretrained(tiny["bert-uncased"])
    folder = _save_with_tokenizer(getattr(transformers, kind)(config), tiny["bert-uncased"], tmp_path / kind)
    with pytest.raises(ModelError) as err:
        run({"m": str(folder)}, data, progress=False)
    text = str(err.value)
    assert str(folder) in text and "cls.predictions.*" in text and "not a masked language model with its head" in text
    assert "pre-trained masked-LM checkpoint" in err.value.fix and "classifier" in err.value.fix


def test_a_tokenizer_beyond_the_embedding_matrix_is_refused(tiny, tmp_path, data):
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(tiny["bert-uncased"])
    config = transformers.BertConfig.from_pretrained(tiny["bert-uncased"], vocab_size=len(tok) - 50)
    folder = _save_with_tokenizer(transformers.BertForMaskedLM(config), tiny["bert-uncased"], tmp_path / "cut")
    with pytest.raises(ModelError, match=f"token ids up to {len(tok) - 1}.*only {len(tok) - 50} rows") as err:
        M.load_masked_lm(folder)
    assert str(folder) in str(err.value) and "tokenizer saved with the model" in err.value.fix


def test_resized_and_unused_weights_are_refused_pretraining_heads_are_not(tiny, tmp_path):
    from safetensors.torch import load_file, save_file

    src = Path(tiny["bert-uncased"])
    resized = _copy(src, tmp_path / "resized")
    cfg = json.loads((resized / "config.json").read_text())
    cfg["intermediate_size"] = cfg["intermediate_size"] + 8
    (resized / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="other sizes"):
        M.load_masked_lm(resized)
    weights = load_file(src / "model.safetensors")
    unused = _copy(src, tmp_path / "unused")
    save_file({**weights, "classifier.weight": torch.zeros(2, 32)}, unused / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelError, match=r"classifier\.weight.*not used by BertForMaskedLM"):
        M.load_masked_lm(unused)
    pretraining = _copy(src, tmp_path / "pretraining")  # as bert-base-uncased on the hub: NSP head and pooler
    save_file(
        {
            **weights,
            "cls.seq_relationship.weight": torch.zeros(2, 32),
            "cls.seq_relationship.bias": torch.zeros(2),
            "bert.pooler.dense.weight": torch.zeros(32, 32),
            "bert.pooler.dense.bias": torch.zeros(32),
        },
        pretraining / "model.safetensors",
        metadata={"format": "pt"},
    )
    model, _ = M.load_masked_lm(pretraining, device="cpu")
    assert type(model).__name__ == "BertForMaskedLM"


def test_a_correct_checkpoint_loads_silently(tiny, capfd, caplog):
    with caplog.at_level(logging.WARNING):
        for fam in ("bert-uncased", "roberta", "albert"):
            M.load_masked_lm(tiny[fam], device="cpu", progress=False)
    out, errtext = capfd.readouterr()
    assert out == "" and errtext == "", errtext
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ----------------------------------------------------------------------------- weights that cannot be read


def _damage(folder: Path, how: str) -> Path:
    from safetensors.torch import load_file

    st = folder / "model.safetensors"
    if how == "truncated":
        st.write_bytes(st.read_bytes()[: st.stat().st_size // 2])
    elif how == "random":
        st.write_bytes(os.urandom(4096))
    elif how in ("pickle", "zip"):
        weights = load_file(st)
        st.unlink()
        if how == "pickle":

            class Payload:
                def __reduce__(self):
                    return (os.system, (f"touch {folder / 'PAYLOAD_RAN'}",))

            torch.save({"w": Payload()}, folder / "pytorch_model.bin")
        else:
            torch.save(weights, folder / "pytorch_model.bin")
            b = folder / "pytorch_model.bin"
            b.write_bytes(b.read_bytes()[: b.stat().st_size // 2])
    return folder


@pytest.mark.parametrize("how", ["truncated", "random", "pickle", "zip"])
def test_unreadable_weights_name_the_file_and_how_to_replace_them(tiny, tmp_path, data, capsys, how):
    from fmat.cli import main
    from fmat.design import write_query_table

    folder = _damage(_copy(tiny["bert-uncased"], tmp_path / how), how)
    weights = folder / ("pytorch_model.bin" if how in ("pickle", "zip") else "model.safetensors")
    with pytest.raises(ModelError) as err:
        run({"m": str(folder)}, data, progress=False)
    assert str(weights) in str(err.value) and "copy it again" in err.value.fix
    # issue 35: a local folder cannot be restored by downloading it or by rerunning its download job
    assert "fmat download" not in err.value.fix and "download step" not in err.value.fix
    assert "weights_only" not in str(err.value) + err.value.fix  # never torch's unsafe advice
    assert not (folder / "PAYLOAD_RAN").exists()
    write_query_table(data, tmp_path / "q.parquet")
    assert main(["run", str(tmp_path / "q.parquet"), "-m", str(folder), "-o", str(tmp_path / "s.csv"), "--no-progress"]) == 2
    errtext = capsys.readouterr().err
    assert str(weights) in errtext and "unexpected error" not in errtext and "weights_only" not in errtext
    assert not (tmp_path / "s.csv").exists()


def test_non_finite_logits_stop_with_the_model_name(tiny, tmp_path, data, monkeypatch):
    from safetensors.torch import load_file, save_file

    folder = _copy(tiny["bert-uncased"], tmp_path / "nan")
    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith("output.dense.weight"))
    weights[key][0, 0] = float("nan")
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelError, match=r"gives degenerate outputs: .* logits .* are NaN or infinite") as err:
        run({"broken-bert": str(folder)}, data, progress=False)  # at load (issue 35), naming the folder
    assert str(folder) in str(err.value) and "save_pretrained" in err.value.fix
    monkeypatch.setattr(M, "check_outputs", lambda *a, **k: None)  # and again at scoring
    with pytest.raises(ModelError, match=r"model broken-bert gives non-finite logits") as err:
        run({"broken-bert": str(folder)}, data, progress=False)
    assert "download a hub model again" in err.value.fix and "save_pretrained" in err.value.fix


# ----------------------------------------------------------------------------- degenerate outputs (issue 35)


def _flip_exponent_bit(folder: Path, key_end: str = "output.dense.weight") -> Path:
    """One flipped bit in the weights, as a bad copy or disk makes it: the exponent's top bit of
    one number (0.02 becomes ~1e36). The file still reads as safetensors; no lock outside the workflow."""
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith(key_end))
    weights[key].view(torch.int32)[0, 0] ^= 0x40000000
    assert torch.isfinite(weights[key]).all() and weights[key].abs().max() > 1e30
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def _constant_head(folder: Path) -> Path:
    """Weights whose MLM head gives every token the same logit (every probability 1/V)."""
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    for key in ("cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"):
        weights[key] = torch.zeros_like(weights[key])
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


@pytest.mark.parametrize("damage", ["flipped bit", "constant"])
def test_a_local_folder_with_degenerate_outputs_is_refused_naming_it(tiny, tmp_path, data, capsys, damage):
    """Issue 35: a flipped bit scored every probability as 0 (exit 0); a zeroed head gave every
    word 1/V. Both load (the file reads), both are refused before scoring, naming the folder, the
    likely cause, and a fix that fits a local folder (it cannot be downloaded again)."""
    from fmat.cli import main
    from fmat.design import write_query_table

    folder = _copy(tiny["bert-uncased"], tmp_path / "my-bert")
    folder = _flip_exponent_bit(folder) if damage == "flipped bit" else _constant_head(folder)
    with pytest.raises(ModelError, match="degenerate outputs") as err:
        run({"m": str(folder)}, data, progress=False)
    assert str(folder) in str(err.value) and "flipped bytes" in str(err.value)
    assert "local folder" in err.value.fix and "save_pretrained" in err.value.fix
    assert "fmat download" not in err.value.fix
    write_query_table(data, tmp_path / "q.parquet")
    assert main(["run", str(tmp_path / "q.parquet"), "-m", str(folder), "-o", str(tmp_path / "s.csv"), "--no-progress"]) == 2
    errtext = capsys.readouterr().err
    assert "degenerate outputs" in errtext and str(folder) in errtext and "unexpected error" not in errtext
    assert not (tmp_path / "s.csv").exists()


def test_scores_that_are_all_zero_are_refused_even_past_the_load_check(tiny, tmp_path, data, monkeypatch):
    """The second line of defence: a score table whose whole-word probabilities are all 0/NaN/inf."""
    from safetensors.torch import load_file, save_file

    folder = _copy(tiny["bert-uncased"], tmp_path / "flipped")
    weights = load_file(folder / "model.safetensors")
    weights["cls.predictions.bias"][7] = 3e36  # one token takes all the probability; finite logits
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    monkeypatch.setattr(M, "check_outputs", lambda *a, **k: None)
    with pytest.raises(ModelError, match=r"all 2 option probabilities of whole-word tokens are zero") as err:
        run({"m": str(folder)}, data, progress=False)
    assert str(folder) in str(err.value)


def test_the_workflow_refuses_a_locked_local_folder_with_degenerate_outputs(tiny, tmp_path, data):
    """Locked after the damage (so the sha256 matches): the scoring job and the model card still refuse it."""
    from fmat_replication.model_stage import local_model, model_card
    from fmat_replication.score import score_studies

    folder = _flip_exponent_bit(_copy(tiny["bert-uncased"], tmp_path / "my-bert"))
    lock = tmp_path / "models.lock.tsv"
    marker = local_model("my-bert", folder, lock=lock)
    study = Path(__file__).resolve().parents[1] / "config" / "studies" / "2A.yaml"
    with pytest.raises(ModelError, match="degenerate outputs") as err:
        list(score_studies(marker, {"2A": str(study)}, {"2A": data}, device="cpu", lock=lock))
    assert str(folder) in str(err.value) and "resources/models/NAME.json" in err.value.fix
    marker_path = tmp_path / "my-bert.json"
    marker_path.write_text(json.dumps(marker), encoding="utf-8")
    with pytest.raises(ModelError, match="degenerate outputs"):
        model_card(marker_path, tmp_path / "card.json", offline=True, cache_dir=None, lock=lock, device="cpu")
    assert not (tmp_path / "card.json").exists()


def test_a_hub_model_with_degenerate_outputs_is_told_to_download_again(tiny, tmp_path, monkeypatch):
    from test_models import FakeHub

    hub = FakeHub(Path(tiny["bert-uncased"]), tmp_path / "cache")
    monkeypatch.setattr(M, "_hub_model_info", hub.model_info)
    monkeypatch.setattr(M, "_hub_snapshot_download", hub.snapshot_download)
    M.download("org/tiny-bert")
    cached = tmp_path / "cache" / "org--tiny-bert" / ("a" * 40)
    monkeypatch.setattr(M, "weights_path", lambda *a, **k: cached / "model.safetensors")
    monkeypatch.setattr(M, "_source_kwargs", lambda *a, **k: {"path": str(cached)})
    _flip_exponent_bit(cached)
    with pytest.raises(ModelError, match="degenerate outputs") as err:
        M.load_masked_lm("org/tiny-bert")
    assert (
        "fmat download org/tiny-bert" in err.value.fix
        and "--forcerun resources/models/org__tiny-bert.json" in err.value.fix
        and "--forcerun download_model" not in err.value.fix
    )


# ----------------------------------------------------------------------------- the lock's sha256


def test_a_locked_local_folder_whose_weights_changed_stops_before_scoring(tiny, tmp_path, data, monkeypatch):
    from fmat_replication.model_stage import local_model

    folder = _copy(tiny["bert-uncased"], tmp_path / "local")
    lock = tmp_path / "models.lock.tsv"
    marker = local_model("my-bert", folder, lock=lock)
    assert run({"my-bert": str(folder)}, data, progress=False, lock_path=lock)["prob"].notna().all()
    # swap the weights for another model's, keeping the old file time (cp -p, rsync -a)
    other = Path(tiny["bert-cased"]) / "model.safetensors"
    stat = (folder / "model.safetensors").stat()
    shutil.copyfile(other, folder / "model.safetensors")
    os.utime(folder / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (folder / "model.safetensors").stat().st_mtime_ns == stat.st_mtime_ns
    scored = []
    monkeypatch.setattr("fmat.scoring.mask_logp", lambda *a, **k: scored.append(1))
    with pytest.raises(ModelError, match="not the ones locked") as err:
        run({"my-bert": str(folder)}, data, progress=False, lock_path=lock)
    assert marker["sha256"][:16] in str(err.value) and str(folder / "model.safetensors") in str(err.value)
    assert "--forcerun resources/models/my-bert.json" in err.value.fix and not scored
    assert "--forcerun download_model" not in err.value.fix
    # the workflow's scoring job (score_studies) loads through the same check
    os.environ.pop("FMAT_MODELS_LOCK", None)
    monkeypatch.setenv("FMAT_MODELS_LOCK", str(lock))
    with pytest.raises(ModelError, match="not the ones locked"):
        M.load_masked_lm(folder)


def test_a_cached_hub_model_whose_weights_changed_is_refused(tiny, tmp_path, monkeypatch):
    from test_models import FakeHub

    hub = FakeHub(Path(tiny["bert-uncased"]), tmp_path / "cache")
    monkeypatch.setattr(M, "_hub_model_info", hub.model_info)
    monkeypatch.setattr(M, "_hub_snapshot_download", hub.snapshot_download)
    lock = tmp_path / "lock.tsv"
    M.download("org/tiny-bert", lock_path=lock)
    cached = tmp_path / "cache" / "org--tiny-bert" / ("a" * 40) / "model.safetensors"
    monkeypatch.setattr(M, "weights_path", lambda *a, **k: cached)
    monkeypatch.setattr(M, "_source_kwargs", lambda *a, **k: {"path": str(cached.parent)})
    M.load_masked_lm("org/tiny-bert", lock_path=lock)  # as locked: loads
    data = bytearray(cached.read_bytes())
    data[-10] ^= 0x01  # one bit, header intact
    cached.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="not the ones locked") as err:
        M.load_masked_lm("org/tiny-bert", lock_path=lock)
    assert "fmat download org/tiny-bert" in err.value.fix


# ----------------------------------------------------------------------------- markers and the lock, read checked


@pytest.mark.parametrize(
    "content", [b'{"name": "bert-base-uncased", "slug": "bert', b"\x00\x01binary", b"[1, 2]", b'{"slug": "x", "path": null}']
)
def test_a_damaged_model_marker_names_the_file_and_the_fix(tmp_path, content):
    from fmat_replication.scripts import read_json

    marker = tmp_path / "resources" / "models" / "bert-base-uncased.json"
    marker.parent.mkdir(parents=True)
    marker.write_bytes(content)
    with pytest.raises(InputError) as err:
        read_json(marker)
    assert err.value.where == str(marker) and "delete" in err.value.fix and "download_model" in err.value.fix


@pytest.mark.parametrize(
    "content",
    [
        "\x00\xff\xfe garbage",
        "model\trevision\n",
        "model\trevision\tcommit\tfiles\tsha256\tdate\nbert\tmain\tnot-a-commit\tx\t\t2026\n",
        f"model\trevision\tcommit\tfiles\tsha256\tdate\nbert\tmain\t{'a' * 40}\tx\tdeadbeef\t2026\n",
    ],
)
def test_a_damaged_lock_file_names_the_file_and_the_fix(tmp_path, content):
    lock = tmp_path / "models.lock.tsv"
    lock.write_bytes(content.encode("utf-8", "surrogateescape") if "\x00" not in content else b"\x00\xff\xfe garbage")
    with pytest.raises(InputError) as err:
        M.read_lock(lock)
    assert err.value.where == str(lock) and "fmat download" in err.value.fix
    # issue 35: the workflow's fix names one model's download job, never every model's (download_model)
    assert "--forcerun resources/models/" in err.value.fix
    if "not-a-commit" in content or "deadbeef" in content:
        assert "lock bert again" in err.value.fix and "--forcerun resources/models/bert.json" in err.value.fix


def test_the_cli_turns_a_damaged_lock_into_exit_2(tiny, tmp_path, data, capsys, monkeypatch):
    from fmat.cli import main
    from fmat.design import write_query_table

    lock = tmp_path / "models.lock.tsv"
    lock.write_bytes(b"\x00\xff\xfe garbage")
    monkeypatch.setenv("FMAT_MODELS_LOCK", str(lock))
    write_query_table(data, tmp_path / "q.parquet")
    assert (
        main(["run", str(tmp_path / "q.parquet"), "-m", tiny["bert-uncased"], "--no-progress", "-o", str(tmp_path / "s.csv")])
        == 2
    )
    errtext = capsys.readouterr().err
    assert str(lock) in errtext and "unexpected error" not in errtext


# ----------------------------------------------------------------------------- the hub's creation date


def test_download_records_the_hub_creation_date_and_info_shows_it(tiny, tmp_path, monkeypatch):
    import datetime as dt

    from test_models import FakeHub

    hub = FakeHub(Path(tiny["bert-uncased"]), tmp_path / "cache")

    def model_info(model, revision):
        meta = hub.model_info(model, revision)
        meta.created_at = dt.datetime(2018, 11, 14, 23, 35, 8, tzinfo=dt.timezone.utc)
        return meta

    monkeypatch.setattr(M, "_hub_model_info", model_info)
    monkeypatch.setattr(M, "_hub_snapshot_download", hub.snapshot_download)
    lock = tmp_path / "lock.tsv"
    out = M.download("org/tiny-bert", lock_path=lock)
    assert out["created"].tolist() == ["2018-11-14"] and M.read_lock(lock)["created"].tolist() == ["2018-11-14"]
    assert M.info_date(["org/tiny-bert", tiny["roberta"]], lock_path=lock).to_dict("list") == {
        "model": ["org/tiny-bert", tiny["roberta"]],
        "date": ["2018-11-14", ""],
    }
    # an old lock without the column reads as not recorded
    old = tmp_path / "old.tsv"
    old.write_text(f"model\trevision\tcommit\tfiles\tsha256\tdate\nm\tmain\t{'a' * 40}\tx\t\t2026\n")
    assert M.read_lock(old)["created"].tolist() == [""]
    info = M.info({"r": tiny["roberta"]}, lock_path=lock)
    assert "created" in info.columns and info["created"].tolist() == [""]


def test_fmat_check_applies_the_checks_fmat_run_applies_to_its_sentence(tiny, tmp_path, capsys):
    """Issue 44: weights damaged so that the load's probe sentence passes but the user's own
    sentence does not (one word's embedding flipped to ~1e36: NaN at the mask of every sentence
    with that word) printed p = 1.0 for a pseudo-word with exit 0 in `fmat check`, while `fmat run`
    refused the folder. Now `fmat check` refuses it too, naming the folder and the sentence.
    The damage here: a position embedding past the probe's length flipped to ~1e36 (NaN at the
    mask of every longer sentence; the probe sentence is shorter)."""
    from safetensors.torch import load_file, save_file

    from fmat.cli import main

    folder = _copy(tiny["bert-uncased"], tmp_path / "my-bert")
    query = "The [MASK] is a woman and the man is here and there."
    assert main(["check", query, "-m", str(folder), "--top", "3"]) == 0  # undamaged: fine
    capsys.readouterr()
    tok = M.load_tokenizer(str(folder))
    probe, mine = (len(tok(q.replace("[MASK]", tok.mask_token))["input_ids"]) for q in (M.PROBE, query))
    assert probe < mine
    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith("position_embeddings.weight"))
    weights[key][mine - 1] = 1e36
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    M.load_masked_lm(str(folder), progress=False)  # the load's probe sentence does not see it
    assert main(["check", query, "-m", str(folder), "--top", "3"]) == 2
    err = capsys.readouterr().err
    assert "degenerate outputs" in err and str(folder) in err and query in err and "unexpected error" not in err
