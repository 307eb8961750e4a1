"""Studies 1A-1C: factual associations (occupation-gender, name-gender) of Bao (2024).
Steps, options and figure tables: docs/analyses-1-2.md.

``factual_wefat`` (1A, 1B; Tables 3-4, Figure 3A/3B): LPR = ln P(male word) - ln P(female
word) per item and query, z-scored within model x query (ddof = 1, R ``scale``); the FMAT score
of an item is its mean z; Pearson r (Fisher-z CI) with % male and WEFAT, overall, per query,
per model; Williams' t of r(FMAT, % male) vs r(WEFAT, % male).

``factual_names`` (1C; Table 5, Figure 3C): the above, two mixed models over the z-scores
(random intercept per model) and the OLS Models 1-3 of Table 5.

``inference`` (ours; docs/calibration.md): ``disattenuated`` (:func:`disattenuated_rows`;
Spearman's correction, regression calibration, Carroll et al. 2006) or ``crossed``
(:func:`crossed_rows`).  Cronbach's alpha is the reliability stage's.
"""

from __future__ import annotations

import warnings
from typing import Literal, Mapping, Sequence, get_args

import numpy as np
import pandas as pd

from fmat.analyses import AnalysisInput, AnalysisOutput, nearest, register
from fmat.errors import InputError
from fmat.lazy_scipy import stats as sps
from fmat.results import model_slug, results_frame
from fmat.stats.correlation import pearson, williams_t
from fmat.stats.crossed import crossed_slope
from fmat.stats.icc import icc
from fmat.stats.mixed import SingularFitWarning, fit_lmm
from fmat.stats.regression import coef_difference_test, delta_r2, fit_ols

#: the study file's option blocks that name a criterion table
_TABLE_OPTIONS = ("criterion", "wefat")
#: the ``inference`` option: the paper's r and Fisher CI, or ours: :func:`disattenuated_rows`,
#: :func:`crossed_rows`
Inference = Literal["paper", "disattenuated", "crossed"]
INFERENCE = get_args(Inference)


# --------------------------------------------------------------------------- options
def _criteria_tables(options: Mapping) -> list[str]:
    """Criterion tables read with these options (``criterion.table``, ``wefat.table``)."""
    specs = [(options or {}).get(key) for key in _TABLE_OPTIONS]
    return [str(spec["table"]) for spec in specs if isinstance(spec, Mapping) and spec.get("table")]


def _spec(options_value, key: str, required: bool) -> dict | None:
    where = f"analysis.options.{key}"
    if options_value is None:
        if required:
            raise InputError(
                f"option {key!r} is missing", where=where, fix=f"give {key}: {{table: NAME, item: item, column: COLUMN}}"
            )
        return None
    if not isinstance(options_value, Mapping) or "table" not in options_value:
        raise InputError(
            f"{key} must be a mapping with table, item, column (got {options_value!r})",
            where=where,
            fix=f"write {key}: {{table: NAME, item: item, column: COLUMN}}",
        )
    spec = {"item": "item", **dict(options_value)}
    spec.setdefault("column", "pct_male" if key == "criterion" else "wefat_male")
    return spec


def _criterion_column(criteria: Mapping[str, pd.DataFrame], spec: dict, key: str, columns: Sequence[str]) -> pd.DataFrame | None:
    """``item`` + the asked columns of a criterion table (renamed to ``columns``' targets)."""
    name = spec["table"]
    if name not in criteria:
        return None
    table = criteria[name]
    want = [spec["item"]] + [spec[c] for c in columns]
    missing = [c for c in want if c not in table.columns]
    if missing:
        raise InputError(
            f"criterion table {name!r} has no column(s) {missing} (it has {list(table.columns)})",
            where=f"analysis.options.{key}",
            fix="name existing columns in item:/column:",
        )
    out = pd.DataFrame({"item": table[spec["item"]].astype(str).to_numpy()})
    for c in columns:
        out[c] = pd.to_numeric(table[spec[c]], errors="coerce").to_numpy(dtype=float)
    dup = out["item"].duplicated()
    if dup.any():
        raise InputError(
            f"criterion table {name!r} lists {int(dup.sum())} item(s) twice, e.g. {out.loc[dup, 'item'].iloc[0]!r}",
            where=f"analysis.options.{key}",
            fix="rebuild the criterion table with one row per item",
        )
    return out


def check_options(options: Mapping, queries: pd.DataFrame, where: str, lpr: pd.DataFrame | None = None) -> None:
    """The factual options the design can feed, before any model loads: ``criterion`` and
    ``wefat`` are ``{table, item, column}`` mappings, and ``standardize_within`` names columns
    of the LPR table the design will have (``lpr``: :func:`fmat.analyses.design_lpr`)."""
    for key in _TABLE_OPTIONS:
        try:
            _spec(options.get(key), key, required=False)
        except InputError as err:
            raise InputError(err.message, where=f"{where}.{key}", fix=err.fix) from None
    within = options.get("standardize_within", ("model", "query"))
    if isinstance(within, str):
        within = [within]
    if lpr is not None and isinstance(within, Sequence):
        have = [c for c in lpr.columns if c != "LPR"]
        bad = [str(c) for c in within if c not in have]
        if bad:
            raise InputError(
                f"standardize_within names {bad[0]!r}, not a column of this design's LPR table" + nearest(bad[0], have),
                where=f"{where}.standardize_within",
                fix=f"use some of: {', '.join(have)} (1A: [model, query])",
            )


