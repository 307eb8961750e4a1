"""What each verdict generalizes over: the paper's inference ("these words in these models")
beside the concept-level one ("the concept": ``inference: crossed``, the words and templates a
random factor crossed with the models; docs/calibration.md, docs/reports.md).

The analysis stage writes the crossed rows as the figure table ``crossed`` (results shape,
:func:`fmat.analyses.crossed_variant`); :func:`concept_rows` pairs each headline row of it (model
``all``) with the same row of the paper's inference in ``stats.parquet`` and gives it a verdict
key, :func:`concept_counts` counts them. Data only: the page's words are in the templates
(``concept_table.html.j2``, ``study.html.j2``, ``overview.html.j2``).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

from fmat.analyses import CONCEPT_VERDICTS, concept_side_by_side, concept_verdict

from ..formats import missing, number, p_cell

#: the verdict keys, in the order the counts list them (the templates word them)
VERDICTS = CONCEPT_VERDICTS
#: a number's verdict at both levels (the library's, so that ``fmat study --report`` judges alike)
verdict_key = concept_verdict


def _ci(lo, hi) -> str:
    return "" if missing(lo) or missing(hi) else f"[{number(lo)}, {number(hi)}]"


def _p(p) -> str:
    return "" if missing(p) else p_cell(p)


def concept_rows(stats: pd.DataFrame, crossed: pd.DataFrame | None) -> list[dict]:
    """One dict per headline row of the crossed table (model ``all``) that ``stats`` (the
    paper's inference) also holds (:func:`fmat.analyses.concept_side_by_side`): statistic,
    condition, the value, the paper's CI and p, the crossed CI and p (text) and the verdict key
    (:func:`fmat.analyses.concept_verdict`; ``concept_table.html.j2`` words it)."""
    return [
        {
            "statistic": str(r.statistic),
            "condition": str(r.condition),
            "value": number(r.value),
            "paper_ci": _ci(r.ci_low, r.ci_high),
            "paper_p": _p(r.p),
            "crossed_ci": _ci(r.ci_low_crossed, r.ci_high_crossed),
            "crossed_p": _p(r.p_crossed),
            "verdict": str(r.verdict),
        }
        for r in concept_side_by_side(stats, crossed).itertuples(index=False)
    ]


def concept_counts(rows: Iterable[Mapping]) -> dict:
    """The rows' verdicts counted: ``{holds, lost, neither, gained, paper_significant, total}``."""
    keys = [str(r["verdict"]) for r in rows]
    counts = {v: keys.count(v) for v in VERDICTS}
    counts["paper_significant"] = counts["holds"] + counts["lost"]
    counts["total"] = len(keys)
    return counts


__all__ = ["VERDICTS", "concept_counts", "concept_rows", "verdict_key"]
