"""Reliability of FMAT results: agreement among models (ICC) and internal consistency (alpha).

Python counterparts of R FMAT's ``ICC_models`` and ``LPR_reliability`` (Bao, 2024, footnote 1
and Results); the statistics are in :mod:`fmat.stats`. Where they differ from FMAT on purpose
(items aligned by keys, not row order; missing values dropped and reported): docs/statistics.md.
Phrases are keyed by their item keys (``attrs["item_keys"]`` or ``items=``) first.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .errors import InputError
from .results import results_frame
from .stats.alpha import cronbach_alpha
from .stats.icc import icc

#: columns that are values or per-row extras, never item keys
NON_KEY = ("LPR", "prob", "logp", "output", "token", "token_id", "oov", "prior", "logp_prior")
ITEMS = ("query", "T_word", "A_word")
ICC_STATISTIC = {
    ("agreement", "average"): "ICC_average",
    ("agreement", "single"): "ICC_single",
    ("consistency", "average"): "ICC_consistency_average",
    ("consistency", "single"): "ICC_consistency_single",
}


def _values(data: pd.DataFrame, where: str) -> tuple[pd.Series, str]:
    """The rating values: ``LPR`` if present, else ``log(prob)`` (raw ``fmat run`` scores)."""
    if "LPR" in data.columns:
        return pd.to_numeric(data["LPR"], errors="raise").astype(float), "LPR"
    if "prob" in data.columns:
        p = pd.to_numeric(data["prob"], errors="raise").astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(p.where(p > 0)), "log(prob)"
    raise InputError(
        "the table has neither an 'LPR' nor a 'prob' column",
        where=where,
        fix="give raw scores (fmat run) or an LPR table (fmat summary)",
    )


def _keys(df: pd.DataFrame, exclude) -> list[str]:
    """Item-key columns: everything but values and per-row extras (a floating-point column too:
    as a key it would differ between models and no item would line up)."""
    drop = set(NON_KEY) | set(exclude)
    return [c for c in df.columns if c not in drop and not pd.api.types.is_float_dtype(df[c])]


def _key_frame(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Key columns as plain objects with a visible missing marker (pivots need hashable keys)."""
    out = pd.DataFrame(index=df.index)
    for c in cols:
        out[c] = df[c].astype(object).where(df[c].notna(), "<NA>").map(str)
    return out


def icc_matrix(data: pd.DataFrame, where: str = "icc_models(data)") -> tuple[pd.DataFrame, dict]:
    """Items x models matrix of ``data`` (LPR or log prob), aligned by the query keys, and
    ``{value, keys, dropped_models}`` (the column used; models without any value).

    Examples
    --------
    The items x raters matrix that ``irr::icc`` takes (as R FMAT's ``ICC_models`` builds it):

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> wide, info = icc_matrix(scores)
    >>> wide.round(3).reset_index(drop=True)
    model      a      b
    0     -0.916 -1.050
    1     -2.303 -2.120
    2     -1.609 -1.386
    3     -1.204 -1.204
    >>> info["value"], info["dropped_models"]
    ('log(prob)', [])
    """
    if "model" not in data.columns:
        raise InputError(
            "the table has no 'model' column", where=where, fix="give the output of fmat run / fmat summary for several models"
        )
    values, name = _values(data, where)
    keys = _keys(data, ["model"])
    if not keys:
        raise InputError("no item columns (query, MASK, M_word, ...) to identify items", where=where)
    long = _key_frame(data, keys)
    long["model"] = data["model"].astype(str)
    long["value"] = values.replace([np.inf, -np.inf], np.nan).to_numpy()
    dup = long.duplicated(keys + ["model"], keep=False)
    if dup.any():
        ex = long.loc[dup, keys + ["model"]].head(3).to_dict("records")
        raise InputError(
            f"{int(dup.sum())} rows share the same item keys and model, e.g. {ex}",
            where=where,
            fix="remove duplicate rows (or bind query tables with distinct qid)",
        )
    wide, empty = _spread(long, keys, "model", "value")
    return wide, {"value": name, "keys": keys, "dropped_models": empty}


