"""Stage ``demo`` (rule demo_model): the offline demo's tiny models, knowing every configured
study's words, trained on the configured world's planted associations (:func:`demo_model`;
untrained, random weights, without a world), and their markers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Sequence

from fmat import tiny
from fmat.agreement import fixture_words
from fmat.errors import InputError
from fmat.io import read_table
from fmat.plant import Plant, check_plant, load_world, training_sentences

from .queries import load_study_file
from .scripts import write_json


def demo_words(tables: Sequence, extra: Iterable[str] = ()) -> list[str]:
    """Every word the demo models must know: the MASK, TARGET and ATTRIB words of the query
    tables (and each whitespace token of a phrase), plus ``extra``; sorted, unique."""
    words = {str(w) for w in extra}
    for table in tables:
        for col in {"M_word", "T_word", "A_word"} & set(table.columns):
            for value in table[col].dropna().astype(str).unique():
                words.update([value, *value.split()])
    return sorted(w for w in words if w.strip())


def demo_model(
    query_paths: Sequence,
    study_paths: Sequence,
    world_path,
    criteria_dir,
    *,
    name: str,
    slug: str,
    family: str,
    seed: int,
    steps: int,
    folder,
    marker,
    threads: int | None = None,
    batch: int = 128,
) -> None:
    """Rule demo_model: one tiny model of ``family`` in ``folder`` knowing every word of the
    studies' query tables (and the agreement check's), and its marker. With a world file, it is
    trained on :func:`world_sentences`; without one, its weights are random."""

    log = logging.getLogger(__name__)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    if family not in tiny.FAMILIES:
        raise InputError(
            f"unknown tiny model family {family!r}", where="config.models[].tiny", fix=f"use one of {', '.join(tiny.FAMILIES)}"
        )
    words = demo_words([read_table(p) for p in query_paths], extra=fixture_words())
    record = {"name": name, "slug": slug, "revision": None, "path": str(folder), "tiny": family, "source": "fmat.tiny"}
    if world_path:
        sentences = world_sentences(study_paths, world_path, criteria_dir, name)
        log.info(
            "%s: training a tiny %s model on %d sentences (%d contexts) of the world %s, %d steps of %d",
            name,
            family,
            len(sentences),
            len(sentences.contexts),
            world_path,
            steps,
            batch,
        )
        tiny.build_trained_model(folder, family, words, sentences, seed=seed, steps=steps, batch_size=batch)
        record.update(world=str(world_path), trained=True)
    else:
        tiny.build_tiny_model(folder, family, words, seed=0)
        record.update(world=None, trained=False)
    meta = tiny.read_meta(folder)
    if meta.get("not_single"):
        log.warning("%s: %d word(s) are not one token: %s", name, len(meta["not_single"]), ", ".join(meta["not_single"][:10]))
    record["training"] = meta.get("trained")
    write_json(record, marker)
    log.info("%s: written %s", name, Path(folder))


def world_sentences(study_paths: Sequence, world_path, criteria_dir, model: str):
    """The training sentences of ``model`` (:func:`fmat.plant.training_sentences`) for every
    study with its plant in the world file (a study the world does not name: planted at zero)."""

    world = load_world(world_path)
    studies = [load_study_file(p, criteria_dir) for p in study_paths]
    named = {str(e.per_item["table"]) for st in studies for e in (world.plant(st.id) or Plant(st.id)).effects if e.per_item}
    criteria = {n: read_table(Path(criteria_dir) / f"{n}.parquet") for n in sorted(named)}
    plants = []
    for st in studies:
        plant = world.plant(st.id)
        if plant is None:
            first = next(iter(world.plants.values()))
            plant = Plant(st.id, variation=dict(first.variation), samples=first.samples, seed=first.seed)
        check_plant(plant, st, criteria, where=str(world_path))
        plants.append((st, plant))
    return training_sentences(plants, model, criteria)
