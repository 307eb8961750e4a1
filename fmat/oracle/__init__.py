"""An independent oracle of the realised truth of a planted world (docs/planting.md, "The oracle").

:func:`oracle` gives the exact value that each statistic with a closed form in the planted log
probabilities takes in a world, for these items and models: what the workflow must compute
from the planted scores to the last digit, and the *realised* value a recovery's confidence
interval has to cover.  One file per analysis family (``fmat/oracle/<family>.py``) states its
formulas in its module docstring and registers them under the analysis names (:func:`register`).
It reads the study file's YAML itself and loads neither the analyses, nor the LPR stage, nor
the query design, nor the scoring (``tests/test_oracle.py`` checks what it loads).

Notes
-----
``lp(w | c, m)`` is the planted natural log probability of [MASK] word ``w`` in context ``c``
for model ``m``; ``sigma`` the study's ``analysis.options.sigma`` (default sqrt 2); a contrast
the options do not name is the slot's first two groups in the file's order; means are plain
means (the designs are balanced, so they equal the mixed models' estimated marginal means).
df: a Pearson r and a per-model OLS slope ``n - 2``; a mixed model's term that varies within
the models (nlme's level-1 df) ``N - M - k`` (:func:`lmm_df`); a century contrast ``M - 1``.
t, F, p, SEs and R2 have no closed form here; the checking test asks that each t has its d's sign.
"""

from __future__ import annotations

import importlib
import math
import os
import pkgutil
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from fmat.oracle._raw import SLOTS, planted_table, raw_queries, read_study_file
from fmat.world import Plant

__all__ = [
    "ORACLE_COLUMNS",
    "SIGMA",
    "SLOTS",
    "Planted",
    "available",
    "family",
    "first_two",
    "lmm_df",
    "oracle",
    "planted_table",
    "raw_queries",
    "read_study_file",
    "register",
    "row",
]

#: default population SD of an LPR where a study file gives no ``sigma`` (the analyses'
#: default: sqrt 2; the paper prints 1.414, which the study files state)
SIGMA = math.sqrt(2.0)
#: the columns of :func:`oracle`'s table
ORACLE_COLUMNS = ["study", "statistic", "condition", "model", "value", "df"]


@dataclass(frozen=True)
class Planted:
    """What a family's oracle computes from: the study file's YAML (``data``), its
    ``analysis.options``, :func:`planted_table` and :func:`oracle`'s ``criteria`` and ``scores``."""

    sid: str
    data: Mapping
    table: pd.DataFrame
    options: Mapping
    criteria: Mapping[str, pd.DataFrame] | None = None
    scores: pd.DataFrame | None = None

    @property
    def sigma(self) -> float:
        """The study's ``sigma`` option, else :data:`SIGMA`."""
        return float(self.options.get("sigma", SIGMA))


_FAMILIES: dict[str, Callable[[Planted], list[dict]]] = {}


def register(*names: str):
    """Register ``fn(planted: Planted) -> [row, ...]`` as the oracle of the analyses ``names``
    (their names in :mod:`fmat.analyses`; rows made with :func:`row`)."""

    def deco(fn):
        for name in names:
            if name in _FAMILIES and _FAMILIES[name] is not fn:
                raise ValueError(f"oracle {name!r} registered twice")
            _FAMILIES[name] = fn
        return fn

    return deco


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def available() -> list[str]:
    """The analysis names that have an oracle (one file of this package registers each).

    Examples
    --------
    >>> from fmat import oracle
    >>> "stereotype_pairs" in oracle.available()
    True
    """
    _load_all()
    return sorted(_FAMILIES)


def family(name: str) -> Callable[[Planted], list[dict]] | None:
    """The oracle of analysis ``name``, or None (no closed forms here).

    Examples
    --------
    >>> from fmat import oracle
    >>> oracle.family("attitude_weat").__module__
    'fmat.oracle.attitude'
    >>> oracle.family("no_such_analysis") is None
    True
    """
    _load_all()
    return _FAMILIES.get(str(name))


# ----------------------------------------------------------------------------- helpers of the families
def row(sid, statistic, condition, model, value, df=np.nan) -> dict:
    """One row of :func:`oracle`'s table.

    Examples
    --------
    >>> row("3A", "d", "pair1", "all", 0.5, 35)
    {'study': '3A', 'statistic': 'd', 'condition': 'pair1', 'model': 'all', 'value': 0.5, 'df': 35.0}
    """
    return {"study": sid, "statistic": statistic, "condition": condition, "model": model, "value": float(value), "df": float(df)}


def lmm_df(n: int, models: int, within: int) -> int:
    """nlme's level-1 df of a term that varies within the models: N - M - (fixed effects that
    vary within the models).

    Examples
    --------
    >>> lmm_df(n=432, models=12, within=35)  # 3A: 12 models, a 2 x 2 x 9 factorial
    385
    """
    return int(n - models - within)


def first_two(t: pd.DataFrame, slot: str, named) -> tuple[str, str]:
    """The contrast an option names, else the slot's first two groups in the file's order.

    Examples
    --------
    >>> t = pd.DataFrame({"MASK": ["Male", "Male", "Female", "Other"]})
    >>> first_two(t, "MASK", None), first_two(t, "MASK", ["Female", "Male"])
    (('Male', 'Female'), ('Female', 'Male'))
    """
    a, b = [str(g) for g in (named or list(dict.fromkeys(t[slot]))[:2])]
    return a, b


def oracle(
    study_path: str | os.PathLike,
    plant: Plant,
    models: Sequence[str],
    criteria: Mapping[str, pd.DataFrame] | None = None,
    scores: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The exact value of every statistic with a closed form (module Notes and each family's
    file) that the study's analysis reports, in the world ``plant`` for ``models``.

    Parameters
    ----------
    study_path : path
        The study file (read as YAML here, not through :func:`fmat.study.load_study`).
    plant : fmat.plant.Plant
        What the world plants for this study (a null plant gives the world's chance values).
    models : sequence of str
        The model names (their ``model_items`` and ``shift`` draws are seeded by them).
    criteria : mapping, optional
        Criterion tables by name (``per_item`` plants, Study 1's r, word lists from a table).
    scores : pandas.DataFrame, optional
        The scores the analysis is run on: a pooled-SD d is then in units of the SD of these
        scores' LPRs (``fmat.calibration.on_the_sample_scale``), else of the planted LPRs.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ORACLE_COLUMNS`; empty for an analysis without closed forms here (no
        file registers it, or LPBS scores, whose priors the world does not plant).
    """
    data = read_study_file(study_path)
    spec = dict(data.get("analysis") or {})
    fn = family(str(spec.get("name", "")))
    if fn is None or str(dict(data.get("score") or {}).get("method", "fmat")) != "fmat":
        return pd.DataFrame(columns=ORACLE_COLUMNS)
    t = planted_table(data, plant, models, criteria)
    rows = fn(Planted(str(data["id"]), data, t, dict(spec.get("options") or {}), criteria, scores))
    return pd.DataFrame(rows, columns=ORACLE_COLUMNS)
