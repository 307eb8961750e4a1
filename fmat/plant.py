"""Planted associations: known truth for a study design (parameter recovery).

A *world file* (YAML; JSON Schema ``fmat/schemas/world.schema.json``; reference:
docs/planting.md) states, in a study file's own terms, which associations hold in a made-up
language. From it this module computes the probability of each [MASK] option per row and model
(:func:`planted_scores`, shaped like :func:`fmat.run`'s table) and samples training sentences in
which those probabilities hold (:func:`training_sentences`). The log-weight of option ``w`` in
context ``c`` (the sentence with [MASK] open) for model ``m`` is::

    s(w, c, m) = word[w] + item[c, w] + model_item[m, c, w]
                 + sum over effects e that apply:  sign_e(w, c) * (lpr_e * factor_e(w, c) + shift[m, e]) / 2**k_e

and ``P(w | c) = exp(s) / sum of exp(s) over the options of c``. ``sign_e`` is the product over
the ``k_e`` slots of the effect's ``contrast`` of +1 (group A), -1 (group B), 0 elsewhere: an
effect on two slots makes the difference of differences ``lpr`` (Study 3A). ``factor_e`` is 1,
the item's criterion value (``per_item``) or a numeric word (``trend``). ``word``, ``item``,
``shift`` and ``model_item`` are seeded normal draws with the SDs of ``variation``: the same
world gives the same numbers.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import re
import warnings
import zlib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import analyses, checking, validate
from .errors import FmatError, InputError
from .oracle import oracle as _oracle
from .oracle import read_study_file
from .runner import concat_scores, label_scores
from .stages import lpr_table, reliability_tables, study_options
from .study import _json_path
from .world import (  # the plant's numbers, in a leaf module the oracle plants with; their names stay here too
    _SLOT_COLUMN,
    SAMPLES,
    SIGMA,
    VARIATION,
    Effect,
    Plant,
    SimpleStudy,  # noqa: F401
    World,
    _draw,  # noqa: F401
    _draws,  # noqa: F401
    _item_keys,
    context_of,  # noqa: F401
    log_weights,  # noqa: F401
    planted_logp,
    world_rows,
)

SCHEMA_NAME = "world.schema.json"
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
    the key and the range (before the schema, whose minimum and maximum let NaN through)."""
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
        if key:
            lo, hi, why = RANGES[key]
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
            _check_per_item(e.per_item, criteria, at)
        _check_where(e.where, plant, study, at)
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


def check_plantable(study, where: str, command: str = "fmat pilot") -> None:
    """A study scored with LPBS (``score: {method: lpbs}``, :mod:`fmat.lpbs`) cannot be run in a
    world, which plants P(option | sentence) only, never LPBS's prior: an InputError naming
    ``where: score.method`` before any model is trained or any world drawn."""
    if str(study_options(study, "score").get("method", "fmat")) != "lpbs":
        return
    raise InputError(
        f"{command} cannot run study {study.id}: it is scored with LPBS (score.method: lpbs), which divides each "
        "[MASK] word's probability by its prior (the sentence with the {TARGET}/{ATTRIB} phrase masked), and a world "
        "plants P(option | sentence) only, no prior, so there is no planted truth for LPBS (docs/planting.md)",
        where=f"{where}: score.method",
        fix=f"run {command} on a copy of the study file with score: {{method: fmat}} (the same design, scored as LPRs; "
        "e.g. X2's is config/studies/3A.yaml), then run the LPBS study itself on real models with fmat study",
    )


def _check_per_item(per_item: Mapping, criteria, at: str) -> None:
    """A ``per_item`` effect's criterion table is there, with its key and value columns."""
    if criteria is None:
        return  # the tables are checked where they are read (their job)
    table = str(per_item["table"])
    if table not in criteria:
        raise InputError(
            f"per_item.table {table!r} is not available",
            where=at,
            fix="name a criterion table the workflow builds (resources/criteria/<name>.parquet) or pass it in criteria=",
        )
    t = criteria[table]
    for col in [str(per_item.get("key", "item")), str(per_item["column"])]:
        if col not in t.columns:
            raise InputError(
                f"per_item: the table {table!r} has no column {col!r}",
                where=at,
                fix=f"use one of its columns: {', '.join(map(str, t.columns))}",
            )


