"""Subject–verb agreement check of masked LMs (Goldberg, 2019, on Marvin & Linzen, 2018 stimuli).

Before trusting a model's fill-mask probabilities as measures (FMAT), check that it knows
basic grammar: for each minimal pair, the sentence with the verb masked, is the correct verb
more probable than the incorrect one?

    "the author that the guards like [MASK] ."   P(laughs) > P(laugh)  ->  correct

Stimuli (Goldberg's ``marvin_linzen_dataset.tsv`` format, one pair per line, tab-separated,
no header): ``construction, template, [...], good sentence, bad sentence``; as Goldberg's
``eval_bert.py``, pairs that do not differ in exactly one word are dropped, the differing
word of the good sentence becomes ``[MASK]`` and " ." is appended. :func:`read_pairs` reads
such a file (default: the project's fixture of 30 pairs), :func:`download_pairs` fetches
Goldberg's, :func:`check` scores them with :func:`fmat.run` (a verb that is not one
whole-word token of a model makes the pair *skipped*) and :func:`summarize` gives the
accuracy per model × construction.

Sources: Marvin & Linzen (2018), *Targeted syntactic evaluation of language models*, EMNLP;
Goldberg (2019), *Assessing BERT's syntactic abilities*, arXiv:1901.05287,
https://github.com/yoavg/bert-syntax. See docs/agreement.md.
"""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.request
import warnings
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import InputError, OfflineError
from .io import atomic_path
from .net import timeout as _timeout
from .runner import run
from .scoring import OOVWarning

log = logging.getLogger(__name__)

#: Goldberg's dump of the Marvin & Linzen (2018) stimuli (repository yoavg/bert-syntax)
MARVIN_LINZEN_URL = "https://raw.githubusercontent.com/yoavg/bert-syntax/master/marvin_linzen_dataset.tsv"
#: its sha256: not verified (the file could not be fetched where fmat was written); the first
#: download logs the hash it got -- record it in config (agreement.sha256) to pin the file
MARVIN_LINZEN_SHA256 = "unverified"
FIXTURE = "agreement_fixture.tsv"

#: Marvin & Linzen's subject–verb agreement constructions (the file also has reflexive
#: anaphora and negative polarity items, which are not verb agreement)
SV_AGREEMENT = (
    "simple_agrmt",
    "sent_comp",
    "vp_coord",
    "long_vp_coord",
    "prep_anim",
    "prep_inanim",
    "subj_rel",
    "obj_rel_across_anim",
    "obj_rel_across_inanim",
    "obj_rel_no_comp_across_anim",
    "obj_rel_no_comp_across_inanim",
    "obj_rel_within_anim",
    "obj_rel_within_inanim",
    "obj_rel_no_comp_within_anim",
    "obj_rel_no_comp_within_inanim",
)
#: the other constructions of Marvin & Linzen's file (reflexive anaphora, negative polarity items)
ML_OTHER = (
    "simple_reflexives",
    "reflexive_sent_comp",
    "reflexives_across",
    "simple_npi_anim",
    "simple_npi_inanim",
    "npi_across_anim",
    "npi_across_inanim",
)
PAIR_COLUMNS = ["pair", "construction", "template", "sentence", "good", "bad"]
SUMMARY_COLUMNS = ["model", "construction", "n", "n_correct", "accuracy", "skipped", "total"]


def known_constructions(download: bool = False) -> list[str]:
    """The construction names a configuration may list: those of the project's fixture, or
    (``download``: Marvin & Linzen's file) all of Marvin & Linzen's constructions.

    Examples
    --------
    >>> known_constructions()[:2]
    ['obj_rel_across_anim', 'prep_anim']
    """
    if download:
        return [*SV_AGREEMENT, *ML_OTHER]
    return sorted(set(read_pairs(None, constructions=None)["construction"]))


def fixture_path() -> Path:
    """The project's fixture of 30 minimal pairs (``fmat/data/agreement_fixture.tsv``).

    Examples
    --------
    >>> fixture_path().name
    'agreement_fixture.tsv'
    """
    return Path(str(resources.files("fmat").joinpath("data", FIXTURE)))


# ----------------------------------------------------------------------------- reading


