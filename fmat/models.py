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

import datetime as _dt
import hashlib
import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .errors import InputError, ModelError, OfflineError

log = logging.getLogger(__name__)

LOCK_COLUMNS = ["model", "revision", "commit", "files", "sha256", "date"]
#: environment variable naming the default lock file (the workflow sets it)
LOCK_ENV = "FMAT_MODELS_LOCK"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                    "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "bpe.codes",
                    "added_tokens.json")


# ----------------------------------------------------------------------------- cache folder

def set_cache_folder(path) -> Path:
    """Use ``path`` as the Hugging Face cache (sets ``HF_HOME``; models go to ``path/hub``).

    Call it before anything else: huggingface_hub reads ``HF_HOME`` when it is imported, so
    a warning says when transformers/huggingface_hub were already imported (the setting
    then only reaches functions here that pass ``cache_dir`` explicitly: all of them do).
    """
    p = Path(path).expanduser().resolve()
    p.mkdir(parents=True, exist_ok=True)
    os.environ["HF_HOME"] = str(p)
    os.environ["HF_HUB_CACHE"] = str(p / "hub")
    if "transformers" in sys.modules or "huggingface_hub" in sys.modules:
        warnings.warn("set_cache_folder: transformers/huggingface_hub were already imported; fmat "
                      f"functions will use {p / 'hub'}, other code may still use the old cache. Call "
                      "set_cache_folder() first thing in a session.", stacklevel=2)
    return p


def cache_dir(cache: str | os.PathLike | None = None) -> Path:
    """The hub cache folder in use: ``cache``, else ``HF_HUB_CACHE``, else ``HF_HOME/hub``."""
    if cache:
        return Path(cache)
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


# ----------------------------------------------------------------------------- lock file

def read_lock(lock_path) -> pd.DataFrame:
    """The lock table (empty with :data:`LOCK_COLUMNS` when the file does not exist)."""
    p = Path(lock_path)
    if not p.exists():
        return pd.DataFrame({c: pd.Series(dtype="str") for c in LOCK_COLUMNS})
    df = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
    missing = [c for c in LOCK_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"lock file lacks column(s) {missing}", where=str(p),
                         fix="delete it and run `fmat download` again")
    return df


def _write_lock(lock_path, df: pd.DataFrame) -> None:
    from .io import write_table

    write_table(df[LOCK_COLUMNS], lock_path, "tsv")


def locked_commit(model: str, lock_path=None) -> str | None:
    """The commit recorded for ``model`` in the lock file (``lock_path`` or $FMAT_MODELS_LOCK)."""
    lock_path = lock_path or os.environ.get(LOCK_ENV)
    if not lock_path or not Path(lock_path).exists():
        return None
    df = read_lock(lock_path)
    hit = df[df["model"] == model]
    return str(hit["commit"].iloc[-1]) if len(hit) else None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
        raise ModelError("the repository has no model.safetensors or pytorch_model.bin",
                         fix="choose a PyTorch masked language model from https://huggingface.co/models?pipeline_tag=fill-mask")
    return keep + weights[:1]