def _check_where(where: Mapping, plant: Plant, study, at: str) -> None:
    """An effect's ``where`` names templates, or groups, words or items of the study's slots."""
    q = study.queries
    for slot, values in where.items():
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


def planted_scores(
    study, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """The scores table (:func:`fmat.run`'s shape) the world's probabilities would give: one
    block per model, ``prob`` and ``logp`` the planted ones, no OOV."""
    frames, rows = [], world_rows(study, plant, criteria)
    words = study.queries["M_word"].astype(str).to_numpy()
    for m in models:
        logp = planted_logp(study, plant, str(m), criteria, rows)
        df = study.queries.assign(output=words, token=words, prob=np.exp(logp), token_id=-1, logp=logp, oov=False)
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
                yield from [c.replace("[MASK]", w, 1)] * int(k)


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
        rows = world_rows(study, plant, criteria)
        logp = planted_logp(study, plant, model, criteria, rows)
        frame = pd.DataFrame({"c": rows.ctx, "w": rows.words, "lp": logp})[rows.first]
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


# ----------------------------------------------------------------------------- recovery

#: relative size tolerance of an expectation with a ``value`` judged without a confidence
#: interval (ours within 50% of the value)
TOLERANCE = 0.5
#: significance level of the recovery rule (the paper check's: :data:`fmat.checking.LEVEL`)
LEVEL = checking.LEVEL
RECOVERED, NOT_RECOVERED = "recovered", "not recovered"
#: the verdict of a concept-level control (``absent: true, level: concept``) whose concept-level
#: test finds nothing: not a recovered effect, since nothing was planted for the concept
NOTHING_FOUND = "nothing found for the concept"
#: the verdicts that judge a row (the others say why nothing was judged); of them, the passes
JUDGED = (RECOVERED, NOTHING_FOUND, NOT_RECOVERED)
PASSED = (RECOVERED, NOTHING_FOUND)
#: the level an expectation is judged at (its ``level``, default ``words``: the paper's
#: inference; ``concept``: the concept-level test, ``inference: crossed``)
LEVELS = ("words", "concept")
#: the target each level judges against (docs/planting.md, "Three targets"): column ``target``
TARGETS = {
    "words": "realised (oracle): these words in these models",
    "concept": "the concept: the planted effect (0 where nothing is planted)",
}
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
    "level",
    "target",
]


def expectation_kind(e: Mapping, where: str = "world") -> str:
    """Which one of :data:`EXPECTATION_KINDS` the expectation ``e`` states; an
    :class:`~fmat.errors.InputError` naming ``where`` when it states none or several."""
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


def expectation_level(e: Mapping, where: str = "world") -> str:
    """The level ``e`` is judged at (:data:`LEVELS`; default ``words``); an
    :class:`~fmat.errors.InputError` naming ``where`` for another value, or for a concept-level
    expectation of a statistic the concept-level test does not compute."""
    level = e.get("level", "words")
    if level not in LEVELS:
        raise InputError(
            f"level: {level!r} is not a level an expectation is judged at",
            where=f"{where}.level",
            fix="write level: words (the default: these words in these models, the paper's inference against the "
            "realised value) or level: concept (the concept: inference: crossed against the planted effect)",
        )
    stat = str(e.get("statistic", ""))
    if level == "concept" and stat not in analyses.CROSSED_STATISTICS:
        raise InputError(
            f"level: concept judges the concept-level test (inference: crossed), which computes "
            f"{', '.join(analyses.CROSSED_STATISTICS)}, not {stat!r}",
            where=f"{where}.statistic",
            fix=f"expect {' or '.join(analyses.CROSSED_STATISTICS)} at level: concept (its t is that of d), or drop level",
        )
    return str(level)


