"""The study file read raw, and its planted table: what every family's oracle starts from
(:mod:`fmat.oracle`). Reads the YAML itself: not :func:`fmat.study.load_study`, nor the query
design."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd
import yaml

from fmat.errors import InputError
from fmat.world import Plant, SimpleStudy, planted_logp, world_rows

#: the slots of a study file and the query-table column of each slot's word
SLOTS = {"MASK": "M_word", "TARGET": "T_word", "ATTRIB": "A_word"}


def read_study_file(path: str | os.PathLike) -> dict:
    """The study file's YAML as a mapping (no schema check: the workflow checks study files)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise InputError(f"cannot read the study file: {err}", where=str(path), fix="give a readable YAML study file") from err
    if not isinstance(data, dict) or "queries" not in data:
        raise InputError("not a study file (no queries key)", where=str(path), fix="give a study file (docs/study-files.md)")
    return data


def _words(spec, criteria: Mapping[str, pd.DataFrame] | None, where: str) -> list[tuple[str, str]]:
    """(word, item key) of one group's word list as written."""
    if isinstance(spec, dict) and "range" in spec:
        a, b = spec["range"]
        return [(str(y), str(y)) for y in range(int(a), int(b) + 1)]
    if isinstance(spec, dict) and "criterion" in spec:
        table = (criteria or {}).get(str(spec["criterion"]))
        if table is None:
            raise InputError(
                f"the word list reads criterion table {spec['criterion']!r}, which was not given",
                where=where,
                fix="pass the criterion tables (criteria=) to the oracle",
            )
        return [(str(w), str(w)) for w in table[str(spec["column"])].tolist()]
    words = spec if isinstance(spec, list) else [spec]
    return [(str(w["phrase"]), str(w.get("item", w["phrase"]))) if isinstance(w, dict) else (str(w), str(w)) for w in words]


def raw_queries(data: Mapping, criteria: Mapping[str, pd.DataFrame] | None = None) -> SimpleStudy:
    """The study's rows from its YAML words: one per template x MASK word x TARGET word x
    ATTRIB word, with each word's group, its position in the group (``M_pos``, ``T_pos``,
    ``A_pos``) and item key; ``items`` maps phrases to item keys (for ``per_item`` plants)."""
    rows, items = [], []
    for k, entry in enumerate(data["queries"]):
        templates = entry["query"] if isinstance(entry["query"], list) else [entry["query"]]
        slots = {}
        for slot in SLOTS:
            if slot in entry:
                slots[slot] = [
                    (g, pos, w, item)
                    for g, spec in entry[slot].items()
                    for pos, (w, item) in enumerate(_words(spec, criteria, f"queries[{k}].{slot}.{g}"))
                ]
                items += [(slot, w, item) for _, _, w, item in slots[slot]]
        for template in templates:
            for combo in itertools.product(*slots.values()):
                row = {"query": str(template)}
                for slot, (g, pos, w, item) in zip(slots, combo):
                    c = SLOTS[slot]
                    row.update({slot: str(g), c: w, c[0] + "_pos": pos, c[0] + "_item": item})
                rows.append(row)
    q = pd.DataFrame(rows)
    it = pd.DataFrame(items, columns=["slot", "word", "item"]).drop_duplicates(["slot", "word"])
    return SimpleStudy(str(data["id"]), q, it)


def planted_table(
    data: Mapping, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """The raw rows (:func:`raw_queries`) for every model, with ``lp`` = the planted log
    probability (:func:`fmat.world.planted_logp`) and ``model``."""
    study = raw_queries(data, criteria)
    rows = world_rows(study, plant, criteria)  # the model-free parts, once for all models
    parts = [study.queries.assign(model=str(m), lp=planted_logp(study, plant, str(m), criteria, rows)) for m in models]
    return pd.concat(parts, ignore_index=True)
