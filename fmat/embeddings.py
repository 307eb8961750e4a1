"""Bias tests on static word embeddings: Python port of the R package *sweater* (0.1.7).

The FMAT paper (Bao 2024) validates FMAT against the Word Embedding Factual Association
Test (WEFAT) on GloVe vectors; this module provides that criterion and the other tests of
sweater (weat, nas, mac, rnd, semaxis, rnsb, ect, their effect sizes, tests and plots), each
function named as sweater's. docs/embeddings.md has the table of tests, their formulas and
the few places where we knowingly differ from sweater.

:func:`wefat_criterion` is the FMAT paper's criterion ``WEFAT_male`` (male-positive).

Vectors are a :class:`pandas.DataFrame` of words x dimensions, indexed by word (what
:func:`read_word2vec` returns). Words not in the vectors are never silently dropped: each
test warns (:class:`MissingWordsWarning`) and lists them in ``result.missing``.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import math
import os
import sys
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import InputError, user_stacklevel
from .io import atomic_path, write_table

__all__ = [
    "BiasResult",
    "WeatTest",
    "MissingWordsWarning",
    "read_word2vec",
    "query",
    "calculate_es",
    "plot_bias",
    "plot_ect",
    "weat",
    "weat_es",
    "weat_exact",
    "weat_resampling",
    "weat_test",
    "nas",
    "mac",
    "mac_es",
    "rnd",
    "rnd_es",
    "semaxis",
    "rnsb",
    "rnsb_es",
    "ect",
    "ect_es",
    "wefat_criterion",
]

METHODS = ("weat", "mac", "nas", "semaxis", "rnsb", "rnd", "ect")


class MissingWordsWarning(UserWarning):
    """Some words of a query are not in the embeddings; they were left out (see ``result.missing``).

    Examples
    --------
    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     res = mac(w, ["pilot", "astronaut"], ["he"])
    >>> caught[0].category.__name__, res.missing
    ('MissingWordsWarning', {'S': ['astronaut']})
    """


# -------------------- reading vectors


def _parse_line(line: bytes, dims: int, path, lineno: int) -> tuple[str, np.ndarray]:
    # GloVe 840B has tokens that contain spaces: the vector is the LAST dims fields and the
    # token is everything before them. Split on " " only (a non-breaking space is a letter).
    parts = line.rstrip(b"\r\n").rstrip(b" ").rsplit(b" ", dims)
    if len(parts) != dims + 1:
        raise InputError(
            f"line {lineno} has {len(parts) - 1} numbers, expected {dims}",
            where=str(path),
            fix="check that the file is word2vec/GloVe text and that dims= is right",
        )
    word, vals = parts[0], parts[1:]
    try:
        vec = np.array([float(v) for v in vals], dtype=np.float64)
    except ValueError:
        raise InputError(
            f"line {lineno} has a field that is not a number",
            where=str(path),
            fix="check the file format (word then numbers, separated by single spaces)",
        ) from None
    return word.decode("utf-8", errors="replace"), vec


def _frame(words, mat: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(mat, index=pd.Index(words, name="word", dtype="str"), columns=pd.RangeIndex(mat.shape[1]))


@contextlib.contextmanager
def _open_vectors(path: Path):
    """The vector file as a binary stream: plain text, gzip (``.gz``), or the ``.txt`` member of
    a zip archive such as the official ``glove.840B.300d.zip`` (streamed, never unpacked)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            member = next((n for n in zf.namelist() if n.endswith(".txt")), None)
            if member is None:
                raise InputError(
                    "no .txt file inside the zip",
                    where=str(path),
                    fix="use a zip holding the vectors as text, e.g. glove.840B.300d.zip",
                )
            with zf.open(member) as fh:
                yield fh
    else:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as fh:
            yield fh