def check_expectations(data: Mapping, path: object = "world") -> None:
    """Every expectation of a parsed world file states exactly one of value, sign, min or
    absent (:func:`expectation_kind`) and a level it can be judged at (:func:`expectation_level`);
    the error names the file and the key."""
    lists = [("expect_all", data.get("expect_all"))] if isinstance(data, Mapping) else []
    studies = data.get("studies") if isinstance(data, Mapping) else None
    for sid, body in (studies or {}).items() if isinstance(studies, Mapping) else []:
        if isinstance(body, Mapping):
            lists.append((f"studies.{sid}.expect", body.get("expect")))
    for key, items in lists:
        for i, e in enumerate(items if isinstance(items, list) else []):
            if isinstance(e, Mapping):
                expectation_kind(e, where=f"{path}: {key}[{i}]")
                expectation_level(e, where=f"{path}: {key}[{i}]")


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
    p) and our 95% CI ``ci`` covers the ``realised`` value (:func:`fmat.oracle.oracle`; else
    the nominal ``value``; without a CI ours must be within ``tolerance`` of it). A ``min``: at
    least that, and p < .05; a ``sign``: that sign and p < .05. ``absent``: the CI covers the
    realised value, else ``p >= .05``. An expectation that states none of these is never
    recovered."""
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
        return _judge_absent(p, realised if has_real and has_ci else None, ci)
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


def _judge_absent(p: float, realised: float | None, ci) -> tuple[str, str]:
    """:func:`judge_recovery` of an ``absent`` expectation: the CI covers the realised value (where
    both are known), else p >= .05."""
    if realised is not None:
        lo, hi, real = float(ci[0]), float(ci[1]), float(realised)
        span = f"95% CI [{lo:.3g}, {hi:.3g}]"
        if checking.covers(real, lo, hi).ok:
            return RECOVERED, f"{span} covers the realised {real:.3g}"
        return NOT_RECOVERED, f"{span} misses the realised {real:.3g}: an effect found beyond what the world holds"
    if not _finite(p):
        return NOT_RECOVERED, "no p to test the null with"
    if checking.significance(False, p, LEVEL).ok:
        return RECOVERED, f"p = {float(p):.3f} >= .05"
    return NOT_RECOVERED, f"p = {float(p):.3g} < .05: an effect found where none was planted"


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


def _values(table: pd.DataFrame | None) -> dict:
    """``{(statistic, condition, model): value}`` of an oracle table (empty for None)."""
    if table is None or not len(table):
        return {}
    return {
        (str(r.statistic), str(r.condition), str(r.model)): float(r.value)
        for r in table[["statistic", "condition", "model", "value"]].itertuples(index=False)
    }


def concept_plant(plant: Plant) -> Plant:
    """The concept of ``plant``: its effects with no word, item, model or model-item variation
    (the population mean over items and models: what the concept-level test estimates)."""
    return dataclasses.replace(plant, variation={k: 0.0 for k in plant.variation})


def concept_values(
    study_path: str | os.PathLike,
    plant: Plant,
    models: Sequence[str],
    criteria: Mapping[str, pd.DataFrame] | None = None,
    scores: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The concept-level target of each statistic (docs/planting.md, "Three targets"): the oracle
    (:func:`fmat.oracle.oracle`) on :func:`concept_plant`, the planted effect on the analysis's
    scale. A pooled-SD d (:func:`fmat.analyses.pooled_sd`) divides by the items' own spread,
    which the concept has not: with ``scores``, the concept's LPR difference in units of these
    scores' SD; without, 0 where nothing is planted for the concept and NaN elsewhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a pooled-SD d of words that do not differ: 0 / 0
        out = _oracle(study_path, concept_plant(plant), [str(m) for m in models], criteria, scores=scores)
    spec = dict(read_study_file(study_path).get("analysis") or {})
    pooled = bool(analyses.pooled_sd(spec.get("name"), spec.get("options")))
    if scores is None and pooled:
        v = pd.to_numeric(out["value"], errors="coerce").to_numpy(float)
        nothing = ~np.isfinite(v) | (np.abs(v) < 1e-12)  # 0 / 0: no difference among the words; or alike for both
        out = out.assign(value=np.where(out["statistic"].astype(str) == "d", np.where(nothing, 0.0, np.nan), v))
    return out


def _words_note(e: Mapping, real, p, verdict: str) -> str:
    """For a words-level ``absent`` row that passes although the paper's inference finds p < .05
    (the words carry an association of their own: item variation): what that verdict means."""
    if not e.get("absent") or verdict != RECOVERED or not _finite(real) or float(real) == 0 or not _finite(p):
        return ""
    if float(p) >= LEVEL:
        return ""
    return (
        f"; p = {float(p):.3g} < .05: what these words carry in this world (realised {float(real):.3g}: item "
        "variation), not an association of the concept, where nothing was planted; level: concept judges the concept"
    )


#: why an expectation has no row to judge, per level
_MISSING = {
    "words": "no such row in the results (a statistic the analysis did not compute)",
    "concept": "no such concept-level row (the study's analysis has no inference: crossed, or it did not run)",
}


def _judge_concept(e: Mapping, r: Mapping, target) -> tuple:
    """One concept-level row ``r`` (:func:`concept_rows`) against expectation ``e`` ->
    ``(target, ci, verdict, reason)``: the target is the planted effect (``target``: a
    :func:`concept_values` value), 0 for ``absent``, whose pass is :data:`NOTHING_FOUND`."""
    ci = (r.get("ci_low"), r.get("ci_high"))
    real = 0.0 if e.get("absent") else (float(target) if _finite(target) else None)
    verdict, reason = judge_recovery(e, r["value"], r.get("p"), real, ci)
    if not e.get("absent"):
        return real, ci, verdict, reason.replace("realised", "planted effect")
    reason = reason.replace("the realised 0", "0") + (f" (p = {float(r['p']):.3g})" if _finite(r.get("p")) else "")
    if verdict == RECOVERED:
        return real, ci, NOTHING_FOUND, reason + ": nothing planted for the concept"
    reason = reason.replace("0: an effect found beyond what the world holds (", "0: an effect found for the concept (")
    return real, ci, NOT_RECOVERED, reason + ", where nothing was planted for the concept"


def recovery(
    plant: Plant,
    stats: pd.DataFrame,
    realised: pd.DataFrame | None = None,
    crossed: pd.DataFrame | None = None,
    concept: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each expectation of ``plant`` against the study's results rows (:mod:`fmat.results` shape)
    -> one row per matched result (or one ``not recovered`` row when none matches), columns
    :data:`RECOVERY_COLUMNS`, judged by :func:`judge_recovery`.

    At its ``level`` (:data:`LEVELS`): ``words`` (the default) judges ``stats`` (the paper's
    inference) against ``realised`` (:func:`fmat.oracle.oracle`); ``concept`` judges ``crossed``
    (:func:`fmat.analyses.crossed_variant`) against ``concept`` (the planted effect:
    :func:`concept_values`), and an ``absent`` one against 0, whose pass is
    :data:`NOTHING_FOUND`. Columns ``level`` and ``target`` (:data:`TARGETS`) say which."""
    truth, concept_truth = _values(realised), _values(concept)
    rows = []
    for i, e in enumerate(plant.expect):
        level = expectation_level(e, where=f"studies.{plant.study}.expect[{i}]")
        cond, model = str(e.get("condition", "all")), str(e.get("model", "all"))
        planted, rule = _rule_text(e)
        source = stats
        if level == "concept":
            source = crossed if crossed is not None else pd.DataFrame(columns=["statistic", "condition", "model", "value", "p"])
            rule = "the concept-level test (inference: crossed): " + (
                "our 95% CI covers 0 (else p >= .05)" if e.get("absent") else rule.replace("realised value", "planted effect")
            )
        keep = (
            (source["statistic"].astype(str) == str(e["statistic"])).to_numpy()
            & np.array([fnmatchcase(str(c), cond) for c in source["condition"]], dtype=bool)
            & np.array([fnmatchcase(str(m), model) for m in source["model"]], dtype=bool)
        )
        hit = source[keep]
        base = {"study": plant.study, "planted": planted, "expect": rule, "level": level, "target": TARGETS[level]}
        if not len(hit):
            wanted = {"statistic": e["statistic"], "condition": cond, "model": model}
            rows.append({**base, **wanted, "verdict": NOT_RECOVERED, "reason": _MISSING[level]})
        for r in hit.to_dict("records"):
            key = (str(r["statistic"]), str(r["condition"]), str(r["model"]))
            if level == "concept":
                real, ci, verdict, reason = _judge_concept(e, r, concept_truth.get(key))
            else:
                real, ci = truth.get(key), (r.get("ci_low"), r.get("ci_high"))
                if real is None and key[0] == "t" and ("d",) + key[1:] in truth and e.get("absent"):
                    # a t has no realised value of its own: its null is its d's (t = d / SE), so
                    # the d's CI must cover the d the world holds
                    real, ci = truth[("d",) + key[1:]], _ci_of(stats, ("d",) + key[1:])
                verdict, reason = judge_recovery(e, r["value"], r.get("p"), real, ci)
                reason += _words_note(e, real, r.get("p"), verdict)
            rows.append(
                {
                    **base,
                    **dict(zip(("statistic", "condition", "model"), key)),
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


def concept_rows(study, scores: pd.DataFrame, lpr: pd.DataFrame, criteria=None, stats: pd.DataFrame | None = None):
    """The concept-level rows (d, b, r) of a study's analysis on these scores: its ``inference:
    crossed`` run beside the paper's (:func:`fmat.analyses.crossed_variant`), or those rows of
    ``stats`` where the study file chooses it; ``None`` where the analysis has no such test."""
    if _analysis_of(study)[1] == analyses.CROSSED and stats is not None:
        keep = stats["statistic"].astype(str).isin(analyses.CROSSED_STATISTICS) & stats["p"].notna()
        return stats[keep].reset_index(drop=True)
    rows, _ = analyses.crossed_variant(study, scores, lpr, criteria)
    return rows


def check_concept_levels(plant: Plant, study, where: str = "world") -> None:
    """Every expectation of ``plant`` at ``level: concept`` has a concept-level test to judge it
    (the study's analysis declares ``inference: crossed``, its study file chooses the paper's or
    that): else an InputError naming ``where: studies.<id>.expect[i].level``. No analysis runs."""
    name, chosen = _analysis_of(study)
    ok = name in analyses.available() and analyses.CROSSED in analyses.option_values(name, "inference")
    ok = ok and chosen in ("paper", analyses.CROSSED)
    for i, e in enumerate(plant.expect):
        at = f"{where}: studies.{plant.study}.expect[{i}]"
        if expectation_level(e, where=at) == "concept" and not ok:
            crossed = [a for a in analyses.available() if analyses.CROSSED in analyses.option_values(a, "inference")]
            raise _no_concept_test(plant, study, at, f" ({', '.join(crossed)}) with its paper's or crossed inference")


def _analysis_of(study) -> tuple[str, str]:
    """The name of a study's analysis ("" without one) and the inference its study file chooses."""
    spec = dict(getattr(study, "analysis", None) or {})
    return str(spec.get("name") or ""), str(dict(spec.get("options") or {}).get("inference", "paper"))


def _no_concept_test(plant: Plant, study, at: str, more: str = "") -> InputError:
    """The error of a ``level: concept`` expectation whose study's analysis has no concept-level test."""
    name, chosen = _analysis_of(study)
    return InputError(
        f"level: concept needs the concept-level test (inference: crossed), which study {plant.study}'s "
        f"analysis ({name or 'none'}) does not run"
        + (f" beside the inference its study file chooses ({chosen})" if chosen != "paper" else ""),
        where=f"{at}.level",
        fix="drop level: concept (judge these words), or use an analysis with inference: crossed" + more,
    )


def design_rows(
    study, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None, level: str = "words"
) -> pd.DataFrame | None:
    """The results rows the study's analysis (:func:`fmat.analyses.analysis_stage`) makes on the
    world's own probabilities for ``models`` (:func:`planted_scores`), before any training: the
    rows a trained pilot's results will have. ``level: concept``: :func:`concept_rows` instead."""
    models = [str(m) for m in models]
    scores = planted_scores(study, plant, models, criteria)
    if "prior" not in scores.columns:  # an LPBS study (score: {method: lpbs}): a stand-in prior, the same rows
        scores["prior"] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular fit on the world's probabilities says nothing here
        lpr = lpr_table(study, scores)
        _, rel = reliability_tables(study, scores, lpr, sid=str(study.id), icc=len(models) > 1)
        stats, _, _ = analyses.analysis_stage(study, scores, lpr, rel, dict(criteria or {}), sid=str(study.id))
        if level == "concept":
            return concept_rows(study, scores, lpr, dict(criteria or {}), stats)
    return stats


def check_expected_rows(
    plant: Plant, study, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None, where: str = "world"
) -> None:
    """Every expectation of ``plant`` names a statistic, condition and model that the study's
    pipeline will produce (:func:`design_rows`, before training); else an InputError naming
    ``where: studies.<id>.expect[i]``, the rows there are and the nearest ("did you mean"). An
    analysis that cannot run on the design is named here too."""
    if not plant.expect:
        return
    check_concept_levels(plant, study, where)
    made: dict = {}

    def rows_of(level: str, at: str):
        if level not in made:
            try:
                made[level] = design_rows(study, plant, models, criteria, level=level)
            except FmatError as err:
                raise InputError(
                    f"the study's analysis cannot run on this design (run on the world's own probabilities, before any "
                    f"training): {err.message}",
                    where=err.where or where,
                    fix=err.fix or "fix the study file's analysis: block",
                ) from None
        if made[level] is None:  # check_concept_levels has seen the analysis's name
            raise _no_concept_test(plant, study, at)
        table = made[level]
        return (table[c].astype(str).to_numpy() for c in ("statistic", "condition", "model"))

    for i, e in enumerate(plant.expect):
        at = f"{where}: studies.{plant.study}.expect[{i}]"
        stat, cond, model = rows_of(expectation_level(e, where=at), at)
        s, c, m = str(e.get("statistic", "")), str(e.get("condition", "all")), str(e.get("model", "all"))
        statistics = list(dict.fromkeys(stat))
        if s not in statistics:
            parts = [x for x in statistics if x in re.split(r"[^A-Za-z0-9]+", s)]  # cohens_d: d
            raise InputError(
                f"the study's results will have no statistic {s!r}" + analyses.nearest(s, statistics, cutoff=0.5, fallback=parts),
                where=f"{at}.statistic",
                fix=f"use one of {', '.join(statistics)}",
            )
        conds = list(dict.fromkeys(cond[stat == s]))
        if not any(fnmatchcase(x, c) for x in conds):
            raise InputError(
                f"the study's results will have no {s} row of condition {c!r}" + analyses.nearest(c, conds, cutoff=0.5),
                where=f"{at}.condition",
                fix=f"use one of {', '.join(conds[:12])}{' ...' if len(conds) > 12 else ''} (* and ? match several)",
            )
        have = list(dict.fromkeys(model[(stat == s) & np.array([fnmatchcase(x, c) for x in cond])]))
        if not any(fnmatchcase(x, m) for x in have):
            raise InputError(
                f"the study's results will have no {s} row of condition {c!r} for model {m!r}"
                + analyses.nearest(m, have, cutoff=0.5),
                where=f"{at}.model",
                fix=f"use one of {', '.join(have[:12])}",
            )