def download(model: str | Sequence[str], revision: str | None = None, cache_dir: str | None = None,
             lock_path=None) -> pd.DataFrame:
    """Download model(s) from the Hugging Face hub into the cache and record them in the lock.

    The only online function (R: ``BERT_download``). For each model: resolve ``revision``
    (default: the main branch) to a commit, download config, tokenizer files and one weights
    file (safetensors preferred) at that commit, hash the weights, and append/replace the
    model's row in the lock TSV (``lock_path`` or $FMAT_MODELS_LOCK; none: no lock written).
    Returns the lock rows of these models.
    """
    models = [model] if isinstance(model, str) else list(model)
    lock_path = lock_path or os.environ.get(LOCK_ENV)
    rows = []
    for m in models:
        try:
            meta = _hub_model_info(m, revision)
        except Exception as err:  # network or not found
            raise OfflineError(f"cannot reach the Hugging Face hub for {m!r}: {type(err).__name__}: {err}",
                               fix="check the model name and the network (HF_HUB_OFFLINE must not be set)") from err
        commit = meta.sha
        files = _select_files([s.rfilename for s in meta.siblings])
        folder = Path(_hub_snapshot_download(repo_id=m, revision=commit, cache_dir=cache_dir,
                                             allow_patterns=files))
        weights = next(folder / f for f in files if f in WEIGHT_FILES)
        rows.append({"model": m, "revision": revision or "main", "commit": commit, "files": ",".join(files),
                     "sha256": _sha256(weights), "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        log.info("downloaded %s @ %s to %s", m, commit, folder)
    out = pd.DataFrame(rows, columns=LOCK_COLUMNS)
    if lock_path:
        old = read_lock(lock_path)
        old = old[~old["model"].isin(models)]
        _write_lock(lock_path, pd.concat([old, out], ignore_index=True))
    return out


# ----------------------------------------------------------------------------- loading

def _looks_like_hub_id(s: str) -> bool:
    parts = s.split("/")
    return len(parts) <= 2 and all(parts) and not s.startswith((".", "/", "~"))


def _check_folder(path: Path) -> None:
    if not path.is_dir():
        raise ModelError(f"model folder not found: {path}",
                         fix="check the path, or give a Hugging Face model name (run `fmat download NAME` first)")
    if not (path / "config.json").exists():
        raise ModelError(f"model folder {path} has no config.json (incomplete or not a transformers model)",
                         fix="save the model with save_pretrained(), or download it again with `fmat download`")
    if not any((path / w).exists() for w in WEIGHT_FILES) and not list(path.glob("model-*.safetensors")):
        raise ModelError(f"model folder {path} has no weights (model.safetensors or pytorch_model.bin)",
                         fix="the download was incomplete: run `fmat download` again")


def model_label(name_or_path) -> str:
    """The name FMAT's model-name rules see: a hub id as is, a local folder's base name."""
    s = str(name_or_path).rstrip("/\\")
    return Path(s).name if Path(s).exists() else s


def load_tokenizer(name_or_path, cache_dir=None, revision=None, lock_path=None):
    """The tokenizer of a local folder or a cached hub model (offline, locked revision)."""
    from transformers import AutoTokenizer

    kw = _source_kwargs(name_or_path, cache_dir, revision, lock_path)
    logging.getLogger("transformers.models.bertweet.tokenization_bertweet").setLevel(logging.ERROR)
    try:
        return AutoTokenizer.from_pretrained(kw.pop("path"), trust_remote_code=False, **kw)
    except OSError as err:
        raise _not_cached(name_or_path, err) from err


def _source_kwargs(name_or_path, cache_dir, revision, lock_path) -> dict:
    s = str(name_or_path)
    p = Path(s).expanduser()
    if p.exists() or not _looks_like_hub_id(s):
        _check_folder(p)
        return {"path": str(p)}
    rev = revision or locked_commit(s, lock_path)
    kw = {"path": s, "local_files_only": True, "cache_dir": str(cache_dir) if cache_dir else None}
    if rev:
        kw["revision"] = rev
    return kw


def _not_cached(name, err) -> ModelError:
    return ModelError(f"model {name!r} is not in the local cache ({cache_dir()}), and fmat loads models offline "
                      f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})",
                      fix=f"run `fmat download {name}` (or the workflow's download_model rule) first, "
                          "or give the path of a local model folder")


