"""``fmat weat`` and ``fmat wefat``: bias tests on static word embeddings (fmat.embeddings)."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..errors import InputError
from ._common import add_output_args, command, emit_table, files


def _words(value: str | None, flag: str) -> list[str] | None:
    """A comma-separated list, or a file: one word per line, or a table with an ``item``/``word`` column."""
    if value is None:
        return None
    path = Path(value)
    if path.is_file():
        if path.suffix.lower() in (".parquet", ".csv", ".tsv"):
            from ..io import read_table

            tab = read_table(path)
            for col in ("item", "word"):
                if col in tab.columns:
                    return [str(x) for x in tab[col].dropna()]
            raise InputError(
                f"the table has no 'item' or 'word' column (columns: {', '.join(map(str, tab.columns))})",
                where=f"{flag} {path}",
                fix="name the column of words 'item' or 'word'",
            )
        words = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
        words = [x for x in words if x and not x.startswith("#")]
    else:
        words = [x.strip() for x in value.split(",") if x.strip()]
    if not words:
        raise InputError("no words given", where=flag, fix="give a comma-separated list or a file with one word a line")
    return words


def _add_vector_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vectors", required=True, help="word2vec/GloVe text file (.txt or .txt.gz)")
    p.add_argument(
        "--dims", type=int, default=None, help="vector dimension; needed for GloVe 840B (300), whose tokens may contain spaces"
    )
    p.add_argument("--cache", default=None, help="parquet file caching the vectors read (e.g. resources/glove.parquet)")


def run_weat(args) -> int:
    from .. import embeddings as E

    sets = {k: _words(getattr(args, k), f"--{k}") for k in ("S", "T", "A", "B")}
    wanted = [x for v in sets.values() if v for x in v]
    w = E.read_word2vec(args.vectors, words=wanted, dims=args.dims, cache=args.cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", E.MissingWordsWarning)
        res = E.query(w, *sets.values(), method=args.method, **({"l": args.l} if args.method == "semaxis" else {}))
    for warn in caught:
        print(f"warning: {warn.message}", file=sys.stderr)
    print(f"method: {res.method}")
    print("words used: " + ", ".join(f"{k}={len(getattr(res, k + '_words'))}" for k in "STAB" if getattr(res, k + "_words")))
    if res.method == "weat":
        print(f"effect size (d): {E.weat_es(res):.4f}")
        print(f"effect size (r): {E.weat_es(res, r=True):.4f}")
        print(f"mean difference: {E.weat_es(res, standardize=False):.6f}")
        test = E.weat_test(res, method=args.test, n_resampling=args.n_resampling, seed=args.seed)
        extra = f", {test.n} draws, seed {test.seed}" if test.method.startswith("Resampling") else f", {test.n} partitions"
        print(f"test: {test.method}{extra}; one-sided p = {test.p_value:.4g}")
    elif res.method in ("semaxis", "nas"):
        print(res.P.sort_values().to_string())
    else:
        print(f"effect size: {E.calculate_es(res):.6g}")
    return 0


def run_wefat(args) -> int:
    from ..embeddings import MissingWordsWarning, read_word2vec, wefat_criterion

    items = _words(args.items, "--items")
    male, female = _words(args.male, "--male"), _words(args.female, "--female")
    w = read_word2vec(args.vectors, words=items + male + female, dims=args.dims, cache=args.cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingWordsWarning)
        table = wefat_criterion(w, items, male, female)
    for warn in caught:
        print(f"warning: {warn.message}", file=sys.stderr)
    emit_table(table, args)
    return 0


def register(subparsers) -> None:
    p = command(
        subparsers,
        "weat",
        help="word-embedding bias tests (WEAT, RND, MAC, ECT, RNSB, SemAxis, NAS)",
        description="Run one of sweater's tests on word vectors. Word sets are comma-separated lists or files (one word a line).",
        example="fmat weat --vectors glove.840B.300d.txt --dims 300 --cache glove.parquet "
        "--S aster,clover --T ant,flea --A love,peace --B abuse,crash",
    )
    _add_vector_args(p)
    for k, what in (
        ("S", "first target words"),
        ("T", "second target words"),
        ("A", "first attribute words"),
        ("B", "second attribute words"),
    ):
        p.add_argument(f"--{k}", default=None, help=what)
    p.add_argument(
        "--method",
        default="guess",
        choices=["guess", "weat", "mac", "rnd", "nas", "semaxis", "rnsb", "ect"],
        help="guess: S+A mac, S+A+B rnd, S+T+A+B weat",
    )
    p.add_argument("--l", type=int, default=0, help="SemAxis augmentation (neighbours per attribute word)")
    p.add_argument(
        "--test",
        default="auto",
        choices=["auto", "exact", "resampling"],
        help="WEAT significance test (auto: exact when at most 2 million partitions)",
    )
    p.add_argument("--n-resampling", type=int, default=9999, help="draws for the resampling test")
    p.add_argument("--seed", type=int, default=None, help="seed for the resampling test")
    files(p, inputs=("vectors", "S", "T", "A", "B"), cache="file")
    p.set_defaults(func=run_weat)

    q = command(
        subparsers,
        "wefat",
        help="WEFAT_male criterion of items (FMAT paper Studies 1A-1C)",
        description="Per item: [mean cos(item, male) - mean cos(item, female)] / sd of all its "
        "cosines (Caliskan et al. 2017, sign flipped: male-positive).",
        example="fmat wefat --vectors glove.840B.300d.txt --dims 300 --items occupations.txt "
        "--male male,man,boy,brother,he,him,his,son "
        "--female female,woman,girl,sister,she,her,hers,daughter -o wefat.parquet",
    )
    _add_vector_args(q)
    q.add_argument("--items", required=True, help="items: comma list, text file, or table with an 'item' column")
    q.add_argument("--male", required=True, help="male attribute words (comma list or file)")
    q.add_argument("--female", required=True, help="female attribute words (comma list or file)")
    add_output_args(q)
    files(q, inputs=("vectors", "items", "male", "female"), cache="file")
    q.set_defaults(func=run_wefat)
