"""A figure's caption in `snakemake --report` (report/figures.rst), read from the figures.json the
figures rule wrote (:func:`fmat_replication.pages.drawing.write_figures`). rules/report.smk puts
:data:`FIGURE_CAPTION` into the workflow's config; pickled into a script job's config it is an
empty dict (a job has no use for it), so no job's environment has to import this module to start.
"""

from __future__ import annotations

import json
from pathlib import Path

from fmat.errors import InputError

_RST_MARKUP = str.maketrans({c: "\\" + c for c in "\\*`_|"})


def figure_caption(folder, name: str) -> str:
    """The caption of figure ``name`` from ``folder/figures.json`` (rule report_figures' output):
    its title and caption as one reStructuredText paragraph, markup escaped (``*** p < .001`` is
    text). "" where there is no figures.json or no figure ``name``; a damaged figures.json is an
    InputError naming it and the fix."""
    path = Path(folder) / "figures.json"
    if not path.is_file():
        return ""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
        item = next((i for i in items if i["name"] == name), None)
    except (ValueError, TypeError, KeyError) as err:
        raise InputError(
            f"{path}: not the figures rule's list of figures ({err}); delete the folder {path.parent} and run "
            "the workflow again (rule report_figures draws it again)"
        ) from err
    if item is None:
        return ""
    title, caption = (str(item.get(k) or "").strip() for k in ("title", "caption"))
    text = f"{title}. {caption}" if title and caption else title or caption
    return " ".join(text.split()).translate(_RST_MARKUP)


class _Reader:
    """:func:`figure_caption` as a config value: pickled (into a script job's config) as ``{}``."""

    __call__ = staticmethod(figure_caption)

    def __reduce__(self):
        return dict, ()


#: the value of config ``_figure_captions`` (:data:`fmat_replication.config.FIGURE_CAPTIONS`)
FIGURE_CAPTION = _Reader()
