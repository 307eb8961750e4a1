"""What each verdict generalizes over: the paper's inference ("these words in these models")
beside the concept-level one (``inference: crossed``; docs/calibration.md, docs/reports.md), as
data (the templates word it): the rows of :func:`fmat.study_page.concept_section` and their counts.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

from fmat.analyses import CONCEPT_VERDICTS, concept_verdict
from fmat.study_page import concept_section

#: the verdict keys, in the order the counts list them (the templates word them)
VERDICTS = CONCEPT_VERDICTS
#: a number's verdict at both levels (the library's, so that ``fmat study --report`` judges alike)
verdict_key = concept_verdict


def concept_rows(stats: pd.DataFrame, crossed: pd.DataFrame | None) -> list[dict]:
    """One dict per headline row of the crossed table (model ``all``) that ``stats`` (the
    paper's inference) also holds: the rows of :func:`fmat.study_page.concept_section`."""
    section = concept_section(stats, {"crossed": crossed}) if crossed is not None else None
    return section["rows"] if section else []


def concept_counts(rows: Iterable[Mapping]) -> dict:
    """The rows' verdicts counted: ``{holds, lost, neither, gained, paper_significant, total}``."""
    keys = [str(r["verdict"]) for r in rows]
    counts = {v: keys.count(v) for v in VERDICTS}
    counts["paper_significant"] = counts["holds"] + counts["lost"]
    counts["total"] = len(keys)
    return counts


__all__ = ["VERDICTS", "concept_counts", "concept_rows", "verdict_key"]
