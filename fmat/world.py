"""A world's plant and the log probabilities it plants: the numbers only (no file, no pipeline).

The formula is :mod:`fmat.plant`'s (its module docstring); this leaf module lets the independent
oracle (:mod:`fmat.oracle`) plant from a study file's raw words without loading the analyses,
the query design or the LPR stage. :mod:`fmat.plant` re-exports every name here.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import permutations
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

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
        """A text that seeds each model's shift of the effect: its size and form, not the groups it
        contrasts, so that two studies planting the same size over shared sentences (3B and 3C)
        plant those sentences alike."""
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

    def hashmix(value: np.ndarray, const: list, mult: int) -> np.ndarray:  # const: [hash constant], stepped each call
        value = value ^ u32(const[0])
        const[0] = (const[0] * mult) & 0xFFFFFFFF
        value = value * u32(const[0])
        return value ^ (value >> u32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = u32(_MIX_L) * x - u32(_MIX_R) * y
        return r ^ (r >> u32(16))

    n, a, b = len(crcs), [_INIT_A], [_INIT_B]
    entropy = [np.full(n, seed & 0xFFFFFFFF, dtype=u32), crcs.astype(u32), np.zeros(n, u32), np.zeros(n, u32)]
    pool = [hashmix(e, a, _MULT_A) for e in entropy]
    for src, dst in permutations(range(4), 2):  # every ordered pair, src-major: numpy's mix_entropy
        pool[dst] = mix(pool[dst], hashmix(pool[src], a, _MULT_A))
    return np.stack([hashmix(pool[i % 4], b, _MULT_B) for i in range(8)], axis=1)


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
    """The item draws of every row (the same for every model: computed once a study and seed). Read-only."""
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


def _factor(e: Effect, study, q: pd.DataFrame, criteria: Mapping[str, pd.DataFrame] | None) -> np.ndarray:
    if e.per_item:
        spec = e.per_item
        table = criteria[str(spec["table"])]
        values = dict(zip(table[str(spec.get("key", "item"))].astype(str), pd.to_numeric(table[str(spec["column"])])))
        keys = _item_keys(study, spec["slot"], q[_SLOT_COLUMN[spec["slot"]]])
        x = keys.map(values).astype(float).to_numpy()
        center = float(spec["center"]) if "center" in spec else float(np.nanmean(list(values.values())))
        return np.nan_to_num((x - center) / float(spec.get("scale", 1.0)))  # an item without a value: no association
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
    all the models of :func:`planted_scores`."""

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
    # the normaliser log sum exp(s) per context over each option word once (a word in two MASK
    # groups is still one word), stabilised by the context's maximum
    top = pd.Series(s).groupby(rows.codes, sort=False).transform("max").to_numpy()
    total = pd.Series(np.where(rows.first, np.exp(s - top), 0.0)).groupby(rows.codes, sort=False).transform("sum")
    return s - (top + np.log(total.to_numpy()))
