"""The stages of one study, in order, each one short function:

=============  =====================================================  ==============================
stage          what it makes                                          function
=============  =====================================================  ==============================
design         the loaded study file and its query table              :func:`design`
criteria       the criterion tables its analysis reads, checked       :func:`criteria`
score          one model's scores of the query table                  :func:`score`
LPR            the LPRs (or LPBS) with the file's ``lpr:`` options    :func:`lpr_table`
reliability    ICC among the models, alpha among the items            :func:`reliability_tables`
analyse        the analysis the file's ``analysis:`` block names      :func:`analyse`
page           one self-contained HTML page of the study              :func:`page`
=============  =====================================================  ==============================

:func:`fmat.run_study`, ``fmat pilot`` and the replication's workflow run the same functions. A
stage is the only place that reads the study's blocks (:func:`study_options`); the modules it
calls get data, not the study.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from . import analyses, io, lpbs, lpr, runner
from .errors import FmatError, InputError
from .reliability import ITEM_KEYS, alpha_rows, icc_models, icc_rows, item_key_map, lpr_reliability
from .results import model_slug
from .study import Study, load_study

__all__ = [
    "analyse",
    "analyse_or_note",
    "check_study_criteria",
    "criteria",
    "criterion_table_path",
    "design",
    "lpr_table",
    "page",
    "reliability_tables",
    "score",
    "study_criteria_tables",
    "study_options",
    "summary_function",
]

log = logging.getLogger(__name__)


def study_options(study: Any, key: str) -> dict:
    """The study's ``lpr`` / ``reliability`` / ``score`` block as a dict ({} when absent): from a
    :class:`fmat.study.Study` (or anything with that attribute) or a mapping.

    Examples
    --------
    >>> study_options({"lpr": {"mask_pair": True}}, "lpr"), study_options({}, "score")
    ({'mask_pair': True}, {})
    """
    value = getattr(study, key, None)
    if value is None and isinstance(study, Mapping):
        value = study.get(key)
    return dict(value or {})


def summary_function(study: Any):
    """The contrast a study's scores get: :func:`fmat.lpr.summary` (LPR), or
    :func:`fmat.lpbs.summary` (LPBS, Kurita et al. 2019) for ``score: {method: lpbs}``.

    Examples
    --------
    >>> summary_function({"score": {"method": "lpbs"}}).__module__, summary_function({}).__module__
    ('fmat.lpbs', 'fmat.lpr')
    """
    return lpbs.summary if study_options(study, "score").get("method", "fmat") == "lpbs" else lpr.summary


def design(study, criteria_dir: str | os.PathLike | None = None) -> Study:
    """Stage design: the study file loaded and checked (:func:`fmat.study.load_study`; its query
    table is ``.queries``); a :class:`fmat.study.Study` is returned as it is.

    Examples
    --------
    >>> from fmat import stages
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> study = stages.design(path)
    >>> study.id, len(study.queries), stages.design(study) is study
    ('S', 8, True)
    """
    if isinstance(study, Study):
        return study
    if not Path(study).is_file():
        raise InputError(f"study file not found: {study}", fix="give a study file such as config/studies/3A.yaml")
    return load_study(study, criteria_dir=criteria_dir)  # its errors name the file (analysis options included)


def criterion_table_path(folder, name: str) -> Path:
    """``<folder>/<name>.parquet``, or ``.csv`` / ``.tsv`` where only that is there (a table of
    your own, saved from R or a spreadsheet); the parquet path when none is."""
    paths = [Path(folder or "resources/criteria") / f"{name}{ext}" for ext in (".parquet", ".csv", ".tsv")]
    return next((path for path in paths if path.is_file()), paths[0])


def study_criteria_tables(study, criteria_dir) -> dict[str, pd.DataFrame]:
    """The criterion tables the study's analysis reads (:func:`fmat.analyses.criteria_needed`),
    from ``criteria_dir`` (:func:`criterion_table_path`); a missing one is an error now."""
    spec = dict(getattr(study, "analysis", None) or {})
    name = str(spec.get("name") or "")
    if not name or name not in analyses.available():
        return {}
    tables = {}
    for t in analyses.criteria_needed(name, spec.get("options")):
        path = criterion_table_path(criteria_dir, t)
        if not path.is_file():
            there = sorted({f.stem for f in path.parent.glob("*") if f.suffix in (".parquet", ".csv", ".tsv")})
            raise InputError(
                f"analysis {name!r} reads criterion table {t!r}, which is not there: {path} (nor .csv, .tsv)"
                + analyses.nearest(t, there),
                where="analysis.options",
                fix="correct the table: name in analysis.options, give the folder that holds it (criteria_dir= / "
                "--criteria-dir), or build it (docs/criteria.md)",
            )
        tables[t] = io.read_table(path)
    return tables


def check_study_criteria(study, tables: Mapping[str, pd.DataFrame]) -> None:
    """The criterion tables fit the study's analysis options and items
    (:func:`fmat.analyses.check_criteria`), before any model loads; the error names the study file."""
    spec = dict(getattr(study, "analysis", None) or {})
    name = str(spec.get("name") or "")
    if name and name in analyses.available():
        where = f"{getattr(study, 'path', None) or 'study file'}: analysis.options"
        analyses.check_criteria(name, spec.get("options"), tables, getattr(study, "items", None), where=where)


def criteria(study, criteria_dir) -> tuple[dict[str, pd.DataFrame], str]:
    """Stage criteria -> ``(tables, "")``: the criterion tables the analysis reads, checked; or
    ``({}, why)`` where one is missing: the analysis will not run, the rest does."""
    try:
        tables, skipped = study_criteria_tables(study, criteria_dir), ""
    except InputError as err:
        tables, skipped = {}, f"{err.message} (fix: {err.fix})"
        log.warning("the analysis will not run: %s; the scores, LPRs and reliability are computed", skipped)
    check_study_criteria(study, tables)  # their columns, numbers and items: before any model loads
    return tables, skipped


def score(
    source,
    queries: pd.DataFrame,
    options: Mapping | None = None,
    *,
    name: str | None = None,
    device=None,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    threads: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Stage score: one model's scores of a study's query table with the file's ``score:`` options
    (:func:`fmat.runner.score_tables`: the rows as :func:`fmat.run` returns them, ``model`` = ``name``)."""
    key = str(name or source)
    settings = dict(device=device, batch_size=batch_size, max_tokens=max_tokens, threads=threads, progress=progress)
    [(_, out)] = runner.score_tables(source, {key: queries}, {key: dict(options or {})}, name=name, **settings)
    return out


