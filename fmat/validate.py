"""One validation layer for every input fmat reads (study files, query tables, configs).

Every entry point (the API, the CLI, the workflow's config) goes through these small, pure,
linear-time checks *before any model loads*; each raises :class:`~fmat.errors.InputError`
naming the file, the field and the fix. The rules: ``docs/study-files.md`` ("Rules every input
must follow").
"""

from __future__ import annotations

import difflib
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

from .errors import InputError

#: Caps (each error says which cap and how to stay under it).
MAX_FILE_BYTES = 256 * 1024 * 1024  # a study file or CSV query table
MAX_YAML_NODES = 5_000_000  # YAML nodes after alias expansion
MAX_RANGE = 100_000  # words made by one {range: [start, end]}
MAX_ROWS = 20_000_000  # rows of one query table
MAX_WORD_CHARS = 500  # characters of one word/phrase (per-model token check at scoring)
MAX_QUERY_CHARS = 2_000  # characters of one query template
MAX_LISTED = 10  # problems listed before "... and N more"

PLACEHOLDERS = ("TARGET", "ATTRIB")
_BRACE_RE = re.compile(r"\{([^{}]*)\}")
MASK_RE = re.compile(r"\[mask\]", re.IGNORECASE)  # [MASK] in any case (fmat.design uses it too)
_CONFUSABLE = ("LATIN", "CYRILLIC", "GREEK")


def truncated(problems: Sequence[str], limit: int = MAX_LISTED) -> list[str]:
    """The first ``limit`` problems, plus "... and N more" when there are more.

    Examples
    --------
    >>> truncated([f"row {i}" for i in range(1, 8)], limit=3)
    ['row 1', 'row 2', 'row 3', '... and 4 more']
    """
    problems = list(problems)
    return problems[:limit] + ([f"... and {len(problems) - limit} more"] if len(problems) > limit else [])


def _listing(items: Iterable, limit: int = MAX_LISTED) -> str:
    items = list(items)
    text = ", ".join(repr(x) for x in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")


def read_text(path: str | os.PathLike, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of ``path`` decoded as UTF-8 (a BOM is dropped); every failure is an InputError
    naming the file: missing, a directory, unreadable, too large, not UTF-8 (with the byte offset).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "study.yaml").write_bytes(b"\\xef\\xbb\\xbfname: 1A\\n")
    >>> read_text(tmp / "study.yaml")
    'name: 1A\\n'
    >>> _ = (tmp / "latin1.yaml").write_bytes(b"name: na\\xefve\\n")
    >>> read_text(tmp / "latin1.yaml", "study file")  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: ...: study file is not UTF-8 text: byte 8 (line 1) is 0xef
      fix: save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8, or your editor's 'Save with encoding'); binary files (xlsx,
    gz) are not accepted
    """
    path = Path(path)
    where = str(path)
    if not path.exists():
        raise InputError(f"{what} not found: {path}", where=where, fix="check the path (relative to the current folder)")
    if path.is_dir():
        raise InputError(f"{what} {path} is a folder, not a file", where=where, fix=f"give the path of the {what} itself")
    try:
        size = path.stat().st_size
        data = path.read_bytes() if size <= max_bytes else None
    except MemoryError:
        raise InputError(f"{what} does not fit in memory", where=where, fix="split it into smaller files") from None
    except OSError as err:
        raise InputError(
            f"cannot read {what}: {err.strerror or err}", where=where, fix="check that the file exists and is readable"
        ) from None
    if data is None:
        raise InputError(
            f"{what} is {size:,} bytes, more than the limit of {max_bytes:,}", where=where, fix="split it into smaller files"
        )
    return decode_utf8(data, where, what)


def decode_utf8(data: bytes, where: str, what: str = "file") -> str:
    """``data`` as UTF-8 text; UTF-16 and binary files get a message that says so.

    Examples
    --------
    >>> decode_utf8("naïve".encode(), "words.txt")
    'naïve'
    >>> decode_utf8("naïve".encode("utf-16"), "words.txt")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: words.txt: file is UTF-16 text (it starts with a UTF-16 byte-order mark)
      fix: save it as UTF-8 (in R: write.csv(..., fileEncoding = 'UTF-8'))
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(
            f"{what} is UTF-16 text (it starts with a UTF-16 byte-order mark)",
            where=where,
            fix="save it as UTF-8 (in R: write.csv(..., fileEncoding = 'UTF-8'))",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"{what} is not UTF-8 text: byte {err.start} (line {line}) is 0x{data[err.start]:02x}",
            where=where,
            fix="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8, or your editor's "
            "'Save with encoding'); binary files (xlsx, gz) are not accepted",
        ) from None
    if "\x00" in text:
        raise InputError(
            f"{what} contains NUL bytes at offset {text.index(chr(0))}: it is binary or UTF-16",
            where=where,
            fix="give a UTF-8 text file",
        )
    return text.lstrip("\ufeff")


