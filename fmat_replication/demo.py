"""Stage ``demo`` (rule demo_models): the offline demo's tiny models, knowing every configured
study's words (:func:`build_demo`), and their markers (:func:`demo_models`)."""
from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

from fmat.errors import InputError


def build_demo(models: Mapping[str, tuple[str, str]], tables: Sequence, out_dir: str | os.PathLike,
               threads: int | None = None) -> dict[str, dict]:
    """Build the demo's tiny models (:func:`fmat.tiny.build_demo_models`) knowing every word of
    ``tables``; ``models`` maps slugs to ``(name, family)``. Returns ``{slug: marker record}``."""
    from fmat import tiny

    if threads:
        import torch

        torch.set_num_threads(int(threads))
    families = list(dict.fromkeys(fam for _, fam in models.values()))
    unknown = [f for f in families if f not in tiny.FAMILIES]
    if unknown:
        raise InputError(f"unknown tiny model famil{'y' if len(unknown) == 1 else 'ies'} {unknown}",
                         where="config.models[].tiny", fix=f"use one of {', '.join(tiny.FAMILIES)}")
    from fmat.agreement import fixture_words

    # the agreement check's verbs and nouns too, so that the demo models can take it
    built = tiny.build_demo_models(out_dir, demo_words(tables, extra=fixture_words()), families=families)
    records = {}
    for slug, (name, fam) in models.items():
        path = built[tiny.FAMILIES[fam][1]]
        records[slug] = {"name": name, "slug": slug, "revision": None, "path": str(path),
                         "tiny": fam, "source": "fmat.tiny"}
    return records



def demo_words(tables: Sequence, extra: Iterable[str] = ()) -> list[str]:
    """Every word the demo models must know: the MASK, TARGET and ATTRIB words of the query
    tables (and each whitespace token of a phrase), plus ``extra``; sorted, unique."""
    words: set[str] = set()
    for table in tables:
        for col in ("M_word", "T_word", "A_word"):
            if col in table.columns:
                for value in table[col].dropna().astype(str).unique():
                    words.add(value)
                    words.update(value.split())
    words.update(str(w) for w in extra)
    return sorted(w for w in words if w.strip())


def demo_models(query_paths: Sequence, outputs: Sequence, *, models: Mapping[str, tuple[str, str]],
                out_dir: str | os.PathLike, threads: int | None = None) -> None:
    """Rule demo_models: build the tiny models from every study's query table; one marker per
    model (``outputs``, named ``<slug>.json``)."""
    from pathlib import Path

    from fmat.io import read_table

    from .scripts import write_json

    records = build_demo(models, [read_table(p) for p in query_paths], out_dir, threads=threads)
    for path in outputs:
        write_json(records[Path(path).stem], path)
