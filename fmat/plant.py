"""Planted associations: known truth for a study design (parameter recovery).

A *world file* (YAML; JSON Schema ``fmat/schemas/world.schema.json``; reference:
docs/planting.md) states, in a study file's own terms (its MASK, TARGET and ATTRIB groups and
words), which associations hold in a made-up language. From it this module computes, for every
row of the study's query table and every model, the probability of the [MASK] option in that
world (:func:`planted_scores`: a table shaped like :func:`fmat.run`'s), and samples training
sentences in which those probabilities hold (:func:`training_sentences`). Tiny masked LMs
trained on those sentences (:func:`fmat.tiny.train_masked_lm`) learn the world; the study's
pipeline run on them should then find what was planted and nothing else.

The world's log-weight of option word ``w`` in context ``c`` (the sentence with [MASK] open)
for model ``m`` is::

    s(w, c, m) = word[w] + item[c, w] + model_item[m, c, w]
                 + sum over effects e that apply:  sign_e(w, c) * (lpr_e * factor_e(w, c) + shift[m, e]) / 2**k_e

and ``P(w | c) = exp(s) / sum of exp(s) over the options of c`` (the sentences of ``c`` only
ever hold its options). ``sign_e`` is the product over the ``k_e`` slots of the effect's
``contrast`` of +1 (group A), -1 (group B); an effect applies to a row whose group in each of
those slots is A or B. So an effect on one slot makes ``log P(A word) - log P(B word)`` differ
by ``lpr`` (with ``mask_pair``), and an effect on two slots makes the difference of those
differences ``lpr`` (e.g. Study 3A: male minus female, of career minus family). ``factor_e`` is
1, or the item's criterion value (``per_item``), or a numeric word (``trend``: years).
``word``, ``item``, ``shift`` and ``model_item`` are normal draws with the SDs of
``variation`` (``words``, ``items``, ``models``, ``model_items``), seeded by the world's seed,
the word, the context and the model's name: the same world gives the same numbers.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import analyses, checking, validate
from .errors import FmatError, InputError
from .pipeline import lpr_table, reliability_tables
from .runner import concat_scores, label_scores
from .study import _json_path

SCHEMA_NAME = "world.schema.json"
#: an LPR divided by SIGMA is a d (Bao 2024, Step 3)
SIGMA = 1.414
#: training sentences per option word of a context
SAMPLES = 20
#: default SDs of the world's random parts (log-probability units)
VARIATION = {"words": 0.5, "items": 0.3, "models": 0.1, "model_items": 0.15}
_SLOT_COLUMN = {"MASK": "M_word", "TARGET": "T_word", "ATTRIB": "A_word"}


@dataclass
class Effect:
    """One planted association (see the module docstring)."""

    contrast: dict[str, tuple[str, str]]
    lpr: float
    per_item: dict | None = None
    trend: dict | None = None
    where: dict[str, list[str]] = field(default_factory=dict)
    #: the size as the world file states it: ``d`` (in sigma units: ``lpr = d * sigma``), else None
    d: float | None = None
    sigma: float = SIGMA

    @property
    def stated(self) -> str:
        """The size in the units the world file states it, e.g. ``d = 0.8 (sigma units: LPR = 0.8 x 1.414 = 1.131)``."""
        if self.d is None:
            return f"LPR = {self.lpr:g} (d = LPR / sigma = {self.lpr / self.sigma:.3g} in sigma units)"
        return f"d = {self.d:g} (sigma units: LPR = {self.d:g} x {self.sigma:g} = {self.lpr:.3g})"

    @property
    def key(self) -> str:
        """A text that seeds each model's shift of the effect: its size and form, not the groups
        it contrasts, so that two studies planting the same size over shared sentences (3B and
        3C share their arts phrases; 1B and 1C their names, from two tables) plant those sentences alike."""
        form = {k: v for k, v in (self.per_item or {}).items() if k != "table"}
        return json.dumps([len(self.contrast), round(self.lpr, 9), form, self.trend], sort_keys=True)


@dataclass
class Plant:
    """What a world plants for one study."""

    study: str
    effects: list[Effect] = field(default_factory=list)
    variation: dict = field(default_factory=lambda: dict(VARIATION))
    samples: int = SAMPLES
    seed: int = 0
    description: str = ""
    expect: list[dict] = field(default_factory=list)

    @property
    def null(self) -> bool:
        """True when nothing is planted (a null control): no effect, or only zero LPRs."""
        return all(e.lpr == 0 for e in self.effects)


@dataclass
class World:
    """A world file: a plant per study id."""

    plants: dict[str, Plant]
    path: Path | None = None
    description: str = ""

    def plant(self, study: str) -> Plant | None:
        return self.plants.get(str(study))


@dataclass
class SimpleStudy:
    """A study for this module from a query table alone (:func:`fmat.query`); a study file's
    :class:`fmat.study.Study` works too (it also knows the item key of each phrase)."""

    id: str
    queries: pd.DataFrame
    items: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["slot", "word", "item"]))


#: the range of each effect size and SD a world file may state, and why (docs/planting.md,
#: "The ranges of the numbers"); every other number must be finite and at most LARGEST in size
RANGES = {
    "d": (
        -5.0,
        5.0,
        "Bao (2024)'s largest d is about 2; at d = 5 (an LPR of 7.1 with sigma 1.414) one option is "
        "1,200 times as likely as the other, and the rarer one gets almost no training sentence",
    ),
    "lpr": (
        -10.0,
        10.0,
        "at an LPR of 10 one option is 22,000 times as likely as the other: even samples: 100000 "
        "gives the rarer one a handful of sentences",
    ),
    "sigma": (
        0.1,
        10.0,
        "sigma turns a d into an LPR (Bao 2024: 1.414, the SD of the LPRs); above 10 a d of 1 is already an LPR of 10",
    ),
    "variation": (
        0.0,
        2.0,
        "an SD of 2 log-probability units makes a word two SDs above the mean 55 times as likely as "
        "the mean one: variation that large swamps the effects and leaves rare options without a training sentence",
    ),
}
#: the largest number a world file may state anywhere (years, percentages and seeds are far below it)
LARGEST = 1e15


def _numbers(data, path=()):
    """``(path, value)`` of every number in a parsed YAML file (booleans are not numbers)."""
    if isinstance(data, Mapping):
        for k, v in data.items():
            yield from _numbers(v, (*path, str(k)))
    elif isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            yield from _numbers(v, (*path, i))
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield path, data


def _shown(x) -> str:
    try:
        return f"{x:g}"
    except OverflowError:  # an integer beyond a float's range
        return "a number of more than 300 digits"


def check_world_numbers(data: Mapping, path: object = "world") -> None:
    """Every number of a world file is finite, and every effect size (``d``, ``lpr``, ``d x sigma``),
    ``sigma`` and variation SD lies in its range (:data:`RANGES`): an InputError naming the file,
    the key and the range. JSON Schema's minimum and maximum let NaN through (every comparison
    with it is false), so this checks them itself, before the schema."""
    sigma = data.get("sigma", SIGMA) if isinstance(data, Mapping) else SIGMA
    for parts, x in _numbers(data):
        where = f"{path}: {_json_path(list(parts))}"
        last = str(parts[-1]) if parts else "a number"
        key, name = None, last
        if (len(parts) == 2 or (len(parts) == 4 and parts[0] == "studies")) and parts[-2] == "variation":
            key, name = "variation", f"variation {last}"
        elif parts == ("sigma",) or (
            len(parts) == 5 and parts[0] == "studies" and parts[2] == "effects" and last in ("d", "lpr")
        ):
            key = last
        if isinstance(x, float) and not math.isfinite(x):  # nan, inf, -inf (YAML's .nan, .inf)
            raise InputError(
                f"{name} is {x}, not a finite number",
                where=where,
                fix="give a number (YAML's .nan and .inf are not; docs/planting.md, 'The ranges of the numbers')",
            )
        rng = RANGES.get(key) if key else None
        if rng is not None:
            lo, hi, why = rng
            if not lo <= x <= hi:
                raise InputError(
                    f"{name} = {_shown(x)} is outside its range [{lo:g}, {hi:g}]",
                    where=where,
                    fix=f"give {name} a number from {lo:g} to {hi:g} ({why}; docs/planting.md, 'The ranges of the numbers')",
                )
            if key == "d" and isinstance(sigma, (int, float)) and math.isfinite(sigma) and abs(x * sigma) > RANGES["lpr"][1]:
                raise InputError(
                    f"d = {x:g} with sigma = {sigma:g} is an LPR of {x * sigma:g}, outside the LPR's range "
                    f"[{RANGES['lpr'][0]:g}, {RANGES['lpr'][1]:g}]",
                    where=where,
                    fix=f"give a smaller d or sigma ({RANGES['lpr'][2]}; docs/planting.md, 'The ranges of the numbers')",
                )
        elif abs(x) > LARGEST:
            raise InputError(
                f"{last} is {_shown(x)}, larger than any number a world states ({LARGEST:g})",
                where=where,
                fix="give the number you mean (a year, a percentage, a seed); docs/planting.md, 'The ranges of the numbers'",
            )


@lru_cache(maxsize=1)
def schema() -> dict:
    """The world-file JSON Schema (draft 2020-12)."""
    return json.loads(resources.files("fmat").joinpath("schemas", SCHEMA_NAME).read_text(encoding="utf-8"))


def load_world(path: str | os.PathLike) -> World:
    """Read and check a world file (structure only; :func:`check_plant` checks a plant against
    its study). Every problem is an :class:`~fmat.errors.InputError` naming the file and key."""
    import jsonschema

    path = Path(path)
    if not path.is_file():
        raise InputError(f"world file not found: {path}", fix="check the path (docs/planting.md has an example)")
    data = validate.load_yaml(validate.read_text(path, "world file"), str(path))
    if not isinstance(data, dict):
        raise InputError(
            "a world file must be a mapping (studies: {<id>: {effects: [...]}})",
            where=str(path),
            fix="see docs/planting.md for a complete example",
        )
    check_expectations(data, path)  # before the schema: its oneOf message would not say which kinds
    check_world_numbers(data, path)  # before the schema too: NaN passes its minimum and maximum
    problems = validate.schema_problems(jsonschema.Draft202012Validator(schema()), data)
    if problems:
        lines = [f"{_json_path(p) or '(top)'}: {m}" for p, m in problems]
        raise InputError(
            "the world file does not follow its schema:\n  " + "\n  ".join(validate.truncated(lines)),
            where=str(path),
            fix="see docs/planting.md for the keys and an example",
        )
    return world_from_mapping(data, path)


def world_from_mapping(data: Mapping, path: Path | None = None) -> World:
    """A :class:`World` from a parsed world file (already checked against the schema)."""
    check_world_numbers(data, path or "world")
    sigma = float(data.get("sigma", SIGMA))
    variation = {**VARIATION, **{k: float(v) for k, v in dict(data.get("variation") or {}).items()}}
    samples = int(data.get("samples", SAMPLES))
    seed = int(data.get("seed", 0))
    check_expectations(data, path or "world")
    plants = {}
    for sid, body in dict(data["studies"]).items():
        body = dict(body or {})
        effects = []
        for i, e in enumerate(body.get("effects") or []):
            if ("lpr" in e) == ("d" in e):
                raise InputError(
                    "an effect gives its size as exactly one of lpr or d",
                    where=f"{path or 'world'}: studies.{sid}.effects[{i}]",
                    fix="write lpr: <number> (a log probability ratio) or d: <number> (lpr = d * sigma)",
                )
            if e.get("per_item") and e.get("trend"):
                raise InputError(
                    "an effect has either per_item or trend, not both",
                    where=f"{path or 'world'}: studies.{sid}.effects[{i}]",
                    fix="plant two effects instead",
                )
            lpr = float(e["lpr"]) if "lpr" in e else float(e["d"]) * sigma
            effects.append(
                Effect(
                    contrast={k: tuple(v) for k, v in e["contrast"].items()},
                    lpr=lpr,
                    per_item=dict(e["per_item"]) if e.get("per_item") else None,
                    trend=dict(e["trend"]) if e.get("trend") else None,
                    where={k: [str(x) for x in v] for k, v in dict(e.get("where") or {}).items()},
                    d=float(e["d"]) if "d" in e else None,
                    sigma=sigma,
                )
            )
        plants[str(sid)] = Plant(
            study=str(sid),
            effects=effects,
            variation={**variation, **{k: float(v) for k, v in dict(body.get("variation") or {}).items()}},
            samples=int(body.get("samples", samples)),
            seed=seed,
            description=str(body.get("description", "")),
            expect=[dict(x) for x in (body.get("expect") or [])] + [dict(x) for x in (data.get("expect_all") or [])],
        )
    return World(plants=plants, path=path, description=str(data.get("description", "")))


# ----------------------------------------------------------------------------- the world's numbers


def _draw(seed: int, *parts: object) -> float:
    """A standard normal draw fixed by ``seed`` and the text of ``parts`` (the same word, context
    or model always gets the same draw, whichever study or table it comes in)."""
    key = "\x1f".join(map(str, parts)).encode("utf-8")
    return float(np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(key)]).standard_normal())


# numpy's SeedSequence (numpy/random/bit_generator.pyx) for an entropy of two uint32 words and the
# default pool of four, and PCG64's seeding (numpy/random/src/pcg64/pcg64.h), written out over
# arrays: _draws gives every row the draw _draw gives it, about 4x faster (1C's 400,000 draws a
# world of 12 models took 5 s, most of it building a SeedSequence and a PCG64 per draw). The
# normal itself is still numpy's (its ziggurat, from the state set on one PCG64), so a change of
# numpy's streams changes both alike; tests/test_plant.py holds the two equal.
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_M128 = (1 << 128) - 1


def _seed_words(seed: int, crcs: np.ndarray) -> np.ndarray:
    """``SeedSequence([seed, crc]).generate_state(8, uint32)`` for every crc (rows x 8 uint32)."""
    u32 = np.uint32
    const = [_INIT_A]

    def hashmix(value: np.ndarray) -> np.ndarray:
        value = value ^ u32(const[0])
        const[0] = (const[0] * _MULT_A) & 0xFFFFFFFF
        value = value * u32(const[0])
        return value ^ (value >> u32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = u32(_MIX_L) * x - u32(_MIX_R) * y
        return r ^ (r >> u32(16))

    n = len(crcs)
    entropy = [np.full(n, seed & 0xFFFFFFFF, dtype=u32), crcs.astype(u32), np.zeros(n, u32), np.zeros(n, u32)]
    pool = [hashmix(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    out, hc = np.empty((n, 8), dtype=u32), _INIT_B
    for i in range(8):
        data = pool[i % 4] ^ u32(hc)
        hc = (hc * _MULT_B) & 0xFFFFFFFF
        data = data * u32(hc)
        out[:, i] = data ^ (data >> u32(16))
    return out


def _draws(seed: int, rows) -> np.ndarray:
    """``[_draw(seed, *parts) for parts in rows]`` as an array, computed over arrays (above)."""
    crcs = np.fromiter((zlib.crc32("\x1f".join(map(str, parts)).encode("utf-8")) for parts in rows), dtype=np.uint64)
    words = _seed_words(seed, crcs).astype(np.uint64)
    val = words[:, 0::2] | (words[:, 1::2] << np.uint64(32))  # little-endian pairs: 4 uint64 a row
    bits = np.random.PCG64(0)
    gen = np.random.Generator(bits)
    out = np.empty(len(crcs))
    for i, (s0, s1, i0, i1) in enumerate(val.tolist()):
        inc = ((((i0 << 64) | i1) << 1) | 1) & _M128  # pcg_setseq_128_srandom_r: two steps from 0
        state = ((inc + ((s0 << 64) | s1)) * _PCG_MULT + inc) & _M128
        bits.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc}, "has_uint32": 0, "uinteger": 0}
        out[i] = gen.standard_normal()
    return out


@lru_cache(maxsize=8)
def _item_draws(seed: int, contexts: tuple, words: tuple) -> np.ndarray:
    """The item draws of every row (the same for every model: computed once a study and seed;
    a world of 12 models drew them 12 times, half its time for 1C's 3,832 names). Read-only."""
    out = _draws(seed, [("item", c, w) for c, w in zip(contexts, words)])
    out.setflags(write=False)
    return out


def context_of(queries: pd.DataFrame) -> pd.Series:
    """Each row's context: its sentence with [MASK] open (query with TARGET and ATTRIB filled)."""
    out = queries["query"].astype(str)
    for slot, col in (("TARGET", "T_word"), ("ATTRIB", "A_word")):
        if col in queries.columns:
            out = pd.Series([q.replace("{" + slot + "}", str(w), 1) for q, w in zip(out, queries[col])], index=queries.index)
    return out


def _item_keys(study, slot: str, words: pd.Series) -> pd.Series:
    items = getattr(study, "items", None)
    if isinstance(items, pd.DataFrame) and len(items):
        sub = items[items["slot"] == slot]
        mapping = {str(w): str(k) for w, k in zip(sub["word"], sub["item"])}
        return words.astype(str).map(lambda w: mapping.get(w, w))
    return words.astype(str)


def check_plant(plant: Plant, study, criteria: Mapping[str, pd.DataFrame] | None = None, where: str = "world") -> None:
    """Every group, slot, criterion table and numeric word a plant names exists in its study."""
    q = study.queries
    for i, e in enumerate(plant.effects):
        at = f"{where}: studies.{plant.study}.effects[{i}]"
        for slot, pair in e.contrast.items():
            if slot not in q.columns:
                raise InputError(
                    f"contrast names the slot {slot}, which study {plant.study} does not have",
                    where=at,
                    fix=f"use a slot of the study: {', '.join(s for s in _SLOT_COLUMN if s in q.columns)}",
                )
            groups = list(dict.fromkeys(q[slot].astype(str)))
            bad = [g for g in pair if g not in groups]
            if bad:
                raise InputError(
                    f"contrast.{slot} names {', '.join(map(repr, bad))}, not a {slot} group of study {plant.study}",
                    where=at,
                    fix=f"use two of its {slot} groups: {', '.join(groups)}",
                )
        if e.per_item:
            table = str(e.per_item["table"])
            if criteria is None:
                pass  # the tables are checked where they are read (their job)
            elif table not in criteria:
                raise InputError(
                    f"per_item.table {table!r} is not available",
                    where=at,
                    fix="name a criterion table the workflow builds (resources/criteria/<name>.parquet) or pass it in criteria=",
                )
            t = criteria[table] if criteria is not None else pd.DataFrame()
            for col in [] if criteria is None else [str(e.per_item.get("key", "item")), str(e.per_item["column"])]:
                if col not in t.columns:
                    raise InputError(
                        f"per_item: the table {table!r} has no column {col!r}",
                        where=at,
                        fix=f"use one of its columns: {', '.join(map(str, t.columns))}",
                    )
        for slot, values in e.where.items():
            if slot == "query":
                known = list(dict.fromkeys(q["query"].astype(str)))
            elif slot in q.columns:
                col = _SLOT_COLUMN[slot]
                known = list(dict.fromkeys([*q[slot].astype(str), *q[col].astype(str), *_item_keys(study, slot, q[col])]))
            else:
                raise InputError(
                    f"where names {slot}, which study {plant.study} does not have",
                    where=at,
                    fix="use query or a slot of the study (MASK, TARGET, ATTRIB)",
                )
            bad = [v for v in values if v not in known]
            if bad:
                raise InputError(
                    f"where.{slot}: {', '.join(map(repr, bad[:5]))} is not a "
                    f"{'query template' if slot == 'query' else 'group, word or item of ' + slot} "
                    f"of study {plant.study}",
                    where=at,
                    fix=f"use values the study has, e.g. {', '.join(map(repr, known[:6]))}",
                )
        for spec in (e.per_item, e.trend):
            if spec and _SLOT_COLUMN[spec["slot"]] not in q.columns:
                raise InputError(
                    f"{'per_item' if spec is e.per_item else 'trend'}.slot {spec['slot']} is not a slot of study {plant.study}",
                    where=at,
                    fix="name a slot the study's queries fill",
                )
        if e.trend:
            words = pd.to_numeric(q[_SLOT_COLUMN[e.trend["slot"]]].astype(str), errors="coerce")
            if words.isna().all():
                raise InputError(
                    f"trend.slot {e.trend['slot']}: no word of that slot is a number",
                    where=at,
                    fix="a trend needs numeric words (e.g. the years of {range: [1800, 2019]})",
                )


def _factor(e: Effect, study, q: pd.DataFrame, criteria: Mapping[str, pd.DataFrame] | None) -> np.ndarray:
    if e.per_item:
        spec = e.per_item
        table = criteria[str(spec["table"])]
        values = dict(zip(table[str(spec.get("key", "item"))].astype(str), pd.to_numeric(table[str(spec["column"])])))
        keys = _item_keys(study, spec["slot"], q[_SLOT_COLUMN[spec["slot"]]])
        x = keys.map(values).astype(float).to_numpy()
        center = float(spec["center"]) if "center" in spec else float(np.nanmean(list(values.values())))
        scale = float(spec.get("scale", 1.0))
        return np.nan_to_num((x - center) / scale)  # an item without a value: no association
    if e.trend:
        x = pd.to_numeric(q[_SLOT_COLUMN[e.trend["slot"]]].astype(str), errors="coerce").to_numpy(dtype=float)
        center = float(e.trend.get("center", np.nanmean(x)))
        return np.nan_to_num((x - center) / float(e.trend.get("per", 1.0)))
    return np.ones(len(q))


def _matches(study, q: pd.DataFrame, slot: str, values: Sequence[str]) -> np.ndarray:
    """1 for the rows whose template (slot ``query``) or whose slot's group, word or item key is
    one of ``values``, else 0."""
    want = set(map(str, values))
    if slot == "query":
        return q["query"].astype(str).isin(want).to_numpy(dtype=float)
    col = _SLOT_COLUMN[slot]
    hit = q[slot].astype(str).isin(want) | q[col].astype(str).isin(want) | _item_keys(study, slot, q[col]).isin(want)
    return hit.to_numpy(dtype=float)


@dataclass(frozen=True)
class WorldRows:
    """What a study's rows are in a world whatever the model (:func:`world_rows`): computed once for
    all the models of :func:`planted_scores` (a 12-model world of 1C's 33,000 rows built each
    context 24 times over, a third of its time)."""

    ctx: list
    words: list
    fixed: np.ndarray  # the word and item terms, added in that order
    effects: list  # (effect, sign, factor) of each effect
    codes: np.ndarray  # each row's context, as a code
    first: np.ndarray  # each option word's first row in its context


def world_rows(study, plant: Plant, criteria: Mapping[str, pd.DataFrame] | None = None) -> WorldRows:
    """The parts of :func:`log_weights` no model changes, for every row of ``study.queries``:
    pass them to :func:`planted_logp` of each model of a world (the same numbers, to the bit)."""
    q = study.queries
    v, seed = plant.variation, plant.seed
    ctx = context_of(q).tolist()
    words = q["M_word"].astype(str).tolist()
    s = np.zeros(len(q))
    if v["words"]:
        uniq = sorted(set(words))
        cache = dict(zip(uniq, _draws(seed, [("word", w) for w in uniq])))
        s += v["words"] * np.array([cache[w] for w in words])
    if v["items"]:
        s += v["items"] * _item_draws(seed, tuple(ctx), tuple(words))
    effects = []
    for e in plant.effects:
        sign = np.ones(len(q))
        for slot, (a, b) in e.contrast.items():
            g = q[slot].astype(str).to_numpy()
            sign *= np.where(g == a, 1.0, np.where(g == b, -1.0, 0.0))
        for slot, values in e.where.items():
            sign *= _matches(study, q, slot, values)
        effects.append((e, sign, _factor(e, study, q, criteria)))
    codes, _ = pd.factorize(np.asarray(ctx, dtype=object))
    first = ~pd.DataFrame({"c": codes, "w": words}).duplicated(["c", "w"]).to_numpy()
    return WorldRows(ctx, words, s, effects, codes, first)


def log_weights(
    study, plant: Plant, model: str, criteria: Mapping[str, pd.DataFrame] | None = None, rows: WorldRows | None = None
) -> np.ndarray:
    """``s(w, c, model)`` of every row of ``study.queries`` (module docstring); ``rows``: the
    study's :func:`world_rows` in this world, when the caller has them already."""
    rows = rows if rows is not None else world_rows(study, plant, criteria)
    v, seed = plant.variation, plant.seed
    s = rows.fixed.copy()
    if v["model_items"]:
        s += v["model_items"] * _draws(seed, [("model", model, c, w) for c, w in zip(rows.ctx, rows.words)])
    for e, sign, factor in rows.effects:
        shift = v["models"] * _draw(seed, "shift", model, e.key) if v["models"] else 0.0
        s += sign * (e.lpr * factor + shift) / 2 ** len(e.contrast)
    return s


def planted_logp(
    study, plant: Plant, model: str, criteria: Mapping[str, pd.DataFrame] | None = None, rows: WorldRows | None = None
) -> np.ndarray:
    """log P(option | context) in the world, for every row of ``study.queries`` (natural log)."""
    rows = rows if rows is not None else world_rows(study, plant, criteria)
    s = log_weights(study, plant, model, criteria, rows)
    # each option word once per context (a word in two MASK groups is still one word); the
    # normaliser log sum exp(s) per context, stabilised by the context's maximum (vectorised:
    # a loop over contexts took seconds on the demo's 16,000)
    top = pd.Series(s).groupby(rows.codes, sort=False).transform("max").to_numpy()
    total = pd.Series(np.where(rows.first, np.exp(s - top), 0.0)).groupby(rows.codes, sort=False).transform("sum")
    return s - (top + np.log(total.to_numpy()))


def planted_scores(
    study, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """The scores table (:func:`fmat.run`'s shape) the world's probabilities would give: one
    block per model, ``prob`` and ``logp`` the planted ones, no OOV."""

    frames, rows = [], world_rows(study, plant, criteria)
    for m in models:
        logp = planted_logp(study, plant, str(m), criteria, rows)
        df = study.queries.copy()
        df["output"] = study.queries["M_word"].astype(str).to_numpy()
        df["token"] = df["output"]
        df["prob"] = np.exp(logp)
        df["token_id"] = -1
        df["logp"] = logp
        df["oov"] = False
        frames.append(label_scores(df, str(m), study.queries))
    return concat_scores(frames, models=[str(m) for m in models])


# ----------------------------------------------------------------------------- training sentences


@dataclass
class Sentences:
    """Training sentences of one model: each context once, with its options' counts."""

    contexts: list[str]  # sentence with "[MASK]" at the option's place
    options: list[list[str]]  # the option words of each context
    counts: list[np.ndarray]  # how many sentences of each option

    def __len__(self) -> int:
        return int(sum(int(c.sum()) for c in self.counts))

    def lines(self) -> Iterable[str]:
        """The sentences as text (each option in its place, as often as drawn)."""
        for c, opts, n in zip(self.contexts, self.options, self.counts):
            for w, k in zip(opts, n):
                for _ in range(int(k)):
                    yield c.replace("[MASK]", w, 1)


def training_sentences(
    plants: Sequence[tuple[Any, Plant]], model: str, criteria: Mapping[str, pd.DataFrame] | None = None, seed: int = 0
) -> Sentences:
    """Sentences in which every plant's probabilities hold for ``model``: for each context of
    each ``(study, plant)``, ``samples x options`` sentences with the options drawn from
    ``P(w | c)`` (multinomial; seeded by ``seed`` and the model's name). A context that two
    studies share (the same template and words) is planted once, by the first study."""

    rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(str(model).encode("utf-8"))])
    seen: dict[str, tuple[str, dict]] = {}
    clashes: list[str] = []
    out = Sentences([], [], [])
    for study, plant in plants:
        q = study.queries
        logp = planted_logp(study, plant, model, criteria)
        frame = pd.DataFrame({"c": context_of(q).to_numpy(), "w": q["M_word"].astype(str).to_numpy(), "lp": logp})
        frame = frame.drop_duplicates(["c", "w"])
        for c, sub in frame.groupby("c", sort=False):
            here = dict(zip(sub["w"], sub["lp"]))
            if c in seen:
                first, there = seen[c]
                if set(here) != set(there) or any(abs(here[w] - there[w]) > 1e-9 for w in here):
                    clashes.append(f"{c!r} ({first} and {study.id})")
                continue
            seen[c] = (str(study.id), here)
            p = np.exp(sub["lp"].to_numpy())
            p = p / p.sum()
            n = int(plant.samples) * len(p)
            out.contexts.append(str(c))
            out.options.append(sub["w"].tolist())
            out.counts.append(rng.multinomial(n, p))
    if clashes:
        logging.getLogger(__name__).warning(
            "%d context(s) are planted differently by two studies; the first study's plant is used: %s",
            len(clashes),
            "; ".join(clashes[:3]) + (" ..." if len(clashes) > 3 else ""),
        )
    return out