class YamlInt(int):
    """An int read from a plain YAML scalar; ``text`` is how it was written (``010``).

    Examples
    --------
    >>> n = load_yaml("seed: 010", "study.yaml")["seed"]
    >>> n, n.text, isinstance(n, YamlInt)
    (8, '010', True)
    """

    text: str


class YamlFloat(float):
    """A float read from a plain YAML scalar; ``text`` is how it was written (``1e3``, ``.inf``).

    Examples
    --------
    >>> x = load_yaml("alpha: 0.50", "study.yaml")["alpha"]
    >>> x, x.text, isinstance(x, YamlFloat)
    (0.5, '0.50', True)
    """

    text: str


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C: a word pasted decomposed (macOS, a PDF: "nai" +
    U+0308 + "ve") becomes the composed form tokenizers' vocabularies hold ("na" + U+00EF + "ve").

    Examples
    --------
    >>> decomposed = "nai" + chr(0x308) + "ve"
    >>> len(decomposed), len(nfc(decomposed)), nfc(decomposed) == "naïve"
    (6, 5, True)
    """
    return unicodedata.normalize("NFC", text) if isinstance(text, str) and not text.isascii() else text


def check_separator(text: str, sep: str, where: str) -> None:
    """A table whose header line has no ``sep`` but semicolons is a semicolon-separated CSV
    (European Excel, R ``write.csv2``): named, with the fix, instead of a parse error.

    Examples
    --------
    A table R's ``write.csv2()`` wrote (semicolons) read as a CSV:

    >>> check_separator("query;MASK\\n[MASK] is here.;Male\\n", ",", "design.csv")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: design.csv: the header line has no comma but 1 semicolon(s): this is a semicolon-separated table
      fix: save it comma-separated (R: write.csv, not write.csv2; Excel: 'CSV UTF-8 (Comma delimited)'), or with tabs as .tsv;
    in Python: pd.read_csv(path, sep=';').to_csv(path, index=False)
    """
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    if sep not in header and header.count(";") >= 1:
        kind = "comma" if sep == "," else "tab"
        raise InputError(
            f"the header line has no {kind} but {header.count(';')} semicolon(s): this is a semicolon-separated table",
            where=where,
            fix="save it comma-separated (R: write.csv, not write.csv2; Excel: 'CSV UTF-8 (Comma "
            "delimited)'), or with tabs as .tsv; in Python: "
            "pd.read_csv(path, sep=';').to_csv(path, index=False)",
        )


def as_written(value) -> object:
    """A number read from YAML back as the text it was written with (``010`` -> "010").

    Examples
    --------
    >>> as_written(load_yaml("year: 010", "study.yaml")["year"]), as_written("text")
    ('010', 'text')
    """
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else value


@lru_cache(maxsize=None)
def _make_loader(base=None):
    # libyaml's CSafeLoader reads a large study file about 6x faster than the pure-Python
    # SafeLoader, the fallback where PyYAML lacks libyaml (tests/test_validate.py runs both).
    base = base or getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

    class StudyLoader(base):
        """Safe loading: duplicate keys refused, numbers keep their text, alias expansion capped."""

        def get_single_node(self):
            node = super().get_single_node()
            if node is not None:
                check_yaml_size(node, self.name)
            return node

    def construct_mapping(loader, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                dup = key in seen
                seen.add(key)
            except TypeError:
                raise InputError(
                    f"a mapping key is a list or mapping (line {key_node.start_mark.line + 1})",
                    where=loader.name,
                    fix="use plain words as keys",
                ) from None
            if dup:
                raise InputError(
                    f"key {key!r} appears twice in one mapping (line {key_node.start_mark.line + 1})",
                    where=loader.name,
                    fix="remove or rename one of them (YAML would silently keep the last)",
                )
        return loader.construct_mapping(node, deep=deep)

    def number(cls, construct):
        def construct_number(loader, node):
            out = cls(construct(loader, node))
            out.text = str(node.value)
            return out

        return construct_number

    StudyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    safe = yaml.constructor.SafeConstructor
    StudyLoader.add_constructor("tag:yaml.org,2002:int", number(YamlInt, safe.construct_yaml_int))
    StudyLoader.add_constructor("tag:yaml.org,2002:float", number(YamlFloat, safe.construct_yaml_float))
    return StudyLoader


def check_yaml_size(root, where: str, limit: int = MAX_YAML_NODES) -> int:
    """The number of YAML nodes after alias expansion (each alias counts its whole subtree);
    InputError when it exceeds ``limit`` or an alias refers to a node that contains it.

    Examples
    --------
    >>> import yaml
    >>> check_yaml_size(yaml.compose("MASK: {Male: [he, him], Female: [she, her]}"), "study.yaml")
    11
    """
    size: dict[int, int] = {}
    active: set[int] = set()  # the nodes being expanded: the ancestors of what the stack holds
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in size:
            continue
        if isinstance(node, yaml.ScalarNode):
            size[key] = 1
            continue
        kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        if done:
            active.discard(key)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            if size[key] > limit:
                raise InputError(
                    f"the YAML expands to more than {limit:,} nodes (aliases '*name' repeat what an anchor '&name' marks)",
                    where=where,
                    fix="write the word lists out, or use fewer and smaller aliases",
                )
            continue
        active.add(key)
        stack.append((node, True))
        for k in kids:
            if id(k) in active:
                raise InputError(
                    f"an alias refers to a node that contains it (line {k.start_mark.line + 1})",
                    where=where,
                    fix="remove the recursive alias",
                )
            if id(k) not in size:
                stack.append((k, False))
    return size[id(root)]


def _too_deep(where: str) -> InputError:
    return InputError(
        "the YAML is nested too deeply", where=where, fix="a study file needs only a few levels (see docs/study-files.md)"
    )


def load_yaml(text: str, where: str, loader_class=None):
    """Parse YAML ``text`` from file ``where`` with the study loader (``loader_class``: another
    :func:`_make_loader` class); every failure is an InputError naming the file.

    Examples
    --------
    >>> load_yaml("MASK: {Male: [he], Female: [she]}", "study.yaml")
    {'MASK': {'Male': ['he'], 'Female': ['she']}}
    >>> load_yaml("a: 1\\na: 2", "study.yaml")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml: key 'a' appears twice in one mapping (line 2)
      fix: remove or rename one of them (YAML would silently keep the last)
    """
    loader = None
    try:
        loader = (loader_class or _make_loader())(text)
        loader.name = where
        return loader.get_single_data()
    except yaml.YAMLError as err:
        msg = str(err).replace("<unicode string>", where)
        if "maximum nesting depth" in msg:  # libyaml's own cap (1,000 levels)
            raise _too_deep(where) from None
        mark = getattr(err, "problem_mark", None)
        lines = text.splitlines()
        if mark is not None and mark.line < len(lines) and "\t" in lines[mark.line]:
            column = lines[mark.line].index("\t") + 1
            raise InputError(
                f"a tab on line {mark.line + 1} (column {column}): YAML indents, and separates keys from "
                "values, with spaces only",
                where=f"{where}: line {mark.line + 1}",
                fix="replace the tab by spaces (an editor's 'convert tabs to spaces' does it for the whole file)",
            ) from None
        raise InputError(
            f"not valid YAML: {msg}", where=where, fix="check indentation and quoting (quote phrases containing ':' or '#')"
        ) from None
    except RecursionError:  # the pure-Python parser and the constructors
        raise _too_deep(where) from None
    except MemoryError:
        raise InputError("the YAML does not fit in memory", where=where, fix="make the file smaller") from None
    finally:
        if loader is not None:
            loader.dispose()


def _script(ch: str) -> str | None:
    try:
        return unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return None


def text_problem(text: str, what: str, max_chars: int) -> str | None:
    """Why ``text`` (a word or query) cannot be a stimulus as written, or None.

    Examples
    --------
    >>> text_problem("nurse", "word", 100) is None
    True
    >>> text_problem("nurse" * 30, "word", 100)
    "word is 150 characters long (limit 100): 'nursenursenursenursenursenursenursenurse'..."
    """
    if len(text) > max_chars:
        return f"{what} is {len(text):,} characters long (limit {max_chars:,}): {text[:40]!r}..."
    if text != text.strip():
        return f"{what} {text!r} has leading or trailing spaces"
    scripts = set()
    for i, ch in enumerate(text):
        if ch == " ":
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"):
            name = unicodedata.name(ch, "unnamed character")
            return f"{what} {text!r} contains U+{ord(ch):04X} ({name}) at character {i + 1}"
        if cat.startswith("L") and (script := _script(ch)) in _CONFUSABLE:
            scripts.add(script)
    if len(scripts) > 1:
        odd = sorted(scripts - {"LATIN"}) or sorted(scripts)
        chars = [f"U+{ord(c):04X} ({unicodedata.name(c)})" for c in text if _script(c) == odd[0]][:3]
        return f"{what} {text!r} mixes {' and '.join(sorted(scripts))} letters, which look alike: {', '.join(chars)}"
    if "  " in text:
        return f"{what} {text!r} has two spaces in a row"
    return None


def _check_text(text: str, what: str, max_chars: int, where: str) -> None:
    problem = text_problem(text, what, max_chars)
    if problem and "characters long" in problem:
        raise InputError(problem, where=where, fix="shorten it (a stimulus is a word or a short phrase)")
    if problem:
        plain = "no tabs, newlines, zero-width or non-breaking spaces, no letters from another alphabet that look like Latin ones"
        raise InputError(problem, where=where, fix=f"retype it with plain characters: {plain}")


def check_word(word: str, where: str, what: str = "word") -> None:
    """A MASK/TARGET/ATTRIB word as written: plain text, bounded length, no [MASK] or {…}.

    Examples
    --------
    >>> check_word("nurse", "study.yaml: TARGET.Job")
    >>> check_word("{TARGET}", "study.yaml: TARGET.Job")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml: TARGET.Job: word '{TARGET}' contains a brace ({ or }); placeholders belong in the query
      fix: remove the braces from the word
    """
    _check_text(word, what, MAX_WORD_CHARS, where)
    if MASK_RE.search(word):
        raise InputError(
            f"{what} {word!r} contains [MASK]", where=where, fix="only the query holds [MASK]; remove it from the word"
        )
    if "{" in word or "}" in word:
        raise InputError(
            f"{what} {word!r} contains a brace ({{ or }}); placeholders belong in the query",
            where=where,
            fix="remove the braces from the word",
        )


def placeholders(query: str, where: str) -> list[str]:
    """The placeholders of ``query`` (each ``TARGET`` or ``ATTRIB``); any other ``{…}``, a
    lower-case ``{target}``, a typo (``{ATRIB}``) or a stray brace is an InputError.

    Examples
    --------
    >>> placeholders("[MASK] is a {TARGET} who is {ATTRIB}.", "query")
    ['TARGET', 'ATTRIB']
    >>> placeholders("[MASK] is a {target}.", "query")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: query: query '[MASK] is a {target}.' has {target}; placeholders are written in capitals
      fix: write {TARGET}
    """
    found = []
    for m in _BRACE_RE.finditer(query):
        name = m.group(1)
        if name in PLACEHOLDERS:
            found.append(name)
            continue
        upper = name.strip().upper()
        if upper in PLACEHOLDERS:
            raise InputError(
                f"query {query!r} has {m.group(0)}; placeholders are written in capitals", where=where, fix=f"write {{{upper}}}"
            )
        close = difflib.get_close_matches(upper, PLACEHOLDERS, n=1, cutoff=0.6)
        hint = f"did you mean {{{close[0]}}}? " if close else ""
        raise InputError(
            f"query {query!r} has the unknown placeholder {m.group(0)} (it would stay in the sentence unfilled)",
            where=where,
            fix=f"{hint}fmat fills only {{TARGET}} and {{ATTRIB}}",
        )
    rest = _BRACE_RE.sub("", query)
    if "{" in rest or "}" in rest:
        raise InputError(
            f"query {query!r} has an unmatched brace",
            where=where,
            fix="write placeholders as {TARGET} or {ATTRIB}; remove other braces",
        )
    return found


#: quotation marks that open and close a whole template when a word processor's quotes (or a
#: second pair of straight quotes) were typed around it in YAML: they would be scored as text
_WRAPPING_QUOTES = {"\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", "\u2018": "\u2019", '"': '"', "'": "'"}


def check_query_text(query: str, where: str) -> list[str]:
    """A query template: plain text, known placeholders, not wrapped in quotation marks (a word
    processor's ``“...”``: YAML keeps them, and the model would read them); returns its placeholders.

    Examples
    --------
    >>> check_query_text("[MASK] is a {TARGET}.", "query")
    ['TARGET']
    >>> check_query_text("“[MASK] is here.”", "query")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: query: the query '“[MASK] is here.”' is wrapped in the quotation marks “...”: they are part of the
    sentence, so the model would read them (a study file's YAML keeps typographic quotes as text)
      fix: give the sentence without them; in a study file, quote it with straight double quotes: query: "[MASK] is here."
    """
    _check_text(query, "query", MAX_QUERY_CHARS, where)
    close = _WRAPPING_QUOTES.get(query[:1])
    if close and len(query) > 1 and query.endswith(close):
        raise InputError(
            f"the query {query!r} is wrapped in the quotation marks {query[0]}...{close}: they are part of the "
            "sentence, so the model would read them (a study file's YAML keeps typographic quotes as text)",
            where=where,
            fix=f'give the sentence without them; in a study file, quote it with straight double quotes: query: "{query[1:-1]}"',
        )
    return placeholders(query, where)


def duplicates(words: Iterable[str]) -> list[str]:
    """Words listed more than once, in order of first appearance (linear time).

    Examples
    --------
    >>> duplicates(["he", "she", "he", "him", "she"])
    ['he', 'she']
    """
    return [w for w, n in Counter(words).items() if n > 1]


def check_contrast(groups: dict, slot: str, where: str) -> None:
    """No word in two groups of one slot (``he`` in Male and Female makes the contrast 0).

    Examples
    --------
    >>> groups = {"Male": ["he", "him"], "Female": ["she", "he"]}
    >>> check_contrast(groups, "MASK", "study.yaml: MASK")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml: MASK: 1 word(s) appear in more than one MASK group: 'he' is in 'Male' and 'Female';
    their contrast would be exactly 0
      fix: give each MASK word to one group only
    """
    owner: dict[str, str] = {}
    shared: dict[str, list[str]] = {}
    for g, words in groups.items():
        for w in words:
            first = owner.setdefault(w, g)
            if first != g:
                shared.setdefault(w, [first]).append(g)
    if shared:
        detail = "; ".join(f"{w!r} is in {' and '.join(map(repr, gs))}" for w, gs in list(shared.items())[:MAX_LISTED])
        more = f" (and {len(shared) - MAX_LISTED} more)" if len(shared) > MAX_LISTED else ""
        raise InputError(
            f"{len(shared)} word(s) appear in more than one {slot} group: {detail}{more}; their contrast would be exactly 0",
            where=where,
            fix=f"give each {slot} word to one group only",
        )


def check_range(start: int, end: int, where: str) -> None:
    """A range of years (``{from: 1900, to: 2000}``) makes at most :data:`MAX_RANGE` words.

    Examples
    --------
    >>> check_range(1900, 2000, "study.yaml: TARGET.Year")
    >>> check_range(1, 10**9, "study.yaml: TARGET.Year")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml: TARGET.Year: range [1, 1000000000] makes 1,000,000,000 words (limit 100,000)
      fix: use a smaller range, or list the words in a table (criterion:)
    """
    if end - start + 1 > MAX_RANGE:
        raise InputError(
            f"range [{start}, {end}] makes {end - start + 1:,} words (limit {MAX_RANGE:,})",
            where=where,
            fix="use a smaller range, or list the words in a table (criterion:)",
        )


def check_rows(n: int, where: str | None) -> None:
    """A design makes at most :data:`MAX_ROWS` query rows.

    Examples
    --------
    >>> check_rows(1000, "study.yaml")
    >>> check_rows(10**12, "study.yaml")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: study.yaml: the design makes 1,000,000,000,000 query rows (limit 20,000,000)
      fix: use fewer queries or words, or split the study into several
    """
    if n > MAX_ROWS:
        raise InputError(
            f"the design makes {n:,} query rows (limit {MAX_ROWS:,})",
            where=where,
            fix="use fewer queries or words, or split the study into several",
        )


_WORD_COLUMNS = ("MASK", "M_pair", "M_word", "TARGET", "T_pair", "T_word", "ATTRIB", "A_pair", "A_word")


def check_query_table(df, where: str | None = None) -> None:
    """A query table (read from a file, or passed to ``fmat.run``) is fit to score: no missing
    cells, each query with one [MASK] and exactly the placeholders its columns fill, words as
    written, no duplicate rows, ``M_pair`` consistent, no word in two MASK groups of a query.

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("[MASK] is a {TARGET}.", MASK={"Male": ["he"], "Female": ["she"]}, TARGET={"Job": ["nurse"]})
    >>> check_query_table(q)
    >>> check_query_table(q.assign(T_word=[None, "nurse"]), "design.csv")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: design.csv: T_word: column T_word is missing (NA/empty) in 1 row(s): row(s) 1 (row 1 = the first
    data row)
      fix: FMAT pads unequal groups with NA: give every group the same number of words, or remove those rows
    """
    where = where or "query table"
    if "query" not in df.columns or "M_word" not in df.columns:
        return  # not a query table: fmat.design.as_query_table names the missing columns
    cols = [c for c in ("qid", "query") + _WORD_COLUMNS if c in df.columns]
    _check_missing_cells(df, cols, where)
    _check_query_texts(df, where)
    for c in ("M_word", "T_word", "A_word"):
        if c in df.columns:
            for w in pd.unique(df[c].astype(str)):
                check_word(w, f"{where}: {c}")
    key = [c for c in df.columns if c in ("query", "MASK", "M_pair", "TARGET", "T_pair", "T_word", "ATTRIB", "A_pair", "A_word")]
    frame = df[key + ["M_word"]].astype(str)
    dup = frame.duplicated()
    if dup.any():
        rows = [int(i) + 1 for i in dup.to_numpy().nonzero()[0]]
        raise InputError(
            f"{len(rows)} row(s) repeat an earlier row: row(s) {', '.join(map(str, rows[:MAX_LISTED]))}",
            where=where,
            fix="remove the repeated rows (each would be scored and counted twice)",
        )
    if "MASK" in key and "M_pair" in key:
        _check_mask_pairs(frame, key, where)


def _check_missing_cells(df, cols: list, where: str) -> None:
    """No missing cell (R writes NA for the padding of unequal groups), by row and column."""
    for c in cols:
        na = df[c].isna().to_numpy()
        if na.any():
            rows = [int(i) + 1 for i in na.nonzero()[0]]
            raise InputError(
                f"column {c} is missing (NA/empty) in {len(rows)} row(s): row(s) "
                f"{', '.join(map(str, rows[:MAX_LISTED]))}"
                f"{' ...' if len(rows) > MAX_LISTED else ''} (row 1 = the first data row)",
                where=f"{where}: {c}",
                fix="FMAT pads unequal groups with NA: give every group the same number of words, or remove those rows",
            )


def _check_query_texts(df, where: str) -> None:
    """Each query has one [MASK] and each placeholder its columns fill exactly once."""
    for q in pd.unique(df["query"].astype(str)):
        loc = f"{where}: query {q!r}"
        n = len(MASK_RE.findall(q))
        if n != 1:
            raise InputError(
                f"query {q!r} has {n} [MASK] tokens", where=f"{where}: query", fix="use exactly one [MASK] per query"
            )
        found = check_query_text(q, f"{where}: query")
        for slot, col in (("TARGET", "T_word"), ("ATTRIB", "A_word")):
            k, present = found.count(slot), col in df.columns
            if present and k != 1:
                raise InputError(
                    f"the table has a {col} column but query {q!r} has {{{slot}}} {k} times",
                    where=loc,
                    fix=f"put {{{slot}}} exactly once in every query",
                )
            if not present and k:
                raise InputError(
                    f"query {q!r} has {{{slot}}} but the table has no {col} column: the placeholder would stay unfilled",
                    where=loc,
                    fix=f"add {slot}/{col} columns (build the table with fmat query)",
                )


def _check_mask_pairs(frame, key: list, where: str) -> None:
    """``M_pair`` numbers the words of a MASK group once per query, and no word is in two groups."""
    bad = frame.duplicated(key)
    if bad.any():
        r = int(bad.to_numpy().nonzero()[0][0])
        raise InputError(
            f"row {r + 1}: MASK group {frame['MASK'].iloc[r]!r} pair {frame['M_pair'].iloc[r]!r} "
            f"has more than one word for the same query",
            where=f"{where}: M_pair",
            fix="number the words of each MASK group 1, 2, ... (M_pair), as fmat query does",
        )
    other = [c for c in key if c not in ("MASK", "M_pair")]
    sub = frame.drop_duplicates(other + ["MASK", "M_word"])
    shared = sub.duplicated(other + ["M_word"])
    if shared.any():
        r = sub[shared].iloc[0]
        raise InputError(
            f"M_word {r['M_word']!r} is in more than one MASK group of query {r['query']!r}; its contrast would be exactly 0",
            where=f"{where}: M_word",
            fix="give each MASK word to one group only",
        )


def too_long(sentence: str, n_tokens: int, limit: int, model: str, words: dict, n_over: int = 1) -> None:
    """Raise: a filled sentence has more tokens than ``model`` reads; names its longest word.

    Examples
    --------
    >>> sentence = "the [MASK] is a " + "very " * 200 + "nurse ."
    >>> too_long(sentence, 1010, 512, "bert-base-uncased", {"T_word": "nurse"})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: query table: T_word: a sentence is 1,010 tokens long but model bert-base-uncased reads at most
    512; its longest word is T_word 'nurse' (5 characters); sentence: 'the [MASK] is a very very very very very very very very
    very very very very very'...
      fix: shorten that word or the query (BERT would silently cut the sentence, RoBERTa fail)
    """
    col, word = max(words.items(), key=lambda kv: len(kv[1])) if words else ("query", sentence)
    more = f" ({n_over - 1} more sentence(s) too)" if n_over > 1 else ""
    raise InputError(
        f"a sentence is {n_tokens:,} tokens long but model {model} reads at most {limit:,}{more}; "
        f"its longest word is {col} {word[:60]!r}{'...' if len(word) > 60 else ''} "
        f"({len(word):,} characters); sentence: {sentence[:80]!r}...",
        where=f"query table: {col}",
        fix="shorten that word or the query (BERT would silently cut the sentence, RoBERTa fail)",
    )


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {str: "text", int: "an integer", float: "a number", dict: "a mapping", list: "a list"}.get(
        type(value), f"a {type(value).__name__}"
    )


_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "text",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
}
_JSON_TYPE = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _branch(err):
    """For a oneOf/anyOf error: the deepest error of the branch whose ``type`` fits the value
    (a model given as a string vs as a mapping), or None when no branch names the value's type."""
    fits = []
    for sub in err.context or ():
        if not sub.schema_path:
            continue
        branch = err.validator_value[sub.schema_path[0]]
        want = _JSON_TYPE.get(branch.get("type")) if isinstance(branch, dict) else None
        if want is not None and isinstance(err.instance, want) and not (want is not bool and isinstance(err.instance, bool)):
            fits.append(sub)
    return max(fits, key=lambda e: len(e.absolute_path)) if fits else None


def schema_problems(validator, data) -> list[tuple[list, str]]:
    """Every JSON-Schema violation of ``data`` in words: ``(path, message)`` pairs sorted by path
    (a list of keys and indexes), for study files and workflow configs. An unknown key lists the
    allowed ones; of several forms (oneOf/anyOf) the one the value's type chose is reported; a
    pattern says what is allowed (:func:`schema_message`); a YAML boolean (yes/no) says to quote it.

    Examples
    --------
    >>> import jsonschema
    >>> schema = {"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": False, "required": ["id"]}
    >>> schema_problems(jsonschema.Draft202012Validator(schema), {"id": 1, "titel": "x"})
    [(['id'], '1 is an integer, expected string'), (['titel'], "unknown key 'titel'; allowed keys here: id")]
    """
    found: list[tuple[list, str]] = []
    for err in validator.iter_errors(data):
        leaf = err
        if err.validator in ("oneOf", "anyOf") and err.context:
            leaf = _branch(err) or err
        path = list(leaf.absolute_path)
        if leaf.validator == "additionalProperties" and isinstance(leaf.instance, dict):
            allowed = list((leaf.schema or {}).get("properties", {}))
            for key in [k for k in leaf.instance if k not in allowed]:
                found.append((path + [key], f"unknown key {key!r}; allowed keys here: {', '.join(allowed)}"))
            continue
        if leaf.validator == "required" and isinstance(leaf.instance, dict):
            found += [(path + [k], f"required key {k!r} is missing") for k in leaf.validator_value if k not in leaf.instance]
            continue
        if leaf.validator == "type":
            expected = leaf.validator_value
            expected = " or ".join(expected) if isinstance(expected, list) else expected
            msg = f"{leaf.instance!r} is {_kind(leaf.instance)}, expected {expected}"
        elif leaf.validator in ("oneOf", "anyOf"):
            hint = leaf.schema.get("description") if isinstance(leaf.schema, dict) else None
            if hint:
                msg = f"{leaf.instance!r} is not valid here; expected {hint}"
            else:  # no branch has the value's type: say what each branch takes
                forms = [
                    b.get("description") or _TYPE_WORDS.get(b.get("type"), str(b.get("type")))
                    for b in leaf.validator_value
                    if isinstance(b, dict)
                ]
                msg = f"{leaf.instance!r} is {_kind(leaf.instance)}; expected {' or '.join(forms)}"
        else:
            msg = schema_message(leaf)
        if isinstance(leaf.instance, bool):
            msg += " (YAML reads yes/no/on/off/true/false as booleans: quote the word, e.g. 'yes')"
        found.append((path, msg))
    found.sort(key=lambda pm: (list(map(str, pm[0])), pm[1]))
    return found


def schema_message(err) -> str:
    """A JSON-Schema error in words: a ``pattern`` or ``uniqueItems`` violation says what is
    allowed (the schema's description, or the names that may be used) instead of the regex.

    Examples
    --------
    >>> import jsonschema
    >>> err = next(jsonschema.Draft202012Validator({"type": "array", "uniqueItems": True}).iter_errors(["he", "she", "he"]))
    >>> schema_message(err)
    "'he' is listed more than once; list each once"
    """
    value = err.instance
    if err.validator == "pattern":
        desc = err.schema.get("description") if isinstance(err.schema, dict) else None
        allowed = desc or ("letters, digits and . _ - (and / in a model id), starting with a letter or digit")
        return f"{value!r} is not allowed here; allowed: {allowed}"
    if err.validator == "uniqueItems" and isinstance(value, list):
        return f"{_listing(duplicates(map(str, value)))} is listed more than once; list each once"
    return err.message
