"""A report page as data: a title and an ordered list of blocks, written two ways.

The page functions (:func:`fmat_replication.pages.study.study_page`,
:func:`fmat_replication.pages.overview.overview_page`) build a :class:`Page` from the files their
rule declares; nothing else makes content. A page is then written either

- as pandoc markdown (:meth:`Page.markdown`), which the Quarto documents ``reports/study.qmd`` and
  ``reports/index.qmd`` print from one ``#| output: asis`` cell: headings become markdown
  headings (Quarto's table of contents lists them), HTML goes into pandoc raw blocks
  (```` ```{=html} ````) that pandoc passes through untouched; or
- as one self-contained HTML file without Quarto (:meth:`Page.html`, the Jinja2 template
  ``templates/page.html.j2``): the same blocks in the same order, under a title block and a table
  of contents with Quarto's ids and classes (``#title-block-header``, ``nav#TOC``).

Both come from the same blocks, so the two pages have the same headings, tables, figures and
verdict cells by construction (``tests/test_quarto.py`` compares them in a browser).
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from .html import render

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


@dataclass(frozen=True)
class Html:
    """A fragment of HTML, put into the page as it is (already escaped by whoever made it)."""

    html: str


@dataclass(frozen=True)
class Text:
    """A paragraph of text. Plain words, with two inline marks that markdown and the offline page
    read alike: ```code``` and ``*emphasis*``; everything else is escaped offline."""

    text: str


Block = Union[Heading, Html, Text]


@dataclass
class Page:
    """A report page: its ``title`` (the title block) and its ``blocks``, in order.

    Parameters
    ----------
    title : str
        The page's title (the ``<title>`` and the title block; the Quarto documents set the same
        one in their YAML header).
    blocks : list of Heading, Html or Text
        What the page shows, top to bottom.
    """

    title: str
    blocks: list = field(default_factory=list)

    # -- building -------------------------------------------------------------------------

    def heading(self, text: str, id: str, level: int = 2) -> None:
        """Add a section heading (listed in the table of contents)."""
        self.blocks.append(Heading(level, text, id))

    def show(self, html: str) -> None:
        """Add an HTML fragment."""
        self.blocks.append(Html(str(html)))

    def text(self, *paragraphs: str) -> None:
        """Add paragraphs of text (:class:`Text`)."""
        self.blocks.extend(Text(p) for p in paragraphs)

    @classmethod
    def from_body(cls, title: str, body: str) -> "Page":
        """A page from the HTML body a template wrote: each section heading (an ``<h2>`` or
        ``<h3>`` with an ``id``, alone on its line) becomes a :class:`Heading`, what lies between
        them an :class:`Html` block, in order."""
        page = cls(title)
        last = 0
        for m in _HEADING.finditer(body):
            page._html(body[last : m.start()])
            page.heading(_html.unescape(m.group(3)), m.group(2), level=int(m.group(1)))
            last = m.end()
        page._html(body[last:])
        return page

    @classmethod
    def from_template(cls, title: str, template: str, context: dict) -> "Page":
        """The template ``template`` (``templates/``) filled with ``context``, as a page (:meth:`from_body`)."""
        return cls.from_body(title, render(template, **context))

    def _html(self, fragment: str) -> None:
        if fragment.strip():
            self.show(fragment.strip())

    # -- reading ----------------------------------------------------------------------------

    def toc(self) -> list[Heading]:
        """The headings the table of contents lists, in order."""
        return [b for b in self.blocks if isinstance(b, Heading) and b.level in TOC_LEVELS]

    def markdown(self) -> str:
        """The page as pandoc markdown (what an ``output: asis`` cell of a Quarto document prints)."""
        return "\n\n".join(_markdown(b) for b in self.blocks) + "\n"

    def html(self) -> str:
        """The page as one self-contained HTML document (no Quarto): template ``page.html.j2``."""
        from markupsafe import Markup

        body = [
            {"kind": "heading", "level": b.level, "id": b.id, "text": b.text}
            if isinstance(b, Heading)
            else {"kind": "html", "html": Markup(b.html if isinstance(b, Html) else text_html(b.text))}
            for b in self.blocks
        ]
        return render("page.html.j2", title=self.title, toc_title=TOC_TITLE, toc=self.toc(), blocks=body) + "\n"


#: a section heading a template writes: ``<h2 id="x">Text</h2>`` alone on its line
_HEADING = re.compile(r'^<h([23]) id="([^"]+)">(.*?)</h\1>$', re.MULTILINE)
_INLINE = re.compile(r"`([^`]+)`|\*([^*]+)\*")


def text_html(text: str) -> str:
    """A :class:`Text` paragraph as HTML: escaped, ```code``` and ``*emphasis*`` as pandoc reads them."""
    from markupsafe import Markup, escape

    out, last = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[last : m.start()]))
        out.append(
            Markup("<code>{}</code>").format(m.group(1)) if m.group(1) is not None else Markup("<em>{}</em>").format(m.group(2))
        )
        last = m.end()
    out.append(escape(text[last:]))
    return str(Markup("<p>{}</p>").format(Markup("").join(out)))


def raw_block(html: str) -> str:
    """``html`` in a pandoc raw HTML block, its fence longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", html)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{{=html}}\n{html}\n{fence}"


def _markdown(block: Block) -> str:
    if isinstance(block, Heading):
        text = re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", block.text)  # the heading's words, not markdown
        return f"{'#' * block.level} {text} {{#{block.id}}}"
    if isinstance(block, Html):
        return raw_block(block.html)
    return block.text


def page_path(path: str | Path, root: str | Path | None = None) -> str:
    """A file's path as a page shows it: relative to ``root`` (default: the current folder, where
    the page is rendered), else its name only; a page holds no absolute local path."""
    p, base = Path(path).resolve(), Path(root or Path.cwd()).resolve()
    return p.relative_to(base).as_posix() if p.is_relative_to(base) else p.name