def expected_share(lpr: float) -> float:
    """P(A) among two options whose log ratio is ``lpr`` (for messages and docs)."""
    return 1.0 / (1.0 + math.exp(-lpr))


# ----------------------------------------------------------------------------- recovery

#: relative size tolerance of an expectation with a ``value`` judged without a confidence
#: interval (ours within 50% of the value)
TOLERANCE = 0.5
#: significance level of the recovery rule (the paper check's: :data:`fmat.checking.LEVEL`)
LEVEL = checking.LEVEL
RECOVERED, NOT_RECOVERED = "recovered", "not recovered"
#: what an expectation states: exactly one of these (docs/planting.md, "The recovery rule")
EXPECTATION_KINDS = ("value", "sign", "min", "absent")
RECOVERY_COLUMNS = [
    "study",
    "statistic",
    "condition",
    "model",
    "planted",
    "expect",
    "realised",
    "value",
    "ci_low",
    "ci_high",
    "p",
    "verdict",
    "reason",
]


def expectation_kind(e: Mapping, where: str = "world") -> str:
    """Which one of :data:`EXPECTATION_KINDS` the expectation ``e`` states; an
    :class:`~fmat.errors.InputError` naming ``where`` when it states none or several (a bare
    ``{statistic: d}`` would accept either sign)."""
    kinds = [k for k in EXPECTATION_KINDS if k in e]
    if len(kinds) != 1:
        said = f"states {' and '.join(kinds)}" if kinds else "states none of them"
        raise InputError(
            f"an expectation states exactly one of value, sign, min or absent; this one {said}",
            where=where,
            fix="write e.g. {statistic: d, condition: all, value: 0.5}, {..., sign: 1}, {..., min: 0.7} or {..., absent: true}",
        )
    if kinds == ["absent"] and e["absent"] is not True:
        raise InputError(
            "absent: false says nothing; an expectation of nothing planted is absent: true",
            where=where,
            fix="write absent: true, or state a value, sign or min instead",
        )
    return kinds[0]


