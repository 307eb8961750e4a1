"""The workflow configuration: model names (:func:`model_slug`, :func:`model_table`), the
JSON-Schema check of ``config/*.yaml`` with errors that name the key and the file that set it
(:func:`validate_config`), and the run's fingerprint (:func:`config_hash`)."""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import yaml

from fmat.agreement import known_constructions
from fmat.analyses import check
from fmat.errors import InputError
from fmat.io import why_not_writable
from fmat.models import WEIGHT_FILES
from fmat.plant import check_concept_levels, check_plant, load_world
from fmat.results import model_slug
from fmat.study import load_study, study_criteria, validate_study_file
from fmat.validate import schema_problems
from fmat_replication.queries import study_file

SCHEMA_FILE = Path(__file__).with_name("config.schema.json")


@dataclass(frozen=True)
class ModelSpec:
    """One configured model: its Hugging Face id (``name``), file-safe ``slug``, requested
    ``revision`` (None: the lock file's, else main) and, for the demo, the ``tiny`` family."""

    name: str
    slug: str
    revision: str | None = None
    tiny: str | None = None
    path: str | None = None  # a local model folder (as configured; relative: from the repository root)


def model_table(config: Mapping) -> dict[str, ModelSpec]:
    """``config["models"]`` -> ``{slug: ModelSpec}`` in configuration order."""
    out: dict[str, ModelSpec] = {}
    for i, entry in enumerate(config.get("models") or []):
        if isinstance(entry, str):
            entry = {"name": entry}
        spec = ModelSpec(entry["name"], model_slug(entry["name"]), **{k: entry.get(k) for k in ("revision", "tiny", "path")})
        if spec.slug in out:
            raise InputError(
                f"model {spec.name!r} is listed twice (or two names give the same slug {spec.slug!r})",
                where=f"config.models[{i}]",
                fix="list each model once",
            )
        out[spec.slug] = spec
    return out


def _schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _where(path: Iterable) -> str:
    return "config" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def _schema_errors(config: Mapping) -> list[tuple[str, str]]:
    """(where, message) for each JSON-Schema violation (fmat.validate.schema_problems)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    return [(_where(path), msg) for path, msg in schema_problems(validator, dict(config))]


def apply_defaults(config: Mapping) -> dict:
    """A copy of ``config`` with the schema's top-level defaults filled in."""
    out = dict(config)
    out.update({key: prop["default"] for key, prop in _schema()["properties"].items() if key not in out and "default" in prop})
    return out