def _spread(long: pd.DataFrame, index: list[str], column: str, value: str) -> tuple[pd.DataFrame, list]:
    """``long`` wide: a row per ``index`` key (one row without any), a column per value of ``column``
    (in order of appearance), and those columns without any value dropped (the second item)."""
    order = list(dict.fromkeys(long[column]))
    wide = long.pivot(index=index, columns=column, values=value)[order] if index else long.set_index(column)[value].to_frame().T
    empty = [c for c in order if wide[c].isna().all()]
    return wide.drop(columns=empty), empty


def icc_models(data: pd.DataFrame, type: str = "agreement", unit: str = "average", method: str = "irr") -> pd.DataFrame:
    """ICC of the models as raters (R FMAT ``ICC_models``; irr::icc two-way model).

    ``data``: raw scores (prob -> log(prob)) or an LPR table, items aligned across models by their
    query columns (:func:`icc_matrix`). ``type``: "agreement" | "consistency" | "both"; ``unit``:
    "average" | "single" | "both"; ``method``: "irr" (as the paper) | "mcgraw-wong"
    (:func:`fmat.stats.icc`). ``attrs``: ``value``, ``dropped_models``.

    Examples
    --------
    Two models (raters) that nearly agree, on four items (log probabilities):

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> icc = fmat.icc_models(scores)
    >>> round(float(icc["ICC"].iloc[0]), 3), int(icc["n_items"].iloc[0]), int(icc["n_models"].iloc[0])
    (0.978, 4, 2)
    """
    types = ["agreement", "consistency"] if type == "both" else [type]
    units = ["average", "single"] if unit == "both" else [unit]
    wide, info = icc_matrix(data)
    rows = [icc(wide.to_numpy(float), type=t, unit=u, method=method) for t in types for u in units]
    out = pd.DataFrame(rows).rename(columns={"n_raters": "n_models"})[
        ["type", "unit", "ICC", "F", "df1", "df2", "p", "ci_low", "ci_high", "n_items", "n_models", "n_dropped"]
    ]
    out.attrs.update(value=info["value"], dropped_models=info["dropped_models"])
    return out


def _attached(df: pd.DataFrame, item: str, cols: list[str]) -> list[str]:
    """Columns with a single value within every item level (they describe the item)."""
    groups = df.groupby(item, observed=True, sort=False, dropna=False)
    return [c for c in cols if (groups[c].nunique(dropna=False) <= 1).all()]


def _alpha_split(d: pd.DataFrame, item: str, by: list[str], missing: str) -> dict:
    keys = _keys(d, [item, *by])
    ids = [c for c in keys if c not in _attached(d, item, keys)]
    keys = _key_frame(d, ids + [item])
    keys["LPR"] = pd.to_numeric(d["LPR"], errors="raise").astype(float).replace([np.inf, -np.inf], np.nan).to_numpy()
    dup = keys.duplicated(ids + [item], keep=False)
    if dup.any():
        raise InputError(
            f"{int(dup.sum())} LPR rows share the same keys {ids + [item]}",
            where="lpr_reliability(lpr)",
            fix="remove duplicate rows",
        )
    wide, dropped_items = _spread(keys, ids, item, "LPR")
    n_rows = len(wide)
    if missing == "listwise":
        wide = wide.dropna()
    res = {
        "n_obs": len(wide),
        "k_items": wide.shape[1],
        "alpha": np.nan,
        "alpha_std": np.nan,
        "n_dropped_rows": n_rows - len(wide),
        "dropped_items": "; ".join(map(str, dropped_items)),
    }
    if wide.shape[1] >= 2 and len(wide) >= 2:
        try:
            a = cronbach_alpha(wide)
        except InputError:  # pairwise mode with a pair of items never observed together
            return res
        res.update(alpha=a["alpha"], alpha_std=a["alpha_std"], n_obs=a["n_obs"])
    return res


