"""Masked language models: download, safe loading, and FMAT's ``BERT_*`` verbs.

R FMAT equivalents: ``BERT_download`` → :func:`download`, ``BERT_info`` → :func:`info`,
``BERT_vocab`` → :func:`vocab`, ``BERT_remove`` → :func:`remove`, ``fill_mask_check`` →
:func:`fill_mask_check`, ``set_cache_folder`` → :func:`set_cache_folder`.

:func:`download` is the only function that goes online. It records the resolved commit of
each model in a lock file (TSV: ``model, revision, commit, files, sha256, date``); every
later :func:`load_masked_lm` of that model loads exactly that commit from the local cache
with the hub switched off (``local_files_only``), so a run never changes under you.

Loading is safe: ``trust_remote_code`` is never set (no code from a model repository runs),
weights come from safetensors, or from PyTorch files read with ``weights_only`` (transformers
5 always does so). See docs/models.md.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import difflib
import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from . import lockfile
from .errors import InputError, ModelError, OfflineError, user_stacklevel
from .io import check_output
from .lockfile import sha256_file
from .net import TIMEOUT_ENV, hub_offline, hub_timeouts, is_timeout
from .net import timeout as _timeout
from .results import model_slug
from .tokens import derive_options, fmat_rule_options, input_embedding_matrix

log = logging.getLogger(__name__)

LOCK_COLUMNS = ["model", "revision", "commit", "files", "sha256", "date", "created"]
#: lock columns a lock written before they existed may lack (read as empty)
_OPTIONAL_LOCK_COLUMNS = ("created",)
_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: environment variable naming the default lock file (the workflow sets it)
LOCK_ENV = "FMAT_MODELS_LOCK"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "bpe.codes",
    "added_tokens.json",
)


# ----------------------------------------------------------------------------- cache folder


def set_cache_folder(path) -> Path:
    """Use ``path`` as the Hugging Face cache (sets ``HF_HOME``; models go to ``path/hub``).

    Call it first: huggingface_hub reads ``HF_HOME`` at import, so a warning says when it was
    already imported (fmat's functions still use the folder: they pass ``cache_dir``).

    Examples
    --------
    >>> import os, tempfile, fmat
    >>> before = os.environ.get("HF_HOME")
    >>> folder = fmat.set_cache_folder(tempfile.mkdtemp())
    >>> os.environ["HF_HOME"] == str(folder)
    True
    >>> _ = os.environ.pop("HF_HOME") if before is None else os.environ.update(HF_HOME=before)
    """
    p = Path(path).expanduser().resolve()
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(
            f"cannot create the model cache folder {p}: {err.strerror or err}", where=str(path), fix=CACHE_FIX
        ) from None
    os.environ["HF_HOME"] = str(p)
    os.environ["HF_HUB_CACHE"] = str(p / "hub")
    if "transformers" in sys.modules or "huggingface_hub" in sys.modules:
        warnings.warn(
            "set_cache_folder: transformers/huggingface_hub were already imported; fmat "
            f"functions will use {p / 'hub'}, other code may still use the old cache. Call "
            "set_cache_folder() first thing in a session.",
            stacklevel=user_stacklevel(),
        )
    return p


#: how to choose another model cache (in error messages)
CACHE_FIX = "give a folder you may write: --cache-dir (fmat commands), cache_dir (workflow configuration) or $HF_HOME"


def cache_dir(cache: str | os.PathLike | None = None) -> Path:
    """The hub cache folder in use: ``cache``, else ``HF_HUB_CACHE``, else ``HF_HOME/hub``.

    Examples
    --------
    Where R FMAT's ``BERT_download()`` puts models too (the Hugging Face cache):

    >>> cache_dir("my-cache").as_posix()
    'my-cache'
    """
    if cache:
        return Path(cache)
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


# ----------------------------------------------------------------------------- lock file

_LOCK_FIX = (
    "delete it and lock the models again: `fmat download MODEL ...`, or in the workflow each model's own "
    "download job (snakemake --profile profiles/default --forcerun resources/models/MODEL.json, MODEL "
    "as in results/scores/; --forcerun download_model would download every hub model again)"
)


def _lock_row_fix(model: str) -> str:
    """The fix for a damaged row of the models' lock: lock that one model again."""
    return (
        f"delete the line (or the whole file) and lock {model} again: `fmat download {model}`, or in the "
        f"workflow its download job alone: {download_job(model)}"
    )


def _lock_row_problem(r) -> str | None:
    """What is wrong with one row of the models' lock, or None."""
    model = str(r["model"])
    if not model.strip():
        return "an empty model name"
    if r["revision"] == "local" and (not str(r["commit"]).strip() or "\n" in str(r["commit"])):
        return f"(model {model[:80]!r}) commit {str(r['commit'])[:80]!r} is not the path of the local folder"
    if r["revision"] != "local" and not _HEX40.fullmatch(str(r["commit"])):
        return f"(model {model[:80]!r}) commit {r['commit']!r} is not a 40-digit hexadecimal commit id"
    if r["sha256"] and not _HEX64.fullmatch(str(r["sha256"])):
        return f"(model {model[:80]!r}) sha256 {str(r['sha256'])[:80]!r} is not 64 hexadecimal digits"
    return None


def read_lock(lock_path) -> pd.DataFrame:
    """The lock table (empty with :data:`LOCK_COLUMNS` when the file does not exist), validated.

    A file that is not a lock (not a TSV, columns missing, a commit that is neither 40 hex
    digits nor, for revision ``local``, a folder's path, a sha256 that is not 64 hex digits) is
    an InputError naming the file, the row and the fix (:func:`fmat.lockfile.read`).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> lock = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> update_lock(lock, pd.DataFrame({"model": ["bert-base-uncased"], "revision": ["main"], "commit": ["a" * 40],
    ...                                 "created": ["2018-11-14"]}))
    >>> read_lock(lock)[["model", "revision", "created"]]
                   model revision     created
    0  bert-base-uncased     main  2018-11-14
    """
    bad: list[str] = []

    def check_row(r):
        problem = _lock_row_problem(r)
        if problem and str(r["model"]).strip():
            bad.append(str(r["model"]))
        return problem

    try:
        return lockfile.read(
            lock_path, LOCK_COLUMNS, what="model lock file", fix=_LOCK_FIX, optional=_OPTIONAL_LOCK_COLUMNS, check_row=check_row
        )
    except InputError as err:
        if not bad:
            raise
        raise InputError(err.message, where=err.where, fix=_lock_row_fix(bad[-1])) from None


def update_lock(lock_path, rows: pd.DataFrame) -> None:
    """Put ``rows`` (:data:`LOCK_COLUMNS`) in the lock file in place of the models' old rows,
    sorted by model; under :func:`fmat.lockfile.exclusive` (parallel download jobs).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> lock = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> update_lock(lock, pd.DataFrame({"model": ["bert-base-uncased"], "revision": ["main"], "commit": ["a" * 40],
    ...                                 "created": ["2018-11-14"]}))
    >>> update_lock(lock, pd.DataFrame({"model": ["albert-base-v2"], "revision": ["main"], "commit": ["b" * 40]}))
    >>> read_lock(lock)["model"].tolist()
    ['albert-base-v2', 'bert-base-uncased']
    """
    with lockfile.exclusive(lock_path):
        new = lockfile.replace_rows(read_lock(lock_path), rows.reindex(columns=LOCK_COLUMNS, fill_value=""), ["model"])
        lockfile.write(lock_path, new.sort_values("model", kind="stable"), LOCK_COLUMNS)


def locked_commit(model: str, lock_path=None) -> str | None:
    """The commit recorded for ``model`` in the lock file (``lock_path`` or $FMAT_MODELS_LOCK).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> lock = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> update_lock(lock, pd.DataFrame({"model": ["bert-base-uncased"], "revision": ["main"], "commit": ["a" * 40],
    ...                                 "created": ["2018-11-14"]}))
    >>> locked_commit("bert-base-uncased", lock) == "a" * 40, locked_commit("roberta-base", lock)
    (True, None)
    """
    return _lock_value(model, "commit", lock_path)


def _existing_lock(lock_path):
    """``lock_path`` or $FMAT_MODELS_LOCK when that file exists, else None."""
    lock_path = lock_path or os.environ.get(LOCK_ENV)
    return lock_path if lock_path and Path(lock_path).exists() else None


def _lock_value(model, column: str, lock_path) -> str | None:
    """``column`` of the last lock row of ``model``; None without a lock file or such a row."""
    lock_path = _existing_lock(lock_path)
    if not lock_path:
        return None
    df = read_lock(lock_path)
    hit = df[df["model"] == str(model)]
    return str(hit[column].iloc[-1]) if len(hit) else None


# ----------------------------------------------------------------------------- download


def _hub_model_info(model: str, revision: str | None):  # patched in tests
    from huggingface_hub import HfApi

    return HfApi().model_info(model, revision=revision)


def _hub_snapshot_download(**kwargs) -> str:  # patched in tests
    from huggingface_hub import snapshot_download

    return snapshot_download(**kwargs)


def _select_files(names: Sequence[str]) -> list[str]:
    """Config, tokenizer files and ONE weights file (safetensors preferred; never .h5/.msgpack/onnx)."""
    names = list(names)
    keep = [n for n in names if "/" not in n and (n == "config.json" or n in _TOKENIZER_FILES)]
    weights = [w for w in WEIGHT_FILES if w in names]
    if not weights:
        raise ModelError(
            "the repository has no model.safetensors or pytorch_model.bin",
            fix="choose a PyTorch masked language model from https://huggingface.co/models?pipeline_tag=fill-mask",
        )
    return keep + weights[:1]


def _writable_cache(cache=None) -> Path:
    """The hub cache folder (:func:`cache_dir`), checked before a download: it exists or can be
    made, and may be written; else InputError naming it, with the fix."""
    folder = cache_dir(cache)
    try:
        check_output(folder, folder=True, where="the model cache folder")
    except InputError as err:
        raise InputError(err.message, where=f"the model cache folder {folder}", fix=CACHE_FIX) from None
    return folder


def _hub_error(model: str, err: Exception, seconds: float) -> Exception:
    """The error a failed hub call becomes: a full or unwritable cache names the cache folder; a
    server that does not answer, or any other network failure, is an OfflineError."""
    if isinstance(err, OSError) and err.errno and not is_timeout(err):
        return InputError(f"cannot write the model cache: {err.strerror}", where=str(err.filename or cache_dir()), fix=CACHE_FIX)
    if is_timeout(err):
        what = f"the Hugging Face hub did not answer within {seconds:g} s for {model!r} (a stalled network, proxy or firewall?)"
    else:
        what = f"cannot reach the Hugging Face hub for {model!r}: {type(err).__name__}: {err}"
    return OfflineError(
        what,
        fix="check the model name and the network (HF_HUB_OFFLINE must not be set; a proxy "
        f"needs HTTPS_PROXY), or wait longer: --timeout / ${TIMEOUT_ENV}. To work offline, "
        "copy a model cache filled on a connected machine here and set HF_HUB_OFFLINE=1, "
        "or give a local model folder (docs/models.md)",
    )


def _check_repo_id(model: str) -> None:
    """InputError unless ``model`` can be a Hugging Face model id (``NAME`` or ``ORG/NAME``),
    checked without the network (huggingface_hub's own rule)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(str(model))
    except HFValidationError as err:
        first = str(err).strip().splitlines()[0]
        raise InputError(
            f"{model!r} is not a Hugging Face model id: {first}",
            where=str(model),
            fix="give a hub id such as bert-base-uncased or vinai/bertweet-base; a local model folder "
            "needs no download: give its path to -m/--model (fmat run, info, ...)",
        ) from None


def download(
    model: str | Sequence[str],
    revision: str | None = None,
    cache_dir: str | None = None,
    lock_path=None,
    timeout: float | None = None,
) -> pd.DataFrame:
    """Download model(s) from the Hugging Face hub into the cache and record them in the lock.

    The only online function (R: ``BERT_download``). For each model: resolve ``revision``
    (default: main) to a commit, download config, tokenizer files and one weights file
    (safetensors preferred) at that commit, hash the weights, and replace the model's row in
    the lock TSV (``lock_path`` or $FMAT_MODELS_LOCK; none: no lock written), with its creation
    date on the hub (``created``). Returns these lock rows. Each hub request waits at most
    ``timeout`` seconds (:func:`fmat.net.timeout`); a hub that does not answer is an OfflineError.

    Examples
    --------
    Downloading needs the network (``fmat.download(["bert-base-uncased"])``, once); a name that
    cannot be a hub id is refused before going online:

    >>> import fmat
    >>> fmat.download("./not a hub id")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fmat.errors.InputError: ...
    """
    seconds = _timeout(timeout)
    models = [model] if isinstance(model, str) else list(model)
    for m in models:  # before going online
        _check_repo_id(m)
    _writable_cache(cache_dir)
    lock_path = lock_path or os.environ.get(LOCK_ENV)
    rows = []
    for m in models:
        try:
            with hub_timeouts(seconds):
                meta = _hub_model_info(m, revision)
        except Exception as err:  # network, not found, a hub that does not answer
            raise _hub_error(m, err, seconds) from err
        commit = meta.sha
        created = getattr(meta, "created_at", None)
        files = _select_files([s.rfilename for s in meta.siblings])
        try:
            with hub_timeouts(seconds):
                folder = Path(_hub_snapshot_download(repo_id=m, revision=commit, cache_dir=cache_dir, allow_patterns=files))
        except Exception as err:  # the same, or a cache that cannot be written
            raise _hub_error(m, err, seconds) from err
        weights = next(folder / f for f in files if f in WEIGHT_FILES)
        rows.append(
            {
                "model": m,
                "revision": revision or "main",
                "commit": commit,
                "files": ",".join(files),
                "sha256": sha256_file(weights),
                "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "created": created.strftime("%Y-%m-%d") if hasattr(created, "strftime") else str(created or ""),
            }
        )
        log.info("downloaded %s @ %s to %s", m, commit, folder)
    out = pd.DataFrame(rows, columns=LOCK_COLUMNS)
    if lock_path:
        update_lock(lock_path, out)
    return out


# ----------------------------------------------------------------------------- loading


def _check_folder(path: Path) -> None:
    if not path.is_dir():
        raise ModelError(
            f"model folder not found: {path}",
            fix="check the path, or give a Hugging Face model name (run `fmat download NAME` first)",
        )
    if not (path / "config.json").exists():
        raise ModelError(
            f"model folder {path} has no config.json (incomplete or not a transformers model)",
            fix=damaged_fix(path),
        )
    if not any((path / w).exists() for w in WEIGHT_FILES) and not list(path.glob("model-*.safetensors")):
        raise ModelError(
            f"model folder {path} has no weights (model.safetensors or pytorch_model.bin)",
            fix=damaged_fix(path),
        )


def model_label(name_or_path) -> str:
    """The name FMAT's model-name rules see: a hub id as is, a local folder's base name.

    Examples
    --------
    >>> model_label("vinai/bertweet-base"), model_label("bert-base-uncased")
    ('vinai/bertweet-base', 'bert-base-uncased')
    """
    s = str(name_or_path).rstrip("/\\")
    return Path(s).name if Path(s).exists() else s


def load_tokenizer(name_or_path, cache_dir=None, revision=None, lock_path=None):
    """The tokenizer of a local folder or a cached hub model (offline, locked revision)."""
    from transformers import AutoTokenizer

    kw = _source_kwargs(name_or_path, cache_dir, revision, lock_path)
    logging.getLogger("transformers.models.bertweet.tokenization_bertweet").setLevel(logging.ERROR)
    try:
        with hub_offline():
            return AutoTokenizer.from_pretrained(kw.pop("path"), trust_remote_code=False, **kw)
    except OSError as err:
        raise _not_cached(name_or_path, err, cache_dir) from err


def _source_kwargs(name_or_path, cache_dir, revision, lock_path) -> dict:
    s = str(name_or_path)
    if is_local(s):
        p = Path(s).expanduser()
        _check_folder(p)
        return {"path": str(p)}
    rev = revision or locked_commit(s, lock_path)
    kw = {"path": s, "local_files_only": True, "cache_dir": str(cache_dir) if cache_dir else None}
    return kw | {"revision": rev} if rev else kw


def _not_cached(name, err, cache=None) -> ModelError:
    """The error of a failed offline load: a local folder whose files cannot be read (an invalid
    config.json...) names the folder; a hub model absent from the cache says so, and, for a name
    that could be a folder (``models/my-bert``), that there is no such folder either."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    p = Path(str(name)).expanduser()
    if is_local(name):
        return ModelError(
            f"cannot read the model folder {name}: {first}",
            where=str(p),
            fix=f"check the files in {p} (config.json must be the JSON file save_pretrained() wrote); "
            "copy the folder again from where it came from, or save the model there again",
        )
    if "couldn't connect to" in first:  # transformers' words for "not cached" with local_files_only: fmat did not connect
        first = "no such model in the cache"
    folder = f"; there is no folder {name} either (relative to {Path.cwd()})" if "/" in str(name) else ""
    return ModelError(
        f"model {name!r} is not in the local model cache ({cache_dir(cache)}), and fmat loads models offline ({first}){folder}",
        fix=_did_you_mean(name, cache) + f"run `fmat download {name}` first (in the workflow: its "
        "download job), or, for a local model folder, check its path",
    )


def _did_you_mean(name, cache=None) -> str:
    """ "did you mean 'bert-base-uncased'? " when cached model names are close to ``name`` (a typo)."""
    cached = cached_models(cache)
    close = difflib.get_close_matches(str(name), cached, n=3, cutoff=0.6)
    if not close:  # 'bert-base-uncase' for 'google-bert/bert-base-uncased': compare the names after the owner
        tails = {c.rsplit("/", 1)[-1]: c for c in cached}
        close = [tails[t] for t in difflib.get_close_matches(str(name).rsplit("/", 1)[-1], list(tails), n=3, cutoff=0.6)]
    return f"did you mean {' or '.join(map(repr, close))} (in the cache)? Else " if close else ""


@contextlib.contextmanager
def hf_progress(enabled: bool = True):
    """transformers' own progress bars ("Loading weights") on or off inside the block, as before after it.

    Examples
    --------
    >>> from transformers.utils import logging as hf_logging
    >>> with hf_progress(False):
    ...     hf_logging.is_progress_bar_enabled()
    False
    """
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    if not enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was and not enabled:
            hf_logging.enable_progress_bar()


#: checkpoint weights a masked LM may leave unused: heads used only in pre-training (BERT's
#: pooler and next-sentence head, ALBERT's sentence-order head) and old position-id buffers.
#: Any other checkpoint weight that the model does not use is a refusal.
PRETRAINING_ONLY = re.compile(r"(^|\.)(pooler|seq_relationship|sop_classifier)(\.|$)|(^|\.)position_ids$")


@contextlib.contextmanager
def _quiet_transformers():
    """transformers' own load report and warnings off inside the block (fmat checks the loading
    info itself and says what matters); the verbosity as before after it."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        hf_logging.set_verbosity(was)


def weights_path(name_or_path, cache_dir=None, revision=None, lock_path=None) -> Path | None:
    """The weights file :func:`load_masked_lm` reads: in a local folder, or in the hub cache at
    the locked commit (no network); None when there is none."""
    kw = _source_kwargs(name_or_path, cache_dir, revision, lock_path)
    path = kw.pop("path")
    if "local_files_only" not in kw:
        folder = Path(path)
        found = [folder / w for w in WEIGHT_FILES if (folder / w).is_file()] or sorted(folder.glob("model-*.safetensors"))
        return found[0] if found else None
    from transformers.utils import cached_file

    for w in WEIGHT_FILES:
        with contextlib.suppress(OSError), hub_offline():
            if got := cached_file(path, w, _raise_exceptions_for_missing_entries=False, **kw):
                return Path(got)
    return None


def _is_weights_error(err: BaseException) -> bool:
    text = str(err)
    return (
        type(err).__name__ in ("SafetensorError", "UnpicklingError", "BadZipFile", "EOFError", "HeaderTooLarge")
        or (isinstance(err, RuntimeError) and ("PytorchStreamReader" in text or "zip archive" in text))
        or "Weights only load failed" in text
        or "Unable to load weights" in text
    )


def _weights_error(name, wpath, err) -> ModelError:
    """A damaged or unsafe weights file: name the file and the fix (download again). The fix
    never points at the unsafe pickle loader: a file the safe loader refuses may run code."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    first = first.split(". ")[0] if "weights_only" in first else first  # torch's advice is not ours to give
    where = str(wpath) if wpath else str(name)
    return ModelError(
        f"the weights of model {name} cannot be read: {where} is damaged, truncated, or not a "
        f"weights file ({type(err).__name__}: {first[:200]})",
        where=where,
        fix=damaged_fix(name) + ". A file that the safe loader refuses may contain code: do not load it another way",
    )


def download_job(model: str) -> str:
    """The command that reruns the workflow's download job of ``model`` alone (its marker file).

    Examples
    --------
    >>> download_job("vinai/bertweet-base")
    'snakemake --profile profiles/default --forcerun resources/models/vinai__bertweet-base.json'
    """
    try:
        slug = model_slug(model)
    except InputError:
        slug = "MODEL"
    return f"snakemake --profile profiles/default --forcerun resources/models/{slug}.json"


def verify_weights(name, wpath, lock_path=None) -> str | None:
    """Check the weights file ``wpath`` of ``name`` against the sha256 the lock file records
    (the hub model's row, or the local folder's: revision ``local``, commit = its path).

    Returns the digest checked (None: the lock records none); a different one is a ModelError.
    """
    lock_path = _existing_lock(lock_path)
    if not lock_path or not wpath:
        return None
    df = read_lock(lock_path)
    folder = Path(wpath).resolve().parent
    is_folder = [rev == "local" and Path(c).resolve() == folder for rev, c in zip(df["revision"], df["commit"])]
    rows = df[pd.Series(is_folder, index=df.index, dtype=bool) | (df["model"] == str(name))]
    rows = rows[rows["sha256"] != ""]
    if not len(rows):
        return None
    want = str(rows["sha256"].iloc[-1])
    got = sha256_file(Path(wpath))
    if got != want:
        local = str(rows["revision"].iloc[-1]) == "local"
        job = download_job(str(rows["model"].iloc[-1]))
        raise ModelError(
            f"the weights of model {name} are not the ones locked: {wpath} has sha256 {got[:16]}…, the lock file "
            f"{lock_path} records {want[:16]}… (locked {rows['date'].iloc[-1]}); the file was changed or damaged "
            "after it was locked",
            where=str(wpath),
            fix=(
                "if the new weights are meant, lock them again: rerun the workflow's download job of this model "
                f"alone ({job}), which re-hashes the folder; otherwise put the locked weights back"
                if local
                else f"download it again: fmat download {name} (re-locks it), or delete the cached file and rerun the "
                "workflow's download step"
            ),
        )
    return got


def check_masked_lm(name, model, loading_info: Mapping, tokenizer) -> None:
    """Refuse what is not a masked LM with its head (ModelError), from transformers' loading info:
    ``missing_keys``, ``mismatched_keys``, ``unexpected_keys`` other than :data:`PRETRAINING_ONLY`,
    or a tokenizer whose ids reach past the input embeddings (the table in docs/models.md).
    """

    def short(keys):
        keys = sorted(keys)
        heads = sorted({".".join(k.split(".")[:2]) + ".*" for k in keys})
        return ", ".join(heads[:8]) + (" ..." if len(heads) > 8 else "") + f" ({len(keys)} weight(s))"

    cls = type(model).__name__
    fix = (
        "use the pre-trained masked-LM checkpoint (the model as published, e.g. bert-base-uncased), "
        "not a base model without its MLM head or a fine-tuned classifier"
    )
    missing = list(loading_info.get("missing_keys") or [])
    if missing:
        raise ModelError(
            f"{name} is not a masked language model with its head: the checkpoint lacks "
            f"{short(missing)} that {cls} needs (transformers would fill them with random numbers, "
            "and every probability would be noise)",
            fix=fix,
        )
    mismatched = list(loading_info.get("mismatched_keys") or [])
    if mismatched:
        keys = [m[0] if isinstance(m, (tuple, list)) else m for m in mismatched]
        raise ModelError(
            f"{name}: checkpoint weight(s) {short(keys)} have other sizes than {cls} built from its config.json expects",
            fix="config.json and the weights must come from the same model: download it again",
        )
    unexpected = [k for k in (loading_info.get("unexpected_keys") or []) if not PRETRAINING_ONLY.search(k)]
    if unexpected:
        raise ModelError(
            f"{name}: checkpoint weight(s) {short(unexpected)} are not used by {cls}: the checkpoint "
            "is another model than its config.json says (e.g. a fine-tuned classifier)",
            fix=fix,
        )
    n_emb = int(input_embedding_matrix(model).shape[0])
    top = max(tokenizer.get_vocab().values(), default=-1)
    if top >= n_emb:
        raise ModelError(
            f"{name}: the tokenizer has token ids up to {top}, but the model's embedding matrix has only "
            f"{n_emb} rows: the tokenizer belongs to another model, or the vocabulary was cut",
            fix="use the tokenizer saved with the model (download it again)",
        )


@hub_offline()
def load_masked_lm(
    name_or_path, device=None, dtype="float32", cache_dir=None, revision=None, lock_path=None, progress: bool = True
):
    """Load ``(model, tokenizer)`` for a masked LM from a folder or the local hub cache.

    Never runs repository code (``trust_remote_code=False``) and never goes online: a hub
    model must have been downloaded (:func:`download`); its locked commit is used when the
    lock file (``lock_path`` or $FMAT_MODELS_LOCK) lists it. The model is put in eval mode on
    ``device`` (default: CUDA when available). ``progress=False`` hides transformers' bar.

    ModelError before any scoring for: a missing/incomplete folder or a model absent from the
    cache; not a masked LM; weights that cannot be read (the error names the file) or whose
    sha256 differs from the lock's (:func:`verify_weights`); the refusals of
    :func:`check_masked_lm`; degenerate outputs (:func:`check_outputs`).
    """
    from transformers import AutoConfig, AutoModelForMaskedLM

    kw = _source_kwargs(name_or_path, cache_dir, revision, lock_path)
    path = kw.pop("path")
    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=False, **kw)
    except OSError as err:
        raise _not_cached(name_or_path, err, cache_dir) from err
    except ValueError as err:
        raise ModelError(
            f"cannot read the configuration of {name_or_path}: {err}",
            fix="use a transformers masked language model (no custom code)",
        ) from err
    torch_dtype = resolve_dtype(dtype)
    wpath = weights_path(name_or_path, cache_dir=cache_dir, revision=revision, lock_path=lock_path)
    verify_weights(name_or_path, wpath, lock_path)
    try:
        with hf_progress(progress), _quiet_transformers():
            model, info = AutoModelForMaskedLM.from_pretrained(
                path,
                config=config,
                trust_remote_code=False,
                dtype=torch_dtype,
                output_loading_info=True,
                ignore_mismatched_sizes=True,  # listed, then refused
                **kw,
            )
    except Exception as err:
        if _is_weights_error(err):
            raise _weights_error(name_or_path, wpath, err) from err
        if isinstance(err, ValueError):
            raise ModelError(
                f"{name_or_path} ({config.model_type}) is not a masked language model: {str(err).splitlines()[0]}",
                fix="choose a fill-mask model (https://huggingface.co/models?pipeline_tag=fill-mask)",
            ) from err
        if isinstance(err, OSError):
            raise _not_cached(name_or_path, err, cache_dir) from err
        raise
    with _quiet_transformers():
        tokenizer = load_tokenizer(name_or_path, cache_dir=cache_dir, revision=revision, lock_path=lock_path)
    if tokenizer.mask_token is None:
        raise ModelError(f"the tokenizer of {name_or_path} has no mask token", fix="use a masked language model")
    check_masked_lm(name_or_path, model, info, tokenizer)
    if info.get("unexpected_keys"):
        log.info(
            "%s: pre-training-only weights not used by a masked LM: %s",
            name_or_path,
            ", ".join(sorted(info["unexpected_keys"])[:10]),
        )
    model.eval()
    model.to(resolve_device(device))
    check_outputs(name_or_path, model, tokenizer, wpath)
    return model, tokenizer


