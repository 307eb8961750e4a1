"""Pure helpers for the Snakemake workflow (and for ``fmat study``, which runs it without Snakemake).

Nothing here imports Snakemake: the rules (``rules/*.smk``) and the thin scripts
(``scripts/*.py``) call these functions, and so does :mod:`fmat.commands.study`.

- names: :func:`model_slug` (``vinai/bertweet-base`` -> ``vinai__bertweet-base``), :func:`model_table`
- configuration: :func:`validate_config` (JSON Schema ``fmat/schemas/config.schema.json`` +
  checks that every study file exists and loads), :func:`study_file`, :func:`study_criteria`
- resources: :func:`score_resources`
- network: :func:`hub_reachable`, :data:`OFFLINE_HELP`
- models: :func:`ensure_model` (cache + lock file, or how to run offline)
- stages: :func:`score_studies` (one model load for all studies), :func:`lpr_table`,
  :func:`reliability_tables`, :func:`build_demo` / :func:`demo_words`
"""
from __future__ import annotations

import json
import math
import os
import re
import socket
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import InputError, OfflineError

SCHEMA_FILE = Path(__file__).with_name("schemas") / "config.schema.json"

#: what to do when the Hugging Face hub cannot be reached (shown by the download rule)
OFFLINE_HELP = (
    "the workflow needs the Hugging Face hub once, to download the models, and it cannot be reached "
    "from here.\n"
    "  To run offline, either\n"
    "    - run the demo on tiny local models:  make demo   "
    "(= snakemake --profile profiles/default --configfile config/demo.yaml), or\n"
    "    - fill the model cache on a connected machine (snakemake --profile profiles/default "
    "--until download_model, or `fmat download MODEL`), copy the cache folder (config key cache_dir, "
    "or $HF_HOME) and resources/models.lock.tsv here, and run again with HF_HUB_OFFLINE=1."
)

_SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


# --------------------------------------------------------------------------- names


def model_slug(name: str) -> str:
    """A filesystem-safe name for a model id: ``/`` becomes ``__`` (``vinai/bertweet-base`` ->
    ``vinai__bertweet-base``). Used in output paths and in the ``model`` column of results."""
    slug = str(name).strip().replace("/", "__")
    if not _SLUG_RE.match(slug):
        raise InputError(f"model name {name!r} cannot be made into a file name",
                         fix="use a Hugging Face id such as 'bert-base-uncased' or 'vinai/bertweet-base'")
    return slug


@dataclass(frozen=True)
class ModelSpec:
    """One configured model: its Hugging Face id (``name``), file-safe ``slug``, requested
    ``revision`` (None: the lock file's, else main) and, for the demo, the ``tiny`` family."""

    name: str
    slug: str
    revision: str | None = None
    tiny: str | None = None


def model_table(config: Mapping) -> dict[str, ModelSpec]:
    """``config["models"]`` -> ``{slug: ModelSpec}`` in configuration order."""
    out: dict[str, ModelSpec] = {}
    for i, entry in enumerate(config.get("models") or []):
        if isinstance(entry, str):
            entry = {"name": entry}
        spec = ModelSpec(name=entry["name"], slug=model_slug(entry["name"]),
                         revision=entry.get("revision"), tiny=entry.get("tiny"))
        if spec.slug in out:
            raise InputError(f"model {spec.name!r} is listed twice (or two names give the same slug "
                             f"{spec.slug!r})", where=f"config.models[{i}]", fix="list each model once")
        out[spec.slug] = spec
    return out


# --------------------------------------------------------------------------- configuration


def _schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _where(path: Iterable) -> str:
    out = "config"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "an integer", float: "a number", dict: "a mapping",
            list: "a list"}.get(type(value), f"a {type(value).__name__}")


