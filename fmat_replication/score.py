"""Stage ``score`` (rules score_<group>): one model loaded once scores every study of its group
(:func:`score_group`, :func:`score_studies`); a job's portable resources (:func:`score_resources`)."""

from __future__ import annotations

import math
import os
import platform
from importlib import metadata
from typing import Any, Mapping, Sequence

from fmat.io import read_table, write_table
from fmat.runner import score_tables
from fmat.study import score_options

from .model_stage import check_lock_record, prepare_model_env
from .scripts import read_json

#: the distributions whose versions the scoring job records (by their distribution names)
SCORING_PACKAGES = (
    "fill-mask-association-test",
    "fmat-replication",
    "torch",
    "transformers",
    "tokenizers",
    "numpy",
    "pandas",
)
#: the key of a score table's ``attrs`` (kept in the parquet file) holding :func:`scoring_provenance`
PROVENANCE_KEY = "fmat_provenance"


def scoring_provenance(marker: Mapping, packages: Sequence[str] = SCORING_PACKAGES) -> dict:
    """What the scoring job records beside its scores: ``{"model", "demo", "python", "packages":
    {distribution: version}}``: the marker's model, whether it is a tiny demo model, Python, and
    the version of each distribution in ``packages`` installed in *this* process."""

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "model": str(marker.get("name", "")),
        "demo": bool(marker.get("tiny")),
        "python": platform.python_version(),
        "packages": {d: version(d) for d in packages},
    }


#: per model size: memory (MB) and the first attempt's runtime (minutes) for 15 studies
_SIZE_RESOURCES = {"large": (8000, 60), "base": (4000, 30), "small": (3000, 20)}


def model_size(name: str) -> str:
    """ "large", "base" or "small" from the model id (for memory and runtime estimates)."""
    low = name.lower()
    if "large" in low:
        return "large"
    if any(k in low for k in ("distil", "tiny", "small", "mini", "albert")):
        return "small"
    return "base"


def score_resources(name: str, attempt: int = 1, n_studies: int = 15, minutes: int | None = None) -> dict[str, int]:
    """Portable resources of one model's scoring job: ``mem_mb`` and ``runtime`` (minutes),
    doubling with each retry (Snakemake's ``attempt``). ``minutes`` (config ``score_runtime``)
    replaces the first attempt's runtime, which otherwise follows the model's size."""
    mem, per_15 = _SIZE_RESOURCES[model_size(name)]
    if minutes is None:
        minutes = max(10, math.ceil(per_15 * max(n_studies, 1) / 15))
    factor = 2 ** (max(int(attempt), 1) - 1)
    return {"mem_mb": mem * factor, "runtime": minutes * factor}


def score_studies(
    marker: Mapping,
    studies: Mapping[str, str],
    queries: Mapping[str, Any],
    *,
    device: str | None = None,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    threads: int | None = None,
    lock: str | os.PathLike | None = None,
):
    """Score several studies on ONE model, loading it once (:func:`fmat.runner.score_tables`);
    yields ``(study id, scores)``. ``marker``: a download or demo marker; ``studies``: study id ->
    study file (its ``score:`` options); ``queries``: study id -> query table or path.
    """

    tables = {sid: q if hasattr(q, "columns") else read_table(q) for sid, q in queries.items()}
    options = {sid: score_options(path) for sid, path in studies.items()}
    yield from score_tables(
        marker.get("path") or marker["name"],
        {sid: tables[sid] for sid in studies},
        options,
        name=marker["name"],
        device=device,
        batch_size=batch_size,
        max_tokens=max_tokens,
        threads=threads,
        lock_path=lock,
    )


def score_group(
    marker_path,
    studies: Sequence[str],
    study_files: Sequence,
    query_files: Sequence,
    outputs: Sequence,
    *,
    device=None,
    batch_size=None,
    max_tokens=None,
    threads=None,
    lock=None,
    offline: bool = True,
    cache_dir=None,
) -> None:
    """Rule score_<group>: ONE model (its marker) scores every study of the group, each table
    written to its output ``results/scores/{study}/{model}.parquet`` with the job's
    :func:`scoring_provenance` in its ``attrs``."""

    prepare_model_env(offline, cache_dir)
    marker = read_json(marker_path)
    check_lock_record(lock, marker)

    out = dict(zip(studies, outputs))
    record = scoring_provenance(marker)
    for sid, table in score_studies(
        marker,
        dict(zip(studies, study_files)),
        dict(zip(studies, query_files)),
        device=device,
        batch_size=batch_size,
        max_tokens=max_tokens,
        threads=threads,
        lock=lock,
    ):
        table.attrs[PROVENANCE_KEY] = record  # kept in the parquet file: read back by rule oov_study
        write_table(table, out[sid])


def lost_tables(groups: Mapping[str, Sequence[str]], models: Sequence[str], exists=os.path.exists) -> list[tuple]:
    """Score tables lost from a finished run: ``(study, model, group)`` for each
    ``results/scores/{study}/{model}.parquet`` that is missing while another table of the same
    scoring job and the study's own LPR table are there (so the table existed once)."""
    lost = []
    for group, studies in groups.items():
        for model in models:
            have = [exists(f"results/scores/{s}/{model}.parquet") for s in studies]
            if any(have):
                lost.extend((s, model, group) for s, h in zip(studies, have) if not h and exists(f"results/lpr/{s}.parquet"))
    return lost


def lost_tables_notice(lost: Sequence[tuple]) -> str:
    """What a run that lost score tables will do, and the cheaper way (docs/resuming.md)."""
    files = [f"results/scores/{s}/{m}.parquet" for s, m, _ in lost]
    jobs = sorted({f"score_{g} (model {m})" for _, m, g in lost})
    return (
        f"note: {len(files)} score table(s) of a finished run are missing: {', '.join(files[:5])}"
        + (" ..." if len(files) > 5 else "")
        + f".\n  This command would rerun {', '.join(jobs[:5])} for every "
        "study of the group, and every step after them. To rescore only what is missing, first run the same "
        "command with the missing file(s) as its target(s), named first (after --configfile they would be "
        "read as config files), e.g.\n    snakemake "
        + " ".join(files[:5])
        + " --profile profiles/default [--configfile ...]\n  (the group's other tables come back byte-identical), "
        "then the command "
        "again: Snakemake compares their checksums and reruns nothing else (docs/resuming.md, 'A lost table')."
    )
