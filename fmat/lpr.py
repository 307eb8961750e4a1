"""Log probability ratios (LPR) from FMAT scores (R: ``summary.fmat``).

Semantics of FMAT 2026.1 ``summary.fmat`` (checked against its output in tests/data/r_fmat/):
natural logs; every contrast is *first listed minus second listed* group. ``mask_pair=True``:
within (model, query, M_pair, TARGET, T_pair, T_word, ATTRIB, A_pair, A_word)
``LPR = log(prob[MASK group 1]) - log(prob[MASK group 2])``, ``MASK`` and ``M_word`` become
``"A - B"`` labels and ``qid``, ``M_pair``, ``output``, ``token`` (and fmat's extras) are dropped;
``mask_pair=False``: ``LPR = log(prob)``. MT with ``target_pair`` / MA with ``attrib_pair``: the
TARGET / ATTRIB groups contrasted within (model, query, MASK, M_word, T_pair / A_pair); MTA: groups
paired (1, 2), (3, 4)… and the j-th words within them, in the order mask → target → attrib.
Columns in FMAT's order with ``LPR`` last; rows in order of first appearance of their group
(R's ``data.table`` ``by``).

Differences from FMAT (on purpose; docs/query-design.md): pairs are joined on keys, never on row
order; a pair with a missing row is **dropped** (a logged warning), a NaN probability gives a NaN
LPR; "first listed" is the order of the group column's categories (first appearance for plain
strings), taken per query; three or more MASK groups under ``mask_pair`` (FMAT uses the first
two), a single group with its pairing on (FMAT: all NA), an odd number of MTA groups, unequal
paired MTA groups and duplicate rows are :class:`~fmat.errors.InputError` s.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from . import arguments
from .design import table_type
from .errors import InputError

log = logging.getLogger(__name__)

_SLOT_WORD = {"MASK": "M_word", "TARGET": "T_word", "ATTRIB": "A_word"}
_OPTION = {"MASK": "mask_pair", "TARGET": "target_pair", "ATTRIB": "attrib_pair"}


def _first_appearance(s: pd.Series) -> pd.Series:
    """``s`` as a categorical of its values' text, levels in order of first appearance, missing
    values missing.  Factorized (one pass in C; the per-value loop took seconds on 1C's
    175,000 rows), with the loop kept for values whose texts collide (1 and "1")."""
    codes, uniques = pd.factorize(s, sort=False)
    cats = [str(u) for u in uniques]
    if len(set(cats)) == len(cats):
        return pd.Series(pd.Categorical.from_codes(codes, categories=cats), index=s.index, name=s.name)
    values = [None if pd.isna(v) else str(v) for v in s.tolist()]
    return pd.Series(
        pd.Categorical(values, categories=list(dict.fromkeys(v for v in values if v is not None))), index=s.index, name=s.name
    )


def _ranks(df: pd.DataFrame, by: list[str], col: str) -> np.ndarray:
    """0-based rank of ``df[col]``'s level among the levels present within each ``by`` group."""
    codes = df[col].cat.codes.to_numpy()
    out = np.empty(len(df), dtype=np.int64)
    for idx in df.groupby(by, observed=True, sort=False).indices.values():
        present = np.unique(codes[idx])  # sorted = level order
        out[idx] = np.searchsorted(present, codes[idx])
    return out


def _off(option: str) -> str:
    """How to turn a pairing option off, in Python, on the command line and in a study file."""
    return f"{option}=False (command line: --no-{option.replace('_', '-')}; study file: lpr: {{{option}: false}})"


