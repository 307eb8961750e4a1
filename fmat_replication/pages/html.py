"""The one way the report pages build HTML: the Jinja2 templates in ``templates/``, in the one
environment of every page (:func:`fmat.html.environment`). Every value a template prints is
escaped (``autoescape=True``); HTML another template made comes as :class:`markupsafe.Markup`.
No module of :mod:`fmat_replication.pages` writes table markup itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from fmat import html

#: the folder of the templates (``<name>.html.j2``)
TEMPLATES = Path(__file__).with_name("templates")


def environment() -> jinja2.Environment:
    """The templates' environment: :func:`fmat.html.environment` with this folder first."""
    return html.environment(str(TEMPLATES))


def render(template_name: str, **context: Any) -> str:
    """The template ``template_name`` (a file in :data:`TEMPLATES`, or the library's) rendered with
    ``context``, as an HTML fragment without surrounding whitespace."""
    return html.render(template_name, str(TEMPLATES), **context)
