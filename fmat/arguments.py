"""Checking the arguments of the Python API: one place for every public function.

A wrong type or value given to :func:`fmat.run_study`, :func:`fmat.run`, :func:`fmat.query`,
:func:`fmat.summary` or :func:`fmat.power.power_table` is an :class:`~fmat.errors.InputError`
whose ``where`` is the parameter's name and whose message says what it must be, before any
model loads or any work starts (pathlib's or ``int()``'s bare ``TypeError`` named nothing).

Each checker takes the parameter's name and value and returns the value as the function uses
it (a path as :class:`pathlib.Path`, a whole number as ``int``).

Examples
--------
>>> from fmat import arguments
>>> arguments.whole("threads", 2, minimum=1)
2
>>> try:
...     arguments.whole("threads", "x", minimum=1)
... except Exception as err:
...     print(err)
threads: threads must be a whole number of 1 or more, not the text 'x'
  fix: give threads=1 (or another whole number of 1 or more)
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import InputError

#: the largest seed of a simulation (numpy's seeds are whole numbers from 0; a world's planted
#: variation reads 32 bits of it)
SEED_MAX = 2**32 - 1


def shown(value: Any) -> str:
    """What was given, in words: ``the text 'x'``, ``the integer 42``, ``a list``.

    Examples
    --------
    >>> shown("x"), shown(42), shown([1, 2]), shown(None)
    ("the text 'x'", 'the integer 42', 'a list', 'None')
    """
    if value is None:
        return "None"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, numbers.Integral):
        return f"the integer {value}"
    if isinstance(value, numbers.Real):
        return f"the number {value!r}"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _wrong(name: str, what: str, value: Any, example: str) -> InputError:
    return InputError(f"{name} must be {what}, not {shown(value)}", where=name, fix=f"give {name}={example}")


def _checked(name: str, value: Any, ok: bool, what: str, example: str, optional: bool):
    """``value`` when ``ok`` (None too when ``optional``), else the InputError: it must be ``what``."""
    if ok or (value is None and optional):
        return value
    raise _wrong(name, what + (", or None" if optional else ""), value, example)


def path(name: str, value: Any, *, optional: bool = False) -> Path | None:
    """A path: text or an ``os.PathLike`` (``pathlib.Path``), not empty; None when ``optional``.

    Examples
    --------
    >>> path("output", "results/lpr.parquet").name
    'lpr.parquet'
    >>> path("output", None, optional=True) is None
    True
    >>> path("output", 3)
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: output: output must be a path (text or a pathlib.Path), not the integer 3
      fix: give output='my-folder'
    """
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    ok = isinstance(value, str) and bool(value.strip()) and "\0" not in value
    value = _checked(name, value, ok, "a path (text or a pathlib.Path)", "'my-folder'", optional)
    return None if value is None else Path(value)


def flag(name: str, value: Any) -> bool:
    """True or False (a numpy boolean too); not a text such as 'yes', not a number.

    Examples
    --------
    >>> flag("progress", True)
    True
    >>> flag("progress", "yes")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: progress: progress must be True or False, not the text 'yes'
      fix: give progress=True
    """
    ok = isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"))
    return bool(_checked(name, value, ok, "True or False", "True", False))


def whole(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None, optional: bool = False):
    """A whole number (``int`` or a numpy integer; not a boolean, a float or a text) within
    [minimum, maximum]; None when ``optional``.

    Examples
    --------
    >>> whole("batch_size", 32, minimum=1)
    32
    >>> whole("batch_size", 0, minimum=1)
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: batch_size: batch_size must be a whole number of 1 or more, not the integer 0
      fix: give batch_size=1 (or another whole number of 1 or more)
    """
    span = "" if minimum is None else f" of {minimum} or more" if maximum is None else f" from {minimum} to {maximum}"
    example = f"{minimum if minimum is not None else 1} (or another whole number{span})"
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    value = _checked(name, value, ok, "a whole number" + span, example, optional)
    return None if value is None else int(value)


def number(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
):
    """A finite real number (not a boolean or a text) within its bounds (``*_open``: the bound
    itself excluded); None when ``optional``.

    Examples
    --------
    >>> number("alpha", 0.05, low=0, high=1, low_open=True)
    0.05
    >>> number("alpha", 0, low=0, high=1, low_open=True)
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: alpha: alpha must be a finite number in (0, 1], not the integer 0
      fix: give alpha=1
    """
    bounds = ""
    if low is not None or high is not None:
        left = ("(" if low_open else "[") + ("-inf" if low is None else f"{low:g}")
        right = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        bounds = f" in {left}, {right}"
    example = f"{low if low is not None and not low_open else high if high is not None and not high_open else 0.5:g}"
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    x = float(value) if real else math.nan  # not a real number: refused as not finite
    ok = math.isfinite(x) and (low is None or x > low or (x == low and not low_open))
    ok = ok and (high is None or x < high or (x == high and not high_open))
    _checked(name, value, ok, "a finite number" + bounds, example, optional)
    return None if value is None else x


def text(name: str, value: Any, *, choices: Iterable[str] | None = None, optional: bool = False) -> str | None:
    """A text (one of ``choices`` when given); None when ``optional``.

    Examples
    --------
    >>> text("method", "fmat", choices=["fmat", "lpbs"])
    'fmat'
    >>> text("method", "lpb", choices=["fmat", "lpbs"])
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: method: method must be one of 'fmat', 'lpbs', not the text 'lpb'
      fix: give method='fmat'
    """
    choices = list(choices) if choices is not None else None
    what = f"one of {', '.join(repr(c) for c in choices)}" if choices else "a text"
    ok = isinstance(value, str) and (choices is None or value in choices)
    return _checked(name, value, ok, what, repr(choices[0]) if choices else "'...'", optional)


def function(name: str, value: Any, *, optional: bool = True) -> Callable | None:
    """A callable (a function); None when ``optional``.

    Examples
    --------
    >>> function("check_analysis", print) is print, function("check_analysis", None)
    (True, None)
    >>> function("check_analysis", "print")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: check_analysis: check_analysis must be a function, or None, not the text 'print'
      fix: give check_analysis=print
    """
    return _checked(name, value, callable(value), "a function", "print", optional)


def mapping(name: str, value: Any, *, optional: bool = True) -> Mapping | None:
    """A mapping (a dict); None when ``optional``.

    Examples
    --------
    >>> mapping("options", {"mask_pair": True})
    {'mask_pair': True}
    >>> mapping("options", ["mask_pair"])
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: options: options must be a mapping (a dict), or None, not a list
      fix: give options={...}
    """
    return _checked(name, value, isinstance(value, Mapping), "a mapping (a dict)", "{...}", optional)


def table(name: str, value: Any):
    """A table (a pandas DataFrame).

    Examples
    --------
    >>> import pandas as pd
    >>> len(table("queries", pd.DataFrame({"query": ["[MASK] is here."]})))
    1
    >>> table("queries", "design.csv")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: queries: queries must be a table (a pandas DataFrame), not the text 'design.csv'
      fix: give queries=<a DataFrame> (fmat.query builds a query table, fmat.run a score table; fmat.io.read_table reads one)
    """
    import pandas as pd  # here: the CLI imports this module at start-up (fmat power --help), without pandas

    if not isinstance(value, pd.DataFrame):
        raise InputError(
            f"{name} must be a table (a pandas DataFrame), not {shown(value)}",
            where=name,
            fix=f"give {name}=<a DataFrame> (fmat.query builds a query table, fmat.run a score table; "
            "fmat.io.read_table reads one)",
        )
    return value


def models(name: str, value: Any):
    """Models: a Hugging Face id or a local folder (text or a path), a list of them, or a
    mapping of name to id or folder.

    Examples
    --------
    >>> models("models", "bert-base-uncased"), models("models", ["bert-base-uncased", "roberta-base"])
    ('bert-base-uncased', ['bert-base-uncased', 'roberta-base'])
    >>> models("models", 42)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: models: models must be a model id or folder, a list of them, or a mapping of name to model, not
    the integer 42
      fix: give models=['bert-base-uncased', 'path/to/my-model']
    """
    what = "a model id or folder, a list of them, or a mapping of name to model"
    example = "['bert-base-uncased', 'path/to/my-model']"
    if isinstance(value, (str, os.PathLike)):
        path(name, value)
        return value
    if isinstance(value, Mapping):
        entries = value.items()
    elif isinstance(value, (bytes, bytearray)) or not isinstance(value, (Sequence, set, frozenset)) and not _iterable(value):
        raise _wrong(name, what, value, example)
    else:
        value = list(value)
        entries = enumerate(value)
    for k, m in entries:  # k: a model's name, or its position in the list
        if isinstance(value, Mapping) and (not isinstance(k, str) or not k.strip()):
            raise InputError(
                f"{name} names a model {shown(k)}, not a text", where=name, fix=f"give {name}={{'my-name': 'model'}}"
            )
        if not isinstance(m, (str, os.PathLike)) or not os.fspath(m).strip():
            raise InputError(
                f"{name}[{k!r}] must be a model id or folder, not {shown(m)}", where=name, fix=f"give {name}={example}"
            )
    return value


def _iterable(value: Any) -> bool:
    """A generator or another iterable that is not text, a mapping or a number."""
    try:
        iter(value)
    except TypeError:
        return False
    return not isinstance(value, (str, bytes, Mapping))


def wholes(name: str, value: Any, *, minimum: int | None = None, optional: bool = False) -> list[int] | None:
    """A list of whole numbers, each of ``minimum`` or more (at least one); None when ``optional``.

    Examples
    --------
    >>> wholes("n_items", [10, 20], minimum=2)
    [10, 20]
    >>> wholes("n_items", [10, 1], minimum=2)
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: n_items: n_items must be a list of whole numbers of 2 or more; it holds the integer 1
      fix: give n_items=[3, 6, 12]
    """
    if value is None and optional:
        return None
    what = "a list of whole numbers" + (f" of {minimum} or more" if minimum is not None else "")
    if not _iterable(value) or not (value := list(value)):
        raise _wrong(name, what, value, "[3, 6, 12]")
    for x in value:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or (minimum is not None and x < minimum):
            raise InputError(f"{name} must be {what}; it holds {shown(x)}", where=name, fix=f"give {name}=[3, 6, 12]")
    return [int(x) for x in value]


def device(name: str, value: Any):
    """A device: None (automatic), a text such as 'cpu', 'cuda', 'cuda:1', a GPU's number, or a
    ``torch.device``; :func:`fmat.models.resolve_device` checks that it exists when a model loads.

    Examples
    --------
    >>> device("device", None), device("device", "cuda:1"), device("device", 0)
    (None, 'cuda:1', 0)
    >>> device("device", 1.5)
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: device: device must be None, 'cpu', 'cuda', 'cuda:N' or a torch.device, not the number 1.5
      fix: give device='cpu'
    """
    if value is None or isinstance(value, str) or (isinstance(value, numbers.Integral) and not isinstance(value, bool)):
        return value
    if type(value).__name__ == "device" and type(value).__module__.startswith("torch"):
        return value
    raise _wrong(name, "None, 'cpu', 'cuda', 'cuda:N' or a torch.device", value, "'cpu'")