#: ``attrs`` key of a query, scores or LPR table: ``{"T_word": {phrase: item key}, "A_word": {...}}``
ITEM_KEYS = "item_keys"
_SLOT_COLUMN = {"TARGET": "T_word", "ATTRIB": "A_word"}


def item_key_map(items) -> dict[str, dict[str, str]]:
    """``{"T_word": {phrase: key}, "A_word": {...}}`` (only phrases that differ from their key) of
    a study's items: a :class:`fmat.study.Study`'s ``items`` table (slot, word, item), or a
    mapping already in this shape. ``{}`` when there is nothing to key.

    Examples
    --------
    >>> import pandas as pd
    >>> items = pd.DataFrame({"slot": ["TARGET", "TARGET"], "word": ["an engineer", "a nurse"], "item": ["engineer", "nurse"]})
    >>> item_key_map(items)
    {'T_word': {'an engineer': 'engineer', 'a nurse': 'nurse'}}
    >>> item_key_map(None)
    {}
    """
    if isinstance(items, pd.DataFrame):
        if not {"slot", "word", "item"} <= set(items.columns):
            return {}
        out: dict[str, dict[str, str]] = {}
        for slot, col in _SLOT_COLUMN.items():
            rows = items[items["slot"] == slot]
            mapping = {str(w): str(k) for w, k in zip(rows["word"], rows["item"]) if str(w) != str(k)}
            if mapping:
                out[col] = mapping
        return out
    if not isinstance(items, Mapping):
        return {}
    return {str(col): {str(w): str(k) for w, k in dict(m).items()} for col, m in items.items() if m}


def with_item_keys(lpr: pd.DataFrame, items=None, item: str = "query") -> pd.DataFrame:
    """``lpr`` with TARGET/ATTRIB phrases replaced by their item keys in the columns that identify
    alpha's rows (never the ``item`` column; the input is not changed). ``items``: as
    :func:`item_key_map`; by default the table's ``attrs["item_keys"]``.

    Examples
    --------
    >>> import pandas as pd
    >>> lpr = pd.DataFrame({"query": ["q1", "q2"], "T_word": ["an engineer", "engineer"], "LPR": [0.5, 0.7]})
    >>> with_item_keys(lpr, {"T_word": {"an engineer": "engineer"}})["T_word"].tolist()
    ['engineer', 'engineer']
    """
    keys = item_key_map(items if items is not None else lpr.attrs.get(ITEM_KEYS))
    out = lpr
    for col, mapping in keys.items():
        if col == item or col not in lpr.columns or not mapping:
            continue
        if out is lpr:
            out = lpr.copy()
        values = [mapping.get(str(v), str(v)) if pd.notna(v) else v for v in out[col].tolist()]
        out[col] = pd.Categorical(values, categories=list(dict.fromkeys(v for v in values if pd.notna(v))))
    return out


