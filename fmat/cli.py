"""The ``fmat`` command line.

Subcommands live in :mod:`fmat.commands`, one module per area, each with ``register(subparsers)``
setting ``func(args) -> int`` on its parsers; a new area adds a module there and nothing here.

Exit codes: 0 success, 1 unexpected error (a bug), 2 bad input or a failure of the environment
(a full disk, a read-only folder: :func:`fmat.errors.os_error`), said with what, where and the
fix, without a traceback unless ``--debug``; 130 after Ctrl-C, at any moment, with what was kept.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
import warnings

from . import __version__
from .errors import EXIT_ERROR, EXIT_USAGE, FmatError, os_error

#: the exit status after Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fmat",
        description=(
            "The Fill-Mask Association Test (FMAT): measure propositions in natural language "
            "with masked language models (BERT and friends). Design queries, score them on "
            "models, turn probabilities into log probability ratios (LPR), check reliability."
        ),
        epilog="Run 'fmat COMMAND --help' for the options of a command and an example.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fmat {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import commands

    for name in sorted(m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")):
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    for command in sub.choices.values():  # --debug anywhere on the line: 'fmat run ... --debug' too
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks and debug logs")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``fmat``'s entry point (``[project.scripts]``). Ctrl-C is obeyed from the first moment: during
    the start-up (the command modules' imports, the arguments) it says so and exits 130, no traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before a command ran: nothing of it was written
        name = _name(argv)
        print(f"{name}: interrupted (Ctrl-C) while starting; kept: nothing\n  run the same command again", file=sys.stderr)
        return EXIT_INTERRUPTED


def _name(argv: list[str] | None) -> str:
    """``fmat COMMAND`` of a command line not parsed yet (its first word that is not an option)."""
    words = [w for w in (sys.argv[1:] if argv is None else argv) if not str(w).startswith("-")]
    return f"fmat {words[0]}" if words and str(words[0]).isidentifier() else "fmat"


def interrupted(args: argparse.Namespace, err: KeyboardInterrupt) -> None:
    """The lines of a Ctrl-C that a command did not explain itself (``err.fmat_told``): what it
    had kept (``args.kept``), else nothing (the commands write their outputs when they end)."""
    if getattr(err, "fmat_told", False):
        return
    kept = ", ".join(map(str, getattr(args, "kept", None) or []))
    kept = kept or f"nothing (fmat {args.command} writes its output when it ends)"
    print(f"fmat {args.command}: interrupted (Ctrl-C); kept: {kept}\n  run the same command again to start over", file=sys.stderr)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE

    def show_warning(message, category, filename, lineno, file=None, line=None):  # names the command, not fmat's source
        print(f"fmat {args.command}: warning: {message}", file=sys.stderr if file is None else file)

    try:
        from .commands._common import check_files

        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            check_files(args)  # outputs that would destroy an input or a special file: refused before any work
            return int(args.func(args) or 0)
    except FmatError as err:
        if args.debug:
            raise
        print(f"fmat {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as err:
        interrupted(args, err)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `fmat ... | head`: the reader left; not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as err:  # pragma: no cover - unexpected; keep the message short
        if args.debug:
            raise
        known = os_error(err)  # a full disk, a read-only folder, a permission: the environment, not a bug
        if known is not None:
            print(f"fmat {args.command}: error: {known}", file=sys.stderr)
            return EXIT_USAGE
        print(
            f"fmat {args.command}: unexpected error: {type(err).__name__}: {err}\n"
            "  (run again with 'fmat --debug ...' for the traceback, and please report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