def check_expectations(data: Mapping, path: object = "world") -> None:
    """Every expectation of a parsed world file states exactly one of value, sign, min or
    absent (:func:`expectation_kind`); the error names the file and the key."""
    lists = [("expect_all", data.get("expect_all"))] if isinstance(data, Mapping) else []
    studies = data.get("studies") if isinstance(data, Mapping) else None
    for sid, body in (studies or {}).items() if isinstance(studies, Mapping) else []:
        if isinstance(body, Mapping):
            lists.append((f"studies.{sid}.expect", body.get("expect")))
    for key, items in lists:
        for i, e in enumerate(items if isinstance(items, list) else []):
            if isinstance(e, Mapping):
                expectation_kind(e, where=f"{path}: {key}[{i}]")


def _rule_text(e: Mapping) -> tuple[str, str]:
    """(the planted value as shown, what the rule asks) of one expectation."""
    if e.get("absent"):
        return "0 (nothing planted)", "nothing beyond what the world holds: our 95% CI covers the realised value (else p >= .05)"
    if "value" in e:
        tol = float(e.get("tolerance", TOLERANCE))
        return (
            f"{float(e['value']):.2f}",
            f"same sign, p < .05, our 95% CI covers the realised value (without a CI: within {tol:.0%} of it)",
        )
    if "min" in e:
        return f">= {float(e['min']):.2f}", f"at least {float(e['min']):.2f}, p < .05"
    if "sign" in e:
        return ("> 0" if int(e["sign"]) > 0 else "< 0"), "this sign, p < .05"
    return "", "(states no value, sign, min or absent)"


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def judge_recovery(
    e: Mapping, value: float, p: float, realised: float | None = None, ci: tuple[float, float] | None = None
) -> tuple[str, str]:
    """One computed row against one expectation -> ``(verdict, reason)`` (the recovery rule,
    docs/planting.md).

    A planted ``value`` is recovered when ours has its sign, ``p < .05`` (where the row has a
    p) and our 95% CI ``ci`` covers the ``realised`` value (what the world implies for these
    items and models: :func:`fmat.oracle.oracle`); without a realised value the
    nominal ``value`` stands in for it, and without a CI ours must be within ``tolerance``
    (relative) of it. A ``min``: at least that, and p < .05; a ``sign``: that sign and p < .05.
    ``absent`` (nothing planted) is recovered when the CI covers the realised value (nothing
    found beyond what the world holds; 0 where the world has no item variation), else when
    ``p >= .05`` (:func:`recovery` judges a t row's null by its d's realised value and CI). An
    expectation that states none of value, sign, min or absent is never recovered (it would
    accept either sign)."""
    kinds = [k for k in EXPECTATION_KINDS if k in e]
    if len(kinds) != 1:
        return NOT_RECOVERED, "the expectation states " + (
            " and ".join(kinds) if kinds else "none of value, sign, min or absent"
        ) + ": nothing to judge by"
    if not _finite(value):
        return NOT_RECOVERED, "no value computed"
    value = float(value)
    has_p = _finite(p)
    has_ci = ci is not None and _finite(ci[0]) and _finite(ci[1])
    has_real = _finite(realised)
    if e.get("absent"):
        if has_real and has_ci:
            lo, hi = float(ci[0]), float(ci[1])
            return (
                (RECOVERED, f"95% CI [{lo:.3g}, {hi:.3g}] covers the realised {float(realised):.3g}")
                if checking.covers(float(realised), lo, hi).ok
                else (
                    NOT_RECOVERED,
                    f"95% CI [{lo:.3g}, {hi:.3g}] misses the realised {float(realised):.3g}: "
                    "an effect found beyond what the world holds",
                )
            )
        if not has_p:
            return NOT_RECOVERED, "no p to test the null with"
        return (
            (RECOVERED, f"p = {float(p):.3f} >= .05")
            if checking.significance(False, p, LEVEL).ok
            else (NOT_RECOVERED, f"p = {float(p):.3g} < .05: an effect found where none was planted")
        )
    problems = []
    nominal = float(e["value"]) if "value" in e else None
    sign = int(e["sign"]) if "sign" in e else (int(np.sign(nominal)) if nominal else 0) or (1 if "min" in e else 0)
    if checking.sign(sign, value).ok is False:
        problems.append(f"sign {'+' if value > 0 else '-'} (planted {'+' if sign > 0 else '-'})")
    if has_p and checking.significance(True, p, LEVEL).ok is False:
        problems.append(f"p = {float(p):.3f} not < .05")
    size = ""
    if nominal is not None:
        target = float(realised) if has_real else nominal
        what = "realised" if has_real else "planted"
        if has_ci:
            size = ", CI covers the " + what
            if not checking.covers(target, ci[0], ci[1]).ok:
                problems.append(f"95% CI [{float(ci[0]):.3g}, {float(ci[1]):.3g}] misses the {what} {target:.3g}")
        else:
            tol = float(e.get("tolerance", TOLERANCE))
            size = ", size"
            if not checking.closeness(target, value, tol * abs(target)).ok:
                problems.append(f"{value:.2f} is not within {tol:.0%} of the {what} {target:.2f}")
    if "min" in e:
        size = ", size"
        if value < float(e["min"]):
            problems.append(f"{value:.2f} < {float(e['min']):.2f}")
    return (NOT_RECOVERED, "; ".join(problems)) if problems else (RECOVERED, "sign" + (", p < .05" if has_p else "") + size)


