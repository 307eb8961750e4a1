"""Stage ``agreement`` (rules agreement_download, agreement, agreement_summary): the subject-verb
agreement check of every model (Goldberg 2019 on Marvin & Linzen 2018 stimuli; the logic is
:mod:`fmat.agreement`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from fmat.agreement import SV_AGREEMENT, check, download_pairs, read_pairs, summarize
from fmat.io import read_table, write_table

from .model_stage import check_lock_record, prepare_model_env
from .scripts import read_json


def download(out, *, url: str, sha256: str) -> None:
    """Rule agreement_download: config agreement.url -> the pairs TSV (sha256 checked)."""

    download_pairs(out, url=url, sha256=sha256)


def check_model(
    marker_path,
    pairs_paths: Sequence,
    out,
    *,
    constructions,
    offline: bool,
    cache_dir,
    lock,
    device=None,
    batch_size=None,
    max_tokens=None,
    threads=None,
) -> None:
    """Rule agreement: ONE model's check on the pairs -> ``results/agreement/{model}.parquet``."""

    prepare_model_env(offline, cache_dir)  # a downloaded model: its locked commit, from the cache only
    marker = read_json(marker_path)
    check_lock_record(lock, marker)
    name = marker["name"]
    pairs = read_pairs(
        pairs_paths[0] if pairs_paths else None, constructions=constructions if constructions is not None else SV_AGREEMENT
    )
    per_pair, _ = check(
        {name: marker.get("path") or name},
        pairs,
        device=None if device in (None, "auto") else device,
        batch_size=batch_size,
        max_tokens=max_tokens,
        threads=threads,
        lock_path=lock if lock and Path(lock).exists() else None,
    )
    write_table(per_pair, out)


def summary(per_model: Sequence, out) -> None:
    """Rule agreement_summary: every model's per-pair table -> accuracy, n, skipped per model x
    construction (:func:`fmat.agreement.summarize`)."""

    tables = [read_table(f) for f in per_model]
    models = [str(t["model"].iloc[0]) for t in tables if len(t)]
    per_pair = pd.concat(tables, ignore_index=True)
    per_pair["model"] = pd.Categorical(per_pair["model"].astype(str), categories=list(dict.fromkeys(models)))
    write_table(summarize(per_pair), out)
