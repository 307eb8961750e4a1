"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from ..errors import InputError
from ..io import FORMATS, check_output, write_table


def command(
    sub, name: str, *, help: str, description: str | None = None, example: str | None = None, **kw
) -> argparse.ArgumentParser:
    """A subcommand's parser: its one-line ``help``, a ``description`` kept as written (line
    breaks and all), and ``example``, a command line shown after the options as "example: ..."."""
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=f"example: {example}" if example else kw.pop("epilog", None),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kw,
    )


def files(p: argparse.ArgumentParser, *, inputs=(), **outputs: str) -> None:
    """Declare a command's files for :func:`check_files`: ``inputs`` (argument names, or functions
    of ``args`` giving paths) and its outputs (argument name -> "table", "file" or "folder")."""
    old_in = p.get_default("io_inputs") or ()
    old_out = dict(p.get_default("io_outputs") or {})
    p.set_defaults(io_inputs=(*old_in, *inputs), io_outputs={**old_out, **outputs})


def check_files(args) -> None:
    """Refuse, before any work, the outputs declared with :func:`files` that would destroy
    something (fmat.io.check_output); two outputs that are the same file are refused too."""
    inputs: list[str] = []
    for item in getattr(args, "io_inputs", ()) or ():
        value = item(args) if callable(item) else getattr(args, item, None)
        values = [value] if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") else list(value)
        inputs.extend(str(v) for v in values if v is not None and str(v).strip() and os.path.isfile(str(v)))
    seen: dict[Path, str] = {}
    for attr, kind in (getattr(args, "io_outputs", None) or {}).items():
        value = getattr(args, attr, None)
        if value is None:
            continue
        flag = "-o/--output" if attr == "output" else "--" + attr.replace("_", "-")
        target = check_output(
            value,
            inputs=inputs,
            where=flag,
            folder=kind == "folder",
            table=kind == "table",
            fmt=getattr(args, "format", None) if attr == "output" else None,
        )
        if target in seen:
            raise InputError(
                f"{flag} and {seen[target]} are the same file ({value})", where=flag, fix="give each output its own file"
            )
        seen[target] = flag


def add_output_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``-o/--output PATH`` and ``--format {parquet,csv,tsv}`` (default from the extension);
    the output is checked before the command runs (:func:`check_files`)."""
    p.add_argument(
        "-o", "--output", required=required, help="output file (.parquet, .csv or .tsv); without it a preview is printed"
    )
    p.add_argument(
        "--format", choices=FORMATS, default=None, help="table format (default: from the output's extension; csv for R users)"
    )
    files(p, output="table")


def emit_table(df, args) -> None:
    """Write ``df`` to ``args.output`` (atomically) or print it."""
    if getattr(args, "output", None):
        path = write_table(df, args.output, getattr(args, "format", None))
        print(f"wrote {len(df)} rows to {path}")
    else:
        with pd.option_context("display.max_rows", 40, "display.width", 160, "display.max_columns", 30):
            print(df)


def add_models_arg(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``-m/--model M`` (repeatable) -> ``args.models``: hub names or local model folders."""
    p.add_argument(
        "--model",
        "-m",
        dest="models",
        action="append",
        required=required,
        metavar="M",
        help="hub name (e.g. bert-base-uncased) or local model folder; repeat for several",
    )


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (the error names the flag, before any model loads)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def add_timeout_arg(p: argparse.ArgumentParser) -> None:
    """``--timeout SECONDS``: how long a download waits for a server's answer (fmat.net)."""
    from ..net import DEFAULT_TIMEOUT, TIMEOUT_ENV

    p.add_argument(
        "--timeout",
        default=None,
        metavar="SECONDS",
        help=f"seconds to wait for the server's answer (connection, each read) before giving up "
        f"(default: ${TIMEOUT_ENV}, else {DEFAULT_TIMEOUT:g})",
    )


def add_compute_args(p: argparse.ArgumentParser, *, cache_dir: bool = True) -> None:
    """Where and how a scoring command runs its models (``--cache-dir`` unless ``cache_dir=False``)."""
    p.add_argument("--device", default=None, help="auto, cpu, cuda, cuda:N or mps (default: cuda when available)")
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="sentences per forward pass (default: automatic, by --max-tokens)",
    )
    p.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="padded tokens per forward pass (default: 1024 on a CPU, 8192 on a GPU)",
    )
    p.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's)")
    if cache_dir:
        p.add_argument("--cache-dir", default=None, help="Hugging Face hub cache (default: $HF_HOME/hub)")


def compute_options(args, *, cache_dir: bool = True) -> dict:
    """The keywords of :func:`add_compute_args`' options, as the scoring functions take them."""
    names = ("device", "batch_size", "max_tokens", "threads") + (("cache_dir",) if cache_dir else ())
    return {k: getattr(args, k) for k in names}


def add_world_args(p: argparse.ArgumentParser, *, force: str) -> None:
    """The study file, ``--world`` (docs/planting.md), ``-o`` (a folder), ``--criteria`` and
    ``--force`` (``force``: its help) of ``fmat pilot`` and ``fmat power``."""
    p.add_argument("study", help="the study file (config/studies/<id>.yaml or your own)")
    p.add_argument("--world", required=True, help="world file that plants associations for the study's id")
    p.add_argument("-o", "--output", required=True, help="output folder (created)")
    p.add_argument(
        "--criteria",
        "--criteria-dir",
        dest="criteria",
        default="resources/criteria",
        help="folder of criterion tables the study or the world names (default: %(default)s; --criteria-dir as in fmat study)",
    )
    p.add_argument("--force", action="store_true", help=force)
    files(p, inputs=("study", "world"), output="folder")


def check_study_file(path, criteria_dir) -> None:
    """The problems of a study file (:func:`fmat.study.validate_study_file`) as one error."""
    from ..study import validate_study_file

    problems = validate_study_file(path, criteria_dir)
    if problems:
        raise InputError(
            f"{len(problems)} problem(s):\n  " + "\n  ".join(problems), where=str(path), fix="see docs/study-files.md"
        )