def _ci_of(stats: pd.DataFrame, key: tuple[str, str, str]) -> tuple[float, float]:
    """The 95% CI of the results row ``(statistic, condition, model)`` (NaN when absent)."""
    if not {"ci_low", "ci_high"} <= set(stats.columns):
        return (math.nan, math.nan)
    row = stats[
        (stats["statistic"].astype(str) == key[0])
        & (stats["condition"].astype(str) == key[1])
        & (stats["model"].astype(str) == key[2])
    ]
    return (float(row["ci_low"].iloc[0]), float(row["ci_high"].iloc[0])) if len(row) else (math.nan, math.nan)


def recovery(plant: Plant, stats: pd.DataFrame, realised: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each expectation of ``plant`` against the study's results rows (:mod:`fmat.results` shape:
    ``statistic, condition, model, value, p`` and, where there, ``ci_low, ci_high``) -> one row
    per matched result (or one ``not recovered`` row when none matches), columns
    :data:`RECOVERY_COLUMNS`. ``realised`` (columns ``statistic, condition, model, value``:
    :func:`fmat.oracle.oracle`) gives the value the world implies for each row,
    which the rule judges against (:func:`judge_recovery`)."""

    truth = {}
    if realised is not None and len(realised):
        truth = {
            (str(r.statistic), str(r.condition), str(r.model)): float(r.value)
            for r in realised[["statistic", "condition", "model", "value"]].itertuples(index=False)
        }
    rows = []
    for e in plant.expect:
        cond, model = str(e.get("condition", "all")), str(e.get("model", "all"))
        planted, rule = _rule_text(e)
        keep = (
            (stats["statistic"].astype(str) == str(e["statistic"])).to_numpy()
            & np.array([fnmatchcase(str(c), cond) for c in stats["condition"]], dtype=bool)
            & np.array([fnmatchcase(str(m), model) for m in stats["model"]], dtype=bool)
        )
        hit = stats[keep]
        base = {"study": plant.study, "planted": planted, "expect": rule}
        if not len(hit):
            rows.append(
                {
                    **base,
                    "statistic": e["statistic"],
                    "condition": cond,
                    "model": model,
                    "verdict": NOT_RECOVERED,
                    "reason": "no such row in the results (a statistic the analysis did not compute)",
                }
            )
        for r in hit.to_dict("records"):
            key = (str(r["statistic"]), str(r["condition"]), str(r["model"]))
            real = truth.get(key)
            ci = (r.get("ci_low"), r.get("ci_high"))
            if real is None and key[0] == "t" and ("d",) + key[1:] in truth and e.get("absent"):
                # a t has no realised value of its own: its null is its d's (t = d / SE), so
                # the d's CI must cover the d the world holds
                real, ci = truth[("d",) + key[1:]], _ci_of(stats, ("d",) + key[1:])
            verdict, reason = judge_recovery(e, r["value"], r.get("p"), real, ci)
            rows.append(
                {
                    **base,
                    "statistic": key[0],
                    "condition": key[1],
                    "model": key[2],
                    "realised": real,
                    "value": r["value"],
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "p": r.get("p"),
                    "verdict": verdict,
                    "reason": reason,
                }
            )
    out = pd.DataFrame(rows).reindex(columns=RECOVERY_COLUMNS)
    for col in ("realised", "value", "ci_low", "ci_high", "p"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    return out


# ----------------------------------------------------------------------------- expectations, before training


def design_rows(study, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The results rows the study's pipeline makes on this design in this world, before any model
    is trained: its reliability rows and its analysis' rows (:func:`fmat.analyses.analysis_stage`)
    on the world's own probabilities for ``models`` (:func:`planted_scores`; seconds, no training).
    Their ``statistic, condition, model`` are those a trained pilot's results will have, so a
    world's expectations can be checked against them (:func:`check_expected_rows`)."""
    models = [str(m) for m in models]
    scores = planted_scores(study, plant, models, criteria)
    if "prior" not in scores.columns:  # an LPBS study (score: {method: lpbs}): a stand-in prior, the same rows
        scores["prior"] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular fit on the world's probabilities says nothing here
        lpr = lpr_table(study, scores)
        _, rel = reliability_tables(study, scores, lpr, sid=str(study.id), icc=len(models) > 1)
        stats, _, _ = analyses.analysis_stage(study, scores, lpr, rel, dict(criteria or {}), sid=str(study.id))
    return stats


