"""``fmat lpbs``: score a query table with priors and summarise as LPBS (Kurita et al., 2019)."""

from __future__ import annotations

import warnings

import pandas as pd

from ..io import write_table
from ._common import add_compute_args, add_models_arg, add_output_args, command, emit_table, files


def register(sub) -> None:
    p = command(
        sub,
        "lpbs",
        help="log probability bias scores (Kurita et al. 2019): probabilities over their prior",
        description="Score a query table like `fmat run`, plus each MASK word's prior: its probability in "
        "the same query with the TARGET/ATTRIB phrase masked (one mask per token of the phrase). "
        "-o writes the scores (with prior, logp_prior); --summary writes the LPBS contrasts "
        "(fmat summary's pairing on ln(p/prior); value column LPR, attrs measure=LPBS).",
        example="fmat lpbs queries.parquet -m bert-base-uncased -o scores.parquet --summary lpbs.parquet",
    )
    p.add_argument("queries", help="query table (parquet/csv/tsv) written by fmat query or fmat.query()")
    add_models_arg(p)
    p.add_argument("--summary", default=None, help="write the LPBS summary table here")
    p.add_argument("--no-mask-pair", action="store_true", help="do not contrast the two MASK groups")
    p.add_argument("--no-target-pair", action="store_true", help="do not contrast the TARGET groups")
    p.add_argument("--no-attrib-pair", action="store_true", help="do not contrast the ATTRIB groups")
    p.add_argument("--keep-oov", action="store_true", help="give OOV words the first piece's probability instead of NaN")
    add_compute_args(p)
    add_output_args(p)
    files(p, inputs=("queries",), summary="table")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..design import read_query_table
    from ..lpbs import score_model, summary
    from ..models import _as_models, load_masked_lm

    data = read_query_table(args.queries)
    frames = []
    models = _as_models(args.models)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # every warning shown (fmat.cli prints each as "fmat lpbs: warning: ...")
        for label, src in models.items():
            model, tok = load_masked_lm(src, device=args.device, cache_dir=args.cache_dir, progress=False)
            s = score_model(
                model,
                tok,
                data,
                name=label,
                batch_size=args.batch_size,
                max_tokens=args.max_tokens,
                na_out=not args.keep_oov,
                progress=False,
            )
            s.insert(0, "model", label)
            frames.append(s)
    scores = pd.concat(frames, ignore_index=True)
    scores["model"] = pd.Categorical(scores["model"], categories=list(models))
    scores.attrs = dict(data.attrs)
    if args.output or not args.summary:
        emit_table(scores, args)
    if args.summary:
        out = summary(
            scores, mask_pair=not args.no_mask_pair, target_pair=not args.no_target_pair, attrib_pair=not args.no_attrib_pair
        )
        write_table(out, args.summary)
        print(f"wrote {len(out)} rows to {args.summary}")
    return 0
