"""``fmat report``: render a Quarto percent-format report source to self-contained HTML."""
from __future__ import annotations

import argparse

from ..errors import InputError
from ._common import files


def _params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise InputError(f"bad parameter {item!r}", where="-P", fix="write -P key:value, e.g. -P study:2A")
        out[key] = value
    return out


def _run(args) -> int:
    from ..report import check_source, render

    if args.check:
        problems = check_source(args.source)
        for p in problems:
            print(p)
        return 2 if problems else 0
    if not args.output:
        raise InputError("no output file", where="-o/--output", fix="add -o results/reports/NAME.html")
    used = render(args.source, args.output, _params(args.param), engine=args.engine)
    print(f"rendered {args.source} with {used} -> {args.output}")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="render a report source (Quarto if installed, else offline) to one HTML file",
        description="Render a Quarto percent-format report source (reports/*.py; cell options as "
                    "'#| key: value' lines, '#| tags: [parameters]' on the parameters cell) to one "
                    "self-contained HTML file, written atomically. Uses 'quarto render' when quarto "
                    "is on PATH (QUARTO_PYTHON set to this Python), and otherwise jupytext + papermill "
                    "+ nbconvert (offline); both give the same page (docs/reports.md).",
        epilog="example:\n  snakemake --configfile config/demo.yaml results/reports/2A.html   # a page, its inputs made first\n"
               "  fmat report reports/study.py --check     # structural check only",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", help="percent-format report source (reports/NAME.py)")
    p.add_argument("-o", "--output", help="HTML file to write")
    p.add_argument("-P", "--param", action="append", default=[], metavar="KEY:VALUE",
                   help="report parameter (repeatable), as quarto's -P")
    p.add_argument("--engine", choices=("auto", "quarto", "offline"), default="auto",
                   help="renderer (default: quarto when on PATH, else offline)")
    p.add_argument("--check", action="store_true",
                   help="only check the source's structure and cell options (both renderers')")
    # the source and every -P value that is a file (a study file...) are inputs: -o may be neither
    files(p, inputs=("source", lambda args: list(_params(args.param).values())), output="file")
    p.set_defaults(func=_run)
