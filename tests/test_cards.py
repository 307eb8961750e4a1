"""fmat.cards: one card per model for the overview, made from the loaded model itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch

from fmat import cards as C
from fmat import models as M
from fmat_replication.pages import cards as P
from fmat_replication.pages.html import render

torch.set_num_threads(1)

from test_scoring import tiny_models  # noqa: E402  (shared session build)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    return tiny_models(tmp_path_factory)


def test_card_of_a_local_model(tiny):
    from transformers import AutoModelForMaskedLM

    card = C.model_card("tiny-roberta", tiny["roberta"])
    assert set(card) == set(C.CARD_KEYS)
    ref = AutoModelForMaskedLM.from_pretrained(tiny["roberta"])
    assert card["architecture"] == "RobertaForMaskedLM" and card["model_type"] == "roberta"
    assert card["parameters"] == sum(p.numel() for p in ref.parameters())
    assert card["vocabulary"] == ref.get_input_embeddings().weight.shape[0]
    assert card["source"] == "local" and card["commit"] == "local" and card["created"] == ""
    weights = Path(tiny["roberta"]) / "model.safetensors"
    assert card["sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert card["head"] == "fast" and card["padding"] == "padded" and "fast path" in card["scoring"]
    assert [p["query"] for p in card["probes"]] == list(C.PROBES)
    check = M.fill_mask_check(C.PROBES[0], {"r": tiny["roberta"]}, top=5)
    assert [f["token_str"] for f in card["probes"][0]["fills"]] == check["token_str"].tolist()
    assert [f["score"] for f in card["probes"][0]["fills"]] == pytest.approx(check["score"].tolist(), rel=1e-6)


def test_card_of_a_hub_model_shows_the_locked_commit_and_creation_date(tiny, tmp_path, monkeypatch):
    import datetime as dt

    from test_models import FakeHub

    hub = FakeHub(Path(tiny["bert-uncased"]), tmp_path / "cache")

    def model_info(model, revision):
        meta = hub.model_info(model, revision)
        meta.created_at = dt.datetime(2018, 11, 14, tzinfo=dt.timezone.utc)
        return meta

    monkeypatch.setattr(M, "_hub_model_info", model_info)
    monkeypatch.setattr(M, "_hub_snapshot_download", hub.snapshot_download)
    lock = tmp_path / "lock.tsv"
    M.download("org/tiny-bert", lock_path=lock)
    snapshot = tmp_path / "cache" / "org--tiny-bert" / ("a" * 40)
    monkeypatch.setattr(M, "_source_kwargs", lambda *a, **k: {"path": str(snapshot)})  # the cache, by name
    card = C.model_card("org/tiny-bert", lock_path=lock)
    assert card["source"] == "hub" and card["commit"] == "a" * 40 and card["revision"] == "main"
    assert card["created"] == "2018-11-14"
    assert card["sha256"] == M.read_lock(lock)["sha256"].iloc[0]
    page = render("model_cards.html.j2", cards=P.card_texts([card]))
    assert "2018-11-14" in page and "main @ aaaaaaaaaaaa" in page and "BertForMaskedLM" in page


def test_cards_html_escapes_and_reads_cards(tmp_path):
    card = {k: "" for k in C.CARD_KEYS}
    card.update(
        model="<script>alert(1)</script>",
        parameters=1234567,
        vocabulary=30522,
        source="local",
        sha256="ab" * 32,
        probes=[{"query": "a [MASK] <b>", "fills": [{"token_str": "<i>x", "score": 0.5}]}],
    )
    page = render("model_cards.html.j2", cards=P.card_texts([card]))
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;i&gt;x (0.5)" in page
    assert "1,234,567" in page and "local, sha256 abababab" in page and page.count("class='model-card'") == 1
    assert "No model cards" in render("model_cards.html.j2", cards=[])
    from fmat_replication.scripts import write_json

    write_json(card, tmp_path / "models" / "m1.json")
    assert P.read_cards([tmp_path / "models" / "m1.json"]) == [card]
