"""Stage ``report`` (rules report_study, report_index): one page, ``reports/study.py`` or
``reports/index.py`` -> ``results/reports/{study,index}.html``, rendered by
:func:`fmat.report.render` (Quarto when ``quarto`` is on PATH, else offline; config
``report_engine``). Every file the page reads is an input of its rule and reaches the page as a
parameter: the page builds no path of its own."""
from __future__ import annotations

from typing import Mapping


def render_page(source, out, page: Mapping, inputs: Mapping, *, engine: str = "auto", log=None) -> None:
    """Render the page: its parameters are ``page`` (words and numbers) and ``inputs`` (its
    rule's input files, comma-joined where there are several)."""
    from fmat.report import render

    params = dict(page)
    for name, value in inputs.items():
        params[name] = value if isinstance(value, str) else ",".join(str(v) for v in value)
    render(source, out, params, engine=engine, log_file=log, output_fix=OUTPUT_FIX)


#: what to do when a page cannot be written (the workflow's outputs have fixed places: no -o)
OUTPUT_FIX = ("free space on the disk that holds results/ (or make its folder writable), then run the same "
              "snakemake command again: it goes on from the pages not yet written")
