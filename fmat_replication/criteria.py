"""Criterion data for Studies 1A–1C: BLS occupations, SSA baby names, GloVe WEFAT scores.

Each source file is downloaded or copied from a mirror folder (``mirror_dir``) and recorded in a
lock table (a republished file: :class:`CriterionChangedWarning`). docs/criteria.md says where
each number comes from and how it is computed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import logging
import math
import os
import re
import shutil
import urllib.error
import urllib.request
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from fmat import embeddings, lockfile
from fmat.embeddings import read_word2vec
from fmat.errors import FmatError, InputError, OfflineError, os_error
from fmat.io import atomic_path, read_table, write_table
from fmat.lockfile import sha256_file
from fmat.net import is_timeout
from fmat.net import timeout as _timeout

# ----------------------------------------------------------------------------- Sources


@dataclass(frozen=True)
class Source:
    """One public data file: its official URL and where a mirror folder may hold it (``mirror``:
    (relative path, full) in order of preference; not full: the 457-word GloVe extract)."""

    name: str
    url: str
    mirror: tuple[tuple[str, bool], ...]
    title: str


SOURCES: dict[str, Source] = {
    "bls2021": Source(
        "bls2021",
        "https://www.bls.gov/cps/aa2021/cpsaat11.xlsx",
        (("bls/cpsaat11_2021.xlsx", True), ("bls/cpsaat11_2021.tsv", True)),
        "BLS CPS 2021 annual averages, table 11",
    ),
    "ssa": Source(
        "ssa",
        "https://www.ssa.gov/oact/babynames/names.zip",
        (("ssa/names.zip", True), ("ssa/ssa_national_1900_2017_by_name_sex.tsv", True)),
        "SSA national baby-name files",
    ),
    "glove": Source(
        "glove",
        "https://nlp.stanford.edu/data/glove.840B.300d.zip",
        (
            ("glove/glove.840B.300d.zip", True),
            ("glove/glove.840B.300d.txt", True),
            ("caliskan2017/glove840B_items.txt", False),
        ),
        "GloVe Common Crawl 840B 300d",
    ),
}


@dataclass(frozen=True)
class Origin:
    """Where one source is taken from on this run: a download or a mirror file."""

    name: str
    kind: str  # "download" | "mirror"
    location: str  # URL or file path
    full: bool  # False: a partial extract (GloVe items only)

    @property
    def filename(self) -> str:
        """The file name the raw copy gets under resources/criteria/raw/."""
        return self.location.rstrip("/").rsplit("/", 1)[-1]


def resolve_origin(
    name: str, mirror_dir: str | os.PathLike | None = None, *, where: str = "config/config.yaml: mirror_dir"
) -> Origin:
    """Where to get source ``name``: the first mirror file that exists, else the official URL.
    With ``mirror_dir`` set, a missing file is an :class:`OfflineError` (``where``: the config key)."""
    if name not in SOURCES:
        raise InputError(f"unknown criterion source {name!r}", fix=f"use one of {', '.join(SOURCES)}")
    src = SOURCES[name]
    if mirror_dir is None or str(mirror_dir) == "":
        return Origin(name, "download", src.url, True)
    base = Path(mirror_dir)
    for rel, full in src.mirror:
        if (base / rel).is_file():
            return Origin(name, "mirror", str(base / rel), full)
    looked = ", ".join(str(base / rel) for rel, _ in src.mirror)
    raise OfflineError(
        f"{src.title} is not in the mirror folder (looked for {looked})",
        where=where,
        fix=f"put the file there (official source: {src.url}) or set mirror_dir: null to download",
    )


# ----------------------------------------------------------------------------- Download, copy and the lock table

USER_AGENT = "fmat-criteria/0.1 (research replication; python urllib)"
LOCK_COLUMNS = ["name", "kind", "location", "file", "sha256", "bytes", "first_retrieved", "last_retrieved", "previous_sha256"]


class CriterionChangedWarning(UserWarning):
    """A source file differs from the one recorded in the lock (the publisher republished)."""


def download(
    url: str,
    dest: str | os.PathLike,
    *,
    timeout: float | None = None,
    opener: Callable | None = None,
    user_agent: str = USER_AGENT,
) -> Path:
    """Download ``url`` to ``dest`` atomically (a killed download leaves no file).

    ``opener`` defaults to :func:`urllib.request.urlopen`. A ``.zip`` or ``.xlsx`` that is not a
    zip archive (an HTML block page) is an error. ``timeout``: seconds per answer and read
    (default: :mod:`fmat.net`'s); a server that stops answering is an OfflineError.
    """

    timeout = _timeout(timeout)
    opener = opener or urllib.request.urlopen
    dest = Path(dest)
    req = urllib.request.Request(url, headers={"User-Agent": user_agent})
    try:
        with opener(req, timeout=timeout) as resp, atomic_path(dest) as tmp:
            with open(tmp, "wb") as out:
                shutil.copyfileobj(resp, out, 1 << 20)
            if dest.suffix.lower() in (".zip", ".xlsx") and not zipfile.is_zipfile(tmp):
                raise FmatError(
                    f"{url} did not return a zip archive (a block page or an error page?)",
                    where=str(dest),
                    fix="open the URL in a browser; if it works there, download it by hand into "
                    "a folder and point mirror_dir at it",
                )
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        if isinstance(err, FmatError) or (os_error(err) is not None and not isinstance(err, urllib.error.URLError)):
            raise  # ours, or the disk (full, read-only): the message names the file
        why = f"the server did not answer within {timeout:g} s" if is_timeout(err) else str(err)
        raise OfflineError(
            f"cannot download {url}: {why}",
            where=str(dest),
            fix="check the network (run this on a login node), or set mirror_dir in "
            "config/config.yaml to a folder holding the file",
        ) from err
    return dest


def read_lock(lock_path: str | os.PathLike) -> pd.DataFrame:
    """The criterion sources' lock table (empty when there is none yet), checked by
    :func:`fmat.lockfile.read`: every row needs a name, a location and a 64-digit sha256."""
    return lockfile.read(
        lock_path,
        LOCK_COLUMNS,
        what="criteria lock file",
        fix="delete the file; the next retrieval writes a new one",
        check_row=_lock_row_problem,
    )


def _lock_row_problem(r) -> str | None:
    if not str(r["name"]).strip() or not str(r["location"]).strip():
        return "an empty name or location"
    if not re.fullmatch(r"[0-9a-f]{64}", str(r["sha256"])):
        return f"(source {str(r['name'])[:40]!r}) sha256 {str(r['sha256'])[:80]!r} that is not 64 hexadecimal digits"
    return None


def record_retrieval(
    lock_path: str | os.PathLike, origin: Origin, path: str | os.PathLike, *, now: str | None = None, shared: bool = True
) -> dict:
    """Record the retrieved file ``path`` of ``origin`` in the lock (rows keyed by name and
    location); returns its lock row. A different sha256 than recorded:
    :class:`CriterionChangedWarning`, the old hash kept in ``previous_sha256``. ``shared``: other
    processes may write the lock, so it is changed under :func:`fmat.lockfile.exclusive`.
    """

    lock_path = Path(lock_path)
    now = now or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    digest = sha256_file(path)
    size = str(Path(path).stat().st_size)
    with lockfile.exclusive(lock_path) if shared else contextlib.nullcontext():
        df = read_lock(lock_path)
        hit = (df["name"] == origin.name) & (df["location"] == origin.location)
        if hit.any():
            i = df.index[hit][0]
            old = df.at[i, "sha256"]
            if old != digest:
                warnings.warn(
                    f"{origin.location} changed since it was first retrieved on "
                    f"{df.at[i, 'first_retrieved']} (sha256 {old[:12]}… → {digest[:12]}…); "
                    f"the publisher may have revised it. Criterion values can differ from "
                    f"earlier runs; the lock {lock_path} now records the new file.",
                    CriterionChangedWarning,
                    stacklevel=2,
                )
                df.loc[i, ["sha256", "bytes", "previous_sha256", "first_retrieved"]] = [digest, size, old, now]
            df.loc[i, ["last_retrieved", "file"]] = [now, Path(path).name]
        else:
            row = [origin.name, origin.kind, origin.location, Path(path).name, digest, size, now, now, ""]
            df = pd.concat([df, pd.DataFrame([dict(zip(LOCK_COLUMNS, row))])], ignore_index=True)
        df = df.sort_values(["name", "location"], kind="stable")
        lockfile.write(lock_path, df, LOCK_COLUMNS)
        return df[(df["name"] == origin.name) & (df["location"] == origin.location)].iloc[0].to_dict()


def fetch(
    origin: Origin,
    dest: str | os.PathLike,
    *,
    lock_path: str | os.PathLike | None = None,
    opener: Callable | None = None,
    timeout: float | None = None,
    shared: bool = True,
) -> dict | None:
    """Get one source file into ``dest``: copy from the mirror or download; then lock it."""
    dest = Path(dest)
    if origin.kind == "mirror":
        with atomic_path(dest) as tmp:
            shutil.copyfile(origin.location, tmp)
    else:
        try:
            download(origin.location, dest, opener=opener, timeout=timeout)
        except OfflineError as err:
            rel = SOURCES[origin.name].mirror[0][0] if origin.name in SOURCES else origin.filename
            raise OfflineError(
                f"cannot download {origin.location} ({err.__cause__ or err})",
                where=str(dest),
                fix=f"run on a machine with internet (the login node), or download the file in a "
                f"browser (some sites block scripts) to <folder>/{rel} and set "
                f"mirror_dir: <folder> in config/config.yaml",
            ) from err
    if lock_path is None:
        return None
    return record_retrieval(lock_path, origin, dest, shared=shared)


def source_note(name: str, raw_path: str | os.PathLike, lock_path: str | os.PathLike | None = None) -> str:
    """The ``source`` text of a derived table: title, location, sha256 and retrieval date."""
    title = SOURCES[name].title
    raw_path = Path(raw_path)
    if lock_path is not None and Path(lock_path).exists():
        df = read_lock(lock_path)
        hit = df[(df["name"] == name) & (df["file"] == raw_path.name)]
        if len(hit):
            r = hit.iloc[-1]
            how = "mirror copy of" if r["kind"] == "mirror" else "downloaded from"
            return f"{title} ({how} {r['location']}; sha256 {r['sha256'][:12]}; retrieved {r['first_retrieved'][:10]})"
    return f"{title} ({raw_path.name}; sha256 {sha256_file(raw_path)[:12]})"


# ----------------------------------------------------------------------------- Word lists (Caliskan et al., 2017)


_WEFAT_CATEGORIES = {
    "occupations": "Careers",
    "names": "AndrogynousNames",
    "male": "MaleAttributes",
    "female": "FemaleAttributes",
}


def read_wefat_words(path: str | os.PathLike) -> dict[str, list[str]]:
    """The WEFAT word lists of a TSV (``set, category, word``): {'occupations', 'names', 'male',
    'female'} → words in order."""
    df = read_table(path, fmt="tsv")
    need = {"set", "category", "word"}
    if not need <= set(df.columns):
        raise InputError(
            f"needs columns {sorted(need)}, has {list(df.columns)}", where=str(path), fix="keep the header: set, category, word"
        )
    out = {}
    for key, cat in _WEFAT_CATEGORIES.items():
        words = df.loc[df["category"] == cat, "word"].astype(str).tolist()
        if not words:
            raise InputError(f"no words in category {cat}", where=str(path), fix="restore the Caliskan et al. (2017) word list")
        out[key] = words
    return out


# ----------------------------------------------------------------------------- BLS table 11 and the occupation mapping

_DASHES = {"–", "—", "-", ""}


def _clean_title(text) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()


def _number(x) -> float:
    s = _clean_title(x) if x is not None else ""
    if s in _DASHES or s.lower() == "nan":
        return math.nan
    return float(s.replace(",", ""))


def read_bls_table11(path: str | os.PathLike) -> pd.DataFrame:
    """BLS CPS table 11 (cpsaat11, the official ``.xlsx`` or a TSV export) as ``occupation,
    employed, pct_women``: the rows after the header row ``Occupation`` that have a number
    employed (thousands); ``–`` (below the publication threshold) becomes NaN."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}", fix="run the criteria fetch rule first")
    if path.suffix.lower() in (".xlsx", ".xls"):
        raw = pd.read_excel(path, header=None, dtype=str)
    else:
        raw = pd.read_csv(
            path, sep="\t", header=None, dtype=str, keep_default_na=False, skip_blank_lines=False, names=range(7), engine="python"
        )
    first = raw.iloc[:, 0].map(lambda v: _clean_title(v) if isinstance(v, str) else "")
    header = first.index[first == "Occupation"]
    if len(header) == 0:
        raise InputError(
            "no header row starting with 'Occupation'",
            where=str(path),
            fix="use the official cpsaat11 table (xlsx) or its TSV export",
        )
    rows = []
    for occ, emp, pw in raw.iloc[header[0] + 1 :, :3].itertuples(index=False):
        if not isinstance(occ, str) or not _clean_title(occ):
            continue
        try:
            e = _number(emp)
        except ValueError:
            continue
        if math.isnan(e):
            continue
        rows.append((_clean_title(occ), e, _number(pw)))
    out = pd.DataFrame(rows, columns=["occupation", "employed", "pct_women"])
    if out.empty:
        raise InputError("no occupation rows found", where=str(path), fix="check the file")
    return out


