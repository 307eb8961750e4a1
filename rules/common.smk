# Configuration checks and helpers shared by the rules. The logic is in fmat.workflow.
import os
import re
import sys

# the repository's package first (the conda envs install only its dependencies)
sys.path.insert(0, workflow.basedir)

from snakemake.exceptions import WorkflowError

from fmat.errors import FmatError
from fmat.workflow import (
    model_table,
    score_resources,
    study_criteria,
    study_file,
    validate_config,
)

# Validate the merged configuration (JSON Schema + study files) before any job is planned:
# a wrong key, type, study or model stops here with the key's name and the fix.
try:
    config.update(validate_config(config, root="."))
except FmatError as err:
    raise WorkflowError(f"invalid configuration: {err}") from None


MODELS = model_table(config)  # slug -> ModelSpec(name, slug, revision, tiny)
SLUGS = list(MODELS)
STUDIES = [str(s) for s in config["studies"]]
DEMO = any(spec.tiny for spec in MODELS.values())
DEMO_DIR = config["demo_dir"]


def alternatives(values):
    """A regular expression matching exactly one of ``values`` (for wildcard_constraints)."""
    return "|".join(re.escape(v) for v in values)


def model_marker(wildcards):
    """The file that says where a model is: a download marker, or the demo's tiny model."""
    if DEMO:
        return f"{DEMO_DIR}/{wildcards.model}.json"
    return f"resources/models/{wildcards.model}.json"


def study_yaml(wildcards):
    return str(study_file(config, wildcards.study))


def criteria_inputs(wildcards):
    """Criterion tables a study's word lists read (built by rules/criteria.smk)."""
    return [
        f"resources/criteria/{name}.parquet"
        for name in study_criteria(study_file(config, wildcards.study))
    ]


def score_gpus(wildcards):
    return 0 if config["device"] in ("cpu", "mps") or DEMO else 1


def all_outputs():
    """The final targets: per study the LPRs, the reliability table and its stats."""
    return (
        expand("results/lpr/{study}.parquet", study=STUDIES)
        + expand("results/reliability/{study}.parquet", study=STUDIES)
        + expand("results/analysis/{study}/stats.parquet", study=STUDIES)
    )
