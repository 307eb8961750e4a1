"""Query design: build the query table of an FMAT study (R: ``FMAT_query``, ``FMAT_query_bind``).

A *query* is a sentence with exactly one ``[MASK]`` and optionally a ``{TARGET}`` and/or an
``{ATTRIB}`` placeholder; word *groups* are ordered mappings ``{group name: [words]}`` (R's
``.()``). :func:`query` crosses them into one row per sentence × mask option, exactly as FMAT
2026.1 does (columns, ``Categorical`` levels, pair labels and row order: docs/query-design.md,
"The query table"; checked against R output in tests/data/r_fmat/). Designs FMAT would pad,
recycle or fill silently raise :class:`~fmat.errors.InputError` instead; group names are kept
as written (no R ``data.frame()`` name mangling).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from . import arguments, validate
from .errors import InputError
from .io import read_table, table_format, write_table

SLOTS = ("MASK", "TARGET", "ATTRIB")
TYPES = ("M", "MT", "MA", "MTA")

#: Columns of each type of query table (without the optional leading ``qid``).
COLUMNS = {
    "M": ["query", "MASK", "M_pair", "M_word"],
    "MT": ["query", "MASK", "M_pair", "M_word", "TARGET", "T_pair", "T_word"],
    "MA": ["query", "MASK", "M_pair", "M_word", "ATTRIB", "A_pair", "A_word"],
    "MTA": ["query", "MASK", "M_pair", "M_word", "TARGET", "T_word", "ATTRIB", "A_word"],
}
#: Every column a query table can have, in table order.
QUERY_COLUMNS = ["qid", "query", "MASK", "M_pair", "M_word", "TARGET", "T_pair", "T_word", "ATTRIB", "A_pair", "A_word"]


def _loc(where: str | None, field: str) -> str:
    return f"{where}.{field}" if where else field


def normalize_queries(query, where: str | None = None) -> list[str]:
    """Queries as a list of strings, ``[mask]`` upper-cased; each must hold exactly one ``[MASK]``.

    Examples
    --------
    >>> normalize_queries("The [mask] is here.")
    ['The [MASK] is here.']
    >>> normalize_queries("no mask", where="study.yaml")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml.query: query 'no mask' has no [MASK]
      fix: put exactly one [MASK] where the MASK words go
    """
    if isinstance(query, str):
        queries = [query]
    elif isinstance(query, Sequence) and not isinstance(query, (bytes, Mapping)):
        queries = list(query)
    else:
        raise InputError(
            f"query must be a string or a list of strings, not {type(query).__name__}",
            where=_loc(where, "query"),
            fix='write e.g. query: "The [MASK] is {TARGET}."',
        )
    if not queries:
        raise InputError(
            "no query given",
            where=_loc(where, "query"),
            fix='give at least one sentence with one [MASK], e.g. "[MASK] is a nurse."',
        )
    out = []
    for i, q in enumerate(queries):
        loc = _loc(where, f"query[{i}]" if len(queries) > 1 else "query")
        if not isinstance(q, str) or not q.strip():
            raise InputError(
                f"query {q!r} is not a non-empty string", where=loc, fix='write the sentence in quotes, e.g. "[MASK] is a nurse."'
            )
        q = validate.nfc(q)
        validate.check_query_text(q, loc)
        n = len(validate.MASK_RE.findall(q))
        if n == 0:
            raise InputError(f"query {q!r} has no [MASK]", where=loc, fix="put exactly one [MASK] where the MASK words go")
        if n > 1:
            raise InputError(
                f"query {q!r} has {n} [MASK] tokens",
                where=loc,
                fix="use exactly one [MASK] per query (FMAT scores one masked position)",
            )
        out.append(validate.MASK_RE.sub("[MASK]", q))
    repeat = pd.Series(out, dtype=object).duplicated().to_numpy()
    if repeat.any():
        raise InputError(
            f"query {out[repeat.argmax()]!r} is listed twice",
            where=_loc(where, "query"),
            fix="remove the duplicate (it would duplicate every row)",
        )
    return out


def normalize_groups(groups, slot: str, where: str | None = None) -> dict[str, list[str]]:
    """Validate a ``{group: [words]}`` mapping; words become strings (numbers too: years).

    A single string is one word (R's ``.(Male="He")``). Empty groups, empty or duplicate words
    within a group, and non-string group names are errors.

    Examples
    --------
    R FMAT's ``.(Male = "He")`` (one word) is a group of one:

    >>> normalize_groups({"Male": "he", "Female": ["she", "her"]}, "MASK")
    {'Male': ['he'], 'Female': ['she', 'her']}
    >>> normalize_groups({"Male": []}, "MASK", where="study.yaml")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml.MASK.Male: group 'Male' is empty
      fix: give at least one word, or remove the group
    """
    if groups is None:
        return {}
    loc = _loc(where, slot)
    if not isinstance(groups, Mapping):
        raise InputError(
            f"{slot} must be a mapping of group name to a list of words, not {type(groups).__name__}",
            where=loc,
            fix=f"write e.g. {slot}: {{Male: [he, him], Female: [she, her]}}",
        )
    out: dict[str, list[str]] = {}
    for name, words in groups.items():
        gloc = f"{loc}.{name}"
        if not isinstance(name, str) or not name.strip():
            raise InputError(
                f"group name {name!r} is not a non-empty string", where=loc, fix="name every group with a word, e.g. Male, Female"
            )
        if isinstance(words, (str, int, float)) and not isinstance(words, bool):
            words = [words]
        if not isinstance(words, Sequence) or isinstance(words, (bytes, Mapping)):
            raise InputError(
                f"group {name!r} must be a list of words, not {type(words).__name__}",
                where=gloc,
                fix=f"write e.g. {name}: [word1, word2]",
            )
        if not words:
            raise InputError(f"group {name!r} is empty", where=gloc, fix="give at least one word, or remove the group")
        clean = []
        for j, w in enumerate(words):
            if isinstance(w, bool) or not isinstance(w, (str, int, float)):
                raise InputError(
                    f"word {j + 1} of group {name!r} is {w!r}, not a word",
                    where=gloc,
                    fix="write every word as a string (quote it in YAML)",
                )
            w = _as_level(w)
            if not w.strip():
                raise InputError(f"word {j + 1} of group {name!r} is empty", where=gloc, fix="remove the empty word")
            validate.check_word(w, gloc, f"word {j + 1} of group {name!r}")
            clean.append(w)
        dups = validate.duplicates(clean)
        if dups:
            raise InputError(
                f"group {name!r} lists {validate._listing(dups)} more than once", where=gloc, fix="remove the duplicate words"
            )
        out[name] = clean
    return out


def _check_equal_sizes(groups: dict[str, list[str]], slot: str, where: str | None, why: str) -> None:
    sizes = {g: len(w) for g, w in groups.items()}
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"{g} has {n}" for g, n in sizes.items())
        raise InputError(
            f"{slot} groups have unequal numbers of words ({detail}); {why}",
            where=_loc(where, slot),
            fix=f"give every {slot} group the same number of words (word j of each "
            "group forms pair j), or split the design into several query blocks",
        )


def _categorical(values: list) -> pd.Categorical:
    """A Categorical with levels in order of first appearance (R ``forcats::as_factor``)."""
    levels = list(dict.fromkeys(v for v in values if v is not None))
    return pd.Categorical(values, categories=levels)


def _frame(rows: dict[str, list], type_: str) -> pd.DataFrame:
    df = pd.DataFrame({k: _categorical(v) for k, v in rows.items()})
    df.attrs["type"] = type_
    return df


def query(query, MASK=None, TARGET=None, ATTRIB=None, *, where: str | None = None) -> pd.DataFrame:
    """Build a query table (R: ``FMAT_query``); its shape: docs/query-design.md.

    Parameters
    ----------
    query : str or list of str
        Sentence(s), each with exactly one ``[MASK]`` (``[mask]`` is accepted and upper-cased),
        and ``{TARGET}``/``{ATTRIB}`` when those groups are given.
    MASK, TARGET, ATTRIB : mapping of group name to list of words
        Ordered groups (R's ``.()``); MASK is required and its groups must have equal sizes.
        TARGET/ATTRIB groups must have equal sizes when there are several and only one of the
        two is given (pairs ``T_pair``/``A_pair`` label word j of every group); with both (MTA)
        the table is the full cross product and sizes may differ.
    where : str, optional
        Location prefix for error messages (e.g. ``config/studies/2A.yaml: queries[0]``).

    Examples
    --------
    >>> query("[MASK] is {TARGET}.", MASK={"Male": ["He"], "Female": ["She"]},
    ...       TARGET={"Occ": ["a nurse", "a doctor"]}).shape
    (4, 7)
    """
    where = arguments.text("where", where, optional=True)
    queries = normalize_queries(query, where)
    groups = {slot: normalize_groups(words, slot, where) for slot, words in zip(SLOTS, (MASK, TARGET, ATTRIB))}
    mask, target, attrib = groups.values()
    if not mask:
        raise InputError(
            "no MASK groups given",
            where=_loc(where, "MASK"),
            fix="give the [MASK] options, e.g. MASK: {Male: [he], Female: [she]}",
        )
    _check_equal_sizes(mask, "MASK", where, "FMAT would pad with NA and silently drop rows")
    for slot, words in groups.items():
        validate.check_contrast(words, slot, _loc(where, slot))
    _check_placeholders(queries, target, attrib, where)
    type_ = _design_type(target, attrib, where)
    n_mask = sum(map(len, mask.values()))
    n_t, n_a = sum(map(len, target.values())) or 1, sum(map(len, attrib.values())) or 1
    validate.check_rows(len(queries) * n_mask * n_t * n_a, where)
    mask_rows = [(g, str(j + 1), w) for g, words in mask.items() for j, w in enumerate(words)]
    cols = COLUMNS[type_]
    rows: dict[str, list] = {c: [] for c in (["qid"] if len(queries) > 1 else []) + cols}
    for qi, q in enumerate(queries):
        for extra, (mg, mj, mw) in _combinations(type_, mask_rows, target, attrib):
            if "qid" in rows:
                rows["qid"].append(str(qi + 1))
            for col, value in zip(cols, [q, mg, mj, mw, *extra]):
                rows[col].append(value)
    return _frame(rows, type_)


def _check_placeholders(queries: list[str], target: dict, attrib: dict, where: str | None) -> None:
    """Each query has ``{TARGET}`` / ``{ATTRIB}`` once where those groups are given, never where not."""
    for slot, groups in (("TARGET", target), ("ATTRIB", attrib)):
        ph = "{" + slot + "}"
        for i, q in enumerate(queries):
            n = q.count(ph)
            qloc = _loc(where, f"query[{i}]" if len(queries) > 1 else "query")
            if groups and n == 0:
                raise InputError(
                    f"{slot} groups are given but query {q!r} has no {ph}",
                    where=qloc,
                    fix=f"put {ph} where the {slot} words go, or remove the {slot} groups",
                )
            if not groups and n:
                raise InputError(
                    f"query {q!r} has {ph} but no {slot} groups are given",
                    where=_loc(where, slot),
                    fix=f"add {slot}: {{Group: [word, ...]}}, or remove {ph} from the query",
                )
            if n > 1:
                raise InputError(
                    f"query {q!r} has {ph} {n} times; only the first would be filled", where=qloc, fix=f"use {ph} once per query"
                )


def _design_type(target: dict, attrib: dict, where: str | None) -> str:
    """M, MT, MA or MTA; the groups of a lone TARGET or ATTRIB slot are of equal sizes (pairs)."""
    if bool(target) != bool(attrib):
        slot, groups = ("TARGET", target) if target else ("ATTRIB", attrib)
        _check_equal_sizes(groups, slot, where, f"{slot[0]}_pair needs word j in every group")
        return "M" + slot[0]
    return "MTA" if target else "M"


def _combinations(type_: str, mask_rows: list, target: dict, attrib: dict) -> list:
    """``[(extra, mask_row)]`` of one query in the table's row order: ``extra`` the values of the
    columns after ``M_word`` (group, pair, word of TARGET or ATTRIB; both groups and words in MTA)."""
    if type_ == "M":
        return [((), m) for m in mask_rows]
    if type_ in ("MT", "MA"):
        groups = target or attrib
        prefix = "-".join(groups)
        paired = [(g, f"{prefix}.{j + 1}", w) for g, words in groups.items() for j, w in enumerate(words)]
        return [(x, m) for x in paired for m in mask_rows]
    combos = []
    for tg, twords in target.items():
        for ag, awords in attrib.items():
            for aw in awords:  # expand.grid: the first factor (target word) varies fastest
                for tw in twords:
                    combos.extend(((tg, tw, ag, aw), m) for m in mask_rows)
    return combos


def table_type(df: pd.DataFrame, where: str | None = None) -> str:
    """The type (M/MT/MA/MTA) of a query-shaped table, from its columns (``attrs`` checked too).

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> import pandas as pd
    >>> table_type(q), table_type(pd.DataFrame(columns=["query", "MASK", "M_pair", "M_word"]))
    ('MT', 'M')
    """
    has_t, has_a = "T_word" in df.columns, "A_word" in df.columns
    type_ = "MTA" if has_t and has_a else "MT" if has_t else "MA" if has_a else "M"
    declared = df.attrs.get("type")
    if declared and declared != type_:
        raise InputError(
            f"table says type {declared!r} but its columns make it {type_!r}",
            where=where,
            fix="rebuild the table with fmat.query()",
        )
    return type_


def query_bind(*tables: pd.DataFrame) -> pd.DataFrame:
    """Row-bind query tables of the same type and renumber ``qid`` (R: ``FMAT_query_bind``).

    ``qid`` is the number of the query in order of first appearance (R:
    ``as.factor(as.numeric(query))``), so blocks that share a sentence share its qid. The result
    always has ``qid``, even for a single table. Tables of different types are an error.

    Examples
    --------
    >>> import fmat
    >>> a = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> b = fmat.query("[MASK] is a {TARGET}.", MASK={"Male": ["he"], "Female": ["she"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> both = fmat.query_bind(a, b)
    >>> len(both), both["qid"].astype(int).unique().tolist()
    (8, [1, 2])
    """
    if len(tables) == 1 and isinstance(tables[0], (list, tuple)):
        tables = tuple(tables[0])
    if not tables:
        raise InputError("query_bind() needs at least one query table", fix="pass tables from fmat.query()")
    types = [table_type(t) for t in tables]
    if len(set(types)) > 1:
        detail = ", ".join(f"table {i + 1} is {t}" for i, t in enumerate(types))
        raise InputError(
            f"query tables have different types ({detail})",
            fix="bind only tables of one type (M, MT, MA or MTA): every block needs the same slots (MASK, TARGET, ATTRIB)",
        )
    cols = COLUMNS[types[0]]
    rows = {c: [None if pd.isna(v) else str(v) for t in tables for v in t[c].tolist()] for c in cols}
    qnum = {q: str(i + 1) for i, q in enumerate(dict.fromkeys(rows["query"]))}
    rows = {"qid": [qnum[q] for q in rows["query"]], **rows}
    return _frame(rows, types[0])


def parse_r_csv(text: str, sep: str = ",", where: str | None = None) -> list[list[str | None]]:
    """Split R-style delimited text into rows of fields, keeping quoted and unquoted apart.

    A quoted field is a string (``""`` inside is a quote), even ``"NA"``; an unquoted ``NA`` or
    an unquoted empty field is missing (R ``write.csv`` writes NA unquoted, ``fwrite`` writes it
    empty). Python's csv module cannot tell quoted from unquoted, hence this small scanner.

    Examples
    --------
    R ``write.csv`` quotes strings and writes ``NA`` unquoted:

    >>> parse_r_csv('"query","M_word"\\n"[MASK] is here.",NA\\n"NA",""')
    [['query', 'M_word'], ['[MASK] is here.', None], ['NA', '']]
    """
    text = text.lstrip("\ufeff")
    field = re.compile(r'"((?:[^"]|"")*)"|([^' + re.escape(sep) + r'\r\n"]*)')  # a quoted or an unquoted field
    rows: list[list[str | None]] = []
    row: list[str | None] = []
    pos, n, line = 0, len(text), 1
    while pos < n:
        m = field.match(text, pos)
        if m.group(1) is not None:
            value = m.group(1).replace('""', '"')
            line += value.count("\n")
        else:
            value = None if m.group(2) in ("NA", "") else m.group(2)
        row.append(value)
        pos = m.end()
        if pos >= n:
            rows.append(row)
            break
        c = text[pos]
        if c == sep:
            pos += 1
            if pos >= n:
                row.append(None)
                rows.append(row)
            continue
        if c in "\r\n":
            pos += 2 if text.startswith("\r\n", pos) else 1
            rows.append(row)
            row = []
            line += 1
            continue
        raise InputError(
            f"line {line}: unexpected {c!r} inside a field",
            where=where,
            fix="quote fields that contain quotes (R write.csv does this)",
        )
    return rows


def _rows_to_frame(rows: list[list[str | None]], where: str) -> pd.DataFrame:
    if not rows or not rows[0]:
        raise InputError("the file is empty", where=where, fix="export the table with write.csv()")
    header = [h if h is not None else "" for h in rows[0]]
    body = [r for r in rows[1:] if not (len(r) == 1 and r[0] is None)]  # blank lines
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise InputError(
                f"row {i + 1} has {len(r)} fields but the header has {len(header)}",
                where=where,
                fix="check the file is one table written by write.csv/fwrite",
            )
    data = {h: [r[j] for r in body] for j, h in enumerate(header)}
    df = pd.DataFrame(data, columns=header, dtype=object) if body else pd.DataFrame(columns=header)
    # R write.csv's row names: an unnamed first column ("" in the header)
    if header and header[0] in ("", "Unnamed: 0", "...1", "X"):
        df = df.drop(columns=header[0])
    return df


def read_r_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV/TSV written by R (``write.csv``, ``readr::write_csv``, ``fwrite``) as strings
    or ``None`` (missing); the row-names column is dropped.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "from_r.csv"
    >>> _ = path.write_text('"","query","MASK"\\n"1","[MASK] is here.",NA\\n')
    >>> read_r_table(path)
                 query  MASK
    0  [MASK] is here.  None
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}", fix="check the path (relative to the current folder)")
    sep = "\t" if path.suffix.lower() in (".tsv", ".txt") else ","
    text = validate.read_text(path, "table")
    validate.check_separator(text, sep, str(path))
    return _rows_to_frame(parse_r_csv(text, sep, where=str(path)), str(path))


def as_query_table(df: pd.DataFrame, where: str | None = None) -> pd.DataFrame:
    """Restore a query-shaped table: categorical query columns (levels in order of first
    appearance), ``attrs["type"]``; other columns (e.g. ``prob``) are kept as they are.

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> plain = q.astype(str)
    >>> table = as_query_table(plain)
    >>> table.attrs["type"], table["MASK"].cat.categories.tolist()
    ('MT', ['Male', 'Female'])
    """
    missing = [c for c in ("query", "MASK", "M_pair", "M_word") if c not in df.columns]
    if missing:
        raise InputError(
            f"not a query table: columns {', '.join(missing)} are missing (it has {', '.join(map(str, df.columns))})",
            where=where,
            fix="give a table made by fmat query / FMAT_query()",
        )
    type_ = table_type(df, where)
    expected = COLUMNS[type_]
    present = [c for c in QUERY_COLUMNS if c in df.columns]
    extra_pairs = [c for c in ("T_pair", "A_pair") if c in present and c not in expected]
    lacking = [c for c in expected if c not in df.columns]
    if lacking or extra_pairs:
        raise InputError(
            f"columns do not make a {type_} query table (missing: {lacking or 'none'}, unexpected: {extra_pairs or 'none'})",
            where=where,
            fix="give a table made by fmat query / FMAT_query()",
        )
    out = df.copy()
    for c in present:
        out[c] = _categorical([None if pd.isna(v) else _as_level(v) for v in out[c].tolist()])
    out.attrs = {"type": type_}
    return out


def _as_level(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return validate.nfc(str(v))


def read_query_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a query table from parquet, or from CSV/TSV exported by R (``write.csv``,
    ``readr::write_csv``, ``data.table::fwrite``) or Python (docs/query-design.md).

    Examples
    --------
    Reads what R FMAT's ``FMAT_query()`` table becomes after ``write.csv()``:

    >>> import fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> import tempfile, pathlib
    >>> path = write_query_table(q, pathlib.Path(tempfile.mkdtemp()) / "q.csv")
    >>> again = read_query_table(path)
    >>> again.attrs["type"], len(again), again["T_word"].tolist()
    ('MT', 4, ['nurse', 'nurse', 'pilot', 'pilot'])
    """
    path = Path(path)
    df = read_table(path) if table_format(path) == "parquet" else read_r_table(path)
    validate.check_query_table(df, where=str(path))
    return as_query_table(df, where=str(path))


def write_query_table(df: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write a query table as parquet (default; keeps categories) or CSV/TSV (atomic, fmat.io).

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> import tempfile, pathlib
    >>> path = write_query_table(q, pathlib.Path(tempfile.mkdtemp()) / "q.parquet")
    >>> path.name, len(read_query_table(path))
    ('q.parquet', 4)
    """
    table_type(df)
    return write_table(df, path, fmt)