def read_occupation_mapping(path: str | os.PathLike) -> pd.DataFrame:
    """The curated word → BLS rows mapping: ``item, bls_rows (list of titles), note`` (in the
    file, ``bls_rows`` holds exact table titles separated by `` | ``)."""
    df = read_table(path, fmt="tsv")
    for col in ("item", "bls_rows"):
        if col not in df.columns:
            raise InputError(f"missing column {col!r}", where=str(path), fix="columns: item, bls_rows, note")
    dup = df["item"][df["item"].duplicated()].tolist()
    if dup:
        raise InputError(f"items listed twice: {dup}", where=str(path), fix="one line per item")
    df = df.copy()
    df["bls_rows"] = [[_clean_title(t) for t in str(v).split("|") if _clean_title(t)] for v in df["bls_rows"]]
    empty = df.loc[df["bls_rows"].map(len) == 0, "item"].tolist()
    if empty:
        raise InputError(f"items without BLS rows: {empty}", where=str(path), fix="list at least one table title per item")
    if "note" not in df.columns:
        df["note"] = ""
    return df[["item", "bls_rows", "note"]]


def weighted_pct_women(employed: Iterable[float], pct_women: Iterable[float]) -> float:
    """Employment-weighted mean % women: Σ employedᵢ · pctᵢ / Σ employedᵢ (Caliskan et al., 2017)."""
    e = np.asarray(list(employed), dtype=float)
    p = np.asarray(list(pct_women), dtype=float)
    return float(np.average(p, weights=e))