def check_expected_rows(
    plant: Plant, study, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None, where: str = "world"
) -> None:
    """Every expectation of ``plant`` names a statistic, condition and model that the study's
    pipeline will produce (:func:`design_rows`: the analysis run on the world's probabilities,
    before training); else an InputError naming ``where: studies.<id>.expect[i]``, the rows
    there are and the nearest ("did you mean"). Without it a typo (``cohens_d`` for ``d``,
    ``like-dislike:persnal``) showed as "no such row" after every model was trained. An analysis
    that cannot run on the design is named here too."""
    if not plant.expect:
        return
    try:
        rows = design_rows(study, plant, models, criteria)
    except FmatError as err:
        raise InputError(
            f"the study's analysis cannot run on this design (run on the world's own probabilities, before any "
            f"training): {err.message}",
            where=err.where or where,
            fix=err.fix or "fix the study file's analysis: block",
        ) from None
    stat = rows["statistic"].astype(str).to_numpy()
    cond = rows["condition"].astype(str).to_numpy()
    model = rows["model"].astype(str).to_numpy()
    for i, e in enumerate(plant.expect):
        at = f"{where}: studies.{plant.study}.expect[{i}]"
        s, c, m = str(e.get("statistic", "")), str(e.get("condition", "all")), str(e.get("model", "all"))
        statistics = list(dict.fromkeys(stat))
        if s not in statistics:
            close = difflib.get_close_matches(s, statistics, n=1, cutoff=0.5)
            close = close or [x for x in statistics if x in re.split(r"[^A-Za-z0-9]+", s)][:1]  # cohens_d: d
            raise InputError(
                f"the study's results will have no statistic {s!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                where=f"{at}.statistic",
                fix=f"use one of {', '.join(statistics)}",
            )
        conds = list(dict.fromkeys(cond[stat == s]))
        if not any(fnmatchcase(x, c) for x in conds):
            close = difflib.get_close_matches(c, conds, n=1, cutoff=0.5)
            raise InputError(
                f"the study's results will have no {s} row of condition {c!r}"
                + (f" (did you mean {close[0]!r}?)" if close else ""),
                where=f"{at}.condition",
                fix=f"use one of {', '.join(conds[:12])}{' ...' if len(conds) > 12 else ''} (* and ? match several)",
            )
        have = list(dict.fromkeys(model[(stat == s) & np.array([fnmatchcase(x, c) for x in cond])]))
        if not any(fnmatchcase(x, m) for x in have):
            close = difflib.get_close_matches(m, have, n=1, cutoff=0.5)
            raise InputError(
                f"the study's results will have no {s} row of condition {c!r} for model {m!r}"
                + (f" (did you mean {close[0]!r}?)" if close else ""),
                where=f"{at}.model",
                fix=f"use one of {', '.join(have[:12])}",
            )