def _set_by(files: Sequence[str | os.PathLike], sets) -> str | None:
    """The last of the config ``files`` that reads as a YAML mapping for which ``sets(mapping)``."""
    for f in reversed(list(files)):
        try:
            with open(f, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(data, Mapping) and sets(data):
            return str(f)
    return None


def key_source(key: str, files: Sequence[str | os.PathLike] = (), cli_keys: Iterable[str] = ()) -> str:
    """Where a top-level ``key`` came from: "--config" when it is one of ``cli_keys`` (``snakemake
    --config KEY=...`` wins over every file), else the last of ``files`` (in Snakemake's merge
    order) that sets it; else "the merged configuration (…)"."""
    if key in set(cli_keys):
        return f"--config {key}=..."
    names = ", ".join(str(f) for f in files) or "no config file"
    return _set_by(files, lambda data: key in data) or f"the merged configuration ({names}, or --config)"


def group_source(name: str, files: Sequence[str | os.PathLike] = (), cli_keys: Iterable[str] = ()) -> str:
    """Which file (or --config) set the score group ``name`` (Snakemake merges ``score_groups`` of
    every config file)."""
    if "score_groups" in set(cli_keys):
        return "--config score_groups=..."
    in_groups = lambda data: isinstance(data.get("score_groups"), Mapping) and name in data["score_groups"]
    return _set_by(files, in_groups) or "the merged configuration"


def _with_source(where: str, files: Sequence[str | os.PathLike] | None, cli_keys: Iterable[str] = ()) -> str:
    """Prefix ``config.models[3].name`` with the file (or the --config) that set ``models``."""
    if files is None or not where.startswith("config"):
        return where
    m = re.match(r"config\.([^.\[]+)", where)
    return f"{key_source(m.group(1), files, cli_keys)}: {where}" if m else where


def validate_config(
    config: Mapping,
    *,
    root: str | os.PathLike = ".",
    load_studies: bool = True,
    files: Sequence[str | os.PathLike] | None = None,
    repo: str | os.PathLike | None = None,
    cli_keys: Iterable[str] = (),
    min_models: int = 1,
) -> dict:
    """Check the workflow configuration and return it with defaults filled in.

    Raises :class:`~fmat.errors.InputError` naming the key (``config.models[3].revision``); with
    ``files`` (the config files in merge order) and ``cli_keys`` (the keys given with
    ``--config``) also the file, or the --config, that set it. ``load_studies``: load each study
    file too. ``repo``: where a local model folder is relative to (default ``root``).
    ``min_models``: fewer models is an error (the workflow asks for 2).
    """
    sources, groups = None, config.get("score_groups")
    if files is not None and isinstance(groups, Mapping):
        sources = {str(name): group_source(str(name), files, cli_keys) for name in groups}
    try:
        cfg = _validate_config(
            config,
            root=root,
            load_studies=load_studies,
            repo=root if repo is None else repo,
            group_sources=sources,
            group_order=[*(str(f) for f in files or ()), "--config score_groups=..."],
        )
        check_model_count(cfg, min_models)
        return cfg
    except InputError as err:
        if err.where and files is not None:
            where = _with_source(err.where, files, cli_keys)
            if where != err.where:
                raise InputError(err.message, where=where, fix=err.fix) from None
        raise


def _check_agreement(spec: Mapping) -> None:
    """agreement.constructions names constructions of the pairs file it reads (the fixture, or
    Marvin & Linzen's file; a user's own ``pairs`` file is checked when it is read)."""
    cons = spec.get("constructions")
    if not isinstance(cons, list) or spec.get("pairs"):
        return

    known = known_constructions(download=bool(spec.get("url")))
    bad = [c for c in cons if c not in known]
    if bad:
        source = "Marvin & Linzen's file" if spec.get("url") else "the project's fixture (fmat/data/agreement_fixture.tsv)"
        raise InputError(
            f"unknown construction(s) {', '.join(map(repr, bad))}: {source} has {', '.join(known)}",
            where="config.agreement.constructions",
            fix="list some of those, or write 'all', or null for the verb-agreement constructions",
        )


def _validate_config(config: Mapping, *, root, load_studies: bool, repo, group_sources, group_order: Sequence[str]) -> dict:
    errors = _schema_errors(config)
    if errors:
        where, msg = errors[0]
        others = "; ".join(f"{w}: {m}" for w, m in errors[1:4])
        more = f" (and {len(errors) - 1} more problem(s): {others})" if len(errors) > 1 else ""
        raise InputError(msg + more, where=where, fix="see fmat_replication/config.schema.json and docs/workflow.md for the keys")
    cfg = apply_defaults(config)
    models = list(model_table(cfg).values())  # a model listed twice is an error
    _check_agreement(cfg.get("agreement") or {})
    studies_dir = Path(root) / cfg["studies_dir"]
    for i, sid in enumerate(cfg["studies"]):
        path = study_file(cfg, sid, root)
        if not path.is_file():
            known = sorted(p.stem for p in studies_dir.glob("*.yaml")) if studies_dir.is_dir() else []
            raise InputError(
                f"unknown study {sid!r}: there is no {path}",
                where=f"config.studies[{i}]",
                fix=f"use one of {', '.join(known) or '(no study files found)'}, or write {path} (see docs/study-files.md)",
            )
    if any(spec.tiny for spec in models) and not all(spec.tiny for spec in models):
        raise InputError(
            "some models are tiny demo models and some are not",
            where="config.models",
            fix="use only tiny models (config/demo.yaml) or only hub models and local folders (config/config.yaml)",
        )
    for i, spec in enumerate(models):
        if spec.path is not None:
            check_model_folder(spec, repo, where=f"config.models[{i}].path")
    score_groups(cfg, group_sources, order=group_order)  # a study in two groups
    _check_group_members(cfg, root, repo)
    if load_studies:
        for sid in cfg["studies"]:
            check_study(study_file(cfg, sid, root), sid)
    if cfg.get("world"):
        check_world(cfg, root, repo, load_studies=load_studies)
    return cfg


def world_path(cfg: Mapping, repo: str | os.PathLike = ".") -> Path | None:
    """The configured world file (``world``, relative to the repository), or None."""
    return _from_repo(str(cfg["world"]), repo) if cfg.get("world") else None


def _from_repo(path: str, repo: str | os.PathLike) -> Path:
    """``path`` (``~`` expanded) if absolute, else relative to ``repo``."""
    path = Path(os.path.expanduser(path))
    return path if path.is_absolute() else Path(repo) / path


def check_world(cfg: Mapping, root: str | os.PathLike = ".", repo: str | os.PathLike = ".", load_studies: bool = True) -> None:
    """``world`` (the demo's planted associations): the file follows its schema, only tiny demo
    models learn it, and each plant names groups, slots and words its configured study has."""

    if not all(spec.tiny for spec in model_table(cfg).values()):
        raise InputError(
            "a world is planted only in tiny demo models (they are trained on it)",
            where="config.world",
            fix="remove `world` from this configuration, or use the demo's tiny models (config/demo.yaml)",
        )
    path = world_path(cfg, repo)
    if not path.is_file():
        raise InputError(
            f"the world file {cfg['world']} does not exist",
            where="config.world",
            fix="give a world file (config/world.yaml is the demo's; docs/planting.md), or null for untrained tiny models",
        )
    world = load_world(path)
    check_world_studies(world, cfg, root)
    if load_studies:
        for sid in cfg["studies"]:
            plant, path = world.plant(sid), study_file(cfg, sid, root)
            # a study whose words come from criterion tables (1C) is checked in its job, once they exist
            if plant is not None and not study_criteria(path):
                study = load_study(path)
                check_plant(plant, study, None, where=f"{cfg['world']}")
                check_concept_levels(plant, study, where=f"{cfg['world']}")  # level: concept has a crossed test


def check_world_studies(world, cfg: Mapping, root: str | os.PathLike = ".") -> None:
    """Each study id of the world file is a configured study or has a study file; else (``3a``
    for ``3A``, a typo that would plant nothing) an InputError naming the nearest configured id."""

    configured = [str(s) for s in cfg["studies"]]
    folded = {s.casefold(): s for s in configured}
    for sid in world.plants:
        if sid in configured:
            continue
        twin = folded.get(sid.casefold())
        if twin is None and study_file(cfg, sid, root).is_file():
            continue  # a study of the world that this run does not configure: nothing to plant
        close = [twin] if twin else difflib.get_close_matches(sid, configured, n=1, cutoff=0.5)
        raise InputError(
            f"the world file plants study {sid!r}, which this run does not configure and no study file defines "
            f"({study_file(cfg, sid, root)} does not exist)" + (f"; did you mean {close[0]!r}?" if close else ""),
            where=f"{cfg['world']}: studies.{sid}",
            fix=(f"key the block {close[0]!r} (study ids are case-sensitive)" if close else "key the block by a study id")
            + f"; the configured studies are {', '.join(configured)}",
        )


def check_model_count(config: Mapping, least: int = 2) -> None:
    """Fewer than ``least`` models is an InputError naming ``config.models`` (else the
    reliability job would fail late, after every model was scored)."""
    names = [spec.name for spec in model_table(config).values()]
    if len(names) >= least:
        return
    listed = f"{len(names)} model ({names[0]})" if len(names) == 1 else f"{len(names)} models"
    raise InputError(
        f"the configuration lists {listed}; the workflow needs at least {least}: its reliability "
        "(ICC among models) and its analyses (models as random intercepts) compare models",
        where="config.models",
        fix="list two or more models under models: (hub ids, or local folders: {name: NAME, path: "
        "FOLDER}); to score one model alone, use fmat run and fmat summary (README, 'On the "
        "command line')",
    )


def model_folder(spec: ModelSpec, repo: str | os.PathLike = ".") -> Path | None:
    """The local folder of a configured model (``{name: LABEL, path: FOLDER}``, relative to
    ``repo``); None for a hub or demo model."""
    return None if spec.path is None else _from_repo(spec.path, repo)


def check_model_folder(spec: ModelSpec, repo: str | os.PathLike = ".", where: str = "config.models[].path") -> Path:
    """The folder of a local model, checked: it holds a ``config.json`` and weights
    (:data:`fmat.models.WEIGHT_FILES`); else InputError naming it."""

    folder = model_folder(spec, repo)
    fix = (
        "give a folder written by save_pretrained (config.json, tokenizer files, model.safetensors); "
        "a relative path is read from the repository root"
    )
    if spec.tiny:
        raise InputError(f"model {spec.name!r} has both `tiny` and `path`", where=where, fix="give one of them")
    if not folder.is_dir():
        raise InputError(f"model {spec.name!r}: there is no folder {folder}", where=where, fix=fix)
    missing = [f for f in ("config.json",) if not (folder / f).is_file()]
    if not any((folder / w).is_file() for w in WEIGHT_FILES):
        missing.append(" or ".join(WEIGHT_FILES))
    if missing:
        raise InputError(f"model {spec.name!r}: the folder {folder} has no {', '.join(missing)}", where=where, fix=fix)
    return folder


def _group_clash_fix(sid: str, groups: Mapping[str, str], order: Sequence[str]) -> str:
    """The fix of a study in two score groups, each from its file: it names the file Snakemake
    reads last, the only one that can change what the merge keeps."""
    rank = {src: i for i, src in enumerate(order)}
    (g1, f1), (g2, f2) = sorted(groups.items(), key=lambda kv: rank.get(kv[1], -1))
    if f1 == f2:
        return f"put each study in one group: take {sid!r} out of {g1!r} or {g2!r} in {f2}"
    if f2.startswith("--config"):
        return f"put each study in one group: give --config score_groups without {sid!r} in {g2!r}, or drop it there"
    return (
        f"put each study in one group: take {sid!r} out of {g2!r} in {f2}, or give the group {g1!r} again in {f2} "
        f"without {sid!r} (a group in a later config file replaces the earlier one; {f1} is read before it)"
    )


def score_groups(config: Mapping, sources: Mapping[str, str] | None = None, order: Sequence[str] = ()) -> dict[str, list[str]]:
    """The scoring jobs' study groups: ``{rule suffix: [study ids]}`` in configuration order.

    Each ``config["score_groups"]`` group keeps its configured studies (none: dropped); a
    configured study in no group gets a group of its own. A study in two groups is an error; with
    ``sources`` (group -> the file or --config that set it) and ``order`` (Snakemake's merge
    order) it names both and the file to change.
    """
    studies = [str(s) for s in config.get("studies") or []]
    groups: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for name, members in (config.get("score_groups") or {}).items():
        for sid in map(str, members):
            where = f"config.score_groups.{name}"
            if sid in owner:
                first, second = owner[sid], str(name)
                if sources:
                    a, b = sources.get(first, "?"), sources.get(second, "?")
                    raise InputError(
                        f"study {sid!r} is in two score groups: {first!r} (from {a}) and {second!r} (from {b}); "
                        "Snakemake merges the score_groups of every config file",
                        where=where,
                        fix=_group_clash_fix(sid, {first: a, second: b}, order),
                    )
                raise InputError(
                    f"study {sid!r} is in two score groups, {first!r} and {second!r}",
                    where=where,
                    fix="put each study in one group",
                )
            owner[sid] = name
        chosen = [s for s in studies if owner.get(s) == name]
        if chosen:
            groups[str(name)] = chosen
    for sid in studies:
        if sid not in owner:
            name = "study_" + re.sub(r"\W", "_", sid)
            if name in groups:
                raise InputError(
                    f"study {sid!r} would be scored in a group named {name!r}, which the configuration also names",
                    where="config.score_groups",
                    fix=f"rename the group {name!r}",
                )
            groups[name] = [sid]
    return groups


def _check_group_members(config: Mapping, root: str | os.PathLike, repo: str | os.PathLike = ".") -> None:
    """Every member of a used ``score_groups`` group (one holding a configured study) has a study
    file in ``studies_dir`` or ``<repo>/config/studies``: a typo is not dropped in silence."""
    studies = {str(s) for s in config.get("studies") or []}
    shipped = Path(repo) / "config" / "studies"
    for name, members in (config.get("score_groups") or {}).items():
        members = [str(m) for m in members]
        if not studies.intersection(members):
            continue
        for i, sid in enumerate(members):
            path = study_file(config, sid, root)
            if sid not in studies and not path.is_file() and not (shipped / f"{sid}.yaml").is_file():
                raise InputError(
                    f"score group {name!r} lists study {sid!r}, which has no study file {path}",
                    where=f"config.score_groups.{name}[{i}]",
                    fix=f"correct the study id, remove it from the group, or write {path} (see docs/study-files.md)",
                )


def check_device(device: str, where: str = "config.device") -> None:
    """A ``device`` this machine has (``auto``, ``cpu``, ``cuda``/``cuda:N``, ``mps``); else
    InputError naming ``where`` (the config key) and the fix."""
    device = str(device or "auto")
    if device in ("auto", "cpu"):
        return
    import torch

    fix = (
        "set device: auto (a GPU when there is one, else the CPU) or device: cpu, or run where the GPU is "
        "(a cluster profile sends the scoring jobs to GPU nodes)"
    )
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        if count == 0:
            raise InputError(
                f"device {device!r}: this machine has no CUDA GPU (torch.cuda.is_available() is False)", where=where, fix=fix
            )
        if index >= count:
            raise InputError(
                f"device {device!r}: this machine has {count} CUDA GPU(s), numbered from 0",
                where=where,
                fix=f"use cuda:0 to cuda:{count - 1}, or {fix}",
            )
    elif device == "mps" and not torch.backends.mps.is_available():
        raise InputError("device 'mps': Apple's GPU (MPS) is not available here", where=where, fix=fix)


def check_study(path: Path, sid: str | None = None) -> None:
    """Validate one study file with :mod:`fmat.study` (criterion word lists as placeholders) and
    its analysis against the registered analyses (:func:`.analyses.check`)."""
    problems = validate_study_file(path, check_analysis=check)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise InputError(f"study {sid or path.stem}: {problems[0]}{more}", where=str(path), fix="see docs/study-files.md")


#: the config key under which rules/report.smk puts the function that reads a figure's caption
#: for `snakemake --report` (:func:`fmat_replication.pages.captions.figure_caption`); not hashed
FIGURE_CAPTIONS = "_figure_captions"


def config_hash(config: Mapping) -> str:
    """The run configuration's fingerprint for the reports: ``sha256-`` (a string to Quarto's
    YAML) + 12 hex digits of the sorted JSON of ``config`` without :data:`FIGURE_CAPTIONS`."""

    given = {k: v for k, v in config.items() if k != FIGURE_CAPTIONS}
    digest = hashlib.sha256(json.dumps(given, sort_keys=True, default=str).encode()).hexdigest()
    return f"sha256-{digest[:12]}"


# ----------------------------------------------------------------------------- the command line and the folders

_TRUE_FALSE = ("true", "false", "yes", "no", "on", "off", "1", "0")


@functools.cache
def _snakemake_parser():
    """Snakemake's own command-line parser (built once: it registers every plugin's options)."""
    from snakemake.cli import get_argument_parser

    return get_argument_parser()


def profile_files(argv: Sequence[str], snakefile: str | os.PathLike | None = None) -> list[Path]:
    """The profile files a ``snakemake ARGV`` run reads, as Snakemake finds them: each
    ``--profile``, then the workflow profile (default ``profiles/default``)."""
    from snakemake.cli import get_profile_dir

    args, _ = _snakemake_parser().parse_known_args(list(argv))
    profiles = [str(profile) for profile in args.profile or [] if str(profile) != "none"]
    if args.workflow_profile != "none":
        name = Path(args.workflow_profile) if args.workflow_profile else Path("default")
        candidates = [name, Path("profiles") / name]
        if snakefile is not None:
            candidates.append(Path(snakefile).parent / "profiles" / name)
        profiles += [str(c) for c in candidates if c.exists()][:1]
    entries = [get_profile_dir(profile) for profile in profiles]
    return [Path(entry[1]) for entry in entries if entry is not None]


def check_profile(path: str | os.PathLike) -> None:
    """A profile's switches (Snakemake's options without a value, ``keep-going``) are true or
    false (Snakemake takes ``keep-going: maybe`` without a word); else InputError naming the line."""

    path = Path(path)
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return  # Snakemake has read it already and says what is wrong with it
    if not isinstance(root, yaml.MappingNode):
        return
    switches = {
        opt[2:]
        for action in _snakemake_parser()._actions
        if action.nargs == 0
        for opt in action.option_strings
        if opt.startswith("--")
    }
    for key_node, value_node in root.value:
        key = str(key_node.value)
        if key not in switches or not isinstance(value_node, yaml.ScalarNode):
            continue
        value = yaml.safe_load(yaml.serialize(value_node))
        if isinstance(value, bool) or value is None or str(value).strip().lower() in _TRUE_FALSE:
            continue
        raise InputError(
            f"{key}: {value!r} is neither true nor false (Snakemake would take it without a word)",
            where=f"{path}: line {key_node.start_mark.line + 1}",
            fix=f"write {key}: true or {key}: false",
        )


#: folders no job writes into (Snakemake's own environments: large trees, walked for nothing)
_NOT_WRITTEN = {"conda", "conda-archive", "singularity", "apptainer", "shadow"}


def _folders_within(path: Path):
    """``path`` and every folder below it (symbolic links not followed), in walk order."""
    yield path
    for root, dirs, _ in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_WRITTEN)
        for d in dirs:
            yield Path(root) / d


