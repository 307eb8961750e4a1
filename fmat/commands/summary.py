"""``fmat summary``: log probability ratios from scores (R: ``summary.fmat``)."""

from __future__ import annotations

import pandas as pd

from ..errors import InputError
from ..io import read_table, table_format
from ._common import add_output_args, command, emit_table, files

EPILOG = """\
examples:
  # LPR = log P(first MASK group) - log P(second), then TARGET group 1 - group 2
  fmat summary results/scores/2A/bert-base-uncased.parquet -o lpr.csv

  # keep log P per MASK word (no MASK contrast), contrast the attribute pairs only
  fmat summary scores.parquet --no-mask-pair -o lpr.parquet

  # the options of a study file's lpr: block
  fmat summary scores.parquet --study config/studies/3A.yaml -o lpr.parquet

Rules (as FMAT's summary.fmat): natural logs; first listed group minus second listed; MASK
pairs share M_pair, TARGET/ATTRIB pairs share T_pair/A_pair (MTA: groups 1-2, 3-4... and word
j within them); contrasts in the order mask -> target -> attrib. Pairs are joined on their
keys, not on row order; a pair with a missing row is dropped (with a warning). See
docs/architecture.md and fmat.lpr.
"""


def register(subparsers) -> None:
    p = command(
        subparsers,
        "summary",
        help="log probability ratios (LPR) from a scores table (summary.fmat)",
        description="Turn the probabilities of 'fmat run' into log probability ratios (LPR).",
        epilog=EPILOG,
    )
    p.add_argument("scores", help="scores table from fmat run (.parquet, or .csv e.g. from R)")
    p.add_argument(
        "--no-mask-pair",
        dest="mask_pair",
        action="store_false",
        default=None,
        help="no MASK contrast: LPR = log P of each MASK word",
    )
    p.add_argument("--no-target-pair", dest="target_pair", action="store_false", default=None, help="no TARGET contrast")
    p.add_argument("--no-attrib-pair", dest="attrib_pair", action="store_false", default=None, help="no ATTRIB contrast")
    p.add_argument(
        "--study", metavar="FILE", help="take the pairing options from this study file's lpr: block (a --no-* option still wins)"
    )
    add_output_args(p)
    files(p, inputs=("scores", "study"))
    p.set_defaults(func=run)


def read_scores(path: str):
    """A scores table from parquet, or CSV/TSV (R or fmat), with categorical query columns."""
    from ..design import as_query_table, read_r_table

    if table_format(path) == "parquet":
        return read_table(path)
    df = read_r_table(path)
    if "prob" not in df.columns:
        raise InputError("no 'prob' column", where=path, fix="give the scores table written by fmat run")
    df["prob"] = pd.to_numeric(df["prob"], errors="coerce")
    df = as_query_table(df, where=path)
    if "model" in df.columns:
        df["model"] = pd.Categorical(df["model"], categories=list(dict.fromkeys(df["model"].dropna())))
    return df


def run(args) -> int:
    from ..lpr import summary

    opts = {"mask_pair": True, "target_pair": True, "attrib_pair": True}
    if args.study:
        from ..study import study_lpr_options

        opts.update(study_lpr_options(args.study))
    for key in opts:
        if getattr(args, key) is False:
            opts[key] = False
    emit_table(summary(read_scores(args.scores), **opts), args)
    return 0
