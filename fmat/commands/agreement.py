"""``fmat agreement``: subject–verb agreement check of masked LMs; ``fmat agreement-download``."""

from __future__ import annotations

import pandas as pd

from ..io import write_table
from ._common import add_compute_args, add_models_arg, add_output_args, add_timeout_arg, command, emit_table, files


def register(sub) -> None:
    p = command(
        sub,
        "agreement",
        help="subject-verb agreement check of masked LMs (Goldberg 2019, Marvin & Linzen 2018)",
        description="Score minimal pairs (the sentence with the verb masked, the correct and the incorrect "
        "verb) and report accuracy per model and construction: correct when P(correct verb) > "
        "P(incorrect verb). Pairs with a verb that is not one whole-word token of a model are "
        "skipped for that model and counted. Without --pairs: the project's 30-pair fixture.",
        example="fmat agreement -m bert-base-uncased -o agreement.parquet --summary summary.csv",
    )
    add_models_arg(p)
    p.add_argument(
        "--pairs", default=None, help="minimal pairs in Goldberg's marvin_linzen_dataset.tsv format (default: the fixture)"
    )
    p.add_argument(
        "--constructions",
        default=None,
        help="comma-separated constructions to keep, or 'all' (default: the subject-verb agreement ones)",
    )
    p.add_argument("--summary", default=None, help="also write the summary table here")
    add_compute_args(p)
    add_output_args(p)
    files(p, inputs=("pairs",), summary="table")
    p.set_defaults(func=_run)

    d = command(
        sub,
        "agreement-download",
        help="download Marvin & Linzen's minimal pairs (Goldberg's file)",
        description="Fetch Goldberg's marvin_linzen_dataset.tsv (github.com/yoavg/bert-syntax), check its "
        "sha256 and write it (and DEST.sha256) atomically.",
        example="fmat agreement-download resources/agreement/marvin_linzen_dataset.tsv",
    )
    d.add_argument("dest", help="where to write the file")
    d.add_argument("--url", default=None, help="source URL (default: Goldberg's file)")
    d.add_argument("--sha256", default=None, help="expected sha256 ('unverified': do not check)")
    add_timeout_arg(d)
    files(d, dest="file")
    d.set_defaults(func=_download)


def _constructions(value):
    from ..agreement import SV_AGREEMENT

    if value is None:
        return SV_AGREEMENT
    if value.strip() == "all":
        return "all"
    return [c.strip() for c in value.split(",") if c.strip()]


def _run(args) -> int:
    from ..agreement import check, read_pairs
    from ._common import compute_options

    pairs = read_pairs(args.pairs, constructions=_constructions(args.constructions))
    per_pair, summary = check(args.models, pairs, **compute_options(args))
    if args.output:
        emit_table(per_pair, args)
    if args.summary:
        write_table(summary, args.summary)
        print(f"wrote {len(summary)} rows to {args.summary}")
    with pd.option_context("display.max_rows", 200, "display.width", 160):
        print(summary.to_string(index=False))
    return 0


def _download(args) -> int:
    from ..agreement import MARVIN_LINZEN_SHA256, MARVIN_LINZEN_URL, download_pairs

    path = download_pairs(
        args.dest, url=args.url or MARVIN_LINZEN_URL, sha256=args.sha256 or MARVIN_LINZEN_SHA256, timeout=args.timeout
    )
    print(f"wrote {path}")
    return 0