def lpr_reliability(lpr: pd.DataFrame, item: str = "query", by=None, missing: str = "listwise", items=None) -> pd.DataFrame:
    """Cronbach's alpha of LPRs among items (R FMAT ``LPR_reliability``).

    Within each split of ``by`` (e.g. "model", ["ATTRIB", "MASK"]) the ``item`` column is spread
    wide; the other identifying columns (but those attached to the item) define the rows, phrases
    keyed by ``items`` first (:func:`with_item_keys`). ``missing``: "listwise" | "pairwise".

    Examples
    --------
    Cronbach's alpha of three items (columns) over four cases, within each model:

    >>> import pandas as pd, fmat
    >>> lpr = pd.DataFrame({"model": ["m"] * 12, "query": ["q1"] * 4 + ["q2"] * 4 + ["q3"] * 4,
    ...                     "T_word": ["a", "b", "c", "d"] * 3,
    ...                     "LPR": [1, 2, 3, 4, 1.5, 2, 3.5, 4, 1, 2.5, 3, 4.5]})
    >>> out = fmat.lpr_reliability(lpr, item="query", by="model")
    >>> out[["model", "k_items", "n_obs"]].to_dict("records"), round(float(out["alpha"].iloc[0]), 3)
    ([{'model': 'm', 'k_items': 3, 'n_obs': 4}], 0.983)
    """
    where = "lpr_reliability(lpr)"
    if "LPR" not in lpr.columns:
        raise InputError("the table has no 'LPR' column", where=where, fix="give the output of fmat summary (an LPR table)")
    if item not in lpr.columns:
        raise InputError(
            f"item column {item!r} not in the LPR table",
            where=f"lpr_reliability(item={item!r})",
            fix=f"use one of {[c for c in ITEMS if c in lpr.columns]}",
        )
    if missing not in ("listwise", "pairwise"):
        raise InputError(f"unknown missing={missing!r}", where="lpr_reliability(missing)", fix="use 'listwise' or 'pairwise'")
    by = [by] if isinstance(by, str) else list(by or [])
    bad = [b for b in by if b not in lpr.columns or b == item]
    if bad:
        raise InputError(
            f"by column(s) {bad} not usable",
            where=f"lpr_reliability(by={by})",
            fix=f"use columns of the LPR table other than the item: {list(lpr.columns)}",
        )
    lpr = with_item_keys(lpr, items, item)
    if not by:
        return pd.DataFrame([_alpha_split(lpr, item, [], missing)])
    rows = []
    for key, d in lpr.groupby(by, observed=True, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, map(str, key))), **_alpha_split(d, item, by, missing)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- results-shape helpers
def icc_rows(study: str, icc_df: pd.DataFrame, condition: str = "all") -> pd.DataFrame:
    """Rows of :mod:`fmat.results` shape from :func:`icc_models` output (statistic
    :data:`ICC_STATISTIC`, df/df2 = the F test's, n = items).

    Examples
    --------
    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> icc_rows("S1", icc_models(scores))[["study", "statistic", "model", "value", "n"]].round(3)
      study    statistic model  value    n
    0    S1  ICC_average   all  0.978  4.0
    """
    rows = icc_df[["ICC", "df1", "df2", "p", "ci_low", "ci_high", "n_items"]].rename(
        columns={"ICC": "value", "df1": "df", "n_items": "n"}
    )
    statistic = [ICC_STATISTIC[k] for k in zip(icc_df["type"], icc_df["unit"])]
    return results_frame(rows.assign(study=study, statistic=statistic, condition=condition, model="all"))


def alpha_rows(
    study: str, alpha_df: pd.DataFrame, by=None, condition: str | None = None, names: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Rows of :mod:`fmat.results` shape from :func:`lpr_reliability` output: statistics
    ``alpha`` and ``alpha_std`` per split; ``model`` = the split's model when "model" is in
    ``by``; ``condition`` = the other by-values joined by ":" (prefixed by ``condition``), each
    value replaced by its word in ``names`` when it has one (a study file's ``reliability.names``).

    Examples
    --------
    >>> import pandas as pd
    >>> alpha = pd.DataFrame({"model": ["m"], "n_obs": [4], "alpha": [0.9], "alpha_std": [0.91]})
    >>> alpha_rows("S1", alpha, by="model")[["statistic", "condition", "model", "value", "n"]]
       statistic condition model  value    n
    0      alpha       all     m   0.90  4.0
    1  alpha_std       all     m   0.91  4.0
    """
    by = [by] if isinstance(by, str) else list(by or [])
    names = {str(k): str(v) for k, v in (names or {}).items()}
    rows = []
    for r in alpha_df.to_dict("records"):
        parts = [names.get(str(r[b]), str(r[b])) for b in by if b != "model"]
        cond = ":".join(([condition] if condition else []) + parts) or "all"
        model = str(r["model"]) if "model" in by else "all"
        for stat in ("alpha", "alpha_std"):
            rows.append({"study": study, "statistic": stat, "condition": cond, "model": model, "value": r[stat], "n": r["n_obs"]})
    return results_frame(rows)
