"""One study file on some models, end to end: :func:`run_study` -> :class:`StudyResult`.

The stages of :mod:`fmat.stages` with the output folder around them (each table written as soon
as it exists, resume, force) and the error of a step that fails later: what failed, what was
kept and how to go on. Named ``study_run`` so that ``fmat.run_study`` is always the function.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from . import arguments, io, runner, stages
from .errors import FmatError, InputError, os_error
from .io import claim_folder, settle_folder_record
from .lpbs import PRIOR_COLUMNS
from .results import StudyResult, model_slug
from .study import Study

__all__ = ["StudyResult", "check_outputs", "missing_values", "run_study"]

log = logging.getLogger(__name__)

#: the tables written into the output folder, under these fixed names
TABLES = ("queries", "scores", "lpr", "reliability", "stats")


def _models(models) -> list[tuple[str, str]]:
    """``[(source, name)]``: of a mapping name -> source, or of ids and local folders."""
    if isinstance(models, (str, os.PathLike)):
        models = [models]
    if isinstance(models, Mapping):
        pairs = [(str(src), str(name)) for name, src in models.items()]
    else:
        pairs = []
        for m in models:
            m = str(m)
            path = Path(m)
            if not path.is_dir() and (m.startswith((".", "/", "~")) or m.count("/") > 1):
                raise InputError(
                    f"there is no model folder {m}",
                    where="models",
                    fix="give an existing local model folder, or a Hugging Face id such as 'bert-base-uncased'",
                )
            pairs.append((m, path.name if path.is_dir() else m))
    if not pairs:
        raise InputError("no model given", where="models", fix="give one or more models (two or more for ICC)")
    slugs = [model_slug(n) for _, n in pairs]
    if len(set(slugs)) != len(slugs):
        raise InputError("a model is given twice", where="models", fix="give each model once")
    return pairs


def run_study(
    study,
    models,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    *,
    report: bool = False,
    criteria_dir: str | os.PathLike | None = None,
    format: str = "parquet",
    force: bool = False,
    device=None,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    threads: int | None = None,
    progress: bool = True,
    go_on: str | None = None,
    echo=None,
) -> StudyResult:
    """Run one study file on ``models``: queries, scores, LPRs, reliability, its analysis.

    Parameters
    ----------
    study : path or fmat.study.Study
        The study file (docs/study-files.md), or one loaded with :func:`fmat.load_study`.
    models : sequence of str, or mapping of name to source
        Hugging Face ids or local model folders (named by their folder name); two or more for ICC.
    out : path, optional
        Folder for the tables (``queries``, ``scores``, ``lpr``, ``reliability``, ``stats``) and
        the page; one that holds another study's tables is refused. Nothing is written without it.
    resume : bool
        Reuse the scores in ``out`` of every model whose rows are this study's queries.
    report : bool
        Also write ``out/report.html`` (:func:`fmat.study_page.write_study_page`).
    criteria_dir : path, optional
        Folder of criterion tables (word lists and analyses that read one).
    format : {"parquet", "csv", "tsv"}
        Table format of the files.
    force : bool
        Remove another study's files from ``out`` first.
    device, batch_size, max_tokens, threads, progress
        As :func:`fmat.run` (``threads``: torch CPU threads).
    go_on : str, optional
        How to go on after a failure, said in the error (default: ``run_study(..., resume=True)``).
    echo : callable, optional
        Called with a line as each file is written (``fmat study`` prints it); else logged.

    Returns
    -------
    StudyResult

    Raises
    ------
    fmat.InputError
        A problem of the study file, its analysis options, the models or ``out`` (before any
        model loads), or a step that failed later (what was kept, and how to go on). On
        Ctrl-C the ``KeyboardInterrupt`` carries ``fmat_kept`` (the files kept).

    Examples
    --------
    Two tiny models (:mod:`fmat.tiny`, built in seconds, random weights: the numbers mean
    nothing) and a study file of two groups:

    >>> import fmat, tempfile, pathlib
    >>> from fmat import tiny
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "S.yaml").write_text('''
    ... id: S
    ... title: Warmth of men and women
    ... queries:
    ...   - query: "The [MASK] is {ATTRIB}."
    ...     MASK: {Male: [man], Female: [woman]}
    ...     ATTRIB: {Warm: [kind, warm], Cold: [cold, rude]}
    ... lpr: {mask_pair: false, attrib_pair: true}
    ... analysis: {name: stereotype_pairs, options: {mask_contrast: [Male, Female]}}
    ... ''')
    >>> words = ["man", "woman", "kind", "warm", "cold", "rude"]
    >>> ms = [str(tiny.build_tiny_model(tmp / f, f, words, seed=0)) for f in ("bert-uncased", "roberta")]
    >>> res = fmat.run_study(tmp / "S.yaml", ms, progress=False)
    >>> res.effect["statistic"].tolist(), res.effect["condition"].tolist()[:1]
    (['d', 'd', 'd'], ['all'])
    >>> sorted(res.reliability_stats["statistic"].unique())
    ['ICC_average', 'ICC_single', 'alpha', 'alpha_std']
    """
    study = study if isinstance(study, Study) else arguments.path("study", study)
    models = arguments.models("models", models)
    out = arguments.path("out", out, optional=True)
    resume, report, force, progress = (
        arguments.flag(*a) for a in (("resume", resume), ("report", report), ("force", force), ("progress", progress))
    )
    criteria_dir = arguments.path("criteria_dir", criteria_dir, optional=True)
    format = arguments.text("format", format)
    if format not in ("parquet", "csv", "tsv"):
        raise InputError(f"unknown table format {format!r}", where="format", fix="use parquet, csv or tsv")
    scoring = {"device": arguments.device("device", device), "progress": progress}  # the keywords of stages.score
    sizes = (("batch_size", batch_size), ("max_tokens", max_tokens), ("threads", threads))
    scoring.update((n, arguments.whole(n, v, minimum=1, optional=True)) for n, v in sizes)
    go_on = arguments.text("go_on", go_on, optional=True)
    echo = arguments.function("echo", echo)
    study = stages.design(study, criteria_dir if criteria_dir and Path(criteria_dir).is_dir() else None)
    pairs = _models(models)
    criteria, skipped = stages.criteria(study, criteria_dir)  # checked before any model loads
    folder = dict(out=out, format=format, report=report, force=force, resume=resume, go_on=go_on, echo=echo)
    return _run_stages(study, pairs, criteria, skipped, folder, scoring)


class _Outputs:
    """The output folder of one :func:`run_study` (or none): the tables written, the files kept,
    and the error of a step that fails later; ``out`` is checked and claimed
    (:func:`fmat.io.claim_folder`) before any model loads."""

    def __init__(self, study, *, out, format: str, report: bool, force: bool, resume: bool, go_on, echo):
        self.sid, self.format, self.echo = str(getattr(study, "id", None) or "study"), format, echo
        self.folder = folder = Path(out) if out is not None else None
        self.written: list[Path] = []
        if folder is None and (resume or report):
            raise InputError("resume and report need an output folder", where="out", fix="give out=FOLDER")
        where = str(getattr(study, "path", "") or self.sid)
        self.go_on = go_on or f"run_study({where!r}, ..., out={str(folder)!r}, resume=True)"
        if folder is not None:
            names = check_outputs(folder, format, report=report)
            claim_folder(folder, command="study", study=self.sid, names=names, force=force, resume=resume, can_resume=True)

    def path(self, name: str) -> Path:
        """The path of table ``name`` in the folder."""
        return self.folder / f"{name}.{self.format}"

    def write(self, name: str, table) -> None:
        """Write table ``name`` (nothing without a folder; :meth:`keep`)."""
        if self.folder is None:
            return
        path = self.keep(f"writing {name}", lambda: io.write_table(table, self.path(name)))
        (self.echo or log.info)(f"wrote {len(table)} rows to {path}")

    def failed(self, step: str, err: FmatError, cause: str = "", fix: str = "") -> InputError:
        """The error of a step that failed: its reason, what was kept and how to go on."""
        kept = ", ".join(str(p) for p in self.written) or "nothing"
        then = (
            f"then run again, reusing the scores already computed: {self.go_on}" if self.folder is not None else "then run again"
        )
        return InputError(
            f"the {step} step failed: {err.message}" + (f"\n  caused by: {cause}" if cause else "") + f"\n  kept: {kept}",
            where=f"study {self.sid}",
            fix=(fix + "; " if fix else "") + (err.fix + "; " if err.fix and not (cause and fix) else "") + then,
        )

    def keep(self, step: str, write) -> Path:
        """``write()``, the path it returns kept; a full disk, ...: :meth:`failed`."""
        try:
            path = write()
        except OSError as err:
            known = os_error(err)
            if known is None:
                raise
            raise self.failed(step, known, fix=known.fix) from err
        if path not in self.written:
            self.written.append(path)
        return path


def _run_stages(study, pairs, criteria, skipped: str, folder: dict, scoring: dict) -> StudyResult:
    """The stages of :func:`run_study` after its checks, each table written as it exists; on
    Ctrl-C the ``KeyboardInterrupt`` carries ``fmat_kept`` (the files kept)."""
    outputs = _Outputs(study, **folder)
    sid, names, queries = outputs.sid, [n for _, n in pairs], study.queries
    try:
        outputs.write("queries", queries)
        options = stages.study_options(study, "score")
        scores = _score_models(pairs, queries, options, outputs, resume=folder["resume"], scoring=scoring)
        try:
            lpr = stages.lpr_table(study, scores)
        except FmatError as err:
            raise outputs.failed("LPR", err, fix="fix the study file's lpr: block") from err
        outputs.write("lpr", lpr)
        try:
            details, rel = stages.reliability_tables(study, scores, lpr, sid=sid, icc=len(pairs) > 1)
        except FmatError as err:
            cause = missing_values(scores, lpr)
            fix = "drop the models or words named above (or give models that score them)" if cause else ""
            raise outputs.failed("reliability", err, cause=cause, fix=fix) from err
        if len(pairs) < 2:
            log.warning("one model: no ICC among models (give two or more models for it)")
        outputs.write("reliability", details)
        stats, figures, status = stages.analyse_or_note(
            study, scores, lpr, rel, criteria, sid=sid, crossed=folder["report"], skipped=skipped, n_models=len(pairs)
        )
        outputs.write("stats", stats)
        result = StudyResult(study, names, queries, scores, lpr, details, stats, figures, status, outputs.written)
        if folder["report"] and outputs.folder is not None:
            path = outputs.folder / "report.html"
            result.page = outputs.keep(
                "report page", lambda: stages.page(path, study, queries, lpr, stats, models=names, figures=figures, status=status)
            )
        return result
    except KeyboardInterrupt as err:
        err.fmat_kept = list(outputs.written)  # type: ignore[attr-defined]
        raise
    finally:
        if outputs.folder is not None:  # the record lists what this run wrote, not what it would have
            settle_folder_record(outputs.folder)


def _score_models(pairs, queries, options: dict, outputs: _Outputs, *, resume: bool, scoring: dict) -> pd.DataFrame:
    """Stage score for every model, in order (``resume``: a model's scores in the folder reused),
    the table written after each model, so that a model that fails later keeps those done."""
    names = [n for _, n in pairs]
    previous = _previous_scores(outputs.path("scores")) if resume and outputs.folder is not None else None
    # an LPBS study reuses only scores with the priors (those of a run with method fmat have none)
    need = PRIOR_COLUMNS if str(options.get("method", "fmat")) == "lpbs" else []
    done: dict = {}
    for _, name in pairs:
        reused = _reuse(previous, name, queries, need)
        if reused is not None:
            log.info("model %s: scores reused from %s (resume)", name, outputs.path("scores"))
            done[name] = reused
    todo = [(source, name) for source, name in pairs if name not in done]
    for source, name in todo:
        try:
            done[name] = stages.score(source, queries, options, name=name, **scoring)
        except FmatError as err:
            if not done:
                raise
            raise outputs.failed(f"scoring ({name})", err, fix=f"fix or drop the model {source}") from err
        outputs.write("scores", _in_order(done, names))  # the models done so far: one that fails later keeps them
    scores = _in_order(done, names)
    if not todo:  # every model reused: the table is this run's models only
        outputs.write("scores", scores)
    return scores


def check_outputs(out: Path, ext: str, *, report: bool) -> list[str]:
    """The names of the files written into ``out``, each checked before any model loads
    (:func:`fmat.io.check_output`: a folder, a device or a place that cannot be written)."""
    names = [f"{t}.{ext}" for t in TABLES] + (["report.html"] if report else [])
    for name in names:
        try:
            io.check_output(out / name, where="-o/--output", table=False)
        except InputError as err:
            raise InputError(
                err.message,
                where=err.where,
                fix=f"fmat study writes {name} under that fixed name: move {out / name} away, or give another output folder (-o)",
            ) from None
    return names


def _in_order(done: dict, names: Sequence[str]) -> pd.DataFrame:
    """The scores of the models done so far, in the order given (fmat.runner.concat_scores)."""
    order = [n for n in names if n in done]
    return runner.concat_scores([done[n] for n in order], models=order)


def _previous_scores(path: Path):
    """The scores table an earlier run left in the output folder (``resume``), or None."""
    if path.is_file():
        return io.read_table(path)
    log.info("resume: no %s yet: every model is scored", path)


def _texts(column) -> list:
    return [None if pd.isna(v) else str(v) for v in column.astype(object)]


def _reuse(previous, name: str, queries, need: Sequence[str] = ()):
    """One model's rows of ``previous`` as :func:`fmat.runner.run` returns them, when they are
    the scores of exactly this query table and hold the columns ``need`` (LPBS priors); else None."""
    if previous is None or "model" not in previous.columns:
        return None
    if not set(need) <= set(previous.columns):
        log.info("model %s: the scores in the output folder have no %s (not LPBS scores): scored again", name, ", ".join(need))
        return None
    rows = previous[previous["model"].astype(str) == name].reset_index(drop=True)
    if len(rows) != len(queries) or not set(queries.columns) <= set(rows.columns):
        return None
    if any(_texts(rows[c]) != _texts(queries[c]) for c in queries.columns):
        log.info("model %s: the scores in the output folder are of other queries: scored again", name)
        return None
    extra = [c for c in rows.columns if c != "model" and c not in queries.columns]
    table = pd.concat([queries.reset_index(drop=True), rows[extra]], axis=1)
    return runner.label_scores(table, name, queries)


def missing_values(scores, lpr) -> str:
    """Which models lack LPRs, and for which option words they have no probability."""
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