def _check_groups(df: pd.DataFrame, slot: str, even: bool) -> None:
    option = _OPTION[slot]
    for q, sub in df.groupby("query", observed=True, sort=False):
        groups = [str(g) for g in pd.unique(sub[slot].sort_values())]
        n = len(groups)
        if n == 1:
            raise InputError(
                f"query {q!r} has a single {slot} group ({groups[0]!r}); {option} needs two groups "
                "to contrast (FMAT would return all NA)",
                where=option,
                fix=f"set {_off(option)}, or add a second {slot} group to the design",
            )
        if even and n % 2:
            raise InputError(
                f"query {q!r} has {n} {slot} groups ({', '.join(groups)}); MTA pairing contrasts "
                "groups (1, 2), (3, 4)… so it needs an even number",
                where=option,
                fix=f"add or remove a {slot} group, or set {_off(option)}",
            )
        if not even and n > 2:
            raise InputError(
                f"query {q!r} has {n} {slot} groups ({', '.join(groups)}); {option} contrasts "
                "exactly two (FMAT would silently use the first two)",
                where=option,
                fix=f"set {_off(option)} and contrast the groups yourself, or split the design into "
                f"query blocks with two {slot} groups each",
            )


def _pair(df: pd.DataFrame, slot: str, key: list[str], pair_col: str | None) -> pd.DataFrame:
    """Contrast the first and second ``slot`` group within ``key`` (+ the pair column).

    ``pair_col`` names an existing pair column (M_pair/T_pair/A_pair); ``None`` means MTA:
    groups are paired (1, 2), (3, 4)… per query and words by their position j in the group.
    Returns ``key`` + [slot, word, LPR] with ``"A - B"`` labels.
    """
    word = _SLOT_WORD[slot]
    df = df.copy()
    rank = _ranks(df, ["query"], slot)
    if pair_col is None:
        _check_groups(df, slot, even=True)
        df["_pi"] = rank // 2
        df["_pj"] = _ranks(df, ["query", slot], word)
        # paired groups must have equal sizes
        for q, sub in df.groupby("query", observed=True, sort=False):
            gs = sub.groupby(slot, observed=True, sort=True)[word].nunique()
            names, counts = list(gs.index), list(gs.values)
            for i in range(0, len(names) - 1, 2):
                if counts[i] != counts[i + 1]:
                    raise InputError(
                        f"query {q!r}: {slot} groups {names[i]!r} ({counts[i]} words) and "
                        f"{names[i + 1]!r} ({counts[i + 1]} words) are paired but differ in size",
                        where=_OPTION[slot],
                        fix=f"give paired {slot} groups the same number of words, or set {_off(_OPTION[slot])}",
                    )
        keys = key + ["_pi", "_pj"]
    else:
        _check_groups(df, slot, even=False)
        keys = key + [pair_col]
    df["_side"] = rank % 2 if pair_col is None else rank
    dup = df.duplicated(keys + ["_side"], keep=False)
    if dup.any():
        first = df.loc[dup, keys + [slot, word]].head(2).astype(str).to_dict("records")
        raise InputError(
            f"{int(dup.sum())} rows share the same design cell, e.g. {first}",
            where="scores",
            fix="give each (model, query, words) combination once: remove duplicate rows or score the models separately",
        )
    order = df[keys].drop_duplicates()
    cols = keys + [slot, word, "LPR"]
    a = df.loc[df["_side"] == 0, cols]
    b = df.loc[df["_side"] == 1, cols]
    m = order.merge(a, on=keys, how="left").merge(b, on=keys, how="left", suffixes=("_1", "_2"))
    incomplete = m[f"{slot}_1"].isna() | m[f"{slot}_2"].isna()
    if incomplete.any():
        log.warning("%d %s pair(s) dropped: one of the two rows is missing from the scores", int(incomplete.sum()), slot)
        m = m.loc[~incomplete]
    out = m[key].copy()
    out[slot] = m[f"{slot}_1"].astype(str) + " - " + m[f"{slot}_2"].astype(str)
    out[word] = m[f"{word}_1"].astype(str) + " - " + m[f"{word}_2"].astype(str)
    out["LPR"] = m["LPR_1"].to_numpy(dtype=float) - m["LPR_2"].to_numpy(dtype=float)
    return out.reset_index(drop=True)


