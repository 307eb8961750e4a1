# Configuration checks and helpers shared by the rules. The logic is in fmat_replication (one module per stage).
import os
import re
import sys
from pathlib import Path

from fmat.errors import FmatError
from fmat_replication.config import check_device, check_profile, check_writable, profile_files
from fmat_replication.config import model_folder, model_table, score_groups, key_source, validate_config, world_path
from fmat_replication.score import lost_tables, lost_tables_notice, score_resources
from fmat.study import study_criteria
from fmat_replication.queries import study_file


def config_files():
    """The config files in Snakemake's merge order (the Snakefile's first, --configfile after)."""
    cli = [str(f) for f in workflow.overwrite_configfiles]
    return [str(f) for f in workflow.configfiles if str(f) not in cli] + cli


def cli_config_keys():
    """The top-level keys given with --config KEY=VALUE (they win over every config file)."""
    return [str(k) for k in (workflow.config_settings.config or {})]


def repo_path(rel):
    """A file of the repository (the Snakefile's folder) as a path relative to the working
    folder: rule inputs and params hold no absolute path, so a project copied or mounted
    elsewhere reruns nothing (docs/resuming.md, "Moving the project")."""
    return os.path.relpath(os.path.join(workflow.basedir, rel))


def check_cores():
    """--cores below 1 would make Snakemake wait for ever for a free core: stop at once."""
    try:
        cores = workflow.global_resources["_cores"].value
    except (KeyError, AttributeError):  # not set: Snakemake's own default applies
        return
    if cores is not None and cores < 1:
        print(
            f"invalid command line: --cores {cores}: no job could ever start (the run would wait for ever)\n"
            "  fix: give --cores N (N of 1 or more) or --cores all; make: CORES=N",
            file=sys.stderr,
        )
        sys.exit(2)


check_cores()

# Validate the merged configuration (JSON Schema + study files) before any job is planned:
# a wrong key, type, study or model stops here with the key's name and the fix.
try:
    config.update(
        validate_config(config, root=".", files=config_files(), repo=workflow.basedir, cli_keys=cli_config_keys(), min_models=2)
    )
    if not workflow.remote_exec and workflow.local_exec:  # the jobs run on this machine: its GPU
        check_device(config["device"], where=f"{key_source('device', config_files(), cli_config_keys())}: config.device")
except FmatError as err:
    # the message names the config file, the key and the fix: no Snakemake frame around it
    print(f"invalid configuration: {err}", file=sys.stderr)
    sys.exit(2)

# The profile's switches and the folders the jobs write, checked in the snakemake command itself
# (not again in each job): a profile value Snakemake would take silently, a read-only results/.
if workflow.is_main_process and not workflow.remote_exec:
    try:
        for _profile in profile_files(sys.argv[1:], workflow.main_snakefile):
            check_profile(_profile)
    except FmatError as err:
        print(f"invalid profile: {err}", file=sys.stderr)
        sys.exit(2)
    if not workflow.dryrun:
        try:
            check_writable(["results", "logs", "resources", ".snakemake"])
        except FmatError as err:
            print(f"invalid working folder: {err}", file=sys.stderr)
            sys.exit(2)


MODELS = model_table(config)  # slug -> ModelSpec(name, slug, revision, tiny, path)
SLUGS = list(MODELS)
STUDIES = [str(s) for s in config["studies"]]
SCORE_GROUPS = score_groups(config)  # {group: [study ids]}: one scoring rule each (rules/score.smk)
DEMO = any(spec.tiny for spec in MODELS.values())
DEMO_DIR = config["demo_dir"]
# the demo's planted world (docs/planting.md): the tiny models learn it, rule recovery checks it
WORLD_FILE = repo_path(str(world_path(config, workflow.basedir))) if config.get("world") else None

if workflow.is_main_process and not workflow.remote_exec:
    _lost = lost_tables(SCORE_GROUPS, SLUGS)  # a table deleted from a finished run: say what it costs
    if _lost:
        print(lost_tables_notice(_lost), file=sys.stderr)


def alternatives(values):
    """A regular expression matching exactly one of ``values`` (for wildcard_constraints)."""
    return "|".join(re.escape(v) for v in values)


def model_marker(wildcards):
    """The file that says where a model is: a download marker, or the demo's tiny model."""
    if DEMO:
        return f"{DEMO_DIR}/{wildcards.model}.json"
    return f"resources/models/{wildcards.model}.json"


def model_lock(wildcards):
    """A model's lock record (revision, commit, files, weights sha256, date), written by its
    download job beside its marker; the demo's tiny models have none (and need none). One path,
    not a list of one, so that a script's ``snakemake.input.lock`` is that path (or empty)."""
    if DEMO:
        return []
    return f"resources/models/{wildcards.model}.lock.tsv"


def demo_model_folder(wildcards):
    """The demo's tiny model folder (the jobs that load it read it), else nothing."""
    return [f"{DEMO_DIR}/{wildcards.model}"] if DEMO else []


def local_folder(slug):
    """The folder of a local model ({name, path} in the config), else None: relative to the
    working folder when configured relative (to the repository), so that moving the project
    changes no rule's params; an absolute path as configured."""
    spec = MODELS[slug]
    folder = model_folder(spec, workflow.basedir)
    if folder is None:
        return None
    if os.path.isabs(os.path.expanduser(spec.path)):
        return str(folder)
    return os.path.relpath(folder)


