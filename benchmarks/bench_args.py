"""The benchmarks' argument checks, in the ``fmat`` command's style (issue 55).

A bad argument stops the script before any work with ``<script>: error: --arg: what is wrong``
and a ``fix:`` line (:class:`fmat.errors.InputError`), exit status 2 (:data:`fmat.errors.EXIT_USAGE`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fmat.errors import EXIT_USAGE, InputError

DEVICE_FORMS = "cpu, cuda, cuda:N (N: the GPU's number) or mps"


def usage_error(prog: str, err: InputError):
    """Print ``err`` as the ``fmat`` command does and exit with status 2."""
    print(f"{prog}: error: {err}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


def run_checked(prog: str, args, check: Callable, run: Callable, interrupted: Callable) -> int:
    """A benchmark's ``main``: ``check(args)`` first (a bad argument: ``<prog>: error: ...`` and
    exit 2, as ``fmat`` prints it), then ``run(args)``; Ctrl-C during the run returns
    ``interrupted(args)`` (which says what was kept and how to go on; exit 130), no traceback.

    >>> run_checked("bench", None, lambda a: None, lambda a: 0, lambda a: 130)
    0
    """
    try:
        check(args)
    except InputError as err:  # as the fmat command prints it: no traceback, exit 2
        print(f"{prog}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run(args)
    except KeyboardInterrupt:
        return interrupted(args)


def at_least(args, name: str, least: int, why: str = "") -> None:
    """Argument ``name`` (``--worlds``) of ``args`` is a whole number of at least ``least``;
    ``why``: what the bound is for, said in the message."""
    value = getattr(args, name.lstrip("-").replace("-", "_"))
    if value < least:
        raise InputError(f"must be at least {least}{why}; got {value}", where=name, fix=f"e.g. {name} {max(least, 2)}")


def known_studies(studies: list[str], given: str, known: list[str], which: str = "config/studies") -> None:
    """``--studies``: ``studies`` (split from the ``given`` text) are all in ``known``, and there is one."""
    bad = [s for s in studies if s not in known]
    if bad or not studies:
        raise InputError(
            f"unknown study {', '.join(map(repr, bad)) or repr(given)}",
            where="--studies",
            fix=f"give study ids of {which}, comma-separated: {', '.join(known)}",
        )


def criteria_folder(value) -> None:
    """``--criteria-dir``, when given, is a folder."""
    if value and not Path(value).is_dir():
        raise InputError(
            f"no such folder: {value}",
            where="--criteria-dir",
            fix="give the folder of criterion tables (resources/criteria, built by the workflow)",
        )


def output_folders(args, *names: str) -> None:
    """The folder of each output path ``--<name>`` given in ``args`` exists."""
    for name in names:
        value = getattr(args, name)
        if value and not Path(value).resolve().parent.is_dir():
            raise InputError(
                f"no such folder: {Path(value).parent}", where=f"--{name}", fix="create the folder first, or give another path"
            )


def check_device(value: str, arg: str = "--device"):
    """``value`` as a torch.device that this machine has; InputError naming ``arg`` otherwise."""
    import torch  # here: only the scoring benchmarks need it; the calibration ones import this module without torch

    if not re.fullmatch(r"cpu|mps|cuda(:\d+)?", str(value)):
        raise InputError(f"unknown device {value!r}", where=arg, fix=f"use {DEVICE_FORMS}")
    device = torch.device(value)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = (
                "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}, but no GPU is found"
            )
            raise InputError(
                f"CUDA is not available on this machine (torch {torch.__version__}, {build})",
                where=f"{arg} {value}",
                fix="use --device cpu, or run on a machine with an NVIDIA GPU and a CUDA build of torch",
            )
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise InputError(
                f"this machine has {count} GPU(s), numbered 0 to {count - 1}",
                where=f"{arg} {value}",
                fix=f"use --device cuda:0{f' to cuda:{count - 1}' if count > 1 else ''}",
            )
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise InputError("Apple's MPS is not available on this machine", where=f"{arg} {value}", fix="use --device cpu")
    return device


def check_positive(value, arg: str, example: int, allow_none: bool = True) -> None:
    """``value`` is a whole number of at least 1 (or None where ``allow_none``)."""
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InputError(f"must be a whole number of at least 1 (got {value!r})", where=arg, fix=f"e.g. {arg} {example}")


def check_fraction(value: float, arg: str, example: str = "0.01") -> None:
    """``value`` is a fraction in (0, 1]."""
    if not 0 < value <= 1:
        raise InputError(f"{value:g} is outside (0, 1]", where=arg, fix=f"use a fraction in (0, 1], e.g. {arg} {example}")


def int_list(text: str, arg: str, example: str) -> list[int]:
    """A comma-separated list of whole numbers of at least 1 (``2048,4096``)."""
    out = []
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        try:
            v = int(part.lower().removesuffix("k")) * (1024 if part.lower().endswith("k") else 1)
        except ValueError:
            raise InputError(f"{part!r} is not a whole number", where=arg, fix=f"e.g. {arg} {example}") from None
        if v < 1:
            raise InputError(f"{part!r} is not at least 1", where=arg, fix=f"e.g. {arg} {example}")
        out.append(v)
    if not out:
        raise InputError("no value given", where=arg, fix=f"e.g. {arg} {example}")
    return out
