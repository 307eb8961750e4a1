"""A report page: a title, a template and the template's context (:class:`fmat.html.Page`).

Only the page functions (:func:`.study.study_page`, :func:`.overview.overview_page`) build one,
from the files their rule declares. It is written as one self-contained HTML file without Quarto
(:meth:`Page.html`) or as the body of a Quarto document (:meth:`Page.markdown`; ``reports/{study,
index}.qmd``, ``reports/page.lua``): the same headings, tables, figures and verdict cells by
construction, no HTML read back (``tests/test_quarto.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fmat import html
from fmat.html import Heading

from .html import TEMPLATES

__all__ = ["Heading", "Page", "TOC_LEVELS", "TOC_TITLE", "page_path"]

#: the table of contents' title and levels (Quarto's defaults: :mod:`fmat.html`)
TOC_TITLE, TOC_LEVELS = html.TOC_TITLE, html.TOC_LEVELS


@dataclass
class Page(html.Page):
    """A report page (:class:`fmat.html.Page`) whose template is one of the replication's
    (``templates/``), searched before the library's."""

    folders: tuple[str, ...] = (str(TEMPLATES),)


def page_path(path: str | Path, root: str | Path | None = None) -> str:
    """A file's path as a page shows it: relative to ``root`` (default: the current folder, where
    the page is rendered), else its name only; a page holds no absolute local path."""
    p, base = Path(path).resolve(), Path(root or Path.cwd()).resolve()
    return p.relative_to(base).as_posix() if p.is_relative_to(base) else p.name