def _scan(path: Path, wanted: set[str] | None, dims: int | None) -> tuple[pd.DataFrame, dict]:
    """Stream ``path`` once; keep every word (``wanted=None``) or only the wanted ones."""
    vectors: dict[str, np.ndarray] = {}  # first occurrence wins
    header = None
    duplicates = 0
    if wanted is not None:
        wanted_b = {w.encode("utf-8") for w in wanted}
        first_tokens = {w.split(b" ", 1)[0] for w in wanted_b}
    with _open_vectors(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if lineno == 1 and len(parts := line.split()) == 2 and all(p.isdigit() for p in parts):
                header = int(parts[0]), int(parts[1])
                if dims is not None and dims != header[1]:
                    raise InputError(
                        f"the header says {header[1]} dimensions, dims={dims} was given",
                        where=str(path),
                        fix="leave dims out or give the right number",
                    )
                dims = header[1]
                continue
            if dims is None:  # no header, no dims=: the first vector line tells
                dims = len(line.rstrip(b"\r\n").rstrip(b" ").split(b" ")) - 1
            if wanted is not None:
                # fast path: only lines whose first token can start a wanted word are parsed
                if line.split(b" ", 1)[0] not in first_tokens:
                    continue
                head = line.rstrip(b"\r\n").rstrip(b" ").rsplit(b" ", dims)[0]
                if head not in wanted_b:
                    continue
            word, vec = _parse_line(line, dims, path, lineno)
            if word in vectors:
                duplicates += 1
                continue
            vectors[word] = vec
    if dims is None:
        raise InputError("the file has no vectors", where=str(path), fix="check the path")
    if header is not None and wanted is None and header[0] != len(vectors) + duplicates:
        raise InputError(
            f"the header says {header[0]} words but the file has {len(vectors) + duplicates}",
            where=str(path),
            fix="the file is truncated or its header is wrong",
        )
    info = {"dims": dims, "header": header is not None, "duplicates_skipped": duplicates}
    return _frame(list(vectors), np.vstack(list(vectors.values())) if vectors else np.empty((0, dims))), info


def read_word2vec(
    path: str | os.PathLike,
    words: Iterable[str] | None = None,
    *,
    dims: int | None = None,
    cache: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Read word vectors in word2vec/GloVe text format into a words x dims DataFrame.

    As sweater's ``read_word2vec``: a first "verification line" (``<n_words> <dims>``) is
    checked when present; without it the dimension is ``dims``, else that of the first line.

    Parameters
    ----------
    path : one ``word v1 ... vd`` per line, single spaces; plain, gzipped (``.gz``) or the
        ``.txt`` member of a zip (the official ``glove.840B.300d.zip``, streamed).
    words : keep only these words (all when None); words not found are absent.
    dims : give ``dims=300`` for GloVe 840B, whose tokens may contain spaces (``". . ."``).
    cache : a ``.parquet`` path for the selected vectors, read instead of the source while
        that is unchanged and no new word is asked for (docs/embeddings.md).

    Returns
    -------
    DataFrame indexed by ``word``, columns ``0..dims-1``, float64; a repeated word's first
    occurrence wins.

    Examples
    --------
    As ``sweater::read_word2vec(path)``:

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "vectors.txt"
    >>> _ = path.write_text("2 3" + chr(10) + "he 1 0 0.5" + chr(10) + "she 0 1 0.5" + chr(10))
    >>> read_word2vec(path)  # doctest: +NORMALIZE_WHITESPACE
            0    1    2
    word
    he    1.0  0.0  0.5
    she   0.0  1.0  0.5
    >>> read_word2vec(path, words=["she"]).index.tolist()
    ['she']
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"vector file not found: {path}", fix="check the path, or download the vectors first")
    wanted = None if words is None else list(dict.fromkeys(str(w) for w in words))

    def pick(df):
        return df if wanted is None else df.loc[[w for w in wanted if w in df.index]]

    if cache is None:
        return pick(_scan(path, None if wanted is None else set(wanted), dims)[0])
    cache = Path(cache)
    meta_path = cache.with_name(cache.name + ".json")
    st = path.stat()
    src = {"source": str(path.resolve()), "size": st.st_size, "mtime": int(st.st_mtime)}
    wanted_all = wanted
    if cache.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        same_source = all(meta.get(k) == v for k, v in src.items())
        looked_up = meta.get("looked_up")  # None = the whole file
        if same_source and (looked_up is None or (wanted is not None and set(wanted) <= set(looked_up))):
            return pick(_read_cache(cache))
        if same_source and looked_up is not None and wanted is not None:
            wanted_all = list(dict.fromkeys(list(looked_up) + wanted))
    df, info = _scan(path, None if wanted_all is None else set(wanted_all), dims)
    out = pd.DataFrame(df.to_numpy(), columns=[f"d{i}" for i in range(df.shape[1])])
    out.insert(0, "word", pd.array(df.index, dtype="str"))
    write_table(out, cache, "parquet")
    meta = dict(src, dims=info["dims"], looked_up=wanted_all, duplicates_skipped=info["duplicates_skipped"])
    with atomic_path(meta_path) as tmp:
        tmp.write_text(json.dumps(meta))
    return pick(df)


def _read_cache(cache: Path) -> pd.DataFrame:
    tab = pd.read_parquet(cache)
    return _frame(tab["word"], tab.drop(columns="word").to_numpy(dtype=np.float64))


# -------------------- results


@dataclass
class BiasResult:
    """What a test returns (sweater's S3 "sweater" object).

    ``method`` names the test. Word sets are the ones *used* (found in the vectors);
    ``missing`` maps each role ("S", "T", "A", "B") to the words that were not found.
    Per-word scores are in ``P`` (mac, rnd, nas, semaxis, rnsb; indexed by S word),
    ``S_diff``/``T_diff`` (weat) or ``u_a``/``u_b`` (ect).

    Examples
    --------
    As sweater's ``print()`` of a result:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> mac(w, ["pilot", "nurse"], ["he", "him"])
    -- sweater object --
    Test type:  mac
    Effect size:  0.749046
    """

    method: str
    S_words: list[str]
    T_words: list[str] = field(default_factory=list)
    A_words: list[str] = field(default_factory=list)
    B_words: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)
    P: pd.Series | None = None
    S_diff: pd.Series | None = None
    T_diff: pd.Series | None = None
    u_a: pd.Series | None = None
    u_b: pd.Series | None = None
    V: np.ndarray | None = None
    raw: pd.DataFrame | None = None
    classifier: object | None = None

    def __repr__(self) -> str:
        lines = ["-- sweater object --", f"Test type:  {self.method}"]
        if self.method not in ("semaxis", "nas"):
            lines.append(f"Effect size:  {calculate_es(self):.6g}")
        n_missing = sum(len(v) for v in self.missing.values())
        if n_missing:
            lines.append(
                f"Missing words ({n_missing}): " + "; ".join(f"{k}: {', '.join(v)}" for k, v in self.missing.items() if v)
            )
        return "\n".join(lines)

    @property
    def scores(self) -> pd.Series:
        """Per-word scores (``P``), for the methods that have them."""
        if self.P is None:
            raise InputError(
                f"a {self.method} result has no per-word scores P",
                fix="per-word scores exist for mac, rnd, nas, semaxis and rnsb",
            )
        return self.P


