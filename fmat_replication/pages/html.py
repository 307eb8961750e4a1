"""The one way the report pages build HTML: the Jinja2 templates in ``templates/``.

Every value a template prints is escaped (``autoescape=True``), in text and in attributes; a
template that embeds HTML another template made gets it as :class:`markupsafe.Markup`. No
module of :mod:`fmat_replication.pages` writes table markup itself.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

#: the folder of the templates (``<name>.html.j2``)
TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment (made once): autoescaped, block tags take no line of output,
    a name a template uses but is not given is an error."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render(template_name: str, **context: Any) -> str:
    """The template ``template_name`` (a file in :data:`TEMPLATES`) rendered with ``context``, as
    an HTML fragment without surrounding whitespace."""
    return environment().get_template(template_name).render(**context).strip()