def lpr_table(study: Any, scores: pd.DataFrame) -> pd.DataFrame:
    """LPRs (or LPBS) of one study, with the study file's ``lpr`` options; its phrases' item keys
    in ``attrs["item_keys"]`` (kept in parquet files: :func:`fmat.reliability.with_item_keys`).

    Examples
    --------
    As R FMAT's ``summary(scores)`` (LPR of the two MASK groups):

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> lpr_table({"lpr": {"target_pair": False}}, scores)[["model", "M_word", "T_word", "LPR"]].round(3)
      model       M_word T_word    LPR
    0     a  man - woman  nurse -0.693
    1     a  man - woman  pilot  1.099
    2     b  man - woman  nurse -0.336
    3     b  man - woman  pilot  0.916
    """
    out = summary_function(study)(scores, **study_options(study, "lpr"))
    keys = item_key_map(_items(study))
    if keys:
        out.attrs[ITEM_KEYS] = keys
    return out


def reliability_tables(
    study: Any, scores: pd.DataFrame | None, lpr: pd.DataFrame, sid: str | None = None, icc: bool | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stage reliability -> ``(details, stats)``: the raw outputs (column ``analysis`` = ICC /
    alpha), and the same numbers in the :mod:`fmat.results` shape (``model`` a slug).

    - ICC among the models (agreement, average and single) on the raw log probabilities
      (condition ``all``: the paper's ICC, footnote 1) and on the LPRs (condition ``LPR``); by
      default only where the scores hold two or more models;
    - alpha among the study file's ``reliability.item`` split by its ``by``, on the LPRs of
      ``reliability.lpr`` (default: the ``lpr`` options); with ``model`` in ``by``, also over all
      models (model ``all``: Tables 3-4's "Overall"); ``reliability.names`` words the conditions.

    Examples
    --------
    ICC as R FMAT's ``ICC_models()``, alpha as its ``LPR_reliability()``:

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> study = {"lpr": {"target_pair": False}, "reliability": {"item": "T_word"}}
    >>> details, stats = reliability_tables(study, scores, lpr_table(study, scores), sid="S")
    >>> stats[["statistic", "condition", "value", "n"]].head(4).round(3)
         statistic condition  value    n
    0  ICC_average       all  0.978  4.0
    1   ICC_single       all  0.957  4.0
    2  ICC_average       LPR  0.982  2.0
    3   ICC_single       LPR  0.965  2.0
    >>> stats["statistic"].tolist()[4:]
    ['alpha', 'alpha_std']
    """
    sid = str(sid or getattr(study, "id", "") or "")
    if icc is None:
        icc = scores["model"].nunique() > 1 if scores is not None and "model" in scores else True
    parts, details = [], []
    if icc:
        for condition, data in (("all", scores), ("LPR", lpr)):
            res = icc_models(data, type="agreement", unit="both")
            parts.append(icc_rows("", res, condition=condition))
            details.append(res.assign(analysis="ICC", condition=condition))
    opts = study_options(study, "reliability")
    item = opts.get("item", "query")
    by = opts.get("by") or []
    by = [by] if isinstance(by, str) else list(by)
    alpha_data = lpr
    lpr_opts = opts.get("lpr")
    if lpr_opts and dict(lpr_opts) != study_options(study, "lpr"):  # e.g. log P before the contrast
        alpha_data = summary_function(study)(scores, **lpr_opts)
    items = _items(study)
    splits = [by] + ([[b for b in by if b != "model"]] if "model" in by else [])
    names = dict(opts.get("names") or {})
    seen: set[str] = set()
    for split in splits:
        alpha = lpr_reliability(alpha_data, item=item, by=split or None, items=items)
        parts.append(alpha_rows("", alpha, by=split, names=names))
        details.append(alpha.assign(analysis="alpha", item=item, by=",".join(split)))
        seen.update(str(v) for b in split for v in alpha[b])
    unknown = [k for k in names if str(k) not in seen]
    if unknown:
        raise InputError(
            f"reliability.names: {', '.join(map(repr, unknown))} is not a value of the by columns {by}",
            where=f"study {sid}",
            fix="name values that the alpha splits have (a query template, an M_word pair "
            "such as 'like - dislike', a group), or remove the entry",
        )
    stats = pd.concat(parts, ignore_index=True).assign(study=sid)  # the rows are this study's (labelled here, once)
    stats["model"] = [m if m == "all" else model_slug(m) for m in stats["model"]]
    detail = pd.concat(details, ignore_index=True)
    detail.insert(0, "study", sid)
    for col in detail.columns:
        if detail[col].dtype == object:
            detail[col] = detail[col].map(lambda v: v if v is None or isinstance(v, str) else str(v)).astype("string")
    return detail, stats


def analyse(
    study,
    scores: pd.DataFrame,
    lpr: pd.DataFrame,
    reliability: pd.DataFrame,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    *,
    sid: str | None = None,
    crossed: bool = False,
):
    """Stage analyse -> ``(stats, figures, status)``: the analysis the file's ``analysis:``
    block names (:func:`fmat.analyses.analysis_stage`); with ``crossed=True``, also its
    concept-level rows as the figure table ``crossed`` (:func:`fmat.analyses.crossed_variant`)."""
    stats, figures, status = analyses.analysis_stage(study, scores, lpr, reliability, criteria, sid=sid)
    if crossed and status.get("implemented"):
        rows, notes = analyses.crossed_variant(study, scores, lpr, criteria)
        status["notes"] += notes
        if rows is not None:
            figures["crossed"] = rows
    return stats, figures, status


def analyse_or_note(study, scores, lpr, reliability, criteria=None, *, sid: str, crossed=False, skipped="", n_models=2):
    """:func:`analyse`, or where the analysis cannot run (one model for a model-level analysis;
    ``skipped``: why a criterion table is missing) the reliability rows and the reason as the
    status' one note (``run`` False)."""
    try:
        if skipped:
            raise InputError(skipped)
        return analyse(study, scores, lpr, reliability, criteria, sid=sid, crossed=crossed)
    except FmatError as err:
        why = "; it was given one model" if n_models < 2 and not skipped else ""
        name = str((getattr(study, "analysis", None) or {}).get("name") or "")
        note = f"the analysis {name} did not run: {err.message}" + (f" (fix: {err.fix})" if err.fix else "") + why
        stats = analyses.check_results_table(reliability, where=f"reliability rows of study {sid}")
        status = {"study": sid, "analysis": name, "implemented": True, "run": False, "notes": [note], "figures": {}}
        log.warning("%s", note)
        return stats, {}, status


def page(path, study, queries, lpr, stats, *, models, figures, status) -> Path:
    """Stage page: the study's self-contained HTML page (:func:`fmat.study_page.write_study_page`)."""
    from .study_page import write_study_page  # here: jinja2 and matplotlib only for a page

    return write_study_page(path, study, queries, lpr, stats, models=models, figures=figures, status=status)


def _items(study: Any) -> pd.DataFrame | None:
    """A study's items table (slot, word, item), or None (a study given as a plain mapping)."""
    items = getattr(study, "items", None)
    return items if isinstance(items, pd.DataFrame) else None