@dataclass
class WeatTest:
    """A significance test of WEAT (sweater's htest): one-sided, alternative "greater".

    Examples
    --------
    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> test = weat_exact(res)
    >>> test.method, round(test.statistic, 3), test.p_value, test.n, test.alternative
    ('The exact test in Caliskan et al. (2017)', 0.556, 0.0, 20, 'greater')
    """

    method: str
    statistic: float  # mean(S_diff) - mean(T_diff)
    p_value: float
    n: int  # partitions enumerated (exact) or draws (resampling)
    null_value: float | None = None
    seed: int | None = None
    alternative: str = "greater"


def _vectors(w) -> pd.DataFrame:
    if not isinstance(w, pd.DataFrame):
        raise InputError(
            f"vectors must be a pandas DataFrame indexed by word, got {type(w).__name__}",
            fix="read them with fmat.embeddings.read_word2vec(path, words=...)",
        )
    if w.index.has_duplicates:
        w = w[~w.index.duplicated(keep="first")]
    return w


def _clean(words, w: pd.DataFrame, role: str, missing: dict) -> list[str]:
    """sweater's ``.clean``: keep the words found in ``w``; report the others (never silently)."""
    if words is None:
        return []
    words = [str(x) for x in ([words] if isinstance(words, str) else words)]
    found = [x for x in words if x in w.index]
    lost = [x for x in words if x not in w.index]
    if lost:
        missing[role] = lost
        warnings.warn(
            f"{len(lost)} of {len(words)} {role} words are not in the embeddings and were left out: {', '.join(lost)}",
            MissingWordsWarning,
            stacklevel=user_stacklevel(),
        )
    if not found:
        raise InputError(
            f"none of the {role} words is in the embeddings ({', '.join(words[:10])}...)",
            where=f"{role}_words",
            fix="check spelling and case (GloVe 840B is cased)",
        )
    return found


def _clean_sets(w, **sets) -> tuple[pd.DataFrame, dict, list[list[str]]]:
    """The vectors (:func:`_vectors`) and :func:`_clean` of several word sets, in the order given:
    ``(vectors, missing, [found words of each])``."""
    w = _vectors(w)
    missing: dict[str, list[str]] = {}
    return w, missing, [_clean(words, w, role, missing) for role, words in sets.items()]


