"""Stage ``report`` (rules report_study, report_index): one page, ``results/reports/{study}.html``
or ``results/reports/index.html``. The page is a plain function of the files its rule declares
(:func:`fmat_replication.pages.study.study_page`, :func:`fmat_replication.pages.overview.overview_page`),
written without Quarto by a Jinja2 template or with Quarto (``reports/study.qmd``,
``reports/index.qmd``): :func:`fmat_replication.pages.render.render_page`; config ``report_engine``."""

from __future__ import annotations

from typing import Mapping

from .pages.render import render_page


def report_page(out, inputs: Mapping, params: Mapping, *, engine: str = "auto", log=None) -> str:
    """Write one report page; returns the engine used.

    Parameters
    ----------
    out : path
        The page (``results/reports/{study}.html`` or ``index.html``).
    inputs : mapping
        The rule's input files by name: a path, or a list of paths (kept a list); an empty list
        (``recovery`` without a world file) is None. ``source`` (the Quarto document, an input so
        that editing it renders again) is left out.
    params : mapping
        The page's other arguments (``study`` or ``studies``, ``demo``, ``device``, ...): a
        ``study`` makes a study page, else the overview.
    engine : {"auto", "quarto", "offline"}
        The renderer (config ``report_engine``).
    log : path, optional
        The rule's log (named by a Quarto failure).
    """

    args = {}
    for name, value in inputs.items():
        if name == "source":
            continue
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            args[name] = str(value)
        else:
            paths = [str(v) for v in value]
            args[name] = None if name == "recovery" and not paths else paths
    args.update(params)
    return render_page("study" if "study" in args else "index", out, args, engine=engine, log_file=log)