def bls_occupation_criterion(
    table: pd.DataFrame,
    mapping: pd.DataFrame,
    *,
    source: str,
    items: list[str] | None = None,
    mapping_path: str = "config/criteria/bls2021_occupations.tsv",
) -> pd.DataFrame:
    """% male workers per occupation word (``item, pct_male, pct_female, employed, bls_rows, source``).

    pct_female: the employment-weighted mean over the word's mapped rows that have a published
    % women (the others are skipped with a warning); pct_male = 100 − pct_female. A mapped title
    absent from the table, or an item of ``items`` without a mapping, is an :class:`InputError`.
    """
    by_title = table.set_index("occupation")
    if by_title.index.duplicated().any():
        dups = by_title.index[by_title.index.duplicated()].unique().tolist()
        raise InputError(f"BLS table has duplicated titles {dups}", fix="check the table file")
    if items is not None:
        missing = [w for w in items if w not in set(mapping["item"])]
        if missing:
            raise InputError(f"no mapping for {missing}", where=mapping_path, fix="add a line per word: item, bls_rows, note")
        mapping = mapping.set_index("item").loc[items].reset_index()
    out, skipped = [], []
    for item, titles in zip(mapping["item"], mapping["bls_rows"]):
        unknown = [t for t in titles if t not in by_title.index]
        if unknown:
            raise InputError(
                f"titles not in the BLS table: {unknown}",
                where=f"{mapping_path}: item {item}",
                fix="copy the title exactly as in cpsaat11 (2018 categories)",
            )
        rows = by_title.loc[titles]
        used = rows[rows["pct_women"].notna()]
        skipped += [f"{item}: {t}" for t in rows.index[rows["pct_women"].isna()]]
        if used.empty:
            raise InputError(
                "none of the mapped rows has a published % women", where=f"{mapping_path}: item {item}", fix="map a broader row"
            )
        pw = weighted_pct_women(used["employed"], used["pct_women"])
        out.append(
            dict(
                item=item,
                pct_male=100.0 - pw,
                pct_female=pw,
                employed=float(used["employed"].sum()),
                bls_rows=" | ".join(used.index),
                source=source,
            )
        )
    if skipped:
        warnings.warn("rows without a published % women (base < 50,000) were skipped: " + "; ".join(skipped), stacklevel=2)
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------- SSA baby names

