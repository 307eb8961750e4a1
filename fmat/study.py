"""Study files (``config/studies/<id>.yaml``): load, validate, expand into a query table.

Both passes run before any model loads (this module imports no torch): the structure against
``fmat/schemas/study.schema.json``, then the meaning (``id`` is the file stem, each query block
builds with :func:`fmat.design.query`, word lists resolve, the ``lpr``, ``reliability`` and
``analysis`` options fit the design). Reference: ``docs/study-files.md``.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Mapping

import pandas as pd

from . import analyses, design, validate
from .errors import InputError
from .reliability import ITEM_KEYS, item_key_map

SCHEMA_NAME = "study.schema.json"
LPR_DEFAULTS = {"mask_pair": True, "target_pair": True, "attrib_pair": True}
SCORE_DEFAULTS = {"method": "fmat", "add_tokens": False, "na_out": True}
RELIABILITY_DEFAULTS = {"item": "query", "by": []}  # + lpr: the study's lpr options
SLOTS = design.SLOTS


@dataclass
class Study:
    """A loaded study file (all defaults filled in).

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> study = load_study(path)
    >>> study.id, study.type, study.lpr, study.score["method"]
    ('S', 'MA', {'mask_pair': False, 'target_pair': True, 'attrib_pair': True}, 'fmat')
    """

    id: str
    title: str
    family: str | None
    source: str
    notes: str
    queries: pd.DataFrame  # the bound query table (fmat.query_bind of the blocks)
    items: pd.DataFrame  # slot, word, item: the item key of each phrase per slot
    lpr: dict  # fmat.summary options: mask_pair, target_pair, attrib_pair
    reliability: dict  # item, by, lpr
    score: dict  # method, add_tokens, na_out
    analysis: dict  # name, options
    path: Path
    raw: dict = field(repr=False)  # the file as parsed (no defaults)

    @property
    def type(self) -> str:
        """M, MT, MA or MTA."""
        return self.queries.attrs["type"]


@lru_cache(maxsize=1)
def schema() -> dict:
    """The study-file JSON Schema (draft 2020-12).

    Examples
    --------
    >>> schema()["required"]
    ['id', 'title', 'queries']
    """
    return json.loads(resources.files("fmat").joinpath("schemas", SCHEMA_NAME).read_text(encoding="utf-8"))


def read_study_yaml(path: str | os.PathLike) -> dict:
    """Parse a study file (YAML or JSON) into a dict with :mod:`fmat.validate`'s loader (UTF-8,
    duplicate keys refused, numbers keep their text, aliases capped); every failure is an InputError.

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> read_study_yaml(path)["lpr"]
    {'mask_pair': False, 'attrib_pair': True}
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"study file not found: {path}", fix="check the path; study files live in config/studies/<id>.yaml")
    # NFC first: a decomposed "naïve" is the vocabulary's composed one (fmat.validate.nfc)
    data = validate.load_yaml(validate.nfc(validate.read_text(path, "study file")), str(path))
    if not isinstance(data, dict):
        raise InputError(
            "a study file must be a mapping (id: ..., title: ..., queries: ...)",
            where=str(path),
            fix="see docs/study-files.md for a complete example",
        )
    return data


def _json_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@lru_cache(maxsize=1)
def _fast_validator():
    """jsonschema-rs's compiled validator of the study schema. It answers "valid?" for a
    200,000-word study in milliseconds, where the pure-Python jsonschema takes seconds. Only its
    "valid" is trusted: anything else goes to jsonschema, which decides and words the messages
    (jsonschema-rs also refuses what JSON lacks, such as .inf, which jsonschema takes as a number).
    tests/test_validate_property.py checks that whatever it passes, jsonschema passes too."""
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(schema())


