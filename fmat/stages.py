"""The stages of one study, in order, each one short function:

=============  =====================================================  ==========================
stage          what it makes                                          function
=============  =====================================================  ==========================
design         the loaded study file and its query table              :func:`design`
score          one model's scores of the query table                  :func:`score`
LPR            the LPRs (or LPBS) with the file's ``lpr:`` options    :func:`lpr`
reliability    ICC among the models, alpha among the items            :func:`reliability`
analyse        the analysis the file's ``analysis:`` block names      :func:`analyse`
page           one self-contained HTML page of the study              :func:`page`
=============  =====================================================  ==========================

:func:`fmat.run_study` (and so ``fmat study``) runs them all, ``fmat pilot`` runs them on tiny
models that learned a planted world, and the replication's workflow runs the same functions
one rule each (``lpr_stage``, ``reliability_stage``, ``analysis``). What each stage computes
lives in the library module it names (:mod:`fmat.pipeline`, :mod:`fmat.analyses`,
:mod:`fmat.study_page`); a stage only joins it to the next.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

import pandas as pd

from . import analyses, pipeline, runner
from .errors import FmatError, InputError
from .study import Study, load_study

__all__ = ["analyse", "analysis_failed", "design", "lpr", "page", "reliability", "score"]


def design(study, criteria_dir: str | os.PathLike | None = None) -> Study:
    """Stage design: the study file loaded and checked (its query table is ``.queries``), before
    any model loads; a :class:`fmat.study.Study` is returned as it is.

    ``criteria_dir``: the folder of the criterion tables its word lists name
    (:func:`fmat.study.load_study`).

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


def score(
    source,
    study: Study,
    *,
    name: str | None = None,
    device=None,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    threads: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Stage score: one model's scores of the study's query table, with the file's ``score:``
    options (:func:`fmat.runner.score_tables`: the model loaded once, the rows as
    :func:`fmat.run` returns them, column ``model`` = ``name``)."""
    sid = str(getattr(study, "id", None) or "study")
    options = {sid: dict(getattr(study, "score", None) or {})}
    settings = dict(device=device, batch_size=batch_size, max_tokens=max_tokens, threads=threads, progress=progress)
    out = None
    for _, scores in runner.score_tables(source, {sid: study.queries}, options, name=name, **settings):
        out = scores
    return out


def lpr(study, scores: pd.DataFrame) -> pd.DataFrame:
    """Stage LPR: the LPRs (or LPBS) of every model's scores with the file's ``lpr:`` options
    (:func:`fmat.pipeline.lpr_table`; R: ``summary.fmat``).

    Examples
    --------
    Two models' scores (here made up) and a study whose ``lpr:`` block keeps the TARGET words apart:

    >>> import pandas as pd, fmat
    >>> from fmat import stages
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> study = {"lpr": {"target_pair": False}, "reliability": {"item": "T_word"}}
    >>> stages.lpr(study, scores)[["model", "T_word", "LPR"]].round(3)
      model T_word    LPR
    0     a  nurse -0.693
    1     a  pilot  1.099
    2     b  nurse -0.336
    3     b  pilot  0.916
    >>> details, stats = stages.reliability(study, scores, stages.lpr(study, scores), sid="S")
    >>> stats["statistic"].tolist()
    ['ICC_average', 'ICC_single', 'ICC_average', 'ICC_single', 'alpha', 'alpha_std']
    """
    return pipeline.lpr_table(study, scores)


def reliability(
    study, scores: pd.DataFrame, lpr: pd.DataFrame, sid: str | None = None, icc: bool | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stage reliability -> ``(details, stats)``: ICC among the models and alpha among the items
    of the file's ``reliability:`` block (:func:`fmat.pipeline.reliability_tables`). ``icc``:
    by default, where the scores hold two or more models."""
    if icc is None:
        icc = scores["model"].nunique() > 1 if "model" in scores else True
    return pipeline.reliability_tables(study, scores, lpr, sid=sid, icc=icc)


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
    block names, on the scores, LPRs and criterion tables, its rows after the reliability rows
    (:func:`fmat.analyses.analysis_stage`). With ``crossed=True`` and an analysis that ran and
    declares ``inference: crossed``, also the concept-level rows as the figure table
    ``crossed`` (:func:`fmat.analyses.crossed_variant`; its notes join ``status["notes"]``)."""
    stats, figures, status = analyses.analysis_stage(study, scores, lpr, reliability, criteria, sid=sid)
    if crossed and status.get("implemented"):
        rows, notes = analyses.crossed_variant(study, scores, lpr, criteria)
        status["notes"] += notes
        if rows is not None:
            figures["crossed"] = rows
    return stats, figures, status


def analysis_failed(study, reliability: pd.DataFrame, err: FmatError, *, sid: str, why: str = ""):
    """What :func:`analyse` gives when the analysis cannot run on these scores (one model for a
    model-level analysis, a criterion table missing): ``(stats, figures, status)`` with the
    reliability rows kept and the reason (plus ``why``) as the status' one note, ``run`` False."""
    name = str((getattr(study, "analysis", None) or {}).get("name") or "")
    note = f"the analysis {name} did not run: {err.message}" + (f" (fix: {err.fix})" if err.fix else "") + why
    stats = analyses.check_results_table(reliability, where=f"reliability rows of study {sid}")
    status = {"study": sid, "analysis": name, "implemented": True, "run": False, "notes": [note], "figures": {}}
    return stats, {}, status


def page(path, study, queries, lpr, stats, *, models, figures, status) -> Path:
    """Stage page: the study's self-contained HTML page (:func:`fmat.study_page.write_study_page`)."""
    from .study_page import write_study_page  # here: jinja2 and matplotlib only for a page

    return write_study_page(path, study, queries, lpr, stats, models=models, figures=figures, status=status)
