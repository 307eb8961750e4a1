"""``fmat study``: run one study file end to end (queries, scores, LPR, reliability) without Snakemake.

Example::

    fmat study config/studies/3A.yaml --model bert-base-uncased --model roberta-base -o out/3A

writes ``out/3A/queries.parquet``, ``scores.parquet``, ``lpr.parquet``, ``reliability.parquet``
and ``stats.parquet`` (the :mod:`fmat.results` shape) -- the same tables the workflow writes
under ``results/`` for that study. The same library functions run in both
(:func:`fmat.runner.score_tables`, :mod:`fmat.pipeline`).
"""
from __future__ import annotations

import logging
from pathlib import Path

from ..errors import InputError
from ._common import add_compute_args, files

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "study",
        help="run one study file: queries, scores, LPR and reliability into a folder (no Snakemake)",
        description=(
            "Run one study file (config/studies/<id>.yaml) on the given models: build its query "
            "table, score it on each model (each model loaded once), compute the LPRs with the "
            "file's lpr: options and the reliability (ICC among the models on raw log "
            "probabilities and on LPRs; alpha among the items of its reliability: block). "
            "Writes queries, scores, lpr, reliability and stats tables into the output folder."
        ),
        epilog="example: fmat study config/studies/3A.yaml --model bert-base-uncased "
               "--model roberta-base -o out/3A",
    )
    p.add_argument("study", help="the study file (config/studies/<id>.yaml)")
    p.add_argument("-m", "--model", action="append", required=True, metavar="MODEL",
                   help="a Hugging Face model id or a local model folder; repeat for several models "
                        "(ICC needs at least two)")
    p.add_argument("-o", "--output", required=True, metavar="FOLDER", help="folder for the tables")
    p.add_argument("--criteria-dir", default="resources/criteria",
                   help="folder of criterion tables for word lists that read one (default: %(default)s)")
    add_compute_args(p, cache_dir=False)
    p.add_argument("--format", choices=("parquet", "csv", "tsv"), default="parquet",
                   help="table format of the outputs (default: %(default)s)")
    files(p, inputs=("study",), output="folder")
    p.set_defaults(func=run)


def _model(model: str) -> tuple[str, str]:
    """``(name, slug)`` of a ``--model``: a local folder is named by its folder name."""
    from ..results import model_slug

    path = Path(model)
    if not path.is_dir() and (model.startswith((".", "/", "~")) or model.count("/") > 1):
        raise InputError(f"there is no model folder {model}", where="--model",
                         fix="give an existing local model folder, or a Hugging Face id such as 'bert-base-uncased'")
    name = path.name if path.is_dir() else model
    return name, model_slug(name)


def run(args) -> int:
    from ..io import write_table
    from ..pipeline import lpr_table, reliability_tables
    from ..runner import concat_scores, score_tables
    from ..study import load_study

    study_path = Path(args.study)
    if not study_path.is_file():
        raise InputError(f"study file not found: {study_path}",
                         fix="give a study file such as config/studies/3A.yaml")
    criteria_dir = args.criteria_dir if Path(args.criteria_dir).is_dir() else None
    study = load_study(study_path, criteria_dir=criteria_dir)     # the study file first: its errors name it
    models = [(m, *_model(m)) for m in args.model]
    slugs = [slug for _, _, slug in models]
    if len(set(slugs)) != len(slugs):
        raise InputError("a model is given twice", where="--model", fix="give each model once")
    sid = str(getattr(study, "id", None) or study_path.stem)
    queries = study.queries
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    ext = args.format

    options = {sid: dict(getattr(study, "score", None) or {})}
    tables = []
    for source, name, _ in models:
        for _, scores in score_tables(source, {sid: queries}, options, name=name, device=args.device,
                                      batch_size=args.batch_size, max_tokens=args.max_tokens,
                                      threads=args.threads):
            tables.append(scores)
    scores = concat_scores(tables, models=[name for _, name, _ in models])
    lpr = lpr_table(study, scores)
    details, stats = reliability_tables(study, scores, lpr, sid=sid, icc=len(models) > 1)
    if len(models) < 2:
        log.warning("one model: no ICC among models (give two or more --model for it)")
    for name, table in (("queries", queries), ("scores", scores), ("lpr", lpr),
                        ("reliability", details), ("stats", stats)):
        path = write_table(table, out / f"{name}.{ext}")
        print(f"wrote {len(table)} rows to {path}")
    return 0
