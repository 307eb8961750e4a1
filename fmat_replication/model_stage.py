"""Stage ``models`` (rules download_model, model_card): each configured model in the Hugging Face
cache with its commit locked, or a local folder hashed into the lock (:func:`download_model`);
its card for the overview (:func:`model_card`). Also: is the hub reachable
(:func:`hub_reachable`), and a model job's offline environment (:func:`prepare_model_env`)."""

from __future__ import annotations

import datetime as _dt
import os
import socket
import urllib.parse
from pathlib import Path
from typing import Mapping

import pandas as pd

from fmat import lockfile
from fmat.cards import model_card as card_of
from fmat.errors import InputError, OfflineError
from fmat.lockfile import sha256_file
from fmat.models import (
    LOCK_COLUMNS,
    LOCK_ENV,
    WEIGHT_FILES,
    download,
    download_job,
    locked_commit,
    read_lock,
    set_cache_folder,
)
from fmat.net import hub_offline
from fmat.results import model_slug

from .scripts import read_json, write_json

#: what to do when the Hugging Face hub cannot be reached (shown by the download rule)
OFFLINE_HELP = (
    "the workflow needs the Hugging Face hub once, to download the models, and it cannot be reached "
    "from here.\n"
    "  To run offline, either\n"
    "    - run the demo on tiny local models:  make demo   "
    "(= snakemake --profile profiles/default --configfile config/demo.yaml), or\n"
    "    - fill the model cache on a connected machine (snakemake --profile profiles/default "
    "--until download_model, or `fmat download MODEL`), copy the cache folder (config key cache_dir, "
    "or $HF_HOME) and resources/models/ (each model's marker and lock record) here, and run again with "
    "HF_HUB_OFFLINE=1."
)


def hub_reachable(timeout: float = 10.0, endpoint: str | None = None) -> bool:
    """Can a TCP connection to the Hugging Face hub (``$HF_ENDPOINT`` or huggingface.co:443) be
    opened within ``timeout`` seconds? False at once when ``HF_HUB_OFFLINE`` is set."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    url = urllib.parse.urlparse(endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def offline_error(model: str, reason: str | None = None) -> OfflineError:
    """The error the download rule raises when ``model`` is not cached and the hub is unreachable
    (``reason``: what happened, e.g. the hub did not answer in time)."""
    return OfflineError(
        f"{reason}\n  {OFFLINE_HELP}" if reason else OFFLINE_HELP,
        where=f"download_model: {model}",
        fix="make demo  (or copy a filled cache and run with HF_HUB_OFFLINE=1)",
    )


def cached_snapshot(name: str, revision: str | None) -> Path | None:
    """The local snapshot folder of hub model ``name`` at ``revision`` (a commit, branch or tag;
    None: main) if a config file is there -- looked up WITHOUT the network; else None."""
    from huggingface_hub import snapshot_download

    try:
        with hub_offline():  # a look in the cache: no request of huggingface_hub's own either
            path = Path(snapshot_download(name, revision=revision or "main", local_files_only=True))
    except Exception:
        return None
    return path if (path / "config.json").exists() else None


def _folder_row(name: str, revision: str, commit: str, path: Path) -> dict:
    """The lock-file row (:data:`fmat.models.LOCK_COLUMNS`) of the model files in ``path`` (sha256:
    of the first weights file)."""
    weights = [path / w for w in WEIGHT_FILES if (path / w).is_file()]
    return {
        "model": name,
        "revision": revision,
        "commit": commit,
        "files": ",".join(sorted(p.name for p in path.iterdir() if p.is_file())),
        "sha256": sha256_file(weights[0]) if weights else "",
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _marker(name: str, revision: str | None, commit: str, path: str | None, lock, source: str) -> dict:
    """A download marker: ``{name, slug, revision, commit, path, lock, source}``."""
    return {
        "name": name,
        "slug": model_slug(name),
        "revision": revision,
        "commit": commit,
        "path": path,
        "lock": str(lock),
        "source": source,
    }


def _update_lock(lock: Path, row: Mapping) -> None:
    """Put ``row`` in the lock ``lock`` in place of the model's old row (the model's own lock
    record, written by its download job alone: no file lock needed)."""

    rows = pd.DataFrame([row]).astype(str).reindex(columns=LOCK_COLUMNS, fill_value="")
    new = lockfile.replace_rows(read_lock(lock), rows, ["model"])
    lockfile.write(lock, new.sort_values("model", kind="stable"), LOCK_COLUMNS)


def gather_lock(records, out) -> None:
    """Rule models_lock: the models' own lock records -> one lock file of every configured model
    (``resources/models.lock.tsv``), for people and ``fmat`` commands (``--lock``); no job reads it."""

    tables = [read_lock(r) for r in records]
    for record, table in zip(records, tables):
        slug = Path(record).name.removesuffix(".lock.tsv")
        if not any(model_slug(m) == slug for m in table["model"]):
            raise InputError(
                f"the lock record {record} has no row for its model ({slug}), so the gathered lock file would silently drop it",
                where=str(record),
                fix=f"write the record again by rerunning that model's download job alone: snakemake --profile "
                f"profiles/default --forcerun resources/models/{slug}.json",
            )
    df = pd.concat(tables, ignore_index=True) if tables else lockfile.empty(LOCK_COLUMNS)
    lockfile.write(out, df.drop_duplicates("model", keep="last").sort_values("model", kind="stable"), LOCK_COLUMNS)


def ensure_model(
    name: str, *, revision: str | None = None, lock: str | os.PathLike = "resources/models.lock.tsv", timeout: float = 10.0
) -> dict:
    """Make sure hub model ``name`` is in the cache and in the lock file; return the marker
    ``{name, slug, revision, commit, path: None, source}``.

    Which commit: the configured ``revision``, else the lock file's, else main. A snapshot
    already in the cache is used without the network; else the hub is probed for ``timeout``
    seconds (unreachable, or stalling in :func:`fmat.models.download`: an
    :class:`~fmat.errors.OfflineError` with :data:`OFFLINE_HELP`).
    """

    lock = Path(lock)
    locked = locked_commit(name, lock)
    path = cached_snapshot(name, revision or locked)
    if path is not None:
        if locked != path.name:
            _update_lock(lock, _folder_row(name, revision or "main", path.name, path))
        return _marker(name, revision, path.name, None, lock, "cache")
    if not hub_reachable(timeout):
        raise offline_error(name)
    try:
        rows = download(name, revision=revision or locked, lock_path=None, timeout=timeout)
    except OfflineError as err:
        raise offline_error(name, err.message) from err
    row = rows.iloc[0].to_dict()
    _update_lock(lock, row)
    return _marker(name, revision, str(row["commit"]), None, lock, "hub")


def check_lock_record(lock, marker: Mapping) -> None:
    """Before a job loads a model: its lock record (the declared input
    ``resources/models/{model}.lock.tsv``; empty: a demo model, none) is readable and holds exactly
    one row for the model, with the weights' sha256 (and, for a local folder, that folder); else an
    InputError naming the model, the record and the fix, never a silent load of unvouched weights."""

    if not lock:
        return
    name = str(marker["name"])
    job = download_job(name)
    fix = (
        f"write the record again by rerunning this model's download job alone: {job} (it re-hashes a "
        "local folder, so first make sure its weights are the ones meant), or restore the record from a backup"
    )
    path = Path(lock)
    if not path.is_file():
        raise InputError(f"model {name!r}: its lock record {lock} is missing", where=str(lock), fix=fix)
    try:
        rows = read_lock(path)
    except InputError as e:
        what = f"model {name!r}: its lock record {lock} cannot be read: {e.message}"
        raise InputError(what, where=str(lock), fix=fix) from None
    mine = rows[rows["model"] == name]
    if len(mine) != 1:
        what = "has no row" if not len(mine) else f"has {len(mine)} rows"
        listed = f" (it lists {', '.join(map(repr, rows['model']))})" if len(rows) else " (it holds only its header)"
        raise InputError(
            f"model {name!r}: its lock record {lock} {what} for it{listed}, so nothing vouches for its weights",
            where=str(lock),
            fix=fix,
        )
    row = mine.iloc[0]
    if not str(row["sha256"]):
        raise InputError(f"model {name!r}: its lock record {lock} has no sha256 of the weights", where=f"{lock}: sha256", fix=fix)
    folder = marker.get("path")
    if folder and (str(row["revision"]) != "local" or Path(str(row["commit"])).resolve() != Path(folder).resolve()):
        raise InputError(
            f"model {name!r}: its lock record {lock} records {row['revision']} {row['commit']!r}, "
            f"not the local folder {folder} the model loads from",
            where=f"{lock}: commit",
            fix=fix,
        )


def prepare_model_env(offline: bool, cache_dir: str | None) -> None:
    """Before a job loads a model: ``HF_HUB_OFFLINE=1`` (``offline``), the configured cache folder,
    and no ``$FMAT_MODELS_LOCK`` of the user's shell (a job reads only the lock record it declares)."""

    os.environ.pop(LOCK_ENV, None)
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    if cache_dir:
        set_cache_folder(cache_dir)


