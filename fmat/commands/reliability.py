"""``fmat reliability``: ICC of the models and Cronbach's alpha of LPRs."""

from __future__ import annotations

import sys

import pandas as pd

from ..errors import InputError
from ..io import read_table
from ._common import add_output_args, command, emit_table, files

EXAMPLE = """examples:
  fmat reliability scores.parquet --icc
  fmat reliability results/lpr/1A.parquet --icc --alpha --item query --by model -o rel.csv
  fmat reliability lpr.csv --alpha --item query --by model --study config/studies/1A.yaml

--icc works on raw scores (fmat run: log prob) or an LPR table (fmat summary); --alpha needs an
LPR table. Without --icc/--alpha: --icc, plus --alpha when the table has an LPR column.
Phrases are keyed by their study file's item keys ("an engineer" -> engineer) as the workflow
does: the keys are kept in the parquet files of fmat study and the workflow; give --study for
a CSV."""


def register(subparsers) -> None:
    p = command(
        subparsers,
        "reliability",
        help="ICC among models and Cronbach's alpha among items",
        description="Interrater agreement of the models (ICC, two-way random, as R irr::icc) and "
        "internal consistency of LPRs (Cronbach's alpha, as psych::alpha).",
        epilog=EXAMPLE,
    )
    p.add_argument("table", help="scores (fmat run) or LPR (fmat summary) table: .parquet, .csv or .tsv")
    p.add_argument("--icc", action="store_true", help="ICC of the models as raters")
    p.add_argument(
        "--type",
        choices=["agreement", "consistency", "both"],
        default="agreement",
        help="ICC type (default: agreement, as the paper)",
    )
    p.add_argument("--unit", choices=["average", "single", "both"], default="both", help="ICC unit (default: both)")
    p.add_argument(
        "--method",
        choices=["irr", "mcgraw-wong"],
        default="irr",
        help="ICC df/CI variant: R irr 0.84.1 (default, as the paper) or McGraw & Wong / pingouin",
    )
    p.add_argument("--alpha", action="store_true", help="Cronbach's alpha of LPRs among items")
    p.add_argument("--item", choices=["query", "T_word", "A_word"], default="query", help="alpha items (default: query)")
    p.add_argument(
        "--by", nargs="*", default=None, metavar="COLUMN", help="split alpha by these columns (e.g. model TARGET ATTRIB MASK)"
    )
    p.add_argument(
        "--missing",
        choices=["listwise", "pairwise"],
        default="listwise",
        help="alpha with missing cells: drop incomplete rows (default) or pairwise covariances",
    )
    p.add_argument(
        "--study",
        default=None,
        metavar="FILE",
        help="the study file whose {phrase, item} keys line phrases up across queries (as the "
        "workflow does); default: the keys the table carries (parquet written by fmat)",
    )
    add_output_args(p)
    files(p, inputs=("table", "study"))
    p.set_defaults(func=run)


def run(args) -> int:
    from ..reliability import icc_models, lpr_reliability

    items = None
    if args.study:
        from ..study import load_study

        items = load_study(args.study).items  # the study file first: its errors name it
    df = read_table(args.table)
    do_icc, do_alpha = args.icc, args.alpha
    if not (do_icc or do_alpha):
        do_icc, do_alpha = True, "LPR" in df.columns
    if do_alpha and "LPR" not in df.columns:
        raise InputError(
            "--alpha needs an LPR table (column LPR)",
            where=args.table,
            fix="run 'fmat summary' on the scores first, or drop --alpha",
        )
    parts = []
    if do_icc:
        t = icc_models(df, type=args.type, unit=args.unit, method=args.method)
        t.insert(0, "statistic", "ICC")
        parts.append(t)
        if t.attrs.get("dropped_models"):
            print(f"note: models without any value were left out: {t.attrs['dropped_models']}")
    if do_alpha:
        a = lpr_reliability(df, item=args.item, by=args.by, missing=args.missing, items=items)
        a.insert(0, "statistic", f"alpha({args.item})")
        none = a[(a["n_obs"] == 0) & (a["n_dropped_rows"] > 0)]
        if len(none):
            keyed = ""
            if items is None and not df.attrs.get("item_keys"):
                keyed = (
                    " If a TARGET/ATTRIB word is written differently in the queries ('an engineer' / "
                    "'engineer'), give --study FILE so that its item keys line them up."
                )
            print(
                f"note: alpha is NA in {len(none)} of {len(a)} split(s): no row has an LPR for every "
                f"{args.item} (see n_dropped_rows, dropped_items).{keyed}",
                file=sys.stderr,
            )
        parts.append(a)
    emit_table(pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0], args)
    return 0