def check_criteria_tables(options: Mapping, tables: Mapping[str, pd.DataFrame], items: pd.DataFrame | None, where: str) -> None:
    """The criterion tables fit the options and the study's items, before any model loads: the
    ``item`` and ``column`` columns exist, the values are numbers (empty for unknown), each item
    has one row, and every TARGET item key of the study has a row."""
    study_items = []
    if isinstance(items, pd.DataFrame) and {"slot", "item"} <= set(items.columns):
        study_items = list(dict.fromkeys(items.loc[items["slot"].astype(str) == "TARGET", "item"].astype(str)))
    for key in _TABLE_OPTIONS:
        spec = _spec(options.get(key), key, required=False)
        if spec is None or spec["table"] not in tables:
            continue
        name, table, at = spec["table"], tables[spec["table"]], f"{where}.{key}"
        cols = [str(c) for c in table.columns]
        wanted = [("item", spec["item"]), ("column", spec["column"])]
        if spec.get("logit_column"):
            wanted.append(("logit_column", spec["logit_column"]))
        for field_, col in wanted:
            if col not in table.columns:
                raise InputError(
                    f"criterion table {name!r} has no column {col!r}" + nearest(col, cols) + f" (it has {cols})",
                    where=f"{at}.{field_}",
                    fix=f"name one of its columns in {key}.{field_}, or rename the column in the table",
                )
        for field_, col in wanted[1:]:
            raw = table[col]
            num = pd.to_numeric(raw, errors="coerce")
            text = raw.notna() & num.isna() & (raw.astype(str).str.strip() != "")
            if text.any():
                i = int(np.flatnonzero(text.to_numpy())[0])
                raise InputError(
                    f"column {col!r} of criterion table {name!r} holds text, not numbers: {int(text.sum())} value(s), "
                    f"e.g. {raw.iloc[i]!r} (row {i + 1}, item {str(table[spec['item']].iloc[i])!r})",
                    where=f"{at}.{field_}",
                    fix="write plain numbers (87, not '87%' or '87,0'); leave a cell empty for an unknown value",
                )
        keys = table[spec["item"]].astype(str)
        dup = keys[keys.duplicated()]
        if len(dup):
            raise InputError(
                f"criterion table {name!r} lists {len(dup)} item(s) twice in column {spec['item']!r}, e.g. {dup.iloc[0]!r}",
                where=f"{at}.item",
                fix="keep one row per item in the table",
            )
        known = set(keys)
        missing = [i for i in study_items if i not in known]
        if missing:
            shown = ", ".join(f"{m!r}" + nearest(m, known - set(study_items)) for m in missing[:5])
            raise InputError(
                f"{len(missing)} of the study's {len(study_items)} item(s) have no row in criterion table {name!r} "
                f"(column {spec['item']!r}): {shown}" + (" ..." if len(missing) > 5 else ""),
                where=f"{at}.item",
                fix="add a row for each (leave the value empty if it is unknown), or make the study's item keys "
                "(item: of its word entries) the table's",
            )


# --------------------------------------------------------------------------- LPR steps
def item_lpr(
    lpr: pd.DataFrame, items: pd.DataFrame | None = None, slot: str = "TARGET", query_order: Sequence[str] | None = None
) -> pd.DataFrame:
    """LPR table -> ``model, query, q, item, LPR`` (one row per model x query x item).

    ``q``: the query's number (``Q1``, ``Q2``...) in the order of ``query_order`` (the study's
    query table), else of the LPR table's ``query`` categories.  ``item``: the word's key in
    ``items`` (``Study.items``), or the word itself when it has no key.
    """
    word_col = {"TARGET": "T_word", "ATTRIB": "A_word"}[slot]
    need = ["model", "query", word_col, "LPR"]
    missing = [c for c in need if c not in lpr.columns]
    if missing:
        raise InputError(
            f"the LPR table lacks column(s) {missing}",
            where="lpr",
            fix="give the output of fmat.summary for a study with {TARGET} words",
        )
    q = lpr["query"]
    qs = q.astype(str)  # once: a table of 1C's 3,832 names has 180,000 rows a model set
    seen = pd.unique(qs.to_numpy())  # in order of first appearance
    levels = list(q.cat.categories) if isinstance(q.dtype, pd.CategoricalDtype) else list(seen)
    if query_order is not None:
        levels = list(dict.fromkeys([str(x) for x in query_order] + [str(x) for x in levels]))
    present = set(seen)
    levels = [str(x) for x in levels if str(x) in present]
    qnum = {lv: f"Q{k + 1}" for k, lv in enumerate(levels)}
    words = lpr[word_col].astype(str)
    mapping = {}
    if items is not None and len(items):
        sub = items[items["slot"].astype(str) == slot]
        mapping = dict(zip(sub["word"].astype(str), sub["item"].astype(str)))
    keyed = words.map(mapping) if mapping else words  # a word without a key is its own item
    out = pd.DataFrame(
        {
            "model": lpr["model"].astype(str).to_numpy(),
            "query": qs.to_numpy(),
            "q": qs.map(qnum).to_numpy(),
            "item": keyed.where(keyed.notna(), words).to_numpy(),
            "LPR": pd.to_numeric(lpr["LPR"], errors="coerce").to_numpy(dtype=float),
        }
    )
    out["LPR"] = out["LPR"].where(np.isfinite(out["LPR"]))
    dup = out.duplicated(["model", "query", "item"], keep=False)
    if dup.any():
        ex = out.loc[dup, ["model", "query", "item"]].head(2).to_dict("records")
        raise InputError(
            f"{int(dup.sum())} LPR rows share model, query and item key, e.g. {ex}",
            where="lpr",
            fix="each item must appear once per query (check the study's item keys)",
        )
    return out