def parse_pairs(
    lines: Iterable[str], where: str = "pairs", constructions: Sequence[str] | str | None = SV_AGREEMENT
) -> pd.DataFrame:
    """Minimal pairs from Goldberg-format lines (see the module docstring).

    ``constructions``: keep these (default: :data:`SV_AGREEMENT`); ``None`` or ``"all"``: all.
    Returns :data:`PAIR_COLUMNS` (``sentence`` with ``[MASK]`` and " ." appended; ``pair``
    numbers the kept pairs from 1); ``attrs["dropped"]`` counts pairs that do not differ in
    exactly one word.

    Examples
    --------
    >>> pairs = parse_pairs(["\\t".join(["simple_agrmt", "sep", "the author laughs", "the author laugh"])])
    >>> pairs[["construction", "sentence", "good", "bad"]]
       construction             sentence    good    bad
    0  simple_agrmt  the author [MASK] .  laughs  laugh
    """
    keep = None if constructions in (None, "all") else set([constructions] if isinstance(constructions, str) else constructions)
    rows, dropped = [], 0
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 4:
            raise InputError(
                f"line {n} has {len(cols)} tab-separated column(s); a pair needs at least 4 "
                "(construction, template, good sentence, bad sentence)",
                where=f"{where}:{n}",
                fix="use Goldberg's marvin_linzen_dataset.tsv format (fmat/data/agreement_fixture.tsv is an example)",
            )
        construction, template = cols[0].strip(), cols[1].strip()
        if keep is not None and construction not in keep:
            continue
        good, bad = cols[-2].split(), cols[-1].split()
        diffs = [i for i, (g, b) in enumerate(zip(good, bad)) if g != b]
        if len(good) != len(bad) or len(diffs) != 1:
            dropped += 1
            continue
        i = diffs[0]
        masked = good[:i] + ["[MASK]"] + good[i + 1 :] + ["."]
        rows.append((construction, template, " ".join(masked), good[i], bad[i]))
    if dropped:
        log.info("%s: %d pair(s) dropped (the sentences do not differ in exactly one word)", where, dropped)
    out = pd.DataFrame(rows, columns=PAIR_COLUMNS[1:])
    out.insert(0, "pair", np.arange(1, len(out) + 1, dtype=np.int64))
    if keep is not None and len(out) == 0:
        raise InputError(
            f"no pairs of the constructions {sorted(keep)} in {where}",
            where=where,
            fix="check the file, or keep all constructions (constructions='all')",
        )
    out.attrs["dropped"] = dropped
    return out


def read_pairs(path=None, constructions: Sequence[str] | str | None = SV_AGREEMENT) -> pd.DataFrame:
    """Read minimal pairs from a Goldberg-format TSV (default: the project's fixture).

    Examples
    --------
    >>> pairs = read_pairs()
    >>> len(pairs), list(pairs.columns)
    (30, ['pair', 'construction', 'template', 'sentence', 'good', 'bad'])
    """
    path = fixture_path() if path is None else Path(path)
    if not path.exists():
        raise InputError(
            f"pairs file not found: {path}",
            where="agreement.pairs",
            fix="give an existing file, or none for the fixture; `fmat agreement-download` fetches Marvin & Linzen's stimuli",
        )
    with open(path, encoding="utf-8") as f:
        return parse_pairs(f, where=str(path), constructions=constructions)


# ----------------------------------------------------------------------------- download