def check_writable(folders: Iterable[str | os.PathLike], working: str | os.PathLike = ".") -> None:
    """The workflow's output folders (results/, logs/ ...) and every folder inside them, or the
    working folder one would be made in, can be written; else InputError naming it."""
    for folder in folders:
        path = Path(working) / folder
        for target in _folders_within(path) if path.is_dir() else [Path(working)]:
            if not os.access(target, os.W_OK | os.X_OK):
                raise InputError(
                    f"the workflow writes into {folder}/, and {target.resolve()} cannot be written: {why_not_writable(target)}",
                    where=f"{target.resolve()}",
                    fix="run the workflow in a working folder you may write (a copy of the project, or "
                    "snakemake --directory DIR), or make that folder writable (chmod u+w, or its owner); nothing was run",
                )


def check_config_file(path: str | os.PathLike) -> None:
    """A workflow config file exists, is valid YAML (no tab in the indentation) and a mapping of
    keys; else InputError naming the file and the line (Snakemake's own message names neither)."""

    path = Path(path)
    fix = (
        "a workflow configuration is a YAML mapping of keys (models:, studies:, ...) indented with spaces; see "
        "config/config.yaml and docs/workflow.md"
    )
    if not path.is_file():
        raise InputError(
            f"there is no config file {path} (relative to the working folder {Path.cwd()})",
            where=str(path),
            fix="run snakemake in the project's folder (or give --directory), or restore config/config.yaml from git"
            if path.as_posix().endswith("config/config.yaml")
            else "check the path; a configuration of one's own is a YAML file of the keys it changes, e.g. "
            "my.yaml with `studies: [2A, 3A]` (docs/workflow.md, 'A configuration of your own')",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            f"the config file is not UTF-8 text ({err.reason} at byte {err.start})", where=str(path), fix=fix
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        lines = text.splitlines()
        line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
        where = f"{path}: line {mark.line + 1}" if mark is not None else str(path)
        if "\t" in line:
            raise InputError(
                "a tab on this line: YAML indents (and, here, separates) with spaces only",
                where=where,
                fix="replace the tab by spaces",
            ) from None
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(f"not valid YAML: {problem}", where=where, fix=fix) from None
    if data is not None and not isinstance(data, dict):
        raise InputError(
            f"the config file is {type(data).__name__ if not isinstance(data, list) else 'a list'}, not a mapping of keys",
            where=f"{path}: line 1",
            fix=fix,
        )