def _mat(w: pd.DataFrame, words: Sequence[str]) -> np.ndarray:
    return w.loc[list(words)].to_numpy(dtype=np.float64)


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.atleast_2d(m)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _cos(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of x with every row of y: cos(a,b) = a.b / (|a| |b|)."""
    return _unit(x) @ _unit(y).T


# -------------------- WEAT


def _s_assoc(w, targets, A, B) -> np.ndarray:
    """s(x, A, B) = mean_a cos(x, a) - mean_b cos(x, b) for each target x (sweater cpp_bweat)."""
    X = _mat(w, targets)
    return _cos(X, _mat(w, A)).mean(axis=1) - _cos(X, _mat(w, B)).mean(axis=1)


def weat(w, S_words, T_words, A_words, B_words) -> BiasResult:
    """Word Embedding Association Test (Caliskan et al. 2017; sweater ``weat``).

    ``S_diff[x] = s(x, A, B)`` for x in S and ``T_diff[y] = s(y, A, B)`` for y in T, with
    s(x, A, B) = mean_{a in A} cos(x, a) - mean_{b in B} cos(x, b).
    Effect size: :func:`weat_es`; tests: :func:`weat_exact`, :func:`weat_resampling`.

    Examples
    --------
    Reproduces ``sweater::weat(w, S_words, T_words, A_words, B_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> res.S_diff.round(3).to_dict()
    {'pilot': 0.342, 'engineer': 0.297, 'doctor': 0.098}
    >>> res.T_diff.round(3).to_dict()
    {'nurse': -0.447, 'teacher': -0.388, 'author': -0.098}
    """
    w, missing, (A, B, S, T) = _clean_sets(w, A=A_words, B=B_words, S=S_words, T=T_words)
    S_diff = pd.Series(_s_assoc(w, S, A, B), index=S, name="S_diff")
    T_diff = pd.Series(_s_assoc(w, T, A, B), index=T, name="T_diff")
    return BiasResult("weat", S, T, A, B, missing, S_diff=S_diff, T_diff=T_diff)


def _need(x: BiasResult, method: str) -> None:
    if not isinstance(x, BiasResult) or x.method != method:
        got = x.method if isinstance(x, BiasResult) else type(x).__name__
        raise InputError(f"x is not created with {method}() (got {got})", fix=f"pass the result of {method}()")


def weat_es(x: BiasResult, standardize: bool = True, r: bool = False, pooled: str = "cohen") -> float:
    """WEAT effect size (sweater ``weat_es``).

    Unstandardized: ``mean(S_diff) - mean(T_diff)``. Standardized (Cohen's d, Caliskan's
    effect size) divides by the SD (ddof=1) of all S_diff and T_diff together when
    |S| == |T|; when the sizes differ by the pooled SD
    sqrt(((n1-1) var_S + (n2-1) var_T) / (n1+n2-2)). sweater 0.1.7's code for the unequal
    case misplaces a parenthesis (sqrt((n1-1) var_S + (n2-1) var_T / (n1+n2+2)));
    ``pooled="sweater"`` reproduces that literally, for comparisons with sweater output.
    ``r=True`` converts d to the point-biserial r = d / sqrt(d^2 + (N^2 - 2N) / (n1 n2)).

    Examples
    --------
    Reproduces ``sweater::weat_es(x)`` (Caliskan et al.'s d):

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> round(weat_es(res), 3), round(weat_es(res, standardize=False), 3), round(weat_es(res, r=True), 3)
    (1.651, 0.556, 0.711)
    """
    u, n1, n2, stat = _weat_diffs(x)
    s, t = u[:n1], u[n1:]
    if not standardize:
        return stat
    if pooled not in ("cohen", "sweater"):
        raise InputError(f"pooled must be 'cohen' or 'sweater', got {pooled!r}", fix="use pooled='cohen'")
    if n1 == n2:
        sd = np.std(np.concatenate([s, t]), ddof=1)
    elif pooled == "cohen":
        sd = math.sqrt(((n1 - 1) * np.var(s, ddof=1) + (n2 - 1) * np.var(t, ddof=1)) / (n1 + n2 - 2))
    else:
        sd = math.sqrt((n1 - 1) * np.var(s, ddof=1) + (n2 - 1) * np.var(t, ddof=1) / (n1 + n2 + 2))
    es = (s.mean() - t.mean()) / sd
    if r:
        es = es / math.sqrt(es**2 + ((n1 + n2) ** 2 - 2 * (n1 + n2)) / (n1 * n2))
    return float(es)


def _n_greater(diffs: np.ndarray, stat: float) -> int:
    """How many ``diffs`` exceed ``stat``; ties within a few ulps (sums in another order) are not greater."""
    return int(np.count_nonzero(diffs > stat + 1e-12 * max(1.0, abs(stat))))


def _weat_diffs(x: BiasResult) -> tuple[np.ndarray, int, int, float]:
    """S_diff and T_diff of a weat result as one array, |S|, |T| and mean(S_diff) - mean(T_diff)."""
    _need(x, "weat")
    s, t = x.S_diff.to_numpy(), x.T_diff.to_numpy()
    return np.concatenate([s, t]), len(s), len(t), float(s.mean() - t.mean())


def weat_exact(x: BiasResult, max_partitions: int = 2_000_000) -> WeatTest:
    """Exact permutation test of Caliskan et al. (2017) (sweater ``weat_exact``).

    p = Pr_i[ mean(X_i) - mean(Y_i) > mean(S_diff) - mean(T_diff) ] over all ways to split
    S_diff ∪ T_diff into groups of |S| and |T| (one-sided; as sweater, which enumerates all
    (|S|+|T|)! orderings — the same proportion, since each split is n1! n2! orderings).
    Raises InputError when there are more than ``max_partitions`` splits (C(16, 8) = 12,870
    is instant; C(50, 25) ~ 1.3e14 is infeasible — use :func:`weat_resampling`).

    Examples
    --------
    Reproduces ``sweater::weat_exact(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> test = weat_exact(res)
    >>> round(test.statistic, 3), test.p_value, test.n
    (0.556, 0.0, 20)
    """
    u, n1, n2, stat = _weat_diffs(x)
    total = math.comb(n1 + n2, n1)
    if total > max_partitions:
        raise InputError(
            f"the exact test needs {total:.3g} partitions of {n1}+{n2} words (limit {max_partitions:,})",
            fix="use weat_resampling(x, n_resampling=9999, seed=...) (the resampling approximation)",
        )
    tot = u.sum()
    count = 0
    combos = itertools.combinations(range(n1 + n2), n1)
    while True:
        idx = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, 200_000)), dtype=np.intp)
        if idx.size == 0:
            break
        sums = u[idx.reshape(-1, n1)].sum(axis=1)
        diffs = sums / n1 - (tot - sums) / n2
        count += _n_greater(diffs, stat)
    return WeatTest("The exact test in Caliskan et al. (2017)", stat, count / total, total)


def weat_resampling(x: BiasResult, n_resampling: int = 9999, seed: int | None = None) -> WeatTest:
    """Resampling approximation of the exact test (sweater ``weat_resampling``).

    Draws ``n_resampling`` random relabellings of S_diff ∪ T_diff (group sizes kept) and
    returns p = #{draws with mean(X_i) - mean(Y_i) > observed} / n_resampling (sweater's
    estimator, without the +1 correction) and the mean of the draws as ``null_value``.
    ``seed`` makes it reproducible (numpy ``default_rng``).

    Examples
    --------
    As ``sweater::weat_resampling(x)`` (with a seed of its own):

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> test = weat_resampling(res, n_resampling=1000, seed=1)
    >>> round(test.statistic, 3), test.p_value, test.n
    (0.556, 0.0, 1000)
    """
    u, n1, n2, stat = _weat_diffs(x)
    if n_resampling < 1:
        raise InputError(f"n_resampling must be >= 1, got {n_resampling}", fix="use e.g. 9999")
    rng = np.random.default_rng(seed)
    labels = np.r_[np.ones(n1, bool), np.zeros(n2, bool)]
    diffs = np.empty(n_resampling)
    done = 0
    while done < n_resampling:
        k = min(50_000, n_resampling - done)
        z = rng.permuted(np.tile(labels, (k, 1)), axis=1)
        sums = z @ u
        diffs[done : done + k] = sums / n1 - (u.sum() - sums) / n2
        done += k
    return WeatTest(
        "Resampling approximation of the exact test in Caliskan et al. (2017)",
        stat,
        _n_greater(diffs, stat) / n_resampling,
        n_resampling,
        null_value=float(diffs.mean()),
        seed=seed,
    )


def weat_test(
    x: BiasResult, method: str = "auto", n_resampling: int = 9999, seed: int | None = None, max_partitions: int = 2_000_000
) -> WeatTest:
    """Exact test when feasible (``method="auto"``: at most ``max_partitions`` splits), else resampling.

    Examples
    --------
    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> weat_test(res).method
    'The exact test in Caliskan et al. (2017)'
    >>> weat_test(res, method="resampling", n_resampling=100, seed=1).method
    'Resampling approximation of the exact test in Caliskan et al. (2017)'
    """
    _need(x, "weat")
    if method not in ("auto", "exact", "resampling"):
        raise InputError(f"unknown WEAT test {method!r}", fix="use auto, exact or resampling")
    feasible = math.comb(len(x.S_diff) + len(x.T_diff), len(x.S_diff)) <= max_partitions
    if method == "exact" or (method == "auto" and feasible):
        return weat_exact(x, max_partitions=max_partitions)
    return weat_resampling(x, n_resampling=n_resampling, seed=seed)


# -------------------- the other tests


def _nas_scores(w, S, A, B) -> tuple[np.ndarray, np.ndarray]:
    """nas's P of the words S, and every cos(s, x) (columns A then B)."""
    X = _mat(w, S)
    ca, cb = _cos(X, _mat(w, A)), _cos(X, _mat(w, B))
    both = np.hstack([ca, cb])
    return (ca.mean(axis=1) - cb.mean(axis=1)) / both.std(axis=1, ddof=1), both


def nas(w, S_words, A_words, B_words) -> BiasResult:
    """Normalized association score = Caliskan's WEFAT score (sweater ``nas``).

    P[s] = (mean_{a in A} cos(s, a) - mean_{b in B} cos(s, b)) / sd_{x in A ∪ B} cos(s, x),
    sd with ddof=1 (R ``sd``). ``raw`` holds every cos(s, x) (rows S, columns A then B).

    Examples
    --------
    Reproduces ``sweater::nas(w, S_words, A_words, B_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> nas(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]).P.round(3).to_dict()
    {'pilot': 1.621, 'nurse': -1.659, 'author': -1.088}
    """
    w, missing, (A, B, S) = _clean_sets(w, A=A_words, B=B_words, S=S_words)
    P, both = _nas_scores(w, S, A, B)
    raw = pd.DataFrame(both, index=S, columns=[f"A:{a}" for a in A] + [f"B:{b}" for b in B])
    return BiasResult("nas", S, [], A, B, missing, P=pd.Series(P, index=S, name="P"), raw=raw)


def mac(w, S_words, A_words) -> BiasResult:
    """Mean average cosine similarity (Manzini et al. 2019; sweater ``mac``).

    P[s] = mean_{a in A} cos(s, a). Effect size (:func:`mac_es`): mean of P.
    (Manzini's MAC and wefe's use cosine *distance*, 1 - cos: their value is 1 - mac_es.)

    Examples
    --------
    Reproduces ``sweater::mac(w, S_words, A_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> mac(w, ["pilot", "nurse", "author"], ["he", "him"]).P.round(3).to_dict()
    {'pilot': 0.962, 'nurse': 0.536, 'author': 0.782}
    """
    w, missing, (A, S) = _clean_sets(w, A=A_words, S=S_words)
    P = _cos(_mat(w, S), _mat(w, A)).mean(axis=1)
    return BiasResult("mac", S, [], A, [], missing, P=pd.Series(P, index=S, name="P"))


def mac_es(x: BiasResult) -> float:
    """Mean of all per-word mean cosine similarities: mean_s P[s].

    Examples
    --------
    Reproduces ``sweater::mac_es(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> round(mac_es(mac(w, ["pilot", "nurse", "author"], ["he", "him"])), 3)
    0.76
    """
    _need(x, "mac")
    return float(x.P.mean())


def rnd(w, S_words, A_words, B_words) -> BiasResult:
    """Relative norm distance (Garg et al. 2018; sweater ``rnd``).

    P[s] = ||s - mean(A)|| - ||s - mean(B)|| (Euclidean, raw vectors, no normalisation).
    Effect size (:func:`rnd_es`): sum of P (0 = no bias; negative = closer to A).

    Examples
    --------
    Reproduces ``sweater::rnd(w, S_words, A_words, B_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> rnd(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]).P.round(3).to_dict()
    {'pilot': -0.564, 'nurse': 0.704, 'author': 0.141}
    """
    w, missing, (A, B, S) = _clean_sets(w, A=A_words, B=B_words, S=S_words)
    X = _mat(w, S)
    va, vb = _mat(w, A).mean(axis=0), _mat(w, B).mean(axis=0)
    P = np.linalg.norm(X - va, axis=1) - np.linalg.norm(X - vb, axis=1)
    return BiasResult("rnd", S, [], A, B, missing, P=pd.Series(P, index=S, name="P"))


def rnd_es(x: BiasResult) -> float:
    """Sum of all relative norm distances: sum_s P[s].

    Examples
    --------
    Reproduces ``sweater::rnd_es(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> round(rnd_es(rnd(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"])), 3)
    0.281
    """
    _need(x, "rnd")
    return float(x.P.sum())


def _soften(w: pd.DataFrame, word: str, l: int) -> np.ndarray:
    """sweater ``.soften``: the mean of the word's vector and its ``l`` nearest neighbours
    (by cosine, among all rows of ``w``; the word itself is the first of the l+1 kept)."""
    v = w.loc[word].to_numpy(dtype=np.float64)
    if l == 0:
        return v
    M = w.to_numpy(dtype=np.float64)
    sims = _cos(M, v[None, :])[:, 0]
    top = np.argsort(-sims, kind="stable")[: l + 1]
    return M[top].mean(axis=0)


def semaxis(w, S_words, A_words, B_words, l: int = 0) -> BiasResult:
    """SemAxis (An et al. 2018; sweater ``semaxis``).

    Axis V = mean_{a in A} soft(a) - mean_{b in B} soft(b), where soft(x) is x's vector
    (l = 0) or the mean of x and its l nearest neighbours in ``w`` (augmentation).
    P[s] = cos(s, V). No effect size (as sweater).

    Examples
    --------
    Reproduces ``sweater::semaxis(w, S_words, A_words, B_words, l = 0)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> semaxis(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]).P.round(3).to_dict()
    {'pilot': 0.316, 'nurse': -0.414, 'author': -0.091}
    """
    w = _vectors(w)
    if int(l) != l or l < 0:
        raise InputError(f"l must be a non-negative integer, got {l!r}", fix="use l=0 (no augmentation)")
    w, missing, (A, B, S) = _clean_sets(w, A=A_words, B=B_words, S=S_words)
    va = np.vstack([_soften(w, a, int(l)) for a in A]).mean(axis=0)
    vb = np.vstack([_soften(w, b, int(l)) for b in B]).mean(axis=0)
    V = va - vb
    P = _cos(_mat(w, S), V[None, :])[:, 0]
    return BiasResult("semaxis", S, [], A, B, missing, P=pd.Series(P, index=S, name="P"), V=V)


def rnsb(w, S_words, A_words, B_words) -> BiasResult:
    """Relative negative sentiment bias (Sweeney & Najafian 2019; sweater ``rnsb``).

    An L2-regularised logistic regression (liblinear, C = 1, intercept as a regularised
    bias feature of 1, tol 1e-4 — sweater's ``LiblineaR(type = 0, epsilon = 1e-4)``) is
    trained on the A words (label 0, e.g. positive) and B words (label 1, e.g. negative).
    P[s] = Pr(B | s) / sum_s Pr(B | s). Effect size (:func:`rnsb_es`): KL(P || uniform).
    (sweater takes the second probability column of LiblineaR, which is the B class when
    an A word comes first in the embedding matrix; here it is always the B class.)

    Examples
    --------
    Reproduces ``sweater::rnsb(w, S_words, A_words, B_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> rnsb(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]).P.round(3).to_dict()
    {'pilot': 0.289, 'nurse': 0.374, 'author': 0.337}
    """
    from sklearn.linear_model import LogisticRegression

    w, missing, (A, B, S) = _clean_sets(w, A=A_words, B=B_words, S=S_words)
    X = np.vstack([_mat(w, A), _mat(w, B)])
    y = np.r_[np.zeros(len(A), int), np.ones(len(B), int)]
    clf = LogisticRegression(C=1.0, solver="liblinear", tol=1e-4, intercept_scaling=1.0, max_iter=10_000)
    clf.fit(X, y)
    prob_b = clf.predict_proba(_mat(w, S))[:, list(clf.classes_).index(1)]
    P = prob_b / prob_b.sum()
    return BiasResult("rnsb", S, [], A, B, missing, P=pd.Series(P, index=S, name="P"), classifier=clf)


def rnsb_es(x: BiasResult) -> float:
    """Kullback-Leibler divergence of P from the uniform distribution: sum P log(P / (1/n)).

    Examples
    --------
    Reproduces ``sweater::rnsb_es(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> round(rnsb_es(rnsb(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"])), 4)
    0.0055
    """
    _need(x, "rnsb")
    p = x.P.dropna().to_numpy()
    return float(np.sum(p * np.log(p * len(p))))


def ect(w, S_words, A_words, B_words) -> BiasResult:
    """Embedding coherence test (Dev & Phillips 2019; sweater ``ect``).

    u_a[s] = cos(s, mean(A)), u_b[s] = cos(s, mean(B)). Effect size (:func:`ect_es`):
    Spearman correlation of u_a and u_b (1 = no bias).

    Examples
    --------
    Reproduces ``sweater::ect(w, S_words, A_words, B_words)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = ect(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"])
    >>> res.u_a.round(3).to_dict()
    {'pilot': 0.967, 'nurse': 0.536, 'author': 0.785}
    """
    w, missing, (A, B, S) = _clean_sets(w, A=A_words, B=B_words, S=S_words)
    X = _mat(w, S)
    ua = _cos(X, _mat(w, A).mean(axis=0)[None, :])[:, 0]
    ub = _cos(X, _mat(w, B).mean(axis=0)[None, :])[:, 0]
    return BiasResult("ect", S, [], A, B, missing, u_a=pd.Series(ua, index=S, name="u_a"), u_b=pd.Series(ub, index=S, name="u_b"))


def ect_es(x: BiasResult) -> float:
    """Spearman rank correlation of u_a and u_b (scipy.stats.spearmanr).

    Examples
    --------
    Reproduces ``sweater::ect_es(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> ect_es(ect(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]))
    -1.0
    """
    from scipy.stats import spearmanr

    _need(x, "ect")
    return float(spearmanr(x.u_a.to_numpy(), x.u_b.to_numpy()).statistic)


# -------------------- front door


def query(w, S_words, T_words=None, A_words=None, B_words=None, method: str = "guess", **kwargs) -> BiasResult:
    """sweater's ``query``: run one test; ``method="guess"`` picks it from the word sets given.

    S + A -> "mac"; S + A + B -> "rnd"; S + T + A + B -> "weat". Other methods: "nas",
    "semaxis" (``l=``), "rnsb", "ect". Extra keyword arguments go to the test.

    Examples
    --------
    Reproduces ``sweater::query()``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> query(w, ["pilot", "nurse", "author"], A_words=["he", "him"], B_words=["she", "her"]).method
    'rnd'
    >>> query(w, ["pilot", "nurse", "author"], A_words=["he", "him"], B_words=["she", "her"], method="ect").method
    'ect'
    """
    sets = {"S": S_words, "T": T_words, "A": A_words, "B": B_words}
    given = "".join(k for k, v in sets.items() if v)
    if method == "guess":
        method = {"SA": "mac", "SAB": "rnd", "STAB": "weat"}.get(given, "")
        if not method:
            raise InputError(
                f"cannot guess the method from the word sets given ({', '.join(sorted(given))})",
                fix="give S+A (mac), S+A+B (rnd) or S+T+A+B (weat), or name method=",
            )
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}", fix=f"use one of {', '.join(METHODS)} or guess")
    needs = {"weat": "STAB", "mac": "SA"}.get(method, "SAB")
    if not set(needs) <= set(given):
        raise InputError(
            f"method {method} needs word sets {', '.join(sorted(needs))}; missing {', '.join(sorted(set(needs) - set(given)))}",
            fix="give the missing word sets",
        )
    fn = {"weat": weat, "mac": mac, "nas": nas, "semaxis": semaxis, "rnsb": rnsb, "rnd": rnd, "ect": ect}[method]
    return fn(w, *(sets[k] for k in needs), **({} if method in ("weat", "mac") else kwargs))


def calculate_es(x: BiasResult, **kwargs) -> float:
    """Effect size of a result (sweater ``calculate_es``); ``**kwargs`` go to :func:`weat_es`.

    Examples
    --------
    Reproduces ``sweater::calculate_es(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> res = weat(w, ["pilot", "engineer", "doctor"], ["nurse", "teacher", "author"], ["he", "him"], ["she", "her"])
    >>> round(calculate_es(res), 3), round(calculate_es(query(w, ["pilot", "nurse", "author"], A_words=["he"])), 3)
    (1.651, 0.697)
    """
    if not isinstance(x, BiasResult):
        raise InputError("x must be a result of query() or one of the tests", fix="pass e.g. query(...)")
    fns = {"weat": weat_es, "mac": mac_es, "rnd": rnd_es, "rnsb": rnsb_es, "ect": ect_es}
    if x.method not in fns:
        raise InputError(
            f"no effect size can be calculated for a {x.method} query", fix="use the per-word scores result.P (nas, semaxis)"
        )
    return fns[x.method](x, **kwargs) if x.method == "weat" else fns[x.method](x)


def plot_bias(x: BiasResult, ax=None):
    """Cleveland dot plot of the per-word scores P, sorted (sweater ``plot_bias``).

    For ect it draws :func:`plot_ect`; weat is not supported (as sweater). Uses
    matplotlib's Agg backend when no figure is open. Returns the Figure.

    Examples
    --------
    As ``sweater::plot_bias(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> fig = plot_bias(mac(w, ["pilot", "nurse", "author"], ["he", "him"]))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['nurse', 'author', 'pilot']
    """
    if not isinstance(x, BiasResult):
        raise InputError("x must be a result of query()", fix="pass e.g. query(...)")
    if x.method == "ect":
        return plot_ect(x, ax=ax)
    if x.P is None:
        raise InputError(
            f"plotting a {x.method} result is not supported (no per-word scores P)",
            fix="plot results of mac, rnd, semaxis, nas or rnsb",
        )
    p = x.P.sort_values()
    fig, ax = _figure(ax, (5, max(2.0, 0.22 * len(p) + 1)))
    ypos = np.arange(len(p))
    ax.hlines(ypos, p.min(), p.max(), colors="lightgrey", linestyles="dotted", linewidth=0.8)
    ax.plot(p.to_numpy(), ypos, "o", color="black", markersize=4)
    ax.set_yticks(ypos, labels=list(p.index))
    ax.set_xlabel(f"{x.method} score (P)")
    fig.tight_layout()
    return fig


def plot_ect(x: BiasResult, ax=None):
    """Ranks of u_a (x) against u_b (y) with the equality line (sweater ``plot_ect``).

    Examples
    --------
    As ``sweater::plot_ect(x)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> fig = plot_ect(ect(w, ["pilot", "nurse", "author"], ["he", "him"], ["she", "her"]))
    >>> fig.axes[0].get_xlabel()
    'Association ranking: A_words'
    """
    _need(x, "ect")
    ra, rb = x.u_a.rank().to_numpy(), x.u_b.rank().to_numpy()
    fig, ax = _figure(ax, (5, 5))
    for word, a, b in zip(x.S_words, ra, rb):
        ax.text(a, b, word, ha="center", va="center", fontsize=8)
    lim = (0.5, len(ra) + 0.5)
    ax.set_xlim(lim)
    ax.set_ylim(lim)
    ax.plot(lim, lim, linestyle="--", color="grey")
    ax.set_xlabel("Association ranking: A_words")
    ax.set_ylabel("Association ranking: B_words")
    return fig


def _figure(ax, figsize):
    """``(figure, ax)``: ``ax``'s figure, or a new figure of ``figsize`` (Agg unless pyplot was in use)."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:  # headless default; keeps a backend the user chose
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize) if ax is None else (ax.figure, ax)


# -------------------- the FMAT paper's criterion


def wefat_criterion(vectors: pd.DataFrame, items, male_attrs, female_attrs) -> pd.DataFrame:
    """WEFAT_male of each item: the FMAT paper's criterion for Studies 1A–1C.

    wefat_male(w) = [mean_{m in male} cos(w, m) - mean_{f in female} cos(w, f)]
                    / sd_{x in male ∪ female} cos(w, x)      (sd with ddof=1)
    i.e. Caliskan et al.'s (2017) WEFAT s(w) with the sign flipped (male-positive), as sweater ``nas(w, items, male, female)``.

    Returns one row per item, in the given order: ``item``, ``wefat_male`` (NaN when the item
    is not in the vectors) and ``missing``. Missing items and attribute words are warned about
    (MissingWordsWarning); missing attribute words are left out of the score.

    Examples
    --------
    The same numbers as ``sweater::nas(w, items, male, female)``:

    >>> w = example_vectors()  # he him she her pilot engineer doctor nurse teacher author, in 2 dimensions
    >>> wefat_criterion(w, ["pilot", "nurse", "astronaut"], ["he", "him"], ["she", "her"]).round(3)
            item  wefat_male  missing
    0      pilot       1.621    False
    1      nurse      -1.659    False
    2  astronaut         NaN     True
    """
    w, _, (M, F) = _clean_sets(vectors, male=male_attrs, female=female_attrs)
    items = [str(i) for i in (items if not isinstance(items, str) else [items])]
    found = [i for i in dict.fromkeys(items) if i in w.index]
    lost = [i for i in dict.fromkeys(items) if i not in w.index]
    if lost:
        warnings.warn(
            f"{len(lost)} of {len(set(items))} items are not in the embeddings (wefat_male is NaN, "
            f"missing=True): {', '.join(lost)}",
            MissingWordsWarning,
            stacklevel=user_stacklevel(),
        )
    scores = dict(zip(found, _nas_scores(w, found, M, F)[0])) if found else {}
    return pd.DataFrame(
        {
            "item": pd.array(items, dtype="str"),
            "wefat_male": np.array([scores.get(i, np.nan) for i in items], dtype=np.float64),
            "missing": np.array([i not in scores for i in items], dtype=bool),
        }
    )


def example_vectors() -> pd.DataFrame:
    """The docstrings' example embeddings: ten words (he, him, she, her, pilot, engineer,
    doctor, nurse, teacher, author) in two dimensions, one row a word.

    Examples
    --------
    >>> example_vectors().loc[["he", "she"]].to_numpy().tolist()
    [[1.0, 0.1], [0.1, 1.0]]
    """
    rows = [[1, 0.1], [0.9, 0.3], [0.1, 1], [0.3, 0.9], [0.8, 0.4], [0.9, 0.5], [0.6, 0.5], [0.3, 0.8], [0.4, 0.9], [0.5, 0.6]]
    words = ["he", "him", "she", "her", "pilot", "engineer", "doctor", "nurse", "teacher", "author"]
    return pd.DataFrame(rows, index=words, dtype=float)