def download_pairs(
    dest,
    url: str = MARVIN_LINZEN_URL,
    sha256: str | None = MARVIN_LINZEN_SHA256,
    opener: Callable | None = None,
    timeout: float | None = None,
) -> Path:
    """Download Goldberg's Marvin & Linzen file to ``dest`` (atomically) and check it.

    ``sha256``: the expected hex digest (``"unverified"`` or None: the digest got is logged, to
    be recorded as ``agreement.sha256``); ``dest.sha256`` records it (``sha256sum`` format). The
    content must parse as pairs. ``opener(url, timeout=...)``: :func:`urllib.request.urlopen`
    or a fake; ``timeout``: :func:`fmat.net.timeout`. OfflineError when the URL cannot be read,
    InputError on a checksum mismatch or content not in the expected format.

    Examples
    --------
    >>> import io, tempfile, pathlib
    >>> line = "simple_agrmt\\tsep\\tthe author laughs\\tthe author laugh\\n"
    >>> opener = lambda url, timeout: io.BytesIO(line.encode())
    >>> path = download_pairs(pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv", sha256=None, opener=opener)
    >>> len(read_pairs(path))
    1
    """
    timeout = _timeout(timeout)
    opener = opener or urllib.request.urlopen
    try:
        with opener(url, timeout=timeout) as resp:
            data = resp.read()
    except Exception as err:  # network errors differ between urllib, proxies and fakes
        raise OfflineError(
            f"cannot download the agreement pairs from {url}: {type(err).__name__}: {err}",
            where="agreement.url",
            fix="download the file on a connected machine and give its path "
            "(config agreement.pairs, or fmat agreement --pairs FILE)",
        ) from err
    got = hashlib.sha256(data).hexdigest()
    pinned = sha256 and sha256 != "unverified"
    if pinned and got != sha256.lower():
        raise InputError(
            f"the file downloaded from {url} has sha256 {got}, expected {sha256}",
            where="agreement.sha256",
            fix="the source changed or the download is corrupt: check the file, then set the "
            "expected checksum to the new one if the content is right",
        )
    if not pinned:
        log.warning("downloaded %s: sha256 %s (not checked: record it as agreement.sha256 to pin the file)", url, got)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            f"the file from {url} is not UTF-8 text",
            where="agreement.url",
            fix="check the URL (it should be a tab-separated text file)",
        ) from err
    pairs = parse_pairs(text.splitlines(), where=url, constructions="all")
    if len(pairs) == 0:
        raise InputError(
            f"the file from {url} holds no minimal pairs",
            where="agreement.url",
            fix="check the URL (Goldberg's marvin_linzen_dataset.tsv)",
        )
    dest = Path(dest)
    with atomic_path(dest) as tmp:
        tmp.write_bytes(data)
    with atomic_path(dest.with_name(dest.name + ".sha256")) as tmp:
        tmp.write_text(f"{got}  {dest.name}\n", encoding="utf-8")
    log.info("downloaded %d pairs from %s to %s", len(pairs), url, dest)
    return dest


# ----------------------------------------------------------------------------- scoring


def query_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """The query table :func:`fmat.run` scores: two rows per pair (MASK ``good``, ``bad``).

    Examples
    --------
    >>> pairs = parse_pairs(["\\t".join(["simple_agrmt", "sep", "the author laughs", "the author laugh"])])
    >>> query_table(pairs)
                     query  MASK M_pair  M_word
    0  the author [MASK] .  good      1  laughs
    1  the author [MASK] .   bad      1   laugh
    """
    n = len(pairs)
    sentence = np.repeat(pairs["sentence"].astype(str).to_numpy(), 2)
    words = np.column_stack([pairs["good"].astype(str).to_numpy(), pairs["bad"].astype(str).to_numpy()]).ravel()
    table = pd.DataFrame(
        {
            "query": pd.Categorical(sentence, categories=list(dict.fromkeys(sentence))),
            "MASK": pd.Categorical(["good", "bad"] * n, categories=["good", "bad"]),
            "M_pair": pd.Categorical(np.repeat(pairs["pair"].astype(str).to_numpy(), 2)),
            "M_word": pd.Categorical(words, categories=list(dict.fromkeys(words))),
        }
    )
    table.attrs["type"] = "M"
    return table


def _as_pairs(pairs, constructions) -> pd.DataFrame:
    if pairs is None or isinstance(pairs, (str, os.PathLike)):
        return read_pairs(pairs, constructions=constructions)
    if isinstance(pairs, pd.DataFrame):
        missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
        if missing:
            raise InputError(
                f"the pairs table lacks column(s) {missing}", where="pairs", fix="read it with fmat.agreement.read_pairs()"
            )
        return pairs
    raise InputError("pairs must be a file path, a table from read_pairs(), or None (the fixture)", where="pairs")