def _check_scores(scores) -> str:
    """The type (M, MT, MA, MTA) of a score table that has ``prob`` and its type's label columns."""
    if not isinstance(scores, pd.DataFrame):
        raise InputError(
            "scores must be a table (DataFrame)",
            where="scores",
            fix="pass the output of fmat.run() or read it with fmat.io.read_table()",
        )
    if "prob" not in scores.columns:
        raise InputError(
            "scores have no 'prob' column",
            where="scores",
            fix="give the output of fmat run (columns model, query, MASK, M_word, ..., prob)",
        )
    type_ = table_type(scores, where="scores")
    needed = ["query", "MASK", "M_pair", "M_word"] + {
        "M": [],
        "MT": ["TARGET", "T_pair", "T_word"],
        "MA": ["ATTRIB", "A_pair", "A_word"],
        "MTA": ["TARGET", "T_word", "ATTRIB", "A_word"],
    }[type_]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise InputError(
            f"scores of type {type_} lack columns {', '.join(missing)}", where="scores", fix="give the full output of fmat run"
        )
    return type_


def summary(scores: pd.DataFrame, mask_pair: bool = True, target_pair: bool = True, attrib_pair: bool = True) -> pd.DataFrame:
    """Log probability ratios (R: ``summary.fmat``); see the module docstring for the rules.

    Parameters
    ----------
    scores : DataFrame
        Output of :func:`fmat.run` (query columns, ``model``, ``prob``; extras are ignored).
    mask_pair, target_pair, attrib_pair : bool
        Contrast the two MASK / TARGET / ATTRIB groups (first minus second). ``target_pair``
        applies to MT and MTA tables, ``attrib_pair`` to MA and MTA.

    Returns
    -------
    DataFrame with FMAT's columns and ``LPR`` last; label columns are Categorical (levels in
    order of first appearance).

    Formula: LPR = ln P(first) − ln P(second) (Bao, 2024, Eq. 2); with ``mask_pair=False`` and
    no other pairing, LPR = ln P.

    Examples
    --------
    >>> import numpy as np, pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = q.assign(model="m", prob=[0.2, 0.4, 0.3, 0.1])  # as fmat.run returns them
    >>> lpr = fmat.summary(scores, target_pair=False)
    >>> lpr[["MASK", "T_word", "LPR"]].round(3)
                MASK T_word    LPR
    0  Male - Female  nurse -0.693
    1  Male - Female  pilot  1.099
    >>> bool(np.isclose(lpr["LPR"].iloc[0], np.log(0.2 / 0.4)))
    True
    """
    mask_pair, target_pair, attrib_pair = (
        arguments.flag(*a) for a in (("mask_pair", mask_pair), ("target_pair", target_pair), ("attrib_pair", attrib_pair))
    )
    type_ = _check_scores(scores)
    others = [c for c in ["TARGET", "T_pair", "T_word", "ATTRIB", "A_pair", "A_word"] if c in scores.columns]
    label_cols = [c for c in ["model", "query", "MASK", "M_pair", "M_word"] if c in scores.columns] + others
    df = scores[label_cols].copy()
    for c in label_cols:  # a categorical keeps its level order, other columns: first appearance
        df[c] = scores[c] if isinstance(scores[c].dtype, pd.CategoricalDtype) else _first_appearance(scores[c])
    prob = pd.to_numeric(scores["prob"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        df["LPR"] = np.log(prob)
    has_model = ["model"] if "model" in df.columns else []
    if mask_pair:
        df = _pair(df, "MASK", has_model + ["query"] + others, "M_pair")
    else:
        df = df[has_model + ["query", "MASK", "M_word"] + others + ["LPR"]]

    base = has_model + ["query", "MASK", "M_word"]
    if type_ == "MT" and target_pair:
        df = _pair(df, "TARGET", base, "T_pair")
    if type_ == "MA" and attrib_pair:
        df = _pair(df, "ATTRIB", base, "A_pair")
    if type_ == "MTA":
        if target_pair:
            df = _pair(df, "TARGET", base + ["ATTRIB", "A_word"], None)
        if attrib_pair:
            df = _pair(df, "ATTRIB", base + ["TARGET", "T_word"], None)

    out = df.reset_index(drop=True)
    for c in out.columns:
        if c != "LPR":
            out[c] = _first_appearance(out[c])
    out.attrs["type"] = type_
    if "item_keys" in scores.attrs:  # a study's phrase -> item key map (fmat.reliability.with_item_keys)
        out.attrs["item_keys"] = scores.attrs["item_keys"]
    return out