def local_model_files(wildcards):
    """(rule download_model) A local model folder's files (a changed file reruns its marker)."""
    folder = local_folder(wildcards.model)
    if folder is None:
        return []
    return sorted(str(p) for p in Path(folder).iterdir() if p.is_file())


def study_yaml(wildcards):
    return str(study_file(config, wildcards.study))


def criteria_inputs(wildcards):
    """Criterion tables a study's word lists read (built by rules/criteria.smk)."""
    return [f"resources/criteria/{name}.parquet" for name in study_criteria(study_file(config, wildcards.study))]


def score_gpus(wildcards):
    return 0 if config["device"] in ("cpu", "mps") or DEMO else 1


def all_outputs():
    """Every table of the run, intermediates included: the models' markers and lock records, the criterion tables
    the studies read, per study the queries, every model's scores, the LPRs, the reliability
    rows, the analysis' stats and the comparison rows, every model's agreement check, and the
    checks stage's tables (OOV counts per study; per model: checks, agreement, provenance).

    Snakemake rebuilds a missing file only when something asks for it; listing the
    intermediates here (rule all) makes the plain command rebuild a deleted one, and then
    everything after it (docs/resuming.md)."""
    from types import SimpleNamespace

    criteria = []
    for study in STUDIES:
        wc = SimpleNamespace(study=study)
        criteria += [c for c in criteria_inputs(wc) + analysis_criteria(wc) if c not in criteria]
    return (
        [model_marker(SimpleNamespace(model=slug)) for slug in SLUGS]
        + ([] if DEMO else expand("resources/models/{model}.lock.tsv", model=SLUGS))
        + criteria
        + expand("results/queries/{study}.parquet", study=STUDIES)
        + expand("results/scores/{study}/{model}.parquet", study=STUDIES, model=SLUGS)
        + expand("results/lpr/{study}.parquet", study=STUDIES)
        + expand("results/reliability/{study}{part}.parquet", study=STUDIES, part=["", "_details"])
        + expand("results/analysis/{study}/{name}", study=STUDIES, name=["stats.parquet", "status.json"])
        + expand("results/replication/{study}.parquet", study=STUDIES)
        + ["results/replication.parquet", "results/replication.csv"]
        + expand("results/agreement/{model}.parquet", model=SLUGS)
        + expand("results/oov/{study}.parquet", study=STUDIES)
        + expand("results/models/{name}.parquet", name=["checks", "agreement", "provenance"])
        + (expand("results/recovery/{study}.parquet", study=STUDIES) + ["results/recovery.parquet"] if WORLD_FILE else [])
    )


def demo_criteria(wildcards):
    """The criterion tables demo_model's training sentences need, namely those the studies'
    word lists read (Study 1C's names) and those the world's plants name (per_item tables)."""
    from types import SimpleNamespace

    tables = []
    for study in STUDIES:
        tables += criteria_inputs(SimpleNamespace(study=study))
    if WORLD_FILE:
        from fmat.plant import load_world

        world = load_world(WORLD_FILE)
        for study in STUDIES:
            plant = world.plant(study)
            for effect in plant.effects if plant else []:
                if effect.per_item:
                    tables.append(f"resources/criteria/{effect.per_item['table']}.parquet")
    return list(dict.fromkeys(tables))


def criteria_origins(config):
    """Where each criterion source comes from (official URL or mirror_dir): fmat_replication.criteria."""
    from fmat_replication.criteria import resolve_origin

    mirror = config.get("mirror_dir")
    if mirror and not os.path.isabs(mirror):  # relative to the repository (the Snakefile's folder),
        mirror = repo_path(mirror)  # written relative to the working folder (the rule's params)
    where = f"{key_source('mirror_dir', config_files(), cli_config_keys())}: mirror_dir"
    try:
        return {name: resolve_origin(name, mirror, where=where) for name in ("bls2021", "ssa", "glove")}
    except FmatError as err:
        print(f"invalid configuration: criteria: {err}", file=sys.stderr)
        sys.exit(2)


def analysis_criteria(wildcards):
    """(rule analysis) Criterion tables the study's analysis reads (none when it is not registered yet).
    Reads only the study file's `analysis` block: its word lists may need criterion tables
    that do not exist yet when the DAG is built."""
    from fmat.study import read_study_yaml
    from fmat import analyses as _analyses

    spec = dict(read_study_yaml(study_file(config, wildcards.study)).get("analysis") or {})
    name = spec.get("name")
    if not name or name not in _analyses.available():
        return []
    return [f"resources/criteria/{n}.parquet" for n in _analyses.criteria_needed(name, spec.get("options"))]


def agreement_pairs_file(config):
    """(rule agreement) The pairs TSV to read, or None for the package fixture; with
    ``agreement.url``, the download's target resources/agreement/marvin_linzen_dataset.tsv."""
    spec = config.get("agreement") or {}
    if spec.get("url"):
        return "resources/agreement/marvin_linzen_dataset.tsv"  # rule agreement_download
    return spec.get("pairs")
