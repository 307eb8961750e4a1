"""``fmat reliability``: ICC of the models and Cronbach's alpha of LPRs."""
from __future__ import annotations

import argparse

from ._common import add_output_args, emit_table, files

EXAMPLE = """examples:
  fmat reliability results/scores/1A/all.parquet --icc
  fmat reliability results/lpr/1A.parquet --icc --alpha --item query --by model -o rel.csv

--icc works on raw scores (log prob) or an LPR table; --alpha needs an LPR table.
Without --icc/--alpha: --icc, plus --alpha when the table has an LPR column."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reliability", help="ICC among models and Cronbach's alpha among items",
        description="Interrater agreement of the models (ICC, two-way random, as R irr::icc) and "
                    "internal consistency of LPRs (Cronbach's alpha, as psych::alpha).",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", help="scores (fmat run) or LPR (fmat lpr) table: .parquet, .csv or .tsv")
    p.add_argument("--icc", action="store_true", help="ICC of the models as raters")
    p.add_argument("--type", choices=["agreement", "consistency", "both"], default="agreement",
                   help="ICC type (default: agreement, as the paper)")
    p.add_argument("--unit", choices=["average", "single", "both"], default="both",
                   help="ICC unit (default: both)")
    p.add_argument("--method", choices=["irr", "mcgraw-wong"], default="irr",
                   help="ICC df/CI variant: R irr 0.84.1 (default, as the paper) or McGraw & Wong / pingouin")
    p.add_argument("--alpha", action="store_true", help="Cronbach's alpha of LPRs among items")
    p.add_argument("--item", choices=["query", "T_word", "A_word"], default="query",
                   help="alpha items (default: query)")
    p.add_argument("--by", nargs="*", default=None, metavar="COLUMN",
                   help="split alpha by these columns (e.g. model TARGET ATTRIB MASK)")
    p.add_argument("--missing", choices=["listwise", "pairwise"], default="listwise",
                   help="alpha with missing cells: drop incomplete rows (default) or pairwise covariances")
    add_output_args(p)
    files(p, inputs=("table",))
    p.set_defaults(func=run)


def run(args) -> int:
    import pandas as pd

    from ..errors import InputError
    from ..io import read_table
    from ..reliability import icc_models, lpr_reliability

    df = read_table(args.table)
    do_icc, do_alpha = args.icc, args.alpha
    if not (do_icc or do_alpha):
        do_icc, do_alpha = True, "LPR" in df.columns
    if do_alpha and "LPR" not in df.columns:
        raise InputError("--alpha needs an LPR table (column LPR)", where=args.table,
                         fix="run 'fmat lpr' on the scores first, or drop --alpha")
    parts = []
    if do_icc:
        t = icc_models(df, type=args.type, unit=args.unit, method=args.method)
        t.insert(0, "statistic", "ICC")
        parts.append(t)
        if t.attrs.get("dropped_models"):
            print(f"note: models without any value were left out: {t.attrs['dropped_models']}")
    if do_alpha:
        a = lpr_reliability(df, item=args.item, by=args.by, missing=args.missing)
        a.insert(0, "statistic", f"alpha({args.item})")
        parts.append(a)
    emit_table(pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0], args)
    return 0