def _schema_errors(config: Mapping) -> list[tuple[str, str]]:
    """(where, message) for each JSON-Schema violation, deepest first, one per location."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    found: list[tuple[str, str]] = []
    for err in sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.absolute_path))):
        # oneOf (a model as a string or a mapping): report the error of the matching branch
        leaf = err
        if err.validator == "oneOf" and err.context:
            want = "object" if isinstance(err.instance, Mapping) else "string" if isinstance(err.instance, str) else None
            branch = [e for e in err.context if e.schema_path and want and
                      err.validator_value[e.schema_path[0]].get("type") == want]
            if branch:
                leaf = max(branch, key=lambda e: len(e.absolute_path))
            else:
                found.append((_where(err.absolute_path),
                              f"{err.instance!r} is {_kind(err.instance)}; expected a model id (string) "
                              "or a mapping {name: ..., revision: ...}"))
                continue
        path = list(leaf.absolute_path)
        if leaf.validator == "additionalProperties":
            allowed = sorted(leaf.schema.get("properties", {}))
            extra = sorted(set(leaf.instance) - set(allowed))
            for key in extra:
                found.append((_where(path + [key]),
                              f"unknown key {key!r} (allowed here: {', '.join(allowed)})"))
            continue
        if leaf.validator == "required":
            missing = [k for k in leaf.validator_value if k not in leaf.instance]
            for key in missing:
                found.append((_where(path + [key]), f"required key {key!r} is missing"))
            continue
        if leaf.validator == "type":
            expected = leaf.validator_value
            expected = " or ".join(expected) if isinstance(expected, list) else expected
            found.append((_where(path), f"{leaf.instance!r} is {_kind(leaf.instance)}, expected {expected}"))
            continue
        from .validate import schema_message

        found.append((_where(path), schema_message(leaf)))
    return found


def apply_defaults(config: Mapping) -> dict:
    """A copy of ``config`` with the schema's top-level defaults filled in."""
    out = dict(config)
    for key, prop in _schema()["properties"].items():
        if key not in out and "default" in prop:
            out[key] = prop["default"]
    return out


def study_file(config: Mapping, study: str, root: str | os.PathLike = ".") -> Path:
    """The study file of ``study``: ``<root>/<studies_dir>/<study>.yaml``."""
    return Path(root) / config.get("studies_dir", "config/studies") / f"{study}.yaml"