def check(
    models,
    pairs=None,
    device=None,
    batch_size: int | None = None,
    constructions=SV_AGREEMENT,
    progress: bool = False,
    **run_kwargs,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Subject–verb agreement accuracy of each model (Goldberg, 2019).

    ``models`` as :func:`fmat.run`; ``pairs``: a Goldberg-format file, a :func:`read_pairs`
    table, or None (the fixture); ``constructions``: which to read from a file; ``device``,
    ``batch_size``, ``progress`` and ``**run_kwargs`` go to :func:`fmat.run`.

    Returns ``(per_pair, summary)``. ``per_pair``: ``model`` + :data:`PAIR_COLUMNS` +
    ``logp_good, logp_bad`` (natural log of the full-vocabulary softmax at the mask),
    ``skipped`` (a verb is not one whole-word token of the model) and ``correct``
    (P(good) > P(bad); NA when skipped). ``summary``: :func:`summarize`.
    """
    pairs = _as_pairs(pairs, constructions)
    if len(pairs) == 0:
        raise InputError("no minimal pairs to score", where="pairs", fix="give a file with at least one pair")
    table = query_table(pairs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OOVWarning)
        scores = run(models, table, device=device, batch_size=batch_size, progress=progress, na_out=True, **run_kwargs)
    for w in caught:
        if issubclass(w.category, OOVWarning):
            log.info("agreement: %s (those pairs are skipped)", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    frames = []
    labels = list(scores["model"].cat.categories)
    for label in labels:
        s = scores[scores["model"] == label]
        if not np.array_equal(s["M_word"].astype(str).to_numpy(), table["M_word"].astype(str).to_numpy()):
            raise RuntimeError("fmat.run changed the row order")  # pragma: no cover - run's contract
        lp = s["logp"].to_numpy(dtype=float).reshape(-1, 2)
        oov = s["oov"].to_numpy(dtype=bool).reshape(-1, 2)
        out = pairs[PAIR_COLUMNS].reset_index(drop=True).copy()
        out.insert(0, "model", label)
        out["logp_good"], out["logp_bad"] = lp[:, 0], lp[:, 1]
        out["skipped"] = skipped = oov.any(axis=1) | np.isnan(lp).any(axis=1)
        out["correct"] = pd.arrays.BooleanArray(lp[:, 0] > lp[:, 1], skipped)
        frames.append(out)
    per_pair = pd.concat(frames, ignore_index=True)
    per_pair["model"] = pd.Categorical(per_pair["model"], categories=labels)
    return per_pair, summarize(per_pair)


def summarize(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model × construction, and over all constructions (construction ``all``).

    ``n``: pairs scored (not skipped); ``n_correct``: of those, P(good) > P(bad);
    ``accuracy = n_correct / n`` (NaN when n = 0); ``skipped``: pairs with a verb that is
    not one whole-word token of the model; ``total = n + skipped``. Constructions in order
    of first appearance; models in their order.

    Examples
    --------
    >>> import pandas as pd
    >>> per_pair = pd.DataFrame({"model": ["m"] * 3, "construction": ["simple_agrmt"] * 3,
    ...                          "correct": [True, False, None], "skipped": [False, False, True]})
    >>> summarize(per_pair)
      model  construction  n  n_correct  accuracy  skipped  total
    0     m  simple_agrmt  2          1       0.5        1      3
    1     m           all  2          1       0.5        1      3
    """
    need = ["model", "construction", "skipped", "correct"]
    missing = [c for c in need if c not in per_pair.columns]
    if missing:
        raise InputError(
            f"the per-pair table lacks column(s) {missing}",
            where="agreement results",
            fix="give the per-pair output of fmat.agreement.check (fmat agreement -o FILE)",
        )
    d = per_pair[["model", "construction"]].astype(str)
    d["skipped"] = per_pair["skipped"].astype(bool).to_numpy()
    d["correct"] = per_pair["correct"].astype("boolean").fillna(False).astype(bool).to_numpy() & ~d["skipped"]
    models = (
        list(per_pair["model"].cat.categories)
        if isinstance(per_pair["model"].dtype, pd.CategoricalDtype)
        else list(dict.fromkeys(d["model"]))
    )
    constructions = list(dict.fromkeys(d["construction"]))
    rows = []
    for m in models:
        dm = d[d["model"] == m]
        for c in constructions + ["all"]:
            dc = dm if c == "all" else dm[dm["construction"] == c]
            if c != "all" and len(dc) == 0:
                continue
            skipped, k = int(dc["skipped"].sum()), int(dc["correct"].sum())
            n = len(dc) - skipped
            rows.append((m, c, n, k, k / n if n else float("nan"), skipped, len(dc)))
    out = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    out["model"] = pd.Categorical(out["model"], categories=models)
    return out


def fixture_words(pairs=None) -> list[str]:
    """Every word of the pairs' sentences and verbs (for building tiny demo models that know them).

    Examples
    --------
    >>> words = fixture_words()
    >>> "author" in words, len(words) > 20
    (True, True)
    """
    pairs = _as_pairs(pairs, SV_AGREEMENT)
    words = {w for s in pairs["sentence"].astype(str) for w in s.split() if w not in ("[MASK]", ".")}
    return sorted(words | set(pairs["good"].astype(str)) | set(pairs["bad"].astype(str)))
