"""A figure's caption in `snakemake --report` (report/figures.rst), read from the figures.json
the figures rule wrote (:func:`fmat_replication.pages.drawing.write_figures`).

rules/report.smk puts :data:`FIGURE_CAPTION` (which calls :func:`figure_caption`) into the
workflow's config. Snakemake pickles the config into every script job; there it is an empty dict
(a job has no use for it), so no job's environment has to import this module to start.
"""

from __future__ import annotations

import json
from pathlib import Path

from fmat.errors import InputError

_RST_MARKUP = str.maketrans({c: "\\" + c for c in "\\*`_|"})


def figure_caption(folder, name: str) -> str:
    """The caption of figure ``name`` in ``snakemake --report``, read from ``folder/figures.json``
    (rule report_figures' output): its title and caption as one reStructuredText paragraph
    (``*``, backquotes, ``_``, ``|`` and backslashes escaped: ``*** p < .001`` is text, not
    markup). "" where the folder has no figures.json or lists no figure ``name``; a damaged
    figures.json is an InputError naming it and the fix."""
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
    title = str(item.get("title") or "").strip()
    caption = str(item.get("caption") or "").strip()
    text = f"{title}. {caption}" if title and caption else title or caption
    return " ".join(text.split()).translate(_RST_MARKUP)


class _Reader:
    """:func:`figure_caption` as a config value: pickled (into a script job's config) as ``{}``."""

    def __call__(self, folder, name: str) -> str:
        return figure_caption(folder, name)

    def __reduce__(self):
        return dict, ()


#: the value of config ``_figure_captions`` (:data:`fmat_replication.config.FIGURE_CAPTIONS`)
FIGURE_CAPTION = _Reader()
