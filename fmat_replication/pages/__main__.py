"""A report page's Quarto markdown on stdout, from a finished run (what ``reports/page.lua`` reads):
``python -m fmat_replication.pages study 2A`` prints the study page, ``python -m
fmat_replication.pages index`` the overview, from the files the workflow wrote under the repository
root (:func:`.inputs.hand_inputs`; run from the root or from ``reports/``). A missing input prints
the error with its fix and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from fmat.errors import EXIT_USAGE, FmatError, InputError

from .inputs import hand_inputs, study_of
from .overview import overview_page
from .study import study_page

USAGE = "usage: python -m fmat_replication.pages study STUDY | index"


def page_markdown(kind: str, study: str | None = None) -> str:
    """The markdown of page ``kind`` (``study``, with its id, or ``index``) from the run's files."""
    if kind == "study" and study:
        return study_page(str(study), hand_inputs("study", str(study))).markdown()
    if kind == "index" and not study:
        inputs = hand_inputs("index")
        studies = [study_of(p) for p in inputs["stats"]]
        return overview_page(studies, inputs, models=[Path(c).stem for c in inputs["cards"]]).markdown()
    raise InputError(f"no page {' '.join(filter(None, (kind, study)))!r}", fix=USAGE)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        sys.stdout.write(page_markdown(*args[:2]) if 1 <= len(args) <= 2 else page_markdown("", None))
    except FmatError as err:
        print(f"fmat_replication.pages: {err}", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
