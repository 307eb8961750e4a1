"""The one Jinja2 environment of every page: the library's study page (:mod:`fmat.study_page`) and
the replication's pages (``fmat_replication.pages``). Every page extends ``document.html.j2`` and
writes its headings with the macro ``heading``; a :class:`Page` writes it as one HTML file or as
a Quarto document's body. Every value is escaped; numbers become text by :mod:`fmat.formatting`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from . import formatting

#: the library's templates (``fmat/templates/``)
TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=None)
def environment(*folders: str) -> jinja2.Environment:
    """The templates' environment (one for each search path): ``folders`` first (e.g. the
    replication's templates), then the library's (:data:`TEMPLATES`)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([*map(str, folders), str(TEMPLATES)]),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(
        cell=_cell,
        num=formatting.number,
        p=formatting.p_cell,
        p_sentence=formatting.p_sentence,
        short=formatting.short,
        md_text=md_text,
    )
    return env


def _cell(value, column="", na: str = "NA"):
    """The filter ``cell``: :func:`fmat.formatting.cell` (``na`` when missing); Markup as it is."""
    return value if isinstance(value, Markup) else formatting.cell(str(column), value, na=na)


def table_data(df, max_rows: int | None = None) -> dict:
    """A table as a template's data (the macro ``results_table``): its columns, its rows (the
    values as they are, the first ``max_rows``), how many more there are; rows None for no table.

    >>> import pandas as pd
    >>> table_data(pd.DataFrame({"p": [0.01, 0.5], "n": [3.0, 4.0]}), max_rows=1)
    {'columns': ['p', 'n'], 'rows': [[0.01, 3.0]], 'more': 1}
    """
    if df is None or len(df) == 0:
        return {"columns": [], "rows": None, "more": 0}
    d = df.head(max_rows) if max_rows else df
    rows = [list(r) for r in d.itertuples(index=False, name=None)]
    return {"columns": [str(c) for c in d.columns], "rows": rows, "more": len(df) - len(d)}


def md_text(text) -> Markup:
    """Words as markdown text (a section heading for Quarto): markdown's own marks backslashed, so
    that pandoc reads the words as written.

    >>> print(md_text("The paper's *table* <2A> & [notes]"))
    The paper's \\*table\\* \\<2A\\> & \\[notes\\]
    """
    return Markup(re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", str(text)))


#: the table of contents' title (Quarto's default)
TOC_TITLE = "Table of contents"
#: the heading levels the table of contents lists (Quarto's default toc-depth is 3)
TOC_LEVELS = (2, 3)


@dataclass(frozen=True)
class Heading:
    """A section heading: ``level`` (2 or 3), its ``text`` and the element ``id`` it gets."""

    level: int
    text: str
    id: str


@dataclass
class Page:
    """A page, written as one self-contained HTML file (:meth:`html`) or as the body of a Quarto
    document (:meth:`markdown`) from the same template; no HTML is read back.

    >>> template = environment().from_string(
    ...     '{% extends "document.html.j2" %}{% from "macros.html.j2" import heading with context %}'
    ...     '{% block content %}{{ heading(2, "r", "Results") }}<p>r = {{ r|num }}</p>{% endblock %}')
    >>> page = Page("A page", template, {"r": 0.7412})
    >>> print(page.markdown())
    ## Results {#r}
    <BLANKLINE>
    ```{=html}
    <p>r = 0.741</p>
    ```
    <BLANKLINE>
    >>> page.toc()
    [Heading(level=2, text='Results', id='r')]
    >>> '<h2 id="r">Results</h2><p>r = 0.741</p>' in page.html()
    True

    Parameters
    ----------
    title : str
        The ``<title>`` and the title block (a Quarto document sets it in its YAML header).
    template : str or jinja2.Template
        A template (a name in the templates' folders) that extends ``document.html.j2`` and fills
        its block ``content``.
    context : dict
        What the template shows (data; the template writes every sentence).
    folders : tuple of str
        The folders of templates searched before the library's (:func:`environment`).
    """

    title: str
    template: str | jinja2.Template
    context: dict = field(default_factory=dict)
    folders: tuple[str, ...] = ()

    def _render(self, quarto: bool, fence: str = "```") -> tuple[str, list[dict]]:
        template = (
            self.template
            if isinstance(self.template, jinja2.Template)
            else environment(*self.folders).get_template(self.template)
        )
        toc: list[dict] = []
        text = template.render(
            **self.context, page_title=self.title, toc_title=TOC_TITLE, toc_levels=TOC_LEVELS, toc=toc, quarto=quarto, fence=fence
        )
        return text, toc

    def toc(self) -> list[Heading]:
        """The headings the table of contents lists, in order."""
        _, toc = self._render(quarto=False)
        return [Heading(h["level"], str(h["text"]), str(h["id"])) for h in toc if h["level"] in TOC_LEVELS]

    def html(self) -> str:
        """The page as one self-contained HTML document (no Quarto)."""
        return self._render(quarto=False)[0].strip() + "\n"

    def markdown(self) -> str:
        """The page as the body of a Quarto document: pandoc markdown, the content in raw HTML
        blocks whose fence is longer than any run of backticks inside them."""
        fence = "```"
        text, _ = self._render(quarto=True, fence=fence)
        inside = longest_backticks(text, fence)
        if inside >= len(fence):
            fence = "`" * (inside + 1)
            text, _ = self._render(quarto=True, fence=fence)
        empty = re.compile(rf"^{fence}\{{=html\}}\n\s*^{fence}$\n?", re.MULTILINE)  # a section's empty raw block
        text = text.replace(fence + "{=html}\n\n", fence + "{=html}\n")  # a heading's line end, inside the block
        return empty.sub("", text).strip() + "\n"


def longest_backticks(text: str, fence: str) -> int:
    """The longest run of backticks in ``text`` outside its fence lines (``fence``, alone or
    opening a raw HTML block)."""
    lines = [ln for ln in text.splitlines() if ln not in (fence, fence + "{=html}")]
    return max((len(m) for m in re.findall(r"`+", "\n".join(lines))), default=0)


def render(template_name: str, *folders: str, **context: Any) -> str:
    """The template ``template_name`` (in ``folders`` or :data:`TEMPLATES`) rendered with
    ``context``, without surrounding whitespace."""
    return environment(*map(str, folders)).get_template(template_name).render(**context).strip()