def zscore(df: pd.DataFrame, value: str = "LPR", within: Sequence[str] = ("model", "query"), out: str = "z") -> pd.DataFrame:
    """Add ``out`` = (value - mean) / sd within each ``within`` group (sd: ddof = 1, as R
    ``scale``; NaNs ignored). Bao (2024), Study 1A: "standardized listwise within each BERT
    model and each query template"."""
    within = list(within)
    bad = [c for c in within if c not in df.columns]
    if bad:
        raise InputError(
            f"cannot standardize within {bad}: no such column(s)",
            where="analysis.options.standardize_within",
            fix=f"use some of {[c for c in df.columns if c not in (value,)]}",
        )
    d = df.copy()
    g = d.groupby(within, sort=False)[value] if within else None
    mean = g.transform("mean") if within else d[value].mean()
    sd = g.transform(lambda s: s.std(ddof=1)) if within else d[value].std(ddof=1)
    d[out] = (d[value] - mean) / sd
    return d


def fmat_score(z: pd.DataFrame, value: str = "z", by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean of ``value`` per item (and per ``by``), NaNs left out: the FMAT score."""
    keys = list(by) + ["item"]
    return z.groupby(keys, sort=False)[value].mean().rename("fmat").reset_index()


# --------------------------------------------------------------------------- rows
def _r_row(study, condition, model, x, y) -> dict:
    """A results row for Pearson r of x and y (Fisher-z CI, df = n - 2)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    base = {"study": study, "statistic": "r", "condition": condition, "model": model}
    if ok.sum() < 4 or np.nanstd(x[ok]) == 0 or np.nanstd(y[ok]) == 0:
        return {**base, "value": np.nan, "n": float(ok.sum())}
    r = pearson(x, y)
    return {**base, "value": r["r"], "df": r["df"], "p": r["p"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n": r["n"]}


def correlation_rows(
    study: str, z: pd.DataFrame, crit: pd.DataFrame, *, wefat: bool, williams_n: int | None = None
) -> list[dict]:
    """r rows of Tables 3-4 and the text: overall, per query (over models), per model x query,
    per model (over queries), WEFAT validity and Williams' t. ``crit``: item, pct_male[, wefat]."""
    rows = []
    targets = ["pct_male"] + (["wefat"] if wefat else [])
    # join once: an item's FMAT score depends only on its own z-scores
    zc = z.merge(crit, on="item", how="inner")
    first = zc.groupby("item", sort=False)[targets].first()

    def scored(g, by=()):
        return fmat_score(g, by=by).join(first, on="item")

    def add(query: str, model: str, m: pd.DataFrame, score: str = "fmat") -> None:
        rows.extend(_r_row(study, f"fmat~{var}{query}", model, m[score], m[var]) for var in targets)

    overall = scored(zc)
    add("", "all", overall)
    for q, m in scored(zc, ["q"]).groupby("q", sort=False):  # per query, averaged over models
        add(f":{q}", "all", m)
    for model, g in zc.groupby("model", sort=False):  # per model x query, and per model over queries
        for q, m in g.groupby("q", sort=False):
            add(f":{q}", model_slug(model), m, "z")
        add("", model_slug(model), scored(g))
    if wefat:
        rows.append(_r_row(study, "wefat~pct_male", "all", overall["wefat"], overall["pct_male"]))
        rows.append(williams_row(study, overall["fmat"], overall["wefat"], overall["pct_male"], n=williams_n))
    return rows


def _models_icc(z: pd.DataFrame, targets: list[str], unit: str) -> float:
    """ICC(C, ``unit``) among the models (raters) of their mean z per ``targets`` group; NaN
    with fewer than 2 models or 2 complete targets, or no residual variance."""
    mat = z.groupby([*targets, "model"], sort=False)["z"].mean().unstack("model")
    if mat.shape[1] < 2:
        return float("nan")
    try:
        return float(icc(mat.to_numpy(dtype=float), type="consistency", unit=unit)["ICC"])
    except InputError:
        return float("nan")


def model_reliability(z: pd.DataFrame) -> float:
    """ICC(C,k) among the models of their item scores (each model's mean z of an item over the
    queries in ``z``; items any model lacks left out): the reliability of the item score
    averaged over the models (Cronbach's alpha with models as raters); NaN as :func:`_models_icc`."""
    return _models_icc(z, ["item"], "average")


def single_reliability(z: pd.DataFrame) -> float:
    """ICC(C,1) among the models of their z-scores, the (query, item) pairs as targets: the
    reliability of **one** model's z-score, the predictor of the 1C mixed models; NaN as
    :func:`_models_icc`."""
    return _models_icc(z, ["q", "item"], "single")


def _corrected_kind(r: Mapping) -> str | None:
    """Which correction a row takes under ``inference: disattenuated``: ``"r"`` (an r of the
    averaged FMAT score of model ``all``), ``"b"`` (``lmm:<outcome>~fmat:fmat``) or None."""
    target = _crossed_target(r)
    if target is None or (target[0] == "b" and not str(r["condition"]).startswith("lmm:")):
        return None
    return target[0]


def disattenuated_rows(rows: list[dict], z: pd.DataFrame) -> list[dict]:
    """The calibrated variant of the criterion statistics (``inference: disattenuated``, ours):
    the rows :func:`_corrected_kind` names, and only those, with column ``reliability``.

    * "r": Spearman's (1904) correction, value and Fisher-CI bounds divided by
      sqrt(:func:`model_reliability` of that query's z-scores, all for the overall row), clipped to [-1, 1];
    * "b" (1C's ``lmm:<outcome>~fmat``): regression calibration (Carroll et al. 2006, ch. 2; Rosner,
      Spiegelman & Willett 1989), b, SE and CI bounds divided by sqrt(:func:`single_reliability`).

    p, df and n stay; a reliability of 0 or less (a null world) leaves value and CI NaN."""
    out = []
    rels: dict[tuple, float] = {}  # per kind and query (None: all queries), each computed once
    for r in rows:
        kind = _corrected_kind(r)
        if kind is None:
            continue
        cond = str(r["condition"])
        q = cond.split(":", 1)[1] if kind == "r" and ":" in cond else None
        if (kind, q) not in rels:
            rels[kind, q] = (
                model_reliability(z if q is None else z[z["q"].astype(str) == q]) if kind == "r" else single_reliability(z)
            )
        rel = rels[kind, q]
        row = {**r, "reliability": rel}
        scaled = ("value", "ci_low", "ci_high") + (("se",) if kind == "b" else ())
        if np.isfinite(rel) and rel > 0:
            k = 1.0 / np.sqrt(rel)
            for c in scaled:
                if c in row and row[c] is not None and np.isfinite(row[c]):
                    row[c] = float(np.clip(row[c] * k, -1.0, 1.0)) if kind == "r" else float(row[c] * k)
        else:
            row.update({c: np.nan for c in scaled})
        out.append(row)
    return out


def _crossed_target(r: Mapping) -> tuple | None:
    """What ``inference: crossed`` re-tests in a row: ``(kind, criterion, covariates, query)``,
    or None.  ``kind`` "r": an r of the averaged FMAT score of model ``all``; "b": a slope of
    the FMAT score on the criterion (1C's mixed models and Table 5's fmat coefficients)."""
    if r.get("model") != "all":
        return None
    stat, cond = r.get("statistic"), str(r.get("condition", ""))
    if stat == "r" and cond.startswith("fmat~"):
        var, _, q = cond.removeprefix("fmat~").partition(":")
        return "r", var, (), q or None
    if stat == "b" and cond.startswith("lmm:") and cond.endswith("~fmat:fmat"):
        return "b", cond.removeprefix("lmm:").removesuffix("~fmat:fmat"), (), None
    if stat == "b" and cond in ("logit_male~fmat:fmat", "logit_male~wefat+fmat:fmat"):
        return "b", "logit_male", ("wefat",) if "wefat" in cond else (), None
    return None


def crossed_rows(rows: list[dict], z: pd.DataFrame, crit: pd.DataFrame, conf_level: float = 0.95) -> tuple[list[dict], list[str]]:
    """The concept-level variant (``inference: crossed``, ours, not the paper's): the rows that
    :func:`_crossed_target` names keep the paper's value and take the test of
    :func:`fmat.stats.crossed.crossed_slope` (docs/calibration.md, "The criterion family")::

        Y[m, i] = b0 + b1 x_i + v_m (x_i - mean x) + w_i + e[m, i]

    ``Y[m, i]`` model m's mean z of item i (of the row's query), ``x_i`` the item's criterion.
    An r row's CI is the paper's Fisher interval, each half on the z scale widened by ``h =
    t_.975(df) SE / (t_.975(I - 2) SE_items)``; a b row's SE is ``|b / t|``, its CI ``b +-
    t_.975(df) SE``.  Items some model lacks are left out, with a note.  Returns ``(rows,
    notes)``: the re-tested rows only."""
    out, notes, tables = [], [], {}
    by_item = crit.drop_duplicates("item").set_index("item")
    qz = float(sps.norm.ppf(0.5 + conf_level / 2))

    def qt(df):
        return sps.t.ppf(0.5 + conf_level / 2, df)

    for r in rows:
        target = _crossed_target(r)
        if target is None:
            continue
        kind, var, covs, q = target
        if var not in by_item.columns or any(c not in by_item.columns for c in covs):
            continue
        if q not in tables:
            zz = z if q is None else z[z["q"].astype(str) == q]
            Y = zz.groupby(["model", "item"], sort=False)["z"].mean().unstack("item")
            Y = Y[[i for i in Y.columns if i in by_item.index]].dropna(how="all")
            lacking = [str(i) for i in Y.columns[Y.isna().any()]]
            if lacking:
                where = f" in query {q}" if q else ""
                notes.append(
                    f"inference: crossed left out {len(lacking)} item(s) that some model lacks{where} "
                    f"(the test needs a complete models x items table): {', '.join(lacking[:5])}"
                    + (" ..." if len(lacking) > 5 else "")
                )
            tables[q] = Y.drop(columns=lacking)
        Y = tables[q]
        c = by_item.loc[Y.columns, [var, *covs]].astype(float)
        ok = np.isfinite(c.to_numpy()).all(axis=1)
        res = crossed_slope(
            Y.loc[:, ok].to_numpy(dtype=float),
            c.loc[ok, var].to_numpy(),
            c.loc[ok, list(covs)].to_numpy() if covs else None,
            conf_level=conf_level,
        )
        row = {**r, "df": res["df"], "p": res["p"]}
        value = float(r.get("value", np.nan))
        if kind == "r":
            row["n"] = float(res.get("items", int(ok.sum())))
            ok_ci = np.isfinite(res["se"]) and res.get("se_items", 0) > 0 and np.isfinite(value) and r.get("n", 0) > 3
            if ok_ci:
                h = (qt(res["df"]) * res["se"]) / (qt(res["df_items"]) * res["se_items"])
                zr, half = np.arctanh(np.clip(value, -1 + 1e-15, 1 - 1e-15)), qz / np.sqrt(float(r["n"]) - 3) * h
                row.update(ci_low=float(np.tanh(zr - half)), ci_high=float(np.tanh(zr + half)))
            else:
                row.update(ci_low=np.nan, ci_high=np.nan)
        else:  # a mixed model's n counts its rows (cells here), an OLS's the items
            row["n"] = res["n"] if str(r["condition"]).startswith("lmm:") else float(res.get("items", int(ok.sum())))
            t = res["t"]
            se = abs(value / t) if np.isfinite(t) and t != 0 and np.isfinite(value) else np.nan
            q = float(qt(res["df"])) if np.isfinite(res["df"]) else np.nan
            row.update(se=se, ci_low=value - q * se, ci_high=value + q * se)
        out.append(row)
    return out, notes


def calibrated_table(paper: list[dict], ours: list[dict], alpha: float = 0.05) -> pd.DataFrame:
    """Figure table ``calibrated``: per corrected row (:func:`disattenuated_rows`) the paper's
    value, p and CI beside the disattenuated ones (``*_ours``), the reliability, and whether each
    is significant at ``alpha`` (``holds``: under both, or neither: the p is the same test)."""
    mine = {o["condition"]: o for o in ours}
    rows = []
    for e in paper:
        o = mine.get(e.get("condition"))
        if o is None or _corrected_kind(e) is None:
            continue
        theirs = {c: e.get(c, np.nan) for c in ("value", "p", "ci_low", "ci_high")}
        mine_ = {"value_ours": o["value"], "p_ours": o.get("p", np.nan), "ci_low_ours": o["ci_low"], "ci_high_ours": o["ci_high"]}
        rows.append(
            {"condition": e["condition"], "statistic": e["statistic"], **theirs, "reliability": o["reliability"], **mine_}
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["significant"] = out["p"] < alpha
        out["significant_ours"] = out["p_ours"] < alpha
        out["holds"] = out["significant"] == out["significant_ours"]
    return out


def williams_row(study: str, fmat, wefat, pct, n: int | None = None) -> dict:
    """Williams' t of r(FMAT, % male) vs r(WEFAT, % male) (r23 = r(FMAT, WEFAT)); positive =
    FMAT larger; df = n - 3 (complete items; ``n``: option ``williams_n``, the row's ``n`` stays
    the items used for the r's)."""
    f, w, p = (np.asarray(v, dtype=float) for v in (fmat, wefat, pct))
    ok = np.isfinite(f) & np.isfinite(w) & np.isfinite(p)
    base = {"study": study, "statistic": "t_williams", "condition": "fmat-vs-wefat~pct_male", "model": "all"}
    n_test, n = n, int(ok.sum())
    if n < 5:
        return {**base, "value": np.nan, "n": float(n)}
    r12 = float(np.corrcoef(p[ok], f[ok])[0, 1])
    r13 = float(np.corrcoef(p[ok], w[ok])[0, 1])
    r23 = float(np.corrcoef(f[ok], w[ok])[0, 1])
    t = williams_t(r12, r13, r23, int(n_test) if n_test else n)
    return {**base, "value": t["t"], "df": t["df"], "p": t["p"], "n": float(n)}


def logit_pct(pct, clip: float = 0.5) -> np.ndarray:
    """ln(p / (100 - p)) of a percentage, p clipped to [clip, 100 - clip] so that 0 % and
    100 % stay finite (``clip`` in percentage points)."""
    p = np.clip(np.asarray(pct, dtype=float), clip, 100 - clip)
    return np.log(p / (100 - p))


def figure_criterion(scores: pd.DataFrame, *, clip: float = 0.5) -> pd.DataFrame:
    """Figure 3: per item ``item, fmat, pct_male, wefat_male``, the plot columns ``x, y, xlabel,
    ylabel`` and two OLS fits of the FMAT score: ``fit_linear`` on % male, ``fit_logit`` on
    logit(% male) (the "logit-function fitting curve"; % clipped by ``clip`` points)."""
    d = scores.rename(columns={"wefat": "wefat_male"})
    if "wefat_male" not in d.columns:
        d["wefat_male"] = np.nan
    ok = np.isfinite(d["fmat"].to_numpy(float)) & np.isfinite(d["pct_male"].to_numpy(float))
    x = d["pct_male"].to_numpy(float)
    lx = logit_pct(x, clip)
    d["fit_linear"] = np.nan
    d["fit_logit"] = np.nan
    if ok.sum() >= 2:
        y = d["fmat"].to_numpy(float)
        for col, xx in (("fit_linear", x), ("fit_logit", lx)):
            b, a = np.polyfit(xx[ok], y[ok], 1)
            d[col] = a + b * xx
    out = d[["item", "fmat", "pct_male", "wefat_male", "fit_linear", "fit_logit"]]
    out = out.assign(x=out["pct_male"], y=out["fmat"], xlabel="% male", ylabel="FMAT score (standardized LPR, averaged)")
    return out.sort_values("pct_male", kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- 1C models
def lmm_rows(study: str, z: pd.DataFrame, outcome: str, label: str) -> tuple[list[dict], list[str]]:
    """Mixed model ``outcome ~ fmat`` over all model x query x item z-scores (``fmat`` = the
    standardized LPR), random intercept per model (Bao, 2024, Study 1C: "standardized LPRs
    strongly predicted the logit of gender percentage"). Rows: ``b`` of fmat, ``R2m``, ``R2c``."""

    d = z[["model", "z", outcome]].rename(columns={"z": "fmat"}).dropna()
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SingularFitWarning)
        fit = fit_lmm(d, f"{outcome} ~ fmat", group="model")
    if any(issubclass(w.category, SingularFitWarning) for w in caught):
        notes.append(
            f"lmm:{label}~fmat: the random-intercept variance of the models is ~0 (singular "
            "fit; z-scores are centered within model, so estimates equal OLS)"
        )
    c = fit.coefs.set_index("term").loc["fmat"]
    cond = f"lmm:{label}~fmat"
    base = {"study": study, "model": "all", "n": float(fit.n)}
    test = {k: c[k] for k in ("se", "df", "p", "ci_low", "ci_high")}
    rows = [
        {**base, "statistic": "b", "condition": f"{cond}:fmat", "value": c["b"], **test},
        {**base, "statistic": "beta", "condition": f"{cond}:fmat", "value": c["beta"]},
        {**base, "statistic": "R2m", "condition": cond, "value": fit.r2m},
        {**base, "statistic": "R2c", "condition": cond, "value": fit.r2c},
    ]
    return rows, notes


def ols_rows(study: str, items: pd.DataFrame) -> list[dict]:
    """Table 5: OLS Models 1-3 of ``logit_male`` on ``wefat`` and/or ``fmat`` (item level):
    b rows, R2 rows (the model's F test), R2_delta of each predictor entering last (F(1, n - 3))
    and the F test that the two coefficients of Model 3 are equal."""

    d = items[["logit_male", "wefat", "fmat"]].replace([np.inf, -np.inf], np.nan).dropna()
    base = {"study": study, "model": "all", "n": float(len(d))}
    rows = []
    for preds in (["wefat"], ["fmat"], ["wefat", "fmat"]):
        cond = "logit_male~" + "+".join(preds)
        fit = fit_ols(d, cond)
        ci = fit.conf_int()
        for term in ["Intercept", *preds]:
            name = "intercept" if term == "Intercept" else term
            b = {"value": fit.params[term], "se": fit.bse[term], "p": fit.pvalues[term]}
            ci_b = {"ci_low": ci.loc[term, 0], "ci_high": ci.loc[term, 1]}
            rows.append({**base, "statistic": "b", "condition": f"{cond}:{name}", **b, "df": fit.df_resid, **ci_b})
        f_test = {"df": fit.df_model, "df2": fit.df_resid, "p": float(fit.f_pvalue)}
        rows.append({**base, "statistic": "R2", "condition": cond, "value": fit.rsquared, **f_test})
        if len(preds) == 2:
            for r in delta_r2(d, "logit_male", preds).to_dict("records"):
                test = {"value": r["delta_R2"], "df": r["df1"], "df2": r["df2"], "p": r["p"]}
                rows.append({**base, "statistic": "R2_delta", "condition": f"{cond}:{r['predictor']}", **test})
            test = coef_difference_test(fit, "fmat", "wefat")
            f_test = {"value": test["F"], "df": test["df1"], "df2": test["df2"], "p": test["p"]}
            rows.append({**base, "statistic": "F", "condition": f"{cond}:fmat=wefat", **f_test})
    return rows


# --------------------------------------------------------------------------- the analyses
def _prepare(data: AnalysisInput, standardize_within, criterion, wefat, logit: bool):
    study = str(getattr(data.study, "id", "") or "")
    items = getattr(data.study, "items", None)
    queries = getattr(data.study, "queries", None)
    order = None
    if isinstance(queries, pd.DataFrame) and "query" in queries.columns:
        qcol = queries["query"]
        order = list(qcol.cat.categories) if isinstance(qcol.dtype, pd.CategoricalDtype) else list(dict.fromkeys(qcol))
    long = item_lpr(data.lpr, items, query_order=order)
    z = zscore(long, "LPR", standardize_within)
    notes = []
    cspec = _spec(criterion, "criterion", required=True)
    wspec = _spec(wefat, "wefat", required=False)
    cols = ["column"] + (["logit_column"] if logit and cspec.get("logit_column") else [])
    crit = _criterion_column(data.criteria, cspec, "criterion", cols)
    if crit is None:
        raise InputError(
            f"criterion table {cspec['table']!r} was not given to the analysis",
            where="analysis.options.criterion",
            fix="build it (snakemake criteria) and pass it in AnalysisInput.criteria",
        )
    crit = crit.rename(columns={"column": "pct_male", "logit_column": "logit_male"})
    have_wefat = False
    if wspec is not None:
        wtab = _criterion_column(data.criteria, wspec, "wefat", ["column"])
        if wtab is None:
            notes.append(f"WEFAT table {wspec['table']!r} not available: WEFAT rows skipped")
        else:
            wtab = wtab.rename(columns={"column": "wefat"})
            crit = crit.merge(wtab, on="item", how="left")
            have_wefat = True
    fmat_items = set(long.loc[long["LPR"].notna(), "item"])
    need = ["pct_male"] + (["wefat"] if have_wefat else [])
    complete = crit.dropna(subset=need)
    common = complete[complete["item"].isin(fmat_items)]
    n_missing_crit = len(fmat_items - set(crit["item"]))
    n_missing_pct = len(fmat_items & set(crit.loc[crit["pct_male"].isna(), "item"]))
    n_missing_wefat = len(fmat_items & set(crit.loc[crit["wefat"].isna(), "item"])) if have_wefat else 0
    if n_missing_crit or n_missing_pct or n_missing_wefat:
        notes.append(
            f"{len(fmat_items)} items with FMAT scores; {len(common)} with every criterion "
            f"({n_missing_crit} not in {cspec['table']!r}, {n_missing_pct} without % male"
            + (f", {n_missing_wefat} without WEFAT" if have_wefat else "")
            + ")"
        )
    if len(common) < 4:
        raise InputError(
            f"only {len(common)} items have an FMAT score and every criterion",
            where="analysis.options.criterion",
            fix="check that the criterion tables' item keys match the study's items",
        )
    return study, long, z, common.reset_index(drop=True), have_wefat, notes


def _factual(
    data: AnalysisInput,
    criterion,
    wefat,
    standardize_within,
    logit_clip,
    williams_n,
    inference: Inference,
    *,
    names: bool,
    mixed_models: bool = True,
) -> AnalysisOutput:
    """Both analyses (their options, in their order); ``names``: Study 1C's models too."""
    if inference not in INFERENCE:
        path = getattr(data.study, "path", None)
        raise InputError(
            f"unknown inference {inference!r}",
            where=f"{path or 'study file'}: analysis.options.inference",
            fix="use 'paper' (the paper's r and Fisher CI), 'disattenuated' (ours: corrected for the models' unreliability) "
            "or 'crossed' (ours: the items and the models random: the concept-level test)",
        )
    study, long, z, crit, have_wefat, notes = _prepare(data, standardize_within, criterion, wefat, names)
    rows: list[dict] = correlation_rows(study, z, crit, wefat=have_wefat, williams_n=williams_n)
    if williams_n:
        notes.append(f"Williams' t computed with n = {williams_n} (option williams_n), not the number of items")
    scores = fmat_score(z).merge(crit, on="item", how="inner")
    figures = {"criterion": figure_criterion(scores, clip=logit_clip)}
    if names:
        if "logit_male" not in crit.columns:
            crit = crit.assign(logit_male=logit_pct(crit["pct_male"], logit_clip))
            notes.append(f"logit of % male computed from % male (clipped at {logit_clip} points)")
        scores = fmat_score(z).merge(crit, on="item", how="inner")
        zc = z.merge(crit, on="item", how="inner")
        outcomes = ["logit_male"] + (["wefat"] if have_wefat else [])
        for outcome in outcomes if mixed_models else []:
            lmm, lmm_notes = lmm_rows(study, zc, outcome, outcome)
            rows += lmm
            notes += lmm_notes
        if have_wefat:
            rows += ols_rows(study, scores)
        else:
            notes.append("no WEFAT table: Table 5 regressions skipped")
    corrected = disattenuated_rows(rows, z)
    figures["calibrated"] = calibrated_table(rows, corrected)
    if inference == "crossed":
        mine, more = crossed_rows(rows, z, crit)
        by_key = {(o["statistic"], o["condition"]): o for o in mine}
        rows = [by_key.get((r.get("statistic"), r.get("condition")), r) if r.get("model") == "all" else r for r in rows]
        notes += more
        notes.append(
            "inference: crossed (ours, not the paper's): each r of the averaged FMAT score (model all) and each slope of "
            "the FMAT score on a criterion (1C's mixed models, Table 5's fmat coefficients) tested with the models and the "
            "items as crossed random factors, the models' own slopes random (the concept-level test: fmat.stats.crossed, "
            "docs/calibration.md); the values are the paper's, the r's CI its Fisher interval widened by the models' "
            "variation; the other rows are the paper's"
        )
    if inference == "disattenuated":
        by_cond = {o["condition"]: o for o in corrected}
        rows = [
            {**r, **{c: by_cond[r["condition"]][c] for c in ("value", "ci_low", "ci_high", "se") if c in by_cond[r["condition"]]}}
            if _corrected_kind(r) is not None and r.get("condition") in by_cond
            else r
            for r in rows
        ]
        notes.append(
            "inference: disattenuated (ours, not the paper's): each r of the averaged FMAT score and its CI divided by "
            "sqrt(ICC(C,k) among the models) (Spearman's correction for attenuation), each mixed model's b, SE and CI "
            "by sqrt(ICC(C,1)) (regression calibration); p as the paper's"
        )
    return AnalysisOutput(stats=results_frame(rows), figures=figures, notes=notes)


#: what both analyses give :func:`fmat.analyses.register`: the same criteria, checks and items
_REGISTRATION = dict(
    criteria=_criteria_tables,
    check=check_options,
    check_criteria=check_criteria_tables,
    items=("T_word",),
    needs=("query", "T_word"),
)


@register("factual_wefat", **_REGISTRATION)
def factual_wefat(
    data: AnalysisInput,
    *,
    criterion: Mapping,
    wefat: Mapping | None = None,
    standardize_within: Sequence[str] = ("model", "query"),
    logit_clip: float = 0.5,
    williams_n: int | None = None,
    inference: Inference = "paper",
) -> AnalysisOutput:
    """Studies 1A/1B (Tables 3-4, Figure 3A/3B); options: docs/analyses-1-2.md.

    ``criterion`` and ``wefat``: ``{table, item, column}`` (% male, WEFAT_male); ``williams_n``:
    the n of Williams' t (default the number of items: the paper's 1C prints t(47) with 3,644 names).
    """
    return _factual(data, criterion, wefat, standardize_within, logit_clip, williams_n, inference, names=False)


@register("factual_names", **_REGISTRATION)
def factual_names(
    data: AnalysisInput,
    *,
    criterion: Mapping,
    wefat: Mapping | None = None,
    standardize_within: Sequence[str] = ("model", "query"),
    logit_clip: float = 0.5,
    williams_n: int | None = None,
    mixed_models: bool = True,
    inference: Inference = "paper",
) -> AnalysisOutput:
    """Study 1C (Table 5, Figure 3C): :func:`factual_wefat` plus the LMMs and OLS Models 1-3
    (``mixed_models: false`` skips the two LMMs, which take ~10 s each on 175,000 rows).

    ``criterion.logit_column`` names the logit of % male (ln(m/f)); without it the logit is
    computed from ``column`` (clipped by ``logit_clip`` points).
    """
    opts = (criterion, wefat, standardize_within, logit_clip, williams_n, inference)
    return _factual(data, *opts, names=True, mixed_models=mixed_models)
