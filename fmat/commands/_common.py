"""Argument helpers shared by the subcommands."""
from __future__ import annotations

import argparse

from ..io import FORMATS


def add_output_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``-o/--output PATH`` and ``--format {parquet,csv,tsv}`` (default from the extension)."""
    p.add_argument("-o", "--output", required=required, help="output file (.parquet, .csv or .tsv); "
                   "without it a preview is printed")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="table format (default: from the output's extension; csv for R users)")


def emit_table(df, args) -> None:
    """Write ``df`` to ``args.output`` (atomically) or print it."""
    from ..io import write_table
    import pandas as pd

    if getattr(args, "output", None):
        path = write_table(df, args.output, getattr(args, "format", None))
        print(f"wrote {len(df)} rows to {path}")
    else:
        with pd.option_context("display.max_rows", 40, "display.width", 160, "display.max_columns", 30):
            print(df)


def add_models_arg(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``-m/--model M`` (repeatable) -> ``args.models``: hub names or local model folders."""
    p.add_argument("--model", "-m", dest="models", action="append", required=required, metavar="M",
                   help="hub name (e.g. bert-base-uncased) or local model folder; repeat for several")


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (the error names the flag, before any model loads)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def add_compute_args(p: argparse.ArgumentParser, *, cache_dir: bool = True) -> None:
    """Where and how a scoring command runs its models: ``--device``, ``--batch-size``,
    ``--max-tokens`` (fmat.scoring.plan_batches), ``--threads`` and, unless ``cache_dir=False``,
    ``--cache-dir``."""
    p.add_argument("--device", default=None,
                   help="auto, cpu, cuda, cuda:N or mps (default: cuda when available)")
    p.add_argument("--batch-size", type=positive_int, default=None, metavar="N",
                   help="sentences per forward pass (default: automatic, by --max-tokens)")
    p.add_argument("--max-tokens", type=positive_int, default=None, metavar="N",
                   help="padded tokens per forward pass (default: 1024 on a CPU, 8192 on a GPU)")
    p.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's)")
    if cache_dir:
        p.add_argument("--cache-dir", default=None, help="Hugging Face hub cache (default: $HF_HOME/hub)")