@contextlib.contextmanager
def hf_progress(enabled: bool = True):
    """transformers' own progress bars ("Loading weights") on or off inside the block, as before after it."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    if not enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was and not enabled:
            hf_logging.enable_progress_bar()


def load_masked_lm(name_or_path, device=None, dtype="float32", cache_dir=None, revision=None, lock_path=None,
                   progress: bool = True):
    """Load ``(model, tokenizer)`` for a masked LM from a folder or the local hub cache.

    Never runs repository code (``trust_remote_code=False``) and never goes online: a hub
    model must have been downloaded (:func:`download`); its locked commit is used when the
    lock file (``lock_path`` or $FMAT_MODELS_LOCK) lists it. The model is put in eval mode on
    ``device`` (default: CUDA when available) with ``dtype`` ("float32" default).
    ``progress=False`` hides transformers' "Loading weights" bar.

    Raises ModelError for a missing/incomplete folder, a model absent from the cache, or a
    model that is not a masked language model.
    """
    from transformers import AutoConfig, AutoModelForMaskedLM

    kw = _source_kwargs(name_or_path, cache_dir, revision, lock_path)
    path = kw.pop("path")
    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=False, **kw)
    except OSError as err:
        raise _not_cached(name_or_path, err) from err
    except ValueError as err:
        raise ModelError(f"cannot read the configuration of {name_or_path}: {err}",
                         fix="use a transformers masked language model (no custom code)") from err
    torch_dtype = resolve_dtype(dtype)
    try:
        with hf_progress(progress):
            model = AutoModelForMaskedLM.from_pretrained(path, config=config, trust_remote_code=False,
                                                         dtype=torch_dtype, **kw)
    except ValueError as err:
        raise ModelError(f"{name_or_path} ({config.model_type}) is not a masked language model: {str(err).splitlines()[0]}",
                         fix="choose a fill-mask model (https://huggingface.co/models?pipeline_tag=fill-mask)") from err
    except OSError as err:
        raise _not_cached(name_or_path, err) from err
    tokenizer = load_tokenizer(name_or_path, cache_dir=cache_dir, revision=revision, lock_path=lock_path)
    if tokenizer.mask_token is None:
        raise ModelError(f"the tokenizer of {name_or_path} has no mask token", fix="use a masked language model")
    model.eval()
    model.to(resolve_device(device))
    return model, tokenizer


def resolve_device(device=None):
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
        raise InputError("device cuda was asked for but no CUDA GPU is available", fix="use --device cpu")
    return dev


def resolve_dtype(dtype):
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16, "fp16": torch.float16,
             "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
    if dtype not in table:
        raise InputError(f"unknown dtype {dtype!r}", fix="use float32 (default), bfloat16 or float16")
    return table[dtype]


def _as_models(models) -> dict[str, str]:
    """``{label: name_or_path}`` from a name, a list of names/paths, or a mapping."""
    if isinstance(models, (str, os.PathLike)):
        models = [models]
    if isinstance(models, Mapping):
        return {str(k): str(v) for k, v in models.items()}
    out = {}
    for m in models:
        out[str(m)] = str(m)
    if not out:
        raise InputError("no model given", fix="name at least one model (hub name or local folder)")
    return out


# ----------------------------------------------------------------------------- BERT_* verbs

def info(models, cache_dir=None, lock_path=None) -> pd.DataFrame:
    """Basic facts of each model (R: ``BERT_info``).

    Columns: model, type (config.model_type), param (number of parameters), vocab (rows of
    the input embedding), embed (its width), layer (hidden layers), heads (attention heads),
    mask (the mask token).
    """
    rows = []
    for label, src in _as_models(models).items():
        model, tok = load_masked_lm(src, device="cpu", cache_dir=cache_dir, lock_path=lock_path, progress=False)
        cfg = model.config
        from .scoring import input_embedding_matrix

        emb = input_embedding_matrix(model)
        rows.append({"model": label, "type": cfg.model_type,
                     "param": int(sum(p.numel() for p in model.parameters())),
                     "vocab": int(emb.shape[0]), "embed": int(emb.shape[1]),
                     "layer": int(getattr(cfg, "num_hidden_layers", getattr(cfg, "n_layers", 0)) or 0),
                     "heads": int(getattr(cfg, "num_attention_heads", getattr(cfg, "n_heads", 0)) or 0),
                     "mask": tok.mask_token})
        del model
    return pd.DataFrame(rows, columns=["model", "type", "param", "vocab", "embed", "layer", "heads", "mask"])


def vocab(models, words, query: str = "It is [MASK] here.", word_rule: str = "tokenizer",
          cache_dir=None, lock_path=None) -> pd.DataFrame:
    """Are ``words`` single whole-word tokens of each model? (R: ``BERT_vocab``).

    Uses the same rules as :func:`fmat.run`: the word's token is derived from the tokenizer
    with the word in place of the mask in ``query`` (default: mid-sentence; give e.g.
    "[MASK] is here." to check sentence-initial forms, which differ for byte-level BPE), or
    FMAT's name rules with ``word_rule="fmat"``.
    Columns: model, M_word, token (the token, or "<first piece> (out-of-vocabulary)"),
    token_id, in_vocab (False also when the word is the unknown token).
    """
    from .tokens import derive_options, fmat_rule_options

    if isinstance(words, str):
        words = [words]
    words = [str(w) for w in words]
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
            rows.append({"model": label, "M_word": w,
                         "token": name if not o.oov else f"{name} (out-of-vocabulary)",
                         "token_id": int(first) if first is not None else -1, "in_vocab": not o.oov})
    return pd.DataFrame(rows, columns=["model", "M_word", "token", "token_id", "in_vocab"])


def fill_mask_check(query: str, models, top: int = 5, device=None, cache_dir=None, lock_path=None) -> pd.DataFrame:
    """The raw top-``top`` fill-mask predictions of each model (R: ``fill_mask_check``).

    ``[MASK]`` in ``query`` is replaced by each model's mask token. Columns: model, score,
    token (id), token_str, sequence — the transformers fill-mask pipeline's output.
    """
    from transformers import pipeline

    if query.count("[MASK]") != 1:
        raise InputError(f"query {query!r} must contain exactly one [MASK]", fix='e.g. "Paris is the [MASK] of France."')
    rows = []
    for label, src in _as_models(models).items():
        model, tok = load_masked_lm(src, device=device, cache_dir=cache_dir, lock_path=lock_path)
        pipe = pipeline("fill-mask", model=model, tokenizer=tok, device=model.device)
        for r in pipe(query.replace("[MASK]", tok.mask_token), top_k=int(top)):
            rows.append({"model": label, "score": float(r["score"]), "token": int(r["token"]),
                         "token_str": r["token_str"], "sequence": r["sequence"]})
    return pd.DataFrame(rows, columns=["model", "score", "token", "token_str", "sequence"])


def _scan_cache(cache=None):  # patched in tests
    from huggingface_hub import scan_cache_dir

    return scan_cache_dir(cache)


def remove(models, cache_dir=None) -> list[str]:
    """Delete model(s) from the local Hugging Face cache (R: ``BERT_remove``); returns the removed names.

    Only hub-cache entries are removed; local model folders are never deleted (ModelError).
    A model not in the cache is reported with a warning.
    """
    names = [models] if isinstance(models, str) else list(models)
    for m in names:
        if Path(str(m)).exists():
            raise ModelError(f"{m} is a local folder, not a cached hub model; fmat does not delete folders",
                             fix="delete the folder yourself if you mean it")
    info_ = _scan_cache(cache_dir)
    removed, hashes = [], []
    for repo in info_.repos:
        if repo.repo_type == "model" and repo.repo_id in names:
            hashes.extend(r.commit_hash for r in repo.revisions)
            removed.append(repo.repo_id)
    for m in names:
        if m not in removed:
            warnings.warn(f"{m} is not in the cache {cache_dir or cache_dir_default()}", stacklevel=2)
    if hashes:
        info_.delete_revisions(*hashes).execute()
    return removed


def cache_dir_default() -> Path:
    return cache_dir(None)


def cached_models(cache=None) -> list[str]:
    """Model ids present in the hub cache (R: ``BERT_download()`` without models)."""
    try:
        return sorted(r.repo_id for r in _scan_cache(cache).repos if r.repo_type == "model")
    except Exception:  # no cache yet
        return []