def key_source(key: str, files: Sequence[str | os.PathLike] = ()) -> str:
    """The config file a top-level ``key`` came from: the last of ``files`` (lowest to highest
    precedence, as Snakemake merges them) that sets it; else "the merged configuration (…)"."""
    import yaml

    for f in reversed(list(files)):
        try:
            with open(f, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(data, Mapping) and key in data:
            return str(f)
    names = ", ".join(str(f) for f in files) or "no config file"
    return f"the merged configuration ({names}, or --config)"


def _with_source(where: str, files: Sequence[str | os.PathLike] | None) -> str:
    """Prefix ``config.models[3].name`` with the file that set ``models``."""
    if files is None or not where.startswith("config"):
        return where
    m = re.match(r"config\.([^.\[]+)", where)
    return f"{key_source(m.group(1), files)}: {where}" if m else where


def validate_config(config: Mapping, *, root: str | os.PathLike = ".", load_studies: bool = True,
                    files: Sequence[str | os.PathLike] | None = None) -> dict:
    """Check the workflow configuration and return it with defaults filled in.

    Raises :class:`~fmat.errors.InputError` naming the key (``config.models[3].revision``) for:
    unknown keys, wrong types, a study id without a study file, a model listed twice, and (with
    ``load_studies``) a study file that :func:`fmat.study.load_study` rejects. With ``files``
    (the config files in merge order), the error also names the file that set the key.
    """
    try:
        return _validate_config(config, root=root, load_studies=load_studies)
    except InputError as err:
        if err.where and files is not None:
            where = _with_source(err.where, files)
            if where != err.where:
                raise InputError(err.message, where=where, fix=err.fix) from None
        raise


def _validate_config(config: Mapping, *, root: str | os.PathLike = ".", load_studies: bool = True) -> dict:
    errors = _schema_errors(config)
    if errors:
        where, msg = errors[0]
        more = f" (and {len(errors) - 1} more problem(s): " + "; ".join(
            f"{w}: {m}" for w, m in errors[1:4]) + ")" if len(errors) > 1 else ""
        raise InputError(msg + more, where=where,
                         fix="see fmat/schemas/config.schema.json and docs/workflow.md for the keys")
    cfg = apply_defaults(config)
    model_table(cfg)  # duplicates
    studies_dir = Path(root) / cfg["studies_dir"]
    for i, sid in enumerate(cfg["studies"]):
        path = study_file(cfg, sid, root)
        if not path.is_file():
            known = sorted(p.stem for p in studies_dir.glob("*.yaml")) if studies_dir.is_dir() else []
            raise InputError(f"unknown study {sid!r}: there is no {path}", where=f"config.studies[{i}]",
                             fix=f"use one of {', '.join(known) or '(no study files found)'}, "
                                 f"or write {path} (see docs/study-files.md)")
    if any(spec.tiny for spec in model_table(cfg).values()) and not all(
            spec.tiny for spec in model_table(cfg).values()):
        raise InputError("some models are tiny demo models and some are not", where="config.models",
                         fix="use only tiny models (config/demo.yaml) or only hub models (config/config.yaml)")
    if load_studies:
        for sid in cfg["studies"]:
            check_study(study_file(cfg, sid, root), sid)
    return cfg


def check_study(path: Path, sid: str | None = None) -> None:
    """Validate one study file with :mod:`fmat.study` (schema and semantics, without criteria
    tables, which may not be downloaded yet)."""
    from .study import validate_study_file

    # criterion word lists (Study 1C's names) are checked with placeholders: their tables may
    # not be built yet
    problems = validate_study_file(path)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise InputError(f"study {sid or path.stem}: {problems[0]}{more}", where=str(path),
                         fix="see docs/study-files.md")


def _yaml_load(path: Path) -> Any:
    import yaml

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def study_criteria(path: str | os.PathLike) -> list[str]:
    """Names of the criterion tables a study file's word lists read (``{criterion: NAME, ...}``),
    in order of first appearance; the queries rule needs ``resources/criteria/<NAME>.parquet``."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            name = node.get("criterion")
            if isinstance(name, str) and name not in found:
                found.append(name)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk((_yaml_load(Path(path)) or {}).get("queries"))
    return found


def study_options(study: Any, key: str) -> dict:
    """The study file's ``lpr`` / ``reliability`` / ``score`` block as a dict ({} when absent)."""
    value = getattr(study, key, None)
    if value is None and isinstance(getattr(study, "spec", None), Mapping):
        value = study.spec.get(key)
    if value is None and isinstance(study, Mapping):
        value = study.get(key)
    if value is None:
        return {}
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        value = asdict(value)
    return dict(value)


# --------------------------------------------------------------------------- resources


def model_size(name: str) -> str:
    """"large", "base" or "small" from the model id (for memory and runtime estimates)."""
    low = name.lower()
    if "large" in low:
        return "large"
    if any(k in low for k in ("distil", "tiny", "small", "mini", "albert")):
        return "small"
    return "base"


def score_resources(name: str, attempt: int = 1, n_studies: int = 15) -> dict[str, int]:
    """Portable resources of one model's scoring job: ``mem_mb`` and ``runtime`` (minutes),
    doubling with each retry (Snakemake's ``attempt``)."""
    mem = {"large": 8000, "base": 4000, "small": 3000}[model_size(name)]
    minutes = {"large": 60, "base": 30, "small": 20}[model_size(name)]
    minutes = max(10, math.ceil(minutes * max(n_studies, 1) / 15))
    factor = 2 ** (max(int(attempt), 1) - 1)
    return {"mem_mb": mem * factor, "runtime": minutes * factor}


# --------------------------------------------------------------------------- network


def hub_reachable(timeout: float = 5.0, endpoint: str | None = None) -> bool:
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


def offline_error(model: str) -> OfflineError:
    """The error the download rule raises when ``model`` is not cached and the hub is unreachable."""
    return OfflineError(OFFLINE_HELP, where=f"download_model: {model}",
                        fix="make demo  (or copy a filled cache and run with HF_HUB_OFFLINE=1)")


# --------------------------------------------------------------------------- model lock + download


def cached_snapshot(name: str, revision: str | None) -> Path | None:
    """The local snapshot folder of hub model ``name`` at ``revision`` (a commit, branch or tag;
    None: main) if a config file is there -- looked up WITHOUT the network; else None."""
    from huggingface_hub import snapshot_download

    try:
        path = Path(snapshot_download(name, revision=revision or "main", local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure means "not cached"
        return None
    return path if (path / "config.json").exists() else None


def _lock_guard(lock: Path):
    """An exclusive file lock beside the lock file: download jobs run in parallel and each
    rewrites the lock file (read, replace its row, write)."""
    import contextlib
    import fcntl

    @contextlib.contextmanager
    def guard():
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock.with_name(lock.name + ".lck"), "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    return guard()


def lock_row_from_cache(name: str, path: Path, revision: str | None) -> dict:
    """A lock-file row (:data:`fmat.models.LOCK_COLUMNS`) for a snapshot already in the cache."""
    import datetime as _dt

    from .models import WEIGHT_FILES, _sha256

    files = sorted(p.name for p in path.iterdir() if p.is_file())
    weights = [path / w for w in WEIGHT_FILES if (path / w).exists()]
    return {"model": name, "revision": revision or "main", "commit": path.name, "files": ",".join(files),
            "sha256": _sha256(weights[0]) if weights else "",
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _update_lock(lock: Path, row: Mapping) -> None:
    import pandas as pd

    from .io import write_table
    from .models import LOCK_COLUMNS, read_lock

    with _lock_guard(lock):
        old = read_lock(lock)
        old = old[old["model"] != row["model"]]
        new = pd.concat([old, pd.DataFrame([row]).astype(str)], ignore_index=True)
        write_table(new[LOCK_COLUMNS].sort_values("model"), lock, "tsv")


def ensure_model(name: str, *, revision: str | None = None, lock: str | os.PathLike = "resources/models.lock.tsv",
                 timeout: float = 5.0) -> dict:
    """Make sure hub model ``name`` is in the cache and in the lock file; return the marker
    ``{name, slug, revision, commit, path: None, source}`` (``path`` None: load by name, offline,
    at the locked commit -- :func:`fmat.models.load_masked_lm`).

    Which commit: the configured ``revision``, else the lock file's, else main. A snapshot
    already in the cache is used without the network. Otherwise the hub is probed for
    ``timeout`` seconds; unreachable -> :class:`~fmat.errors.OfflineError` (:data:`OFFLINE_HELP`);
    reachable -> :func:`fmat.models.download`. Call :func:`fmat.models.set_cache_folder` first
    to use another cache than ``$HF_HOME``.
    """
    from .models import download, locked_commit

    lock = Path(lock)
    locked = locked_commit(name, lock)
    path = cached_snapshot(name, revision or locked)
    if path is not None:
        source = "cache"
        if locked != path.name:
            _update_lock(lock, lock_row_from_cache(name, path, revision))
        commit = path.name
    else:
        if not hub_reachable(timeout):
            raise offline_error(name)
        rows = download(name, revision=revision or locked, lock_path=None)
        row = rows.iloc[0].to_dict()
        _update_lock(lock, row)
        commit, source = str(row["commit"]), "hub"
    return {"name": name, "slug": model_slug(name), "revision": revision, "commit": commit,
            "path": None, "lock": str(lock), "source": source}


# --------------------------------------------------------------------------- scripts


def script_logging(log_file: str | os.PathLike | None) -> None:
    """Log to the rule's log file and to stderr (INFO)."""
    import logging
    import sys

    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        handlers=handlers, force=True)


def run_script(main, log_file=None) -> None:
    """Run a script's ``main()``; an :class:`~fmat.errors.FmatError` is logged as a message
    (no traceback) to the log file and stderr, and the job fails with exit status 1."""
    import logging
    import sys

    from .errors import FmatError

    script_logging(log_file)
    try:
        main()
    except FmatError as err:
        logging.getLogger("fmat.workflow").error("%s", err)
        sys.exit(1)
    except Exception:
        logging.getLogger("fmat.workflow").exception("unexpected error")
        raise


# --------------------------------------------------------------------------- stages


def write_json(record: Mapping, path: str | os.PathLike) -> Path:
    """Write a JSON marker atomically."""
    from .io import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path


def read_json(path: str | os.PathLike) -> dict:
    """Read a JSON marker written by :func:`write_json`."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_study_file(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """:func:`fmat.study.load_study` (criteria tables from ``criteria_dir`` when it exists)."""
    from .study import load_study

    if criteria_dir is not None and not Path(criteria_dir).is_dir():
        criteria_dir = None
    return load_study(path, criteria_dir=criteria_dir)


def query_table(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None):
    """The query table of a study file (``load_study(...).queries``)."""
    return load_study_file(path, criteria_dir).queries


def load_scores(paths: Sequence[str | os.PathLike]):
    """Concatenate per-model score tables in the given (configuration) order, keeping the query
    columns categorical with their levels in order of first appearance."""
    import pandas as pd

    from .io import read_table

    tables = [read_table(p) for p in paths]
    if len(tables) == 1:
        return tables[0]
    attrs = dict(tables[0].attrs)
    cats = [c for c in tables[0].columns if isinstance(tables[0][c].dtype, pd.CategoricalDtype)]
    out = pd.concat(tables, ignore_index=True)
    for col in cats:
        levels: dict = {}
        for t in tables:
            for level in t[col].cat.categories:
                levels.setdefault(level, None)
        out[col] = pd.Categorical(out[col].astype(object), categories=list(levels))
    out.attrs.update(attrs)
    return out


def score_options(path: str | os.PathLike) -> dict:
    """The ``score:`` block of a study file with its defaults (``method, add_tokens, na_out``),
    read without expanding the word lists (no criterion tables needed)."""
    from .study import SCORE_DEFAULTS, read_study_yaml

    data = read_study_yaml(Path(path))
    opts = {**SCORE_DEFAULTS, **(data.get("score") or {})}
    return {k: opts[k] for k in ("method", "add_tokens", "na_out") if k in opts}


def score_studies(marker: Mapping, studies: Mapping[str, str], queries: Mapping[str, Any], *,
                  device: str | None = None, batch_size: int | None = None, max_tokens: int | None = None,
                  threads: int | None = None,
                  lock: str | os.PathLike | None = None):
    """Score several studies on ONE model, loading it once; yields ``(study id, scores)``.

    ``marker``: a download or demo marker (``name``; ``path`` of a local folder, or None for a
    cached hub model loaded offline at its locked commit). ``studies`` maps study ids to study
    files (their ``score:`` options), ``queries`` to query tables or their paths. Each table is
    what :func:`fmat.scoring.run` returns for that model (``model`` = the configured name);
    :func:`fmat.models.load_masked_lm` runs once instead of once per study. The load and
    per-study scoring times are logged (docs/workflow.md).
    """
    import logging
    import time

    import pandas as pd

    from . import scoring
    from .io import read_table
    from .models import load_masked_lm, model_label

    log = logging.getLogger("fmat.workflow")
    device = None if device in (None, "auto") else device
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    name = marker["name"]
    source = marker.get("path") or name
    options = {sid: score_options(path) for sid, path in studies.items()}
    scorers = {}
    for sid, opts in options.items():
        method = opts.pop("method", "fmat")
        if method not in scoring.METHODS:
            raise InputError(f"scoring method {method!r} is not available", where=f"{studies[sid]}: score.method",
                             fix=f"use one of {', '.join(scoring.METHODS)}")
        if method == "lpbs":  # probabilities and their priors (Kurita et al. 2019)
            from .lpbs import score_model as scorer
        else:
            scorer = scoring.score_model
        scorers[sid] = scorer
    t0 = time.perf_counter()
    model, tokenizer = load_masked_lm(source, device=device, lock_path=lock, progress=False)  # a log, not a terminal
    log.info("model %s loaded in %.2f s", name, time.perf_counter() - t0)
    for sid in studies:
        t1 = time.perf_counter()
        table = queries[sid]
        if not hasattr(table, "columns"):
            table = read_table(table)
        scores = scorers[sid](model, tokenizer, table, name=model_label(source), batch_size=batch_size,
                              max_tokens=max_tokens, progress=False, **options[sid])
        # as fmat.scoring.run: the model column first, query columns keep their levels
        scores.insert(0, "model", pd.Categorical([name] * len(scores), categories=[name]))
        for col in table.columns:
            if isinstance(table[col].dtype, pd.CategoricalDtype):
                scores[col] = pd.Categorical(scores[col], categories=table[col].cat.categories)
        scores.attrs = dict(table.attrs)
        log.info("study %s: %d rows scored in %.2f s", sid, len(table), time.perf_counter() - t1)
        yield sid, scores
    log.info("model %s: %d studies in %.2f s (load included)", name, len(studies), time.perf_counter() - t0)


def build_demo(models: Mapping[str, tuple[str, str]], tables: Sequence, out_dir: str | os.PathLike,
               threads: int | None = None) -> dict[str, dict]:
    """Build the demo's tiny models (:func:`fmat.tiny.build_demo_models`) knowing every word of
    ``tables``; ``models`` maps slugs to ``(name, family)``. Returns ``{slug: marker record}``."""
    from . import tiny

    if threads:
        import torch

        torch.set_num_threads(int(threads))
    families = list(dict.fromkeys(fam for _, fam in models.values()))
    unknown = [f for f in families if f not in tiny.FAMILIES]
    if unknown:
        raise InputError(f"unknown tiny model famil{'y' if len(unknown) == 1 else 'ies'} {unknown}",
                         where="config.models[].tiny", fix=f"use one of {', '.join(tiny.FAMILIES)}")
    from .agreement import fixture_words

    # the agreement check's verbs and nouns too, so that the demo models can take it
    built = tiny.build_demo_models(out_dir, demo_words(tables, extra=fixture_words()), families=families)
    records = {}
    for slug, (name, fam) in models.items():
        path = built[tiny.FAMILIES[fam][1]]
        records[slug] = {"name": name, "slug": slug, "revision": None, "path": str(path),
                         "tiny": fam, "source": "fmat.tiny"}
    return records


def summary_function(study: Any):
    """The contrast a study's scores get: :func:`fmat.lpr.summary` (LPR), or
    :func:`fmat.lpbs.summary` (LPBS, Kurita et al. 2019) when its file says ``score: {method:
    lpbs}``. Both keep the value in column ``LPR``; the LPBS table says so in
    ``attrs["measure"]``."""
    if study_options(study, "score").get("method", "fmat") == "lpbs":
        from .lpbs import summary
    else:
        from .lpr import summary
    return summary


def lpr_table(study: Any, scores):
    """LPRs (or LPBS) of one study, with the study file's ``lpr`` options."""
    return summary_function(study)(scores, **study_options(study, "lpr"))


def reliability_tables(study: Any, scores, lpr, sid: str | None = None, icc: bool = True):
    """Reliability of one study -> ``(details, stats)``.

    - ICC among the models (:func:`fmat.reliability.icc_models`; agreement, average and single)
      on the raw log probabilities (condition ``all``: the paper's ICC, footnote 1) and on the
      LPRs (condition ``LPR``); skipped with ``icc=False`` (one model);
    - alpha among the study file's ``reliability.item`` split by its ``by``
      (:func:`fmat.reliability.lpr_reliability`), on the LPRs of ``reliability.lpr`` (by default
      the study's ``lpr`` options); with ``model`` in ``by``, also pooled over the models
      (model ``all``: the "Overall" rows of Tables 3-4). Phrases are replaced by their item
      keys first (:func:`_item_keys`), so templates that word an item differently line up.

    ``details`` stacks the raw outputs (column ``analysis`` = ICC / alpha); ``stats`` has the
    same numbers in the :mod:`fmat.results` shape (conditions as docs/results.md; ``model`` a
    slug, e.g. ``vinai__bertweet-base``).
    """
    import pandas as pd

    from .reliability import alpha_rows, icc_models, icc_rows, lpr_reliability

    sid = str(sid or getattr(study, "id", "") or "")
    parts, details = [], []
    if icc:
        for condition, data in (("all", scores), ("LPR", lpr)):
            res = icc_models(data, type="agreement", unit="both")
            parts.append(icc_rows(sid, res, condition=condition))
            details.append(res.assign(analysis="ICC", condition=condition))
    opts = study_options(study, "reliability")
    item = opts.get("item", "query")
    by = opts.get("by") or []
    by = [by] if isinstance(by, str) else list(by)
    alpha_data = lpr
    lpr_opts = opts.get("lpr")
    if lpr_opts and dict(lpr_opts) != study_options(study, "lpr"):
        # alpha on another summary (e.g. log P before the contrast)
        alpha_data = summary_function(study)(scores, **lpr_opts)
    alpha_data = _item_keys(study, alpha_data, item)
    splits = [by] + ([[b for b in by if b != "model"]] if "model" in by else [])
    for split in splits:
        alpha = lpr_reliability(alpha_data, item=item, by=split or None)
        parts.append(alpha_rows(sid, alpha, by=split))
        details.append(alpha.assign(analysis="alpha", item=item, by=",".join(split)))
    stats = pd.concat(parts, ignore_index=True)
    stats["model"] = [m if m == "all" else model_slug(m) for m in stats["model"]]
    detail = pd.concat(details, ignore_index=True)
    detail.insert(0, "study", sid)
    for col in detail.columns:
        if detail[col].dtype == object:
            detail[col] = detail[col].map(lambda v: v if v is None or isinstance(v, str) else str(v)).astype("string")
    return detail, stats


_SLOT_COLUMN = {"TARGET": "T_word", "ATTRIB": "A_word"}


def _item_keys(study: Any, lpr, item: str):
    """Replace TARGET/ATTRIB phrases by their item keys (the study file's ``{phrase, item}``;
    ``Study.items``) in the columns that identify alpha's rows, so that the same item written
    differently in two templates ("an engineer" / "engineer", Study 1A) lines up."""
    import pandas as pd

    items = getattr(study, "items", None)
    if not isinstance(items, pd.DataFrame) or not {"slot", "word", "item"} <= set(items.columns):
        return lpr
    out = lpr
    for slot, col in _SLOT_COLUMN.items():
        if col == item or col not in lpr.columns:
            continue
        pairs = items[items["slot"] == slot]
        mapping = {str(w): str(k) for w, k in zip(pairs["word"], pairs["item"]) if str(w) != str(k)}
        if not mapping:
            continue
        if out is lpr:
            out = lpr.copy()
        values = [mapping.get(str(v), str(v)) if pd.notna(v) else v for v in out[col].tolist()]
        out[col] = pd.Categorical(values, categories=list(dict.fromkeys(v for v in values if pd.notna(v))))
    return out


def demo_words(tables: Sequence, extra: Iterable[str] = ()) -> list[str]:
    """Every word the demo models must know: the MASK, TARGET and ATTRIB words of the query
    tables (and each whitespace token of a phrase), plus ``extra``; sorted, unique."""
    words: set[str] = set()
    for table in tables:
        for col in ("M_word", "T_word", "A_word"):
            if col in table.columns:
                for value in table[col].dropna().astype(str).unique():
                    words.add(value)
                    words.update(value.split())
    words.update(str(w) for w in extra)
    return sorted(w for w in words if w.strip())


def config_hash(config: Mapping) -> str:
    """A short, stable fingerprint of the run's configuration, printed in the reports'
    provenance: ``sha256-`` + the first 12 hex digits of the sorted JSON of ``config``
    (the prefix keeps it a string when Quarto reads ``-P`` values as YAML)."""
    import hashlib

    digest = hashlib.sha256(json.dumps(dict(config), sort_keys=True, default=str).encode()).hexdigest()
    return f"sha256-{digest[:12]}"


def prepare_model_env(offline: bool, cache_dir: str | None) -> None:
    """Before a job loads a model: hub models load offline from their locked snapshot
    (``HF_HUB_OFFLINE=1``), from the configured cache folder (:func:`fmat.models.set_cache_folder`)."""
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    if cache_dir:
        from .models import set_cache_folder

        set_cache_folder(cache_dir)
