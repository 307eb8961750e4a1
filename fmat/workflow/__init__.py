"""Pure helpers for the Snakemake workflow (and for ``fmat study``, which runs it without Snakemake).

Nothing here imports Snakemake: the rules (``rules/*.smk``) and the thin scripts
(``scripts/*.py``) call these functions, and so does :mod:`fmat.commands.study`.
One module per concern (each has one reason to change):

- :mod:`.config`: model names (:func:`model_slug`, :func:`model_table`), :func:`validate_config`
  (JSON Schema ``fmat/schemas/config.schema.json`` + every study file), :func:`check_device`,
  :func:`config_hash`
- :mod:`.studies`: :func:`study_file`, :func:`study_criteria`, :func:`study_options`, query tables
- :mod:`.hub`: :func:`hub_reachable`, :data:`OFFLINE_HELP`, :func:`ensure_model` (cache + lock
  file), :func:`prepare_model_env`
- :mod:`.scripts`: :func:`run_script` (logging, errors as messages), JSON markers
- :mod:`.score`: :func:`score_studies` (one model load for several studies), :func:`score_resources`
- :mod:`.tables`: :func:`load_scores`, :func:`lpr_table`, :func:`reliability_tables`
- :mod:`.demo`: :func:`build_demo` / :func:`demo_words`

The names below are re-exported, so ``from fmat.workflow import X`` works for all of them.
"""
from __future__ import annotations

from .config import (SCHEMA_FILE, ModelSpec, apply_defaults, check_device, check_model_folder, check_study, config_hash,
                     key_source,
                     model_folder, model_slug, model_table, score_groups, validate_config)
from .demo import build_demo, demo_words
from .hub import (OFFLINE_HELP, cached_snapshot, ensure_model, hub_reachable, local_model, lock_row_from_cache,
                  offline_error, prepare_model_env)
from .score import model_size, score_options, score_resources, score_studies
from .scripts import read_json, run_script, script_logging, write_json
from .studies import load_study_file, query_table, study_criteria, study_file, study_options
from .tables import load_scores, lpr_table, reliability_tables, summary_function

__all__ = [
    "OFFLINE_HELP", "SCHEMA_FILE", "ModelSpec", "apply_defaults", "build_demo", "cached_snapshot", "check_device",
    "check_model_folder", "check_study", "config_hash", "demo_words", "ensure_model", "hub_reachable", "key_source",
    "load_scores", "load_study_file", "local_model", "lock_row_from_cache", "lpr_table", "model_size", "model_slug",
    "model_folder", "model_table", "offline_error", "prepare_model_env", "query_table", "read_json",
    "reliability_tables", "run_script", "score_groups", "score_options", "score_resources", "score_studies",
    "script_logging", "study_criteria", "study_file", "study_options", "summary_function",
    "validate_config", "write_json",
]