def local_model(name: str, folder: str | os.PathLike, *, lock: str | os.PathLike = "resources/models.lock.tsv") -> dict:
    """A configured local model folder (``{name: LABEL, path: FOLDER}``): record it in the lock
    file (revision ``local``, commit = the folder, sha256 of its weights) and return the marker
    ``{name, slug, revision, commit, path, source: "local", sha256}``."""

    folder = Path(folder)  # as given: relative to the working folder, so that the project can move
    weights = [folder / w for w in WEIGHT_FILES if (folder / w).is_file()]
    if not (folder / "config.json").is_file() or not weights:
        raise InputError(
            f"model {name!r}: {folder} is not a model folder (config.json and {' or '.join(WEIGHT_FILES)} needed)",
            where="config.models[].path",
            fix="give a folder written by save_pretrained",
        )
    row = _folder_row(name, "local", str(folder), folder)
    _update_lock(Path(lock), row)
    return _marker(name, "local", str(folder), str(folder), lock, "local") | {"sha256": row["sha256"]}


# ----------------------------------------------------------------------------- stage functions


def download_model(
    out, *, name: str, revision: str | None, path: str | None, cache_dir: str | None, lock: str | os.PathLike, timeout: float
) -> None:
    """Rule download_model: a local folder hashed into the lock record ``lock``
    (:func:`local_model`), or a hub model put in the cache, its commit locked (:func:`ensure_model`)
    -> the marker ``out``."""

    prepare_model_env(False, None if path else cache_dir)
    marker = (
        local_model(name, path, lock=lock) if path else ensure_model(name, revision=revision, lock=lock, timeout=float(timeout))
    )
    write_json(marker, out)


def model_card(marker_path, out, *, offline: bool, cache_dir, lock, device=None, threads: int | None = None) -> None:
    """Rule model_card: the card (:func:`fmat.cards.model_card`) of the marker's model -> ``out``
    (JSON)."""

    prepare_model_env(offline, cache_dir)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    marker = read_json(marker_path)
    check_lock_record(lock, marker)
    device = None if device in (None, "auto") else device
    card = card_of(
        marker["name"],
        marker.get("path") or marker["name"],
        device=device,
        lock_path=lock if lock and Path(lock).exists() else None,
    )
    write_json(card, out)
