"""``fmat study``: run one study file end to end (queries, scores, LPR, reliability, its analysis) without Snakemake.

:func:`fmat.run_study` on the command line; a step that fails later keeps the tables written and
prints the same command with ``--resume``, which reuses the scores already computed.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ..errors import EXIT_NO_ANALYSIS, InputError
from ._common import add_compute_args, check_study_file, compute_options, files


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "study",
        help="run one study file: queries, scores, LPR, reliability and its analysis into a folder (no Snakemake)",
        description=(
            "Run one study file (config/studies/<id>.yaml) on the given models: build its query "
            "table, score it on each model (each model loaded once), compute the LPRs with the "
            "file's lpr: options and the reliability (ICC among the models on raw log "
            "probabilities and on LPRs; alpha among the items of its reliability: block) and run "
            "the analysis its analysis: block names (fmat.analyses), printing its effect. "
            "Writes queries, scores, lpr, reliability and stats tables into the output folder."
        ),
        epilog="example: fmat study config/studies/3A.yaml --model bert-base-uncased --model roberta-base -o out/3A",
    )
    p.add_argument("study", help="the study file (config/studies/<id>.yaml)")
    p.add_argument(
        "-m",
        "--model",
        action="append",
        metavar="MODEL",
        help="a Hugging Face model id or a local model folder; repeat for several models (ICC needs at least two)",
    )
    p.add_argument("-o", "--output", metavar="FOLDER", help="folder for the tables")
    p.add_argument(
        "--check",
        action="store_true",
        help="only check the study file (as 'fmat query --study FILE --check'): no model, no output",
    )
    p.add_argument(
        "--criteria-dir",
        default="resources/criteria",
        help="folder of criterion tables for word lists that read one (default: %(default)s)",
    )
    add_compute_args(p, cache_dir=False)
    p.add_argument(
        "--format",
        choices=("parquet", "csv", "tsv"),
        default="parquet",
        help="table format of the outputs (default: %(default)s)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="reuse the scores a previous run left in the output folder (models whose rows "
        "are those of this study's queries); score only the others",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar while scoring")
    p.add_argument(
        "--force",
        action="store_true",
        help="an output folder that holds another study's tables: remove the files that run recorded in the "
        "folder's .fmat-run.json first (without it, such a folder is refused, never mixed; your own files are never removed)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="also write FOLDER/report.html: one self-contained page of this study (its effect per "
        "analysis, per model and per item, the LPRs, reliability, a figure), titled with the study's title",
    )
    files(p, inputs=("study",), output="folder")
    p.set_defaults(func=run)


def run(args) -> int:
    """``fmat study``: :func:`fmat.run_study` on the command line (its stages: :mod:`fmat.stages`)."""
    from ..stages import design
    from ..study_run import run_study

    study_path = Path(args.study)
    if not study_path.is_file():
        raise InputError(f"study file not found: {study_path}", fix="give a study file such as config/studies/3A.yaml")
    if args.criteria_dir != "resources/criteria" and not Path(args.criteria_dir).is_dir():
        raise InputError(
            f"criterion folder not found: {args.criteria_dir}",
            where="--criteria-dir",
            fix="give the folder that holds the criterion tables (<name>.parquet, .csv or .tsv)",
        )
    criteria_dir = args.criteria_dir if Path(args.criteria_dir).is_dir() else None
    if args.check:
        return _check_only(args, study_path, criteria_dir)
    missing = [flag for flag, value in (("-m/--model", args.model), ("-o/--output", args.output)) if not value]
    if missing:
        raise InputError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required",
            where="fmat study",
            fix="give the models and the output folder, e.g. fmat study STUDY.yaml -m bert-base-uncased "
            "-m roberta-base -o out/STUDY (or --check to check the study file only)",
        )
    study = design(study_path, criteria_dir)  # the study file first: its errors name it
    try:
        result = run_study(
            study,
            args.model,
            args.output,
            resume=args.resume,
            report=args.report,
            criteria_dir=args.criteria_dir,
            format=args.format,
            force=args.force,
            progress=not args.no_progress,
            **compute_options(args, cache_dir=False),
            go_on=_resume_command(args),
            echo=lambda line: print(line, flush=True),
        )
    except InputError as err:
        if err.where == "models":  # run_study's argument is the command line's -m/--model
            raise InputError(err.message, where="-m/--model", fix=err.fix) from None
        raise
    except KeyboardInterrupt as err:
        _say_interrupted(args, err)
        raise
    print(result.summary(), flush=True)
    if result.page is not None:
        print(f"wrote {result.page}: open it in a browser", flush=True)
    return _analysis_exit(result.status, "fmat study")


def _check_only(args, study_path: Path, criteria_dir) -> int:
    """``fmat study --check``: the study file and the criterion tables its analysis reads, no model."""
    from ..stages import check_study_criteria, study_criteria_tables
    from ..study import load_study

    check_study_file(study_path, criteria_dir)
    tables = {}
    if criteria_dir is not None:  # the criterion tables the analysis reads: columns, numbers, items
        study = load_study(study_path, criteria_dir=criteria_dir)
        try:
            tables = study_criteria_tables(study, criteria_dir)
        except InputError as err:
            if args.criteria_dir != "resources/criteria":  # the folder you named lacks it: a typo, most likely
                raise InputError(err.message, where=f"{study_path}: analysis.options (table:)", fix=err.fix) from None
            # the default folder, not built yet: fmat study runs without it (no analysis): a note
            print(f"{study_path}: note: {err.message}; the analysis would not run (fix: {err.fix})")
        check_study_criteria(study, tables)
    print(f"{study_path}: valid" + (f" (criterion tables checked: {', '.join(tables)})" if tables else ""))
    return 0


def _say_interrupted(args, err: KeyboardInterrupt) -> None:
    """Ctrl-C: what was kept, and the command that goes on from it (the cli adds nothing)."""
    kept = [Path(p) for p in getattr(err, "fmat_kept", [])]
    print(f"fmat study: interrupted; kept: {', '.join(map(str, kept)) or 'nothing yet'}", file=sys.stderr)
    if any(p.name.startswith("scores.") for p in kept):
        print(f"  go on, reusing the scores already computed: {_resume_command(args)}", file=sys.stderr)
    else:
        print("  no scores were kept: run the same command again to start over", file=sys.stderr)
    err.fmat_told = True  # type: ignore[attr-defined]  # the cli adds nothing


def _analysis_exit(status: dict, command: str) -> int:
    """0, or :data:`fmat.errors.EXIT_NO_ANALYSIS` when the study file names an analysis that did
    not run (said last, so that a script and a reader tell it from a run whose analysis ran)."""
    name = str(status.get("analysis") or "")
    if not name or (status.get("implemented") and status.get("run", True)):
        return 0
    why = "; ".join(str(n) for n in status.get("notes", [])) or "no reason recorded"
    print(f"{command}: the analysis {name} did not run (exit {EXIT_NO_ANALYSIS}): {why}", file=sys.stderr, flush=True)
    return EXIT_NO_ANALYSIS


def _resume_command(args) -> str:
    """The command that runs this study again, reusing the scores already written (--resume)."""
    parts = ["fmat", "study", args.study]
    for m in args.model:
        parts += ["-m", m]
    parts += ["-o", args.output]
    if args.format != "parquet":
        parts += ["--format", args.format]
    for flag, value in compute_options(args, cache_dir=False).items():
        if value is not None:
            parts += ["--" + flag.replace("_", "-"), str(value)]
    if args.criteria_dir != "resources/criteria":
        parts += ["--criteria-dir", args.criteria_dir]
    if getattr(args, "report", False):
        parts.append("--report")
    return " ".join(shlex.quote(p) for p in parts + ["--resume"])