#: the sentence :func:`check_outputs` fills (one forward pass at every load)
PROBE = "This is a [MASK] sentence."
#: logits further apart than this at one mask are not a model's: a real masked LM's logits at a
#: mask span a few dozen units (bert-base: about 30); weights with a flipped exponent bit give 1e30 and more
MAX_LOGIT_SPREAD = 1e4


def is_local(name_or_path) -> bool:
    """Is ``name_or_path`` a local model folder (not a model of the hub cache)?

    Examples
    --------
    >>> import tempfile
    >>> is_local("bert-base-uncased"), is_local(tempfile.mkdtemp())
    (False, True)
    """
    s = str(name_or_path)
    hub_id = len(parts := s.split("/")) <= 2 and all(parts) and not s.startswith((".", "/", "~"))
    return Path(s).expanduser().exists() or not hub_id


def damaged_fix(name_or_path) -> str:
    """How to replace damaged weights: download a hub model again, copy or save a local folder again.

    Examples
    --------
    >>> damaged_fix("bert-base-uncased")  # doctest: +NORMALIZE_WHITESPACE
    'download the model again: `fmat download bert-base-uncased` (in the workflow: delete its folder in the model cache, then
    snakemake --profile profiles/default --forcerun resources/models/bert-base-uncased.json)'
    """
    if is_local(name_or_path):
        return (
            f"{name_or_path} is a local folder, which cannot be downloaded again: copy it again from where it "
            "came from, or save the model there again with save_pretrained() (in the workflow, then lock it "
            "again: snakemake --profile profiles/default --forcerun resources/models/NAME.json, NAME its name "
            "in the configuration)"
        )
    return (
        f"download the model again: `fmat download {name_or_path}` (in the workflow: delete its folder in the "
        f"model cache, then {download_job(str(name_or_path))})"
    )


