"""``fmat study``: run one study file end to end (queries, scores, LPR, reliability) without Snakemake.

Example::

    fmat study config/studies/3A.yaml --model bert-base-uncased --model roberta-base -o out/3A

writes ``out/3A/queries.parquet``, ``scores.parquet``, ``lpr.parquet``, ``reliability.parquet``
and ``stats.parquet`` (the :mod:`fmat.results` shape), and with ``--report`` ``report.html``
(:mod:`fmat.study_page`: one self-contained page of the study) -- the same tables the workflow writes
under ``results/`` for that study. The same library functions run in both
(:func:`fmat.runner.score_tables`, :mod:`fmat.pipeline`).

Nothing computed is lost: each table is written as soon as it exists (the scores after each
model). A step that fails later (a model that cannot be loaded, reliability without enough
values) names what failed and the models and words that caused it, keeps the tables already
written and prints the command that goes on: the same command with ``--resume``, which reuses
the scores in the output folder of every model whose rows are this study's queries.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from ..errors import InputError
from ._common import add_compute_args, claim_folder, files

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
        help="an output folder that holds another study's tables: remove them first (without it, such "
        "a folder is refused, never mixed)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="also write FOLDER/report.html: one self-contained page of this study (design, "
        "LPRs, reliability, a figure), titled with the study's title",
    )
    files(p, inputs=("study",), output="folder")
    p.set_defaults(func=run)


def _model(model: str) -> tuple[str, str]:
    """``(name, slug)`` of a ``--model``: a local folder is named by its folder name."""
    from ..results import model_slug

    path = Path(model)
    if not path.is_dir() and (model.startswith((".", "/", "~")) or model.count("/") > 1):
        raise InputError(
            f"there is no model folder {model}",
            where="--model",
            fix="give an existing local model folder, or a Hugging Face id such as 'bert-base-uncased'",
        )
    name = path.name if path.is_dir() else model
    return name, model_slug(name)


def run(args) -> int:
    from ..errors import FmatError, os_error
    from ..io import read_table, write_table
    from ..pipeline import lpr_table, reliability_tables
    from ..runner import score_tables
    from ..study import load_study

    study_path = Path(args.study)
    if not study_path.is_file():
        raise InputError(f"study file not found: {study_path}", fix="give a study file such as config/studies/3A.yaml")
    criteria_dir = args.criteria_dir if Path(args.criteria_dir).is_dir() else None
    if args.check:
        from ..study import validate_study_file

        problems = validate_study_file(study_path, criteria_dir)
        if problems:
            raise InputError(
                f"{len(problems)} problem(s):\n  " + "\n  ".join(problems), where=str(study_path), fix="see docs/study-files.md"
            )
        print(f"{study_path}: valid")
        return 0
    missing = [flag for flag, value in (("-m/--model", args.model), ("-o/--output", args.output)) if not value]
    if missing:
        raise InputError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required",
            where="fmat study",
            fix="give the models and the output folder, e.g. fmat study STUDY.yaml -m bert-base-uncased "
            "-m roberta-base -o out/STUDY (or --check to check the study file only)",
        )
    study = load_study(study_path, criteria_dir=criteria_dir)  # the study file first: its errors name it
    models = [(m, *_model(m)) for m in args.model]
    slugs = [slug for _, _, slug in models]
    if len(set(slugs)) != len(slugs):
        raise InputError("a model is given twice", where="--model", fix="give each model once")
    sid = str(getattr(study, "id", None) or study_path.stem)
    analysis = (getattr(study, "analysis", None) or {}).get("name")
    if analysis:
        log.warning(
            "%s: fmat study does not run the analysis block (analysis: %s); the replication workflow runs it (docs/workflow.md)",
            study_path,
            analysis,
        )
    queries = study.queries
    out = Path(args.output)
    ext = args.format
    _check_fixed_outputs(out, ext, report=args.report)  # before any model loads
    written_names = [f"{t}.{e}" for t in TABLES for e in ("parquet", "csv", "tsv")] + ["report.html"]
    claim_folder(out, command="study", study=sid, names=written_names, force=args.force, resume=args.resume)
    written: list[Path] = []

    def write(name: str, table) -> Path:
        # each table is written as soon as it exists: a later step that fails keeps it
        try:
            path = write_table(table, out / f"{name}.{ext}")
        except OSError as err:  # a full disk, ...: what was kept, and the command that goes on
            known = os_error(err)
            if known is None:
                raise
            raise failed(f"writing {name}", known, fix=known.fix) from err
        if path not in written:
            written.append(path)
        print(f"wrote {len(table)} rows to {path}", flush=True)
        return path

    def failed(step: str, err: FmatError, cause: str = "", fix: str = "") -> InputError:
        kept = ", ".join(str(p) for p in written) or "nothing"
        resume = _resume_command(args)
        return InputError(
            f"the {step} step failed: {err.message}" + (f"\n  caused by: {cause}" if cause else "") + f"\n  kept: {kept}",
            where=f"fmat study {study_path}",
            fix=(fix + "; " if fix else "")
            + (err.fix + "; " if err.fix and not (cause and fix) else "")
            + f"then run again, reusing the scores already computed: {resume}",
        )

    try:
        write("queries", queries)
        options = {sid: dict(getattr(study, "score", None) or {})}
        previous = _previous_scores(out / f"scores.{ext}", read_table) if args.resume else None
        names = [name for _, name, _ in models]
        done: dict = {}  # model name -> its scores; the reused ones first, so none is lost
        for _, name, _ in models:
            reused = _reuse(previous, name, queries)
            if reused is not None:
                log.info("model %s: scores reused from %s (--resume)", name, out / f"scores.{ext}")
                done[name] = reused
        reused_any = bool(done)
        for source, name, _ in models:
            if name in done:
                continue
            try:
                for _, scores in score_tables(
                    source,
                    {sid: queries},
                    options,
                    name=name,
                    device=args.device,
                    batch_size=args.batch_size,
                    max_tokens=args.max_tokens,
                    threads=args.threads,
                    progress=not args.no_progress,
                ):
                    done[name] = scores
            except FmatError as err:
                if not done:
                    raise
                raise failed(f"scoring ({name})", err, fix=f"fix or drop --model {source}") from err
            # the scores of the models done so far: a model that fails later keeps them
            write("scores", _in_order(done, names))
            reused_any = False
        scores = _in_order(done, names)
        if reused_any:  # every model reused: the table is this run's models only
            write("scores", scores)
        try:
            lpr = lpr_table(study, scores)
        except FmatError as err:
            raise failed("LPR", err, fix="fix the study file's lpr: block") from err
        write("lpr", lpr)
        try:
            details, stats = reliability_tables(study, scores, lpr, sid=sid, icc=len(models) > 1)
        except FmatError as err:
            cause = _missing_values(scores, lpr)
            raise failed(
                "reliability",
                err,
                cause=cause,
                fix="drop the models or words named above (or give models that score them)" if cause else "",
            ) from err
        if len(models) < 2:
            log.warning("one model: no ICC among models (give two or more --model for it)")
        write("reliability", details)
        write("stats", stats)
        if args.report:
            from ..study_page import write_study_page

            try:
                page = write_study_page(out / "report.html", study, queries, lpr, stats, models=names)
            except OSError as err:
                known = os_error(err)
                if known is None:
                    raise
                raise failed("report page", known, fix=known.fix) from err
            print(f"wrote {page}: open it in a browser", flush=True)
    except KeyboardInterrupt:
        # Ctrl-C: what was kept, and the command that goes on from it
        kept = ", ".join(str(p) for p in written) or "nothing yet"
        print(f"fmat study: interrupted; kept: {kept}", file=sys.stderr)
        if any(p.name.startswith("scores.") for p in written):
            print(f"  go on, reusing the scores already computed: {_resume_command(args)}", file=sys.stderr)
        raise
    return 0


#: the tables fmat study writes into its output folder, under these fixed names
TABLES = ("queries", "scores", "lpr", "reliability", "stats")


def _check_fixed_outputs(out: Path, ext: str, *, report: bool) -> None:
    """The files ``fmat study`` will write into ``out`` under fixed names, checked before any model
    loads (fmat.io.check_output): one that is a folder, a device (a link to /dev/full) or in a
    place that cannot be written is refused now, not after all the scoring, with a fix that can
    be followed (the names cannot be chosen)."""
    from ..io import check_output

    names = [f"{t}.{ext}" for t in TABLES] + (["report.html"] if report else [])
    for name in names:
        try:
            check_output(out / name, where="-o/--output", table=False)
        except InputError as err:
            raise InputError(
                err.message,
                where=err.where,
                fix=f"fmat study writes {name} under that fixed name: move {out / name} away, or give another output folder (-o)",
            ) from None


def _in_order(done: dict, names: list):
    """The scores of the models done so far, in ``--model`` order (fmat.runner.concat_scores)."""
    from ..runner import concat_scores

    order = [n for n in names if n in done]
    return concat_scores([done[n] for n in order], models=order)


def _resume_command(args) -> str:
    """The command that runs this study again, reusing the scores already written (--resume)."""
    import shlex

    parts = ["fmat", "study", args.study]
    for m in args.model:
        parts += ["-m", m]
    parts += ["-o", args.output]
    if args.format != "parquet":
        parts += ["--format", args.format]
    for flag in ("device", "batch_size", "max_tokens", "threads"):
        value = getattr(args, flag, None)
        if value is not None:
            parts += ["--" + flag.replace("_", "-"), str(value)]
    if args.criteria_dir != "resources/criteria":
        parts += ["--criteria-dir", args.criteria_dir]
    if getattr(args, "report", False):
        parts.append("--report")
    return " ".join(shlex.quote(p) for p in parts + ["--resume"])


def _previous_scores(path: Path, read_table):
    """The scores table a previous run left in the output folder (``--resume``), or None."""
    if not path.is_file():
        log.info("--resume: no %s yet: every model is scored", path)
        return None
    return read_table(path)


def _texts(column) -> list:
    import pandas as pd

    return [None if pd.isna(v) else str(v) for v in column.astype(object)]


def _reuse(previous, name: str, queries):
    """One model's rows of ``previous`` as :func:`fmat.runner.run` returns them, when they are
    the scores of exactly this query table (same rows, same words); else None."""
    import pandas as pd

    from ..runner import label_scores

    if previous is None or "model" not in previous.columns:
        return None
    rows = previous[previous["model"].astype(str) == name].reset_index(drop=True)
    if len(rows) != len(queries) or not set(queries.columns) <= set(rows.columns):
        return None
    if any(_texts(rows[c]) != _texts(queries[c]) for c in queries.columns):
        log.info("model %s: the scores in the output folder are of other queries: scored again", name)
        return None
    extra = [c for c in rows.columns if c != "model" and c not in queries.columns]
    table = pd.concat([queries.reset_index(drop=True), rows[extra]], axis=1)
    return label_scores(table, name, queries)


def _missing_values(scores, lpr) -> str:
    """Which models lack LPRs, and for which option words they have no probability (what
    makes ICC or alpha impossible)."""
    import pandas as pd

    parts = []
    value = pd.to_numeric(lpr["LPR"], errors="coerce") if "LPR" in lpr else None
    prob = pd.to_numeric(scores["prob"], errors="coerce")
    for model, d in scores.assign(_p=prob).groupby("model", observed=True, sort=False):
        bad = d[d["_p"].isna()]
        if bad.empty:
            continue
        words = ", ".join(repr(w) for w in dict.fromkeys(str(w) for w in bad["M_word"]))
        oov = "oov" in d and bad["oov"].fillna(False).astype(bool).all()
        n_lpr = ""
        if value is not None and "model" in lpr:
            mine = value[lpr["model"].astype(str) == str(model)]
            n_lpr = f"{int(mine.isna().sum())} of {len(mine)} LPRs missing: "
        parts.append(
            f"model {model}: {n_lpr}no probability for the option word(s) {words}"
            + (" (not one whole-word token of its vocabulary)" if oov else "")
        )
    if not parts and value is not None and value.isna().any():
        return f"{int(value.isna().sum())} LPR value(s) are missing"
    return "; ".join(parts)
