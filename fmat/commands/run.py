"""``fmat run``: score a query table on masked LMs (R: FMAT_run)."""

from __future__ import annotations

import warnings

from ._common import add_compute_args, add_models_arg, add_output_args, command, compute_options, emit_table, files


def register(sub) -> None:
    p = command(
        sub,
        "run",
        help="score a query table on masked language models (R: FMAT_run)",
        description="For every model and query row: the probability of the MASK word at the mask "
        "(full-vocabulary softmax). Out-of-vocabulary words get NaN and a warning.",
        example="fmat run queries.parquet -m bert-base-uncased -m roberta-base -o scores.parquet",
    )
    p.add_argument("queries", help="query table (parquet/csv/tsv) written by fmat query or fmat.query()")
    add_models_arg(p)
    add_compute_args(p)
    p.add_argument("--add-tokens", action="store_true", help="add OOV words temporarily as new tokens")
    p.add_argument(
        "--keep-oov",
        action="store_true",
        help="give OOV words the first piece's probability instead of NaN (FMAT's na.out=FALSE)",
    )
    p.add_argument(
        "--word-rule",
        choices=["tokenizer", "fmat"],
        default="tokenizer",
        help="whole-word token: derived from the tokenizer (default) or FMAT's model-name rules",
    )
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--single-group",
        action="store_true",
        help="accept a table with one MASK group (probabilities only: an LPR needs two groups)",
    )
    add_output_args(p)
    files(p, inputs=("queries",))
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..design import read_query_table
    from ..runner import run

    data = read_query_table(args.queries)
    if "MASK" in data.columns and data["MASK"].nunique() == 1 and not args.single_group:
        from ..errors import InputError

        raise InputError(
            f"every row has the same MASK group ({data['MASK'].iloc[0]!r}): the scores "
            "could not give an LPR (fmat summary needs two groups)",
            where=f"{args.queries}: MASK",
            fix="add a second MASK group (e.g. --mask Male=man --mask Female=woman in fmat query), "
            "or pass --single-group to score the probabilities only",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # every warning shown (fmat.cli prints each as "fmat run: warning: ...")
        scores = run(
            args.models,
            data,
            add_tokens=args.add_tokens,
            na_out=not args.keep_oov,
            progress=not args.no_progress,
            dtype=args.dtype,
            word_rule=args.word_rule,
            **compute_options(args),
        )
    emit_table(scores, args)
    return 0