def degenerate_error(name_or_path, weights, what: str) -> ModelError:
    """The error for a model whose outputs are not a model's (all zero, NaN, infinite or constant).

    Examples
    --------
    >>> err = degenerate_error("bert-base-uncased", None, "all logits are NaN")
    >>> type(err).__name__, err.where
    ('ModelError', 'bert-base-uncased')
    """
    where = str(weights) if weights else str(name_or_path)
    return ModelError(
        f"model {name_or_path} gives degenerate outputs: {what}. Its weights are probably damaged: "
        f"{where} reads as a weights file, but numbers in it were changed (flipped bytes, a bad copy "
        "or disk)",
        where=where,
        fix=damaged_fix(name_or_path),
    )


def check_outputs(name_or_path, model, tokenizer, weights=None, sentence: str = PROBE) -> None:
    """Refuse a model whose outputs are degenerate (ModelError naming the folder or weights file).

    One forward pass on ``sentence`` (:data:`PROBE` at every load): its logits at the mask must
    be finite, not all the same (every probability 1/V) and not more than
    :data:`MAX_LOGIT_SPREAD` apart (every probability but one 0): what weights with flipped
    bytes that still read as a weights file give.

    Examples
    --------
    >>> import torch
    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> check_outputs("tiny", model, tok)
    >>> with torch.no_grad():
    ...     _ = model.cls.predictions.decoder.weight.zero_(), model.cls.predictions.bias.zero_()
    >>> try:
    ...     check_outputs("tiny", model, tok)
    ... except ModelError as err:
    ...     print(err.message.split(":")[0])
    model tiny gives degenerate outputs
    """
    import torch

    enc = tokenizer(sentence.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    ids = enc["input_ids"][0]
    at = (ids == tokenizer.mask_token_id).nonzero()
    if not len(at):
        return
    device = next(model.parameters()).device
    with torch.inference_mode():
        logits = model(**{k: v.to(device) for k, v in enc.items()}).logits[0, int(at[0, 0])].float()
    at_mask = f"at the mask of the sentence {sentence!r}"
    low, high = float(logits.min()), float(logits.max())
    if not bool(torch.isfinite(logits).all()):
        what = f"{int((~torch.isfinite(logits)).sum())} of its {logits.numel()} logits {at_mask} are NaN or infinite"
    elif high == low:
        what = f"every token gets the same logit ({high:g}) {at_mask}"
    elif high - low > MAX_LOGIT_SPREAD:
        what = f"its logits {at_mask} span {low:.3g} to {high:.3g}, so every probability but one is zero"
    else:
        return
    raise degenerate_error(name_or_path, weights, what)


def check_scores(name_or_path, scores, weights=None) -> None:
    """Refuse a score table whose in-vocabulary option probabilities are all zero, NaN or
    infinite (ModelError naming the folder): a model that gives them is broken.

    Examples
    --------
    >>> import pandas as pd
    >>> check_scores("my-model", pd.DataFrame({"prob": [0.2, 0.1], "oov": [False, False]}))
    >>> try:
    ...     check_scores("my-model", pd.DataFrame({"prob": [0.0, float("nan")], "oov": [False, False]}))
    ... except ModelError as err:
    ...     print(err.message.split(".")[0])
    model my-model gives degenerate outputs: all 2 option probabilities of whole-word tokens are zero, NaN or infinite
    """
    if "prob" not in scores or not len(scores):
        return
    prob = scores["prob"].to_numpy(dtype=float)
    scored = ~scores["oov"].to_numpy(dtype=bool) if "oov" in scores else np.ones(len(prob), dtype=bool)
    if scored.any() and not (np.isfinite(prob[scored]) & (prob[scored] > 0)).any():
        raise degenerate_error(
            name_or_path, weights, f"all {int(scored.sum())} option probabilities of whole-word tokens are zero, NaN or infinite"
        )


def resolve_device(device=None):
    """The torch device of ``device``: None/auto (CUDA when there is a GPU), a name or a GPU's number.

    Examples
    --------
    >>> resolve_device("cpu"), resolve_device(-1)
    (device(type='cpu'), device(type='cpu'))
    >>> resolve_device("gpu")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: unknown device 'gpu'
      fix: use cpu, cuda or cuda:N
    """
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(device, int):
        return torch.device(f"cuda:{device}" if device >= 0 else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise InputError(f"unknown device {device!r}", fix="use cpu, cuda or cuda:N") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InputError(
            "device cuda was asked for but no CUDA GPU is available",
            fix="use --device cpu or auto (fmat commands), or device: cpu or auto in the workflow configuration",
        )
    return dev


def resolve_dtype(dtype):
    """The torch dtype of a name (float32/fp32, float16/fp16, bfloat16/bf16) or of a torch dtype.

    Examples
    --------
    >>> resolve_dtype("fp16"), resolve_dtype("float32")
    (torch.float16, torch.float32)
    """
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    name = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}.get(dtype, dtype)
    if name not in {"float32", "float16", "bfloat16"}:
        raise InputError(f"unknown dtype {dtype!r}", fix="use float32 (default), bfloat16 or float16")
    return getattr(torch, name)


def _as_models(models) -> dict[str, str]:
    """``{label: name_or_path}`` from a name, a list of names/paths, or a mapping."""
    if isinstance(models, (str, os.PathLike)):
        models = [models]
    if isinstance(models, Mapping):
        return {str(k): str(v) for k, v in models.items()}
    out = {str(m): str(m) for m in models}
    if not out:
        raise InputError("no model given", fix="name at least one model (hub name or local folder)")
    return out


# ----------------------------------------------------------------------------- BERT_* verbs


def info(models, cache_dir=None, lock_path=None) -> pd.DataFrame:
    """Basic facts of each model (R: ``BERT_info``).

    Columns: model, type (config.model_type), param (number of parameters), vocab (rows of
    the input embedding), embed (its width), layer (hidden layers), heads (attention heads),
    mask (the mask token), created (:func:`created_date`).

    Examples
    --------
    >>> import fmat, tempfile, pathlib
    >>> from fmat import tiny
    >>> path = tiny.build_tiny_model(pathlib.Path(tempfile.mkdtemp()) / "m", "bert-uncased", ["nurse"])
    >>> fmat.info(str(path))[["type", "layer", "heads", "mask"]]
       type  layer  heads    mask
    0  bert      2      2  [MASK]
    """
    rows = []
    for label, src in _as_models(models).items():
        model, tok = load_masked_lm(src, device="cpu", cache_dir=cache_dir, lock_path=lock_path, progress=False)
        cfg = model.config
        emb = input_embedding_matrix(model)
        rows.append(
            {
                "model": label,
                "type": cfg.model_type,
                "param": int(sum(p.numel() for p in model.parameters())),
                "vocab": int(emb.shape[0]),
                "embed": int(emb.shape[1]),
                "layer": int(getattr(cfg, "num_hidden_layers", getattr(cfg, "n_layers", 0)) or 0),
                "heads": int(getattr(cfg, "num_attention_heads", getattr(cfg, "n_heads", 0)) or 0),
                "mask": tok.mask_token,
                "created": created_date(src, lock_path),
            }
        )
        del model
    return pd.DataFrame(rows, columns=["model", "type", "param", "vocab", "embed", "layer", "heads", "mask", "created"])


def created_date(model: str, lock_path=None) -> str:
    """The creation date on the hub of ``model`` recorded at download (lock column ``created``), or "".

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> lock = pathlib.Path(tempfile.mkdtemp()) / "models.lock.tsv"
    >>> update_lock(lock, pd.DataFrame({"model": ["bert-base-uncased"], "revision": ["main"], "commit": ["a" * 40],
    ...                                 "created": ["2018-11-14"]}))
    >>> created_date("bert-base-uncased", lock), created_date("roberta-base", lock)
    ('2018-11-14', '')
    """
    return _lock_value(model, "created", lock_path) or ""


def info_date(models, lock_path=None) -> pd.DataFrame:
    """The date each model was created on the hub (R: ``BERT_info_date``), as :func:`download`
    recorded it in the lock. Columns: model, date ("" where not recorded: local folders).

    Examples
    --------
    A local folder has no creation date on the hub:

    >>> import fmat
    >>> fmat.info_date(["models/my-local-model"])["date"].tolist()
    ['']
    """
    names = [models] if isinstance(models, (str, os.PathLike)) else list(models)
    return pd.DataFrame({"model": [str(m) for m in names], "date": [created_date(str(m), lock_path) for m in names]})


def vocab(
    models, words, query: str = "It is [MASK] here.", word_rule: str = "tokenizer", cache_dir=None, lock_path=None
) -> pd.DataFrame:
    """Are ``words`` single whole-word tokens of each model? (R: ``BERT_vocab``).

    The rules of :func:`fmat.run`: the token is derived from the tokenizer with the word in
    place of the mask in ``query`` (e.g. "[MASK] is here." for sentence-initial forms), or
    FMAT's name rules with ``word_rule="fmat"``. Columns: model, M_word, token (or "<first
    piece> (out-of-vocabulary)"), token_id, in_vocab (False also for the unknown token).

    Examples
    --------
    >>> import fmat, tempfile, pathlib
    >>> from fmat import tiny
    >>> path = tiny.build_tiny_model(pathlib.Path(tempfile.mkdtemp()) / "m", "bert-uncased", ["nurse"])
    >>> fmat.vocab(str(path), ["nurse", "zebra"])[["M_word", "in_vocab"]]
      M_word  in_vocab
    0  nurse      True
    1  zebra     False
    """
    words = [str(w) for w in ([words] if isinstance(words, str) else words)]
    if "[MASK]" not in query:
        raise InputError(f"query {query!r} has no [MASK]", fix="e.g. query='It is [MASK] here.'")
    rows = []
    for label, src in _as_models(models).items():
        tok = load_tokenizer(src, cache_dir=cache_dir, lock_path=lock_path)
        sent = query.replace("[MASK]", tok.mask_token)
        if word_rule == "fmat":
            opts = fmat_rule_options(tok, model_label(src) if label == src else label, [query] * len(words), words)
        else:
            opts = derive_options(tok, [sent] * len(words), words)
        for w, o in zip(words, opts):
            first = o.pieces[0] if o.pieces else tok.unk_token_id
            name = tok.convert_ids_to_tokens(first) if first is not None else ""
            rows.append(
                {
                    "model": label,
                    "M_word": w,
                    "token": name if not o.oov else f"{name} (out-of-vocabulary)",
                    "token_id": int(first) if first is not None else -1,
                    "in_vocab": not o.oov,
                }
            )
    return pd.DataFrame(rows, columns=["model", "M_word", "token", "token_id", "in_vocab"])


def fill_mask_check(query: str, models, top: int = 5, device=None, cache_dir=None, lock_path=None) -> pd.DataFrame:
    """The raw top-``top`` fill-mask predictions of each model (R: ``fill_mask_check``).

    ``[MASK]`` in ``query`` is replaced by each model's mask token. Columns: model, score,
    token (id), token_str, sequence — the transformers fill-mask pipeline's output.

    Examples
    --------
    >>> import fmat, tempfile, pathlib
    >>> from fmat import tiny
    >>> path = tiny.build_tiny_model(pathlib.Path(tempfile.mkdtemp()) / "m", "bert-uncased", ["nurse"])
    >>> top = fmat.fill_mask_check("The [MASK] is a nurse.", str(path), top=2)
    >>> list(top.columns), len(top)
    (['model', 'score', 'token', 'token_str', 'sequence'], 2)
    """
    if query.count("[MASK]") != 1:
        raise InputError(f"query {query!r} must contain exactly one [MASK]", fix='e.g. "Paris is the [MASK] of France."')
    rows = []
    for label, src in _as_models(models).items():
        model, tok = load_masked_lm(src, device=device, cache_dir=cache_dir, lock_path=lock_path)
        # damaged weights that pass the load's probe can still fail on this sentence
        check_outputs(src, model, tok, weights_path(src, cache_dir=cache_dir, lock_path=lock_path), sentence=query)
        rows.extend({"model": label, **r} for r in top_fills(model, tok, query, top))
    return pd.DataFrame(rows, columns=["model", "score", "token", "token_str", "sequence"])


def top_fills(model, tokenizer, query: str, top: int = 5) -> list[dict]:
    """The fill-mask pipeline's top-``top`` fills of ``query`` (one ``[MASK]``) on a loaded model:
    ``[{score, token, token_str, sequence}]``.

    Examples
    --------
    As R FMAT's ``fill_mask()`` (transformers' fill-mask pipeline):

    >>> from fmat.tiny import doc_model
    >>> model, tok = doc_model()  # a one-layer BERT of 13 words, random weights (seed 0)
    >>> fills = top_fills(model, tok, "the [MASK] is here .", top=3)
    >>> len(fills), sorted(fills[0])
    (3, ['score', 'sequence', 'token', 'token_str'])
    """
    from transformers import pipeline

    with _quiet_transformers():
        pipe = pipeline("fill-mask", model=model, tokenizer=tokenizer, device=model.device)
        out = pipe(query.replace("[MASK]", tokenizer.mask_token), top_k=int(top))
    return [
        {"score": float(r["score"]), "token": int(r["token"]), "token_str": r["token_str"], "sequence": r["sequence"]}
        for r in out
    ]


def _scan_cache(cache=None):  # patched in tests
    from huggingface_hub import scan_cache_dir

    return scan_cache_dir(cache)


def remove(models, cache_dir=None) -> list[str]:
    """Delete model(s) from the local Hugging Face cache (R: ``BERT_remove``); returns the removed names.

    Local model folders are never deleted (ModelError); a model not in the cache is a warning.

    Examples
    --------
    A local model folder is never deleted:

    >>> import fmat, tempfile
    >>> fmat.remove(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fmat.errors.ModelError: ...is a local folder, not a cached hub model...
    """
    names = [models] if isinstance(models, str) else list(models)
    for m in names:
        if Path(str(m)).exists():
            raise ModelError(
                f"{m} is a local folder, not a cached hub model; fmat does not delete folders",
                fix="delete the folder yourself if you mean it",
            )
    from huggingface_hub.errors import CacheNotFound

    try:
        info_ = _scan_cache(cache_dir)
    except CacheNotFound:
        where = cache_dir or cache_dir_default()
        raise ModelError(
            f"there is no model cache at {where} (nothing was downloaded there yet): nothing to remove",
            where=", ".join(map(str, names)),
            fix="give the cache the models were downloaded to: --cache-dir, or $HF_HOME",
        ) from None
    repos = [repo for repo in info_.repos if repo.repo_type == "model" and repo.repo_id in names]
    removed = [repo.repo_id for repo in repos]
    hashes = [r.commit_hash for repo in repos for r in repo.revisions]
    for m in names:
        if m not in removed:
            warnings.warn(f"{m} is not in the cache {cache_dir or cache_dir_default()}", stacklevel=user_stacklevel())
    if hashes:
        info_.delete_revisions(*hashes).execute()
    return removed


def cache_dir_default() -> Path:
    """The hub cache folder when none is given (:func:`cache_dir` of None).

    Examples
    --------
    >>> cache_dir_default() == cache_dir(None)
    True
    """
    return cache_dir(None)


def cached_models(cache=None) -> list[str]:
    """Model ids present in the hub cache (R: ``BERT_download()`` without models).

    Examples
    --------
    As R FMAT's ``BERT_download()`` without models (what is there):

    >>> import tempfile
    >>> cached_models(tempfile.mkdtemp())
    []
    """
    try:
        return sorted(r.repo_id for r in _scan_cache(cache).repos if r.repo_type == "model")
    except Exception:  # no cache yet
        return []
