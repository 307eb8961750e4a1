"""Stage ``report`` (rules report_study, report_index, report_figures, report_figures_index): a
page ``results/reports/{study}.html`` or ``index.html`` from the files its rule declares
(:func:`fmat_replication.pages.render.render_page`), and its figures, drawn before by their own
rules (:mod:`fmat_replication.pages.drawing`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Mapping, Sequence

from .pages.drawing import draw_index, draw_study
from .pages.render import render_page


def page_inputs(inputs: Mapping) -> dict:
    """A rule's named inputs as a page takes them: a path as a string, a list of paths as a list;
    an empty list (``recovery`` without a world file) left out; ``source`` (the Quarto document,
    an input so that editing it renders the page again) left out."""
    out = {}
    for name, value in inputs.items():
        if name == "source":
            continue
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            out[name] = str(value)
        elif list(value) or name != "recovery":
            out[name] = [str(v) for v in value]
    return out


def report_page(out, inputs: Mapping, params: Mapping, *, engine: str = "auto", log=None) -> str:
    """Write one report page ``out``; returns the engine used. ``inputs``: the rule's input files by
    name (:func:`page_inputs`); ``params``: the page's other arguments (a ``study`` makes a study
    page, else the overview); ``engine``: "auto", "quarto" or "offline" (config
    ``report_engine``); ``log``: the rule's log, named by a Quarto failure."""
    args = {"inputs": page_inputs(inputs), **params}
    return render_page("study" if "study" in args else "index", out, args, engine=engine, log_file=log)


def bundle_pages(pages, out) -> list:
    """Rule report_pages: every page copied into the folder ``out``, so that their links to each
    other work inside ``snakemake --report``. Returns the copies."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [shutil.copyfile(page, out / Path(page).name) for page in pages]


def draw_figures(out, inputs: Mapping, *, study: str | None = None, studies: Sequence[str] = ()) -> list:
    """Rules report_figures (``study``) and report_figures_index (``studies``): a page's figures
    in the folder ``out`` (:func:`fmat_replication.pages.drawing.draw_study`, ``draw_index``)."""
    given = page_inputs(inputs)
    return draw_study(study, given, out) if study else draw_index(list(studies), given, out)