def _plain(node):
    """``node`` with fmat.validate's YamlInt/YamlFloat as plain int/float (jsonschema-rs takes
    only the built-in types)."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, float):
        return float(node)
    return int(node) if isinstance(node, int) and not isinstance(node, bool) else node


def _schema_problems(data: dict, where: str) -> list[str]:
    """Schema violations as readable one-line problems (location: what; fix)."""
    import jsonschema

    if _fast_validator().is_valid(_plain(data)):
        return []
    validator = jsonschema.Draft202012Validator(schema())
    return [
        f"{where}: {_json_path(path)}: {msg}" if path else f"{where}: {msg}"
        for path, msg in validate.schema_problems(validator, data)
    ]


def _resolve_words(spec, where: str, criteria_dir: str | os.PathLike | None) -> tuple[list, list]:
    """Expand one word-list spec into (words, items)."""
    if isinstance(spec, dict) and "range" in spec:
        start, end = spec["range"]
        validate.check_range(start, end, where)
        if start > end:
            raise InputError(
                f"range [{start}, {end}] is empty (start > end)",
                where=where,
                fix="write {range: [start, end]} with start <= end (both included)",
            )
        words = [str(y) for y in range(start, end + 1)]
        return words, list(words)
    if isinstance(spec, dict) and "criterion" in spec:
        name, column = spec["criterion"], spec["column"]
        if criteria_dir is None:
            raise InputError(
                f"the word list comes from criterion table {name!r} but no criteria folder was given",
                where=where,
                fix="pass criteria_dir= (CLI: --criteria-dir resources/criteria) after "
                "building the criteria (snakemake criteria)",
            )
        table = Path(criteria_dir) / f"{name}.parquet"
        if not table.exists():
            raise InputError(
                f"criterion table {table} (asked for by this word list) does not exist",
                where=where,
                fix=f"build it first (the workflow's criteria rule), or fix the name {name!r}",
            )
        df = pd.read_parquet(table)
        if column not in df.columns:
            raise InputError(
                f"criterion table {table} has no column {column!r} (it has {', '.join(map(str, df.columns))})",
                where=where,
                fix="name one of its columns in column:",
            )
        values = df[column]
        if values.isna().any():
            raise InputError(
                f"column {column!r} of {table} has {int(values.isna().sum())} missing values",
                where=where,
                fix="fix the criterion table (words must not be missing)",
            )
        words = [design._as_level(v) for v in values.tolist()]
        return words, list(words)
    if isinstance(spec, (str, int, float)) and not isinstance(spec, bool):
        spec = [spec]
    words, items = [], []
    for w in spec:
        w = validate.as_written(w)
        if isinstance(w, dict):
            phrase = validate.as_written(w["phrase"])
            words.append(phrase)
            items.append(design._as_level(validate.as_written(w.get("item", phrase))))
        else:
            words.append(w)
            items.append(w if not isinstance(w, (int, float)) or isinstance(w, bool) else design._as_level(w))
    return words, items


def _build(data: dict, path: Path, criteria_dir: str | os.PathLike | None):
    """Build the query table and items table; raise InputError on the first semantic problem."""
    where = str(path)
    if data["id"] != path.stem:
        raise InputError(
            f"id {data['id']!r} differs from the file name stem {path.stem!r}",
            where=f"{where}: id",
            fix=f"set id: {path.stem} or rename the file to {data['id']}.yaml",
        )
    tables, item_rows = [], []
    for i, block in enumerate(data["queries"]):
        bwhere = f"{where}: queries[{i}]"
        groups = {}
        for slot in [s for s in SLOTS if s in block]:
            groups[slot] = {}
            for gname, spec in block[slot].items():
                gwhere = f"{bwhere}.{slot}.{gname}"
                words, items = _resolve_words(spec, gwhere, criteria_dir)
                groups[slot][gname] = words
                item_rows += [(slot, w if isinstance(w, str) else design._as_level(w), it, gwhere) for w, it in zip(words, items)]
        tables.append(design.query(block["query"], **groups, where=bwhere))  # groups: MASK, TARGET, ATTRIB
    types = [t.attrs["type"] for t in tables]
    if len(set(types)) > 1:
        detail = ", ".join(f"queries[{i}] is {t}" for i, t in enumerate(types))
        raise InputError(
            f"query blocks have different types ({detail})",
            where=f"{where}: queries",
            fix="give every block the same slots (MASK, TARGET, ATTRIB), or make separate studies",
        )
    queries = tables[0] if len(tables) == 1 else design.query_bind(*tables)
    cols = list(queries.columns.drop("qid", errors="ignore"))
    dup = queries.duplicated(cols)
    if dup.any():
        row = queries.loc[dup, cols].iloc[0].astype(str).to_dict()
        raise InputError(
            f"{int(dup.sum())} rows appear in more than one block, e.g. {row}",
            where=f"{where}: queries",
            fix="remove the repeated query/word combination",
        )
    items = pd.DataFrame(item_rows, columns=["slot", "word", "item", "where"])
    items = items.drop_duplicates(["slot", "word", "item"])
    clash = items[items.duplicated(["slot", "word"], keep=False)]
    if len(clash):
        w = clash.iloc[0]
        others = clash[(clash.slot == w.slot) & (clash.word == w.word)]
        raise InputError(
            f"{w.slot} phrase {w.word!r} has different item keys "
            f"({', '.join(repr(x) for x in others.item)}) in {', '.join(others['where'])}",
            where=f"{where}: queries",
            fix="give the same phrase the same item key everywhere",
        )
    items = items.drop(columns="where").reset_index(drop=True).astype(str)
    return queries, items


def _check_pairing(queries: pd.DataFrame, options: dict, where: str) -> None:
    """The lpr options fit the design (the same rules fmat.summary enforces, checked early)."""
    type_ = queries.attrs["type"]
    for slot in [s for s in SLOTS if s[0] in type_]:
        option, mta = f"{slot.lower()}_pair", slot != "MASK" and type_ == "MTA"  # MTA: pairs 1-2, 3-4...
        if not options[option]:
            continue
        for q, sub in queries.groupby("query", observed=True, sort=False):
            counts = sub.groupby(slot, observed=True, sort=True)[f"{slot[0]}_word"].nunique()
            n = len(counts)
            if (n % 2 == 1) if mta else (n != 2):
                need = "exactly two groups" if not mta else "an even number of groups (pairs 1-2, 3-4...)"
                raise InputError(
                    f"{option} is on but query {q!r} has {n} {slot} group(s) "
                    f"({', '.join(map(str, counts.index))}); it needs {need}",
                    where=f"{where}.{option}",
                    fix=f"set {option}: false, or change the {slot} groups",
                )
            vals = list(counts.items()) if mta else []
            for (g1, n1), (g2, n2) in zip(vals[::2], vals[1::2]):
                if n1 != n2:
                    raise InputError(
                        f"{option} pairs {slot} groups {g1!r} ({n1} words) and {g2!r} "
                        f"({n2} words) of query {q!r}; they need equal sizes",
                        where=f"{where}.{option}",
                        fix=f"set {option}: false, or give paired groups equal sizes",
                    )


def _with_defaults(data: dict) -> tuple[dict, dict, dict, dict]:
    lpr = {**LPR_DEFAULTS, **(data.get("lpr") or {})}
    rel_raw = data.get("reliability") or {}
    reliability = {**RELIABILITY_DEFAULTS, **copy.deepcopy(rel_raw)}
    reliability["by"] = list(reliability.get("by") or [])
    reliability["lpr"] = {**lpr, **(rel_raw.get("lpr") or {})}
    score = {**SCORE_DEFAULTS, **(data.get("score") or {})}
    analysis_raw = data.get("analysis") or {}
    analysis = {"name": analysis_raw.get("name"), "options": copy.deepcopy(analysis_raw.get("options") or {})}
    return lpr, reliability, score, analysis


def check_analysis_name(name: str, options=None, where: str = "analysis") -> None:
    """The ``analysis`` block names an analysis registered in :mod:`fmat.analyses` and gives
    options its function takes (the default ``check_analysis`` of :func:`load_study` and
    :func:`validate_study_file`); else an InputError naming the nearest name or option.

    Examples
    --------
    >>> check_analysis_name("stereotype_pairs")
    >>> check_analysis_name("stereotype_pair")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: analysis.name: unknown analysis 'stereotype_pair' (did you mean 'stereotype_pairs'?)
      fix: use one of attitude_weat, change_over_time, factual_names, factual_wefat, stereotype_domains, stereotype_pairs, or
    register a new one (docs/adding-a-study.md)
    """
    analyses.check(name, options, where=where)


def _check_semantics(data: dict, path: Path, criteria_dir: str | os.PathLike | None, check_analysis=None) -> dict:
    where = str(path)
    queries, items = _build(data, path, criteria_dir)
    lpr, reliability, score, analysis = _with_defaults(data)
    _check_pairing(queries, lpr, f"{where}: lpr")
    _check_pairing(queries, reliability["lpr"], f"{where}: reliability.lpr")
    type_ = queries.attrs["type"]
    item = reliability["item"]
    if item == "T_word" and "T" not in type_ or item == "A_word" and "A" not in type_:
        raise InputError(
            f"reliability item {item!r} but the design ({type_}) has no {'TARGET' if item == 'T_word' else 'ATTRIB'}",
            where=f"{where}: reliability.item",
            fix="use item: query, or add the slot to the queries",
        )
    allowed = {"model", "query"} | {c for s in SLOTS if s[0] in type_ for c in (s, f"{s[0]}_word")}  # LPR columns
    for b in reliability["by"]:
        if b not in allowed:
            raise InputError(
                f"reliability.by names {b!r}, not a column of this study's LPR table",
                where=f"{where}: reliability.by",
                fix=f"use some of: {', '.join(sorted(allowed))}",
            )
        if b == item:
            raise InputError(
                f"reliability.by contains the item column {b!r}",
                where=f"{where}: reliability.by",
                fix="split by other columns than the alpha items",
            )
    if analysis["name"] is not None:
        (check_analysis or check_analysis_name)(analysis["name"], analysis["options"], where=f"{where}: analysis")
        check_analysis_design(queries, analysis["options"], where=f"{where}: analysis.options")
        analyses.check_design(analysis["name"], analysis["options"], queries, where=f"{where}: analysis.options", lpr_options=lpr)
    return dict(queries=queries, items=items, lpr=lpr, reliability=reliability, score=score, analysis=analysis)


#: analysis options that name groups of a slot: option -> slot
_GROUP_OPTIONS = {f"{slot.lower()}_contrast": slot for slot in ("MASK", "ATTRIB", "TARGET")}


def _design_values(queries: pd.DataFrame, column: str) -> list[str]:
    if column not in queries.columns:
        return []
    col = queries[column]
    values = col.cat.categories if isinstance(col.dtype, pd.CategoricalDtype) else col.dropna().unique()
    return [str(v) for v in values]


def _need_in_design(values, queries, column: str, slot: str, what: str, where: str) -> None:
    have = _design_values(queries, column)
    for i, value in enumerate(values):
        if str(value) in have:
            continue
        close = difflib.get_close_matches(str(value), have, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InputError(
            f"{value!r} is not a {what} of the study's {slot}{hint}" if have else f"the study has no {slot} slot",
            where=f"{where}[{i}]",
            fix=f"use {what}s of its {slot}: {', '.join(have)}" if have else f"remove the option, or add a {slot} slot",
        )


def _two_different(values: list, where: str, what: str, example: str) -> None:
    """A contrast compares two different things: ``[Vegetarian, Vegetarian]`` compares a group
    with itself (a difference of exactly 0 with SE 0: no t, no p), so it is refused here."""
    if len(values) == 2 and str(values[0]) == str(values[1]):
        raise InputError(
            f"the contrast compares {values[0]!r} with itself; it needs two different {what}",
            where=where,
            fix=f"name two different {what}, {example}",
        )


def check_analysis_design(queries: pd.DataFrame, options, where: str = "analysis.options") -> None:
    """Options that name groups, words or templates of the design (``*_contrast``, ``forms``,
    ``mask_wordings``, ``relations``, ``perceivers``) name ones it has, a pair two different ones
    (else an InputError names the option, the value and the nearest name); other shapes are left
    to the analysis.

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("The [MASK] are kind.", MASK={"Swedes": ["swedes"], "Greeks": ["greeks"]})
    >>> check_analysis_design(q, {"mask_contrast": ["Swedes", "Greeks"]})
    >>> check_analysis_design(q, {"mask_contrast": ["Swedes", "Greek"]})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: analysis.options.mask_contrast[1]: 'Greek' is not a group of the study's MASK (did you mean
    'Greeks'?)
      fix: use groups of its MASK: Swedes, Greeks
    """
    options = options if isinstance(options, Mapping) else {}
    for key, slot in _GROUP_OPTIONS.items():
        if isinstance(options.get(key), list):
            _need_in_design(options[key], queries, slot, slot, "group", f"{where}.{key}")
            _two_different(options[key], f"{where}.{key}", f"{slot} groups", "e.g. [Vegetarian, Hunter] (first minus second)")
    for loc, pair in _lists_in(options, "forms", Mapping, where):
        _need_in_design(pair, queries, "ATTRIB", "ATTRIB", "group", loc)
        _two_different(pair, loc, "ATTRIB groups", "e.g. [MathInterest, ArtsInterest] (focal, reference)")
    for loc, words in _lists_in(options, "relations", Mapping, where):
        _two_different(words, loc, "[MASK] words", "e.g. [like, dislike] (positive, negative)")
    for loc, pair in _lists_in(options, "century_contrasts", list, where):
        _two_different(pair, loc, "years", "e.g. [2000, 1900] (later, earlier)")
    for loc, words in _lists_in(options, "mask_wordings", list, where) + _lists_in(options, "relations", Mapping, where):
        _need_in_design(words, queries, "M_word", "MASK", "word", loc)
    if isinstance(options.get("perceivers"), Mapping):
        templates = list(options["perceivers"].values())
        if all(isinstance(t, str) for t in templates):
            _need_in_design(templates, queries, "query", "queries", "template", f"{where}.perceivers")


def _lists_in(options: Mapping, key: str, shape: type, where: str) -> list[tuple[str, list]]:
    """(location, list) of each list in option ``key`` when it has ``shape``: a mapping's values
    (``where.key.name``) or a list's items (``where.key[i]``)."""
    value = options.get(key)
    if not isinstance(value, shape):
        return []
    if shape is Mapping:
        return [(f"{where}.{key}.{k}", v) for k, v in value.items() if isinstance(v, list)]
    return [(f"{where}.{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, list)]


def load_study(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None, check_analysis=None) -> Study:
    """Load and validate a study file; raise :class:`InputError` naming the first problem(s).

    ``criteria_dir``: the folder of criterion tables (``resources/criteria``) that word lists
    written ``{criterion: NAME, column: COL}`` read. ``check_analysis(name, options, where=...)``
    checks the ``analysis`` block (default: :func:`check_analysis_name`).

    Examples
    --------
    >>> import fmat, tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "S.yaml").write_text('''
    ... id: S
    ... title: Warmth of two groups
    ... queries:
    ...   - query: "The [MASK] are {ATTRIB}."
    ...     MASK: {Swedes: [swedes], Greeks: [greeks]}
    ...     ATTRIB: {Warm: [kind, friendly], Cold: [rude, hostile]}
    ... lpr: {mask_pair: false, attrib_pair: true}
    ... analysis: {name: stereotype_pairs, options: {mask_contrast: [Swedes, Greeks]}}
    ... ''')
    >>> study = fmat.load_study(tmp / "S.yaml")
    >>> study.id, len(study.queries), study.analysis["name"]
    ('S', 8, 'stereotype_pairs')

    A problem is found before any model loads, naming the file, the field and the fix:

    >>> _ = (tmp / "S.yaml").write_text((tmp / "S.yaml").read_text().replace("[Swedes, Greeks]", "[Swedes, Greek]"))
    >>> fmat.load_study(tmp / "S.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fmat.errors.InputError: ...analysis.options.mask_contrast...'Greek'...
    """
    path = Path(path)
    data = read_study_yaml(path)
    problems = _schema_problems(data, str(path))
    if problems:
        more = (
            f"\n  (and {len(problems) - 1} more problem(s); run 'fmat query --study {path} --check')" if len(problems) > 1 else ""
        )
        raise InputError(problems[0] + more, fix="see docs/study-files.md for every key and its allowed values")
    fields = _check_semantics(data, path, criteria_dir, check_analysis)
    keys = item_key_map(fields["items"])
    if keys:  # the phrases' item keys travel with the tables (fmat.reliability.with_item_keys)
        fields["queries"].attrs[ITEM_KEYS] = keys
    return Study(
        id=data["id"],
        title=data["title"],
        family=data.get("family"),
        source=data.get("source", ""),
        notes=data.get("notes", ""),
        path=path,
        raw=data,
        **fields,
    )


def study_lpr_options(path: str | os.PathLike) -> dict:
    """The ``lpr`` options of a study file with defaults filled in (schema-checked; the query
    design is not expanded, so no criteria tables are needed).

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> study_lpr_options(path)
    {'mask_pair': False, 'target_pair': True, 'attrib_pair': True}
    """
    data = read_study_yaml(path)
    problems = _schema_problems(data, str(path))
    if problems:
        raise InputError(problems[0], fix="see docs/study-files.md")
    return _with_defaults(data)[0]


def score_options(path: str | os.PathLike) -> dict:
    """The ``score:`` block of a study file with its defaults (``method, add_tokens, na_out``),
    read without expanding the word lists (no criterion tables needed).

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> score_options(path)
    {'method': 'fmat', 'add_tokens': False, 'na_out': True}
    """
    data = read_study_yaml(Path(path))
    opts = {**SCORE_DEFAULTS, **(data.get("score") or {})}
    return {k: opts[k] for k in SCORE_DEFAULTS}


def study_criteria(path: str | os.PathLike) -> list[str]:
    """Names of the criterion tables a study file's word lists read (``{criterion: NAME, ...}``),
    in order of first appearance (each one ``<criteria_dir>/<NAME>.parquet``).

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> study_criteria(path)
    []
    """
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            name = node.get("criterion")
            if isinstance(name, str) and name not in found:
                found.append(name)
            node = list(node.values())
        for value in node if isinstance(node, list) else ():
            walk(value)

    walk(read_study_yaml(Path(path)).get("queries"))
    return found


def validate_study_file(path: str | os.PathLike, criteria_dir: str | os.PathLike | None = None, check_analysis=None) -> list[str]:
    """All schema problems of a study file, or else its first semantic problem ([] when valid).

    Criterion word lists are only resolved when ``criteria_dir`` is given; otherwise such lists
    are skipped (structure still checked) so a file can be validated before criteria exist.

    Examples
    --------
    >>> from fmat.study import example_file
    >>> path = example_file()  # S.yaml: two groups (Swedes, Greeks), warm and cold words
    >>> validate_study_file(path)
    []
    >>> _ = path.write_text(path.read_text().replace("title:", "titel:"))
    >>> validate_study_file(path)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    ["...: titel: unknown key 'titel'; allowed keys here: id, title, family, source, notes, queries, lpr, reliability, score,
    analysis", "...: title: required key 'title' is missing"]
    """
    path = Path(path)
    try:
        data = read_study_yaml(path)
    except InputError as err:
        return [str(err)]
    problems = _schema_problems(data, str(path))
    if problems:
        return problems
    if criteria_dir is None:
        data = _stub_criteria(data)
    try:
        _check_semantics(data, path, criteria_dir, check_analysis)
    except InputError as err:
        return [str(err)]
    return []


def _stub_criteria(data: dict) -> dict:
    """Replace criterion word lists by placeholder words (for validation without criteria)."""
    data = copy.deepcopy(data)
    for block in data.get("queries", []):
        for slot in SLOTS:
            groups = block.get(slot) or {}
            n = max((len(v) for v in groups.values() if isinstance(v, list)), default=2)
            for g, spec in groups.items():
                if isinstance(spec, dict) and "criterion" in spec:
                    groups[g] = [f"<{spec['criterion']}.{spec['column']} {k + 1}>" for k in range(n)]
    return data


#: the docstrings' example study file (:func:`example_file`)
EXAMPLE_STUDY = """id: S
title: Warmth of two groups
queries:
  - query: "The [MASK] are {ATTRIB}."
    MASK: {Swedes: [swedes], Greeks: [greeks]}
    ATTRIB: {Warm: [kind, friendly], Cold: [rude, hostile]}
lpr: {mask_pair: false, attrib_pair: true}
"""


def example_file(folder: str | os.PathLike | None = None) -> Path:
    """Write the docstrings' example study file, ``S.yaml`` (two MASK groups, warm and cold
    ATTRIB words), into ``folder`` (default: a new temporary folder) and return its path.

    Examples
    --------
    >>> path = example_file()
    >>> path.name, load_study(path).id
    ('S.yaml', 'S')
    """
    import tempfile  # here: only the examples use it

    path = Path(folder if folder is not None else tempfile.mkdtemp()) / "S.yaml"
    path.write_text(EXAMPLE_STUDY, encoding="utf-8")
    return path