NAME_COLUMNS = ["item", "n_female", "n_male", "pct_male", "logit_pct_male"]


def read_ssa_counts(path: str | os.PathLike, years: tuple[int, int] = (1900, 2017)) -> pd.DataFrame:
    """Births per first name and sex, summed over ``years`` (inclusive): ``name, n_female, n_male``.

    ``path``: the official ``names.zip`` (``yobYYYY.txt`` files) or the mirror's TSV already
    summed over 1900–2017 (other ``years`` are an error). Names are case-sensitive.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}", fix="run the criteria fetch rule first")
    if zipfile.is_zipfile(path):
        frames = []
        with zipfile.ZipFile(path) as zf:
            members = set(zf.namelist())
            for year in range(years[0], years[1] + 1):
                member = f"yob{year}.txt"
                if member not in members:
                    raise InputError(
                        f"{member} is missing",
                        where=str(path),
                        fix=f"use the SSA national file (names.zip) covering {years[0]}–{years[1]}",
                    )
                with zf.open(member) as fh:
                    frames.append(
                        pd.read_csv(fh, header=None, names=["name", "sex", "n"], dtype={"name": str, "sex": str, "n": "int64"})
                    )
        long = pd.concat(frames, ignore_index=True)
        wide = long.pivot_table(index="name", columns="sex", values="n", aggfunc="sum", fill_value=0)
        wide = wide.reindex(columns=["F", "M"], fill_value=0)
        out = pd.DataFrame({"name": wide.index.astype(str), "n_female": wide["F"].to_numpy(), "n_male": wide["M"].to_numpy()})
        return out.sort_values("name", kind="stable").reset_index(drop=True)
    if tuple(years) != (1900, 2017):
        raise InputError(
            f"a pre-summed TSV covers 1900–2017 only, not {years[0]}–{years[1]}",
            where=str(path),
            fix="use the official names.zip",
        )
    # keep_default_na=False: 'Nan' and 'Na' are first names, not missing values
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    df = df.rename(columns={c: c.lower() for c in df.columns})
    need = {"name", "n_female", "n_male"}
    if not need <= set(df.columns):
        raise InputError(f"needs columns {sorted(need)}", where=str(path), fix="use the SSA TSV or names.zip")
    out = df[["name", "n_female", "n_male"]]
    return out.astype({"n_female": "int64", "n_male": "int64"}).reset_index(drop=True)


def name_gender(counts: pd.DataFrame) -> pd.DataFrame:
    """Add % male and its logit: pct_male = 100·m/(m+f); logit_pct_male = ln(m/f) (NaN when a count is 0)."""
    m = counts["n_male"].to_numpy(dtype=float)
    f = counts["n_female"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = 100.0 * m / (m + f)
        logit = np.where((m > 0) & (f > 0), np.log(m / f), np.nan)
    return pd.DataFrame(
        {
            "item": counts["name"].to_numpy(),
            "n_female": counts["n_female"].to_numpy(),
            "n_male": counts["n_male"].to_numpy(),
            "pct_male": pct,
            "logit_pct_male": logit,
        }
    )


def ssa_names_wefat2(counts: pd.DataFrame, names: list[str], *, source: str) -> pd.DataFrame:
    """% male of the given names (Study 1B), in the order given; unknown names are an error."""
    table = name_gender(counts).set_index("item")
    missing = [n for n in names if n not in table.index]
    if missing:
        raise InputError(
            f"names not in the SSA counts: {missing}", fix="check the spelling (names are case-sensitive, e.g. 'Kelly')"
        )
    out = table.loc[names].reset_index()
    out["source"] = source
    return out[NAME_COLUMNS + ["source"]]


def ssa_names_1c(counts: pd.DataFrame, *, min_each: int = 100, vocabulary: set[str] | None = None, source: str) -> pd.DataFrame:
    """Study 1C's names, sorted: ≥ ``min_each`` births of EACH sex; in GloVe when ``vocabulary``
    is given (``in_glove`` True), else not filtered (``in_glove`` NA, a warning)."""
    keep = (counts["n_female"] >= min_each) & (counts["n_male"] >= min_each)
    out = name_gender(counts[keep].sort_values("name", kind="stable"))
    filtered = vocabulary is not None
    out = (out[out["item"].isin(vocabulary)] if filtered else out).reset_index(drop=True)
    out["in_glove"] = pd.array([True if filtered else pd.NA] * len(out), dtype="boolean")
    src = f"{source}; GloVe 840B filter applied"
    if not filtered:
        src = f"{source}; GloVe 840B filter NOT applied (GloVe vocabulary not available)"
        warnings.warn(
            f"Study 1C names: the GloVe 840B filter was not applied ({len(out)} names, "
            "the paper has 3,644 after it); download GloVe or put "
            "glove/glove.840B.300d.zip in mirror_dir to apply it",
            stacklevel=2,
        )
    out["source"] = src
    out.attrs["glove_filter"] = filtered
    out.attrs["min_each"] = int(min_each)
    return out


# ----------------------------------------------------------------------------- GloVe

#: GloVe is read with fmat.embeddings.read_word2vec(path, words=..., dims=300), which streams the
#: official zip; a few 840B tokens contain spaces, so dims must be given
GLOVE_DIMS = 300


def demo_vectors(words: Iterable[str], dim: int = 300) -> pd.DataFrame:
    """Stand-in vectors for the offline demo (NOT GloVe): standard normal, seeded by sha256 of the word."""
    words = list(words)
    seeds = [int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "little") for w in words]
    rows = [np.random.default_rng(seed).standard_normal(dim) for seed in seeds]
    mat = np.array(rows, dtype=np.float32).reshape(len(words), dim)
    return pd.DataFrame(mat, index=pd.Index(words, dtype=object, name="word"))


DEMO_SOURCE = "demo embedding, not GloVe"


def wefat_table(
    vectors: pd.DataFrame,
    items: list[str],
    male: list[str],
    female: list[str],
    *,
    source: str,
    demo_missing: bool = False,
    criterion: Callable | None = None,
) -> pd.DataFrame:
    """WEFAT_male per item: ``item, wefat_male, source`` (items in the order given).

    ``criterion(vectors, items, male_attrs, female_attrs)``: default
    :func:`fmat.embeddings.wefat_criterion` (Caliskan et al., 2017, male-positive). Items without a
    vector get NaN, or with ``demo_missing`` a :func:`demo_vectors` stand-in (``source =
    DEMO_SOURCE``); ``attrs['missing_items']`` lists them.
    """
    criterion = embeddings.wefat_criterion if criterion is None else criterion
    lacking = [w for w in male + female if w not in vectors.index]
    if lacking:
        raise InputError(
            f"attribute words without vectors: {lacking}", fix="use GloVe 840B or the Caliskan et al. (2017) extract"
        )
    missing = [w for w in items if w not in vectors.index]
    have = [w for w in items if w in vectors.index]
    vec = vectors
    if demo_missing and missing:
        vec = pd.concat([vectors, demo_vectors(missing, dim=vectors.shape[1])])
        have = list(items)
    scored = criterion(vec, have, male, female) if have else pd.DataFrame(columns=["item", "wefat_male"])
    scored = pd.DataFrame(scored)[["item", "wefat_male"]]
    out = pd.DataFrame({"item": items}).merge(scored, on="item", how="left")
    miss, lacking = set(missing), DEMO_SOURCE if demo_missing else f"not in {source}"
    out["source"] = [lacking if w in miss else source for w in out["item"]]
    out.attrs["missing_items"] = list(missing)
    return out


# ------------------------------------------------------- Stage functions: one per criteria rule (rules/criteria.smk)


def fetch_source(origin: Mapping, out, *, lock, timeout: float) -> None:
    """Rule criteria_fetch: copy or download the source (``origin``: an :class:`Origin` as a
    mapping) to ``out`` and record it in its own lock record ``lock`` (Snakemake's ``update()``)."""

    logging.captureWarnings(True)  # CriterionChangedWarning -> the log
    origin = Origin(**origin)
    logging.info("%s %s", "copying" if origin.kind == "mirror" else "downloading", origin.location)
    row = fetch(origin, out, lock_path=lock, timeout=float(timeout), shared=False)
    logging.info("sha256 %s, %s bytes, first retrieved %s", row["sha256"], row["bytes"], row["first_retrieved"])


def gather_lock(records: Sequence, out) -> None:
    """Rule criteria_lock: the sources' own lock records -> one lock table
    (``resources/criteria.lock.tsv``), for people; no job reads it."""
    tables = [read_lock(r) for r in records]
    df = pd.concat(tables, ignore_index=True) if tables else lockfile.empty(LOCK_COLUMNS)
    lockfile.write(out, df.sort_values(["name", "location"], kind="stable"), LOCK_COLUMNS)


def bls_criterion(table_path, mapping_path, words_path, out, *, lock) -> None:
    """Rule criteria_bls: BLS table 11 -> % male of Study 1A's occupations."""

    logging.captureWarnings(True)
    items = read_wefat_words(words_path)["occupations"]
    source = source_note("bls2021", table_path, lock)
    table = bls_occupation_criterion(
        read_bls_table11(table_path),
        read_occupation_mapping(mapping_path),
        source=source,
        items=items,
        mapping_path=str(mapping_path),
    )
    logging.info("%d occupations, %% male %.1f–%.1f; source: %s", len(table), table.pct_male.min(), table.pct_male.max(), source)
    write_table(table, out)


def ssa_criterion(counts_path, words_path, glove_paths: Sequence, out, *, table: str, years, min_each, lock) -> None:
    """Rules criteria_ssa_names_wefat2 / _1c: SSA counts -> % male of Study 1B's names
    (``table="wefat2"``, :func:`ssa_names_wefat2`) or Study 1C's (:func:`ssa_names_1c`)."""

    logging.captureWarnings(True)  # "GloVe filter not applied" -> the log
    counts = read_ssa_counts(counts_path, years=tuple(int(y) for y in years))
    source = source_note("ssa", counts_path, lock) + f", births {years[0]}–{years[1]}"
    if table == "wefat2":
        result = ssa_names_wefat2(counts, read_wefat_words(words_path)["names"], source=source)
    else:
        vocab = None
        if glove_paths:
            logging.info("looking the names up in %s (minutes)", glove_paths[0])
            names = counts["name"].astype(str).unique().tolist()
            vocab = set(read_word2vec(glove_paths[0], words=names, dims=GLOVE_DIMS).index)
        else:
            logging.warning(
                "GloVe 840B is not available (mirror has only the 457-word extract): the 1C names are NOT filtered by GloVe"
            )
        result = ssa_names_1c(counts, min_each=int(min_each), vocabulary=vocab, source=source)
    logging.info("%d names; source: %s", len(result), result["source"].iloc[0] if len(result) else source)
    write_table(result, out)


def wefat_criterion(glove_path, words_path, names_paths: Sequence, out, *, study: str, lock, demo_embedding: bool) -> None:
    """Rule criteria_wefat: GloVe vectors -> WEFAT_male of Study 1A/1B/1C's items
    (:func:`wefat_table` with :func:`fmat.embeddings.wefat_criterion`)."""

    logging.captureWarnings(True)
    words = read_wefat_words(words_path)
    key = {"1A": "occupations", "1B": "names"}.get(study)
    items = words[key] if key else read_table(names_paths[0])["item"].astype(str).tolist()
    vectors = read_word2vec(glove_path, words=[*items, *words["male"], *words["female"]], dims=GLOVE_DIMS)
    source = source_note("glove", glove_path, lock)
    result = wefat_table(vectors, items, words["male"], words["female"], source=source, demo_missing=demo_embedding)
    missing = result.attrs["missing_items"]
    if missing:
        what = "demo vectors stand in (source: 'demo embedding, not GloVe')" if demo_embedding else "their wefat_male is NaN"
        logging.warning(
            "%d of %d items are not in %s; %s: %s",
            len(missing),
            len(items),
            Path(glove_path).name,
            what,
            ", ".join(missing[:50]) + (" …" if len(missing) > 50 else ""),
        )
    logging.info("%d items scored; source: %s", result["wefat_male"].notna().sum(), source)
    write_table(result, out)


__all__ = [
    "SOURCES",
    "Source",
    "Origin",
    "resolve_origin",
    "download",
    "fetch",
    "record_retrieval",
    "read_lock",
    "gather_lock",
    "sha256_file",
    "source_note",
    "CriterionChangedWarning",
    "read_wefat_words",
    "read_bls_table11",
    "read_occupation_mapping",
    "weighted_pct_women",
    "bls_occupation_criterion",
    "read_ssa_counts",
    "name_gender",
    "ssa_names_wefat2",
    "ssa_names_1c",
    "GLOVE_DIMS",
    "demo_vectors",
    "wefat_table",
    "DEMO_SOURCE",
    "fetch_source",
    "bls_criterion",
    "ssa_criterion",
    "wefat_criterion",
]
