"""Studies 3A-3D (Bao, 2024): stereotypes as a factorial mixed model of LPR / sigma.

Two registered analyses (steps, options and figure tables: ``docs/analyses-3-4.md``):
``stereotype_pairs`` (3A, 3D) on the attribute-paired LPR table, ``y = LPR / sigma``, LMM
``y ~ mask * wording * pair``; ``stereotype_domains`` (3B, 3C) on ``ln P(w | phrase) / sigma``
averaged per ATTRIB group, focal minus reference domain per form, LMM ``y ~ mask * wording *
form``.  Both: sum-to-zero coding, models as random intercepts; d = the contrast of the
estimated marginal means of the first [MASK] group minus the second, with nlme's level-1 df.

Rows: ``F`` per term that involves the [MASK] factor; ``d`` and ``t`` for ``all`` and each pair
or form; ``R2m``, ``R2c``; one ``d`` per model.  Figure tables ``effects``, ``anova``,
``cells`` and ``calibrated`` (:func:`calibrated_table`; docs/calibration.md).
"""

from __future__ import annotations

import re
from typing import Literal, Mapping, get_args

import numpy as np
import pandas as pd

from fmat.analyses import AnalysisInput, AnalysisOutput, register
from fmat.errors import InputError
from fmat.results import model_slug, results_frame
from fmat.stats.crossed import crossed_contrast
from fmat.stats.effects import LPR_SIGMA
from fmat.stats.mixed import fit_lmm

#: default name of the [MASK] factor by its two groups (the condition vocabulary's names)
FACTOR_NAMES = {
    frozenset({"Male", "Female"}): "gender",
    frozenset({"Black", "Asian"}): "race",
    frozenset({"White", "Black"}): "race",
    frozenset({"White", "Asian"}): "race",
}


#: the ``inference`` option: the paper's model, the calibrated within-sentence variant, or the
#: concept-level test with the items (3A/3D: attribute pairs; 3B/3C: each domain's phrases) random
Inference = Literal["paper", "sentence", "crossed"]
INFERENCE = get_args(Inference)
DomainInference = Inference


# ----------------------------------------------------------------------------- helpers
def _study_id(data: AnalysisInput) -> str:
    return str(getattr(data.study, "id", "") or "")


def _where(data: AnalysisInput, field: str) -> str:
    path = getattr(data.study, "path", None)
    return f"{path or 'study file'}: analysis.options.{field}"


def _levels(s: pd.Series) -> list[str]:
    """Levels in category order (a categorical) or order of first appearance."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        present = set(s.dropna().astype(str))
        return [str(c) for c in s.cat.categories if str(c) in present]
    return list(dict.fromkeys(str(v) for v in s.dropna()))


def _need(lpr: pd.DataFrame, cols, where: str) -> None:
    if not isinstance(lpr, pd.DataFrame):
        raise InputError("the LPR table is missing", where=where, fix="pass fmat.summary() output as data.lpr")
    missing = [c for c in cols if c not in lpr.columns]
    if missing:
        raise InputError(
            f"the LPR table lacks columns {missing}",
            where=where,
            fix="give the fmat.summary() output made with the study file's lpr options",
        )


def mask_groups(lpr: pd.DataFrame, mask_contrast, where: str) -> list[str]:
    """The two [MASK] groups to contrast (first minus second): ``mask_contrast`` or the first
    two MASK levels."""
    levels = _levels(lpr["MASK"])
    groups = [str(g) for g in (mask_contrast or levels[:2])]
    if len(groups) != 2:
        raise InputError(
            f"mask_contrast needs two MASK groups, got {groups}",
            where=where,
            fix="write mask_contrast: [first, second] (d = first minus second)",
        )
    unknown = [g for g in groups if g not in levels]
    if unknown:
        raise InputError(
            f"MASK group(s) {unknown} not in the LPR table (it has {levels})",
            where=where,
            fix="name MASK groups of the study file's queries; the LPR must be made with mask_pair: false",
        )
    return groups


def factor_name(groups, factor: str | None) -> str:
    """Name of the [MASK] factor in the model terms / conditions (``gender``, ``race``)."""
    if factor:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", str(factor)) or factor in ("y", "model", "wording", "pair", "form"):
            raise InputError(
                f"factor name {factor!r} is not usable",
                where="analysis.options.factor",
                fix="use a plain identifier such as gender or race",
            )
        return str(factor)
    return FACTOR_NAMES.get(frozenset(groups), "mask")


def wording_of(words: pd.Series, mask_wordings, groups, where: str) -> pd.Series:
    """Wording level of each [MASK] word: ``"men/women"`` for the pair containing it, from
    ``mask_wordings: [[men, women], [fathers, mothers]]`` (one word per MASK group, in the
    order of ``mask_contrast``).  Without ``mask_wordings`` every word has one wording."""
    if not mask_wordings:
        return pd.Series("all", index=words.index, dtype=object)
    lookup = {}
    for pair in mask_wordings:
        pair = [str(w) for w in pair]
        if len(pair) != len(groups):
            raise InputError(
                f"wording {pair} must name one word per MASK group {groups}",
                where=where,
                fix="write mask_wordings: [[men, women], [fathers, mothers]]",
            )
        for w in pair:
            lookup[w] = lookup[w.casefold()] = "/".join(pair)
    w = words.astype(str)
    out = w.map(lambda x: lookup.get(x, lookup.get(x.casefold())))
    if out.isna().any():
        bad = sorted(set(w[out.isna()]))
        raise InputError(
            f"[MASK] word(s) {bad} are in no wording of mask_wordings",
            where=where,
            fix="list every [MASK] word of the contrasted groups in mask_wordings",
        )
    return out.astype(object)


def _term_condition(term: str) -> str:
    """Patsy term ``C(gender, Sum):C(pair, Sum)`` -> condition ``gender_x_pair``."""
    names = [re.sub(r"^C\(\s*([^,)]+).*\)$", r"\1", part.strip()) for part in term.split(":")]
    return "_x_".join(names)


def fit_factorial(cells: pd.DataFrame, factor: str, groups: list[str], others: list[str], anova: str = "sequential"):
    """Full-factorial LMM of ``y`` on ``factor`` x ``others`` (sum-to-zero coding), models as
    random intercepts (:func:`fmat.stats.fit_lmm`).  Factors with a single level are left
    out.  Returns (fit, used other factors, anova table with a ``condition`` column)."""
    used = [f for f in others if cells[f].nunique() > 1]
    df = cells.copy()
    df[factor] = pd.Categorical(df[factor].astype(str), categories=groups)
    for f in used:
        df[f] = pd.Categorical(df[f].astype(str), categories=_levels(cells[f]))
    rhs = " * ".join(f"C({f}, Sum)" for f in [factor, *used])
    fit = fit_lmm(df, f"y ~ {rhs}", group="model")
    tab = fit.anova(type=anova)
    tab = tab[tab["term"] != "Intercept"].copy()
    tab.insert(1, "condition", [_term_condition(t) for t in tab["term"]])
    return fit, used, tab.reset_index(drop=True)


def _contrast_row(res: Mapping, n: float) -> dict:
    return {"d": res["estimate"], **{k: res[k] for k in ("se", "t", "df", "p", "ci_low", "ci_high")}, "n": n}


def model_effects(fit, factor: str, groups: list[str], per: str | None, wording: bool) -> list[dict]:
    """The LMM's d contrasts: overall (``all``), within each level of ``per``, and (figure
    only) within each wording.  Each: d = EMM(first group) - EMM(second group), SE, t, df, p, CI."""
    a, b = {factor: groups[0]}, {factor: groups[1]}
    out = [{"model": "all", "condition": "all", **_contrast_row(fit.compare([factor], a, b), fit.n)}]
    for col, show in ((per, True), ("wording", wording)):
        if col is None or not show or col not in fit.data.columns:
            continue
        for lev in _levels(fit.data[col]):
            res = fit.compare([factor, col], {**a, col: lev}, {**b, col: lev})
            cond = lev if col == per else f"wording:{lev}"
            n = float((fit.data[col].astype(str) == lev).sum())
            out.append({"model": "all", "condition": cond, **_contrast_row(res, n)})
    return out


def sentence_effects(cells: pd.DataFrame, factor: str, groups: list[str], used: list[str], per: str | None) -> list[dict]:
    """The calibrated variant (``inference: sentence``, ours, not the paper's; docs/calibration.md):
    each model x cell of ``used`` gives one observation ``z = mean y(first group) - mean
    y(second group)``; the LMM ``z ~ used`` (sum-to-zero coding, models as random intercepts)
    gives d as its intercept and per level of ``per`` that level's estimated marginal mean.
    Rows as :func:`model_effects` (not per wording)."""
    keys = ["model", *used]
    m = cells.groupby(keys + [factor], observed=True)["y"].mean().unstack(factor)
    z = (m[groups[0]] - m[groups[1]]).dropna().rename("z").reset_index()
    for f in used:
        z[f] = pd.Categorical(z[f].astype(str), categories=_levels(cells[f]))
    keep = [f for f in used if z[f].nunique() > 1]
    rhs = " * ".join(f"C({f}, Sum)" for f in keep) or "1"
    fit = fit_lmm(z, f"z ~ {rhs}", group="model")
    L = np.zeros(len(fit.columns))
    L[fit.columns.index("Intercept")] = 1.0
    out = [{"model": "all", "condition": "all", **_contrast_row(fit.contrast(L), fit.n)}]
    if per is not None and per in keep:
        cm = fit.cell_means([per])
        for r in cm.itertuples():
            n = float((z[per].astype(str) == str(getattr(r, per))).sum())
            out.append({"model": "all", "condition": str(getattr(r, per)), **_contrast_row(fit.contrast(r.L), n)})
    return out


def crossed_effects(cells: pd.DataFrame, factor: str, groups: list[str], used: list[str], level: str) -> list[dict]:
    """The concept-level variant (``inference: crossed``, ours, not the paper's): the d
    contrasts with the models *and* the items of ``level`` (3A/3D: the attribute pairs) as
    crossed random factors (:func:`fmat.stats.crossed.crossed_contrast`; Barr et al. 2013).

    ``Y[model, item]``: the within-sentence contrast averaged over the wordings.  ``all``: the
    grand mean of ``Y``, Satterthwaite df; per item: its mean over the models, df = models - 1.
    Rows as :func:`model_effects` (not per wording); none where a model lacks a cell."""
    keys = ["model", *used]
    m = cells.groupby(keys + [factor], observed=True)["y"].mean().unstack(factor)
    if groups[0] not in m or groups[1] not in m:
        return []
    z = (m[groups[0]] - m[groups[1]]).rename("z").reset_index()
    z["model"] = z["model"].astype(str)
    if level not in used:
        z[level] = "all"
    z[level] = z[level].astype(str)
    Y = z.groupby(["model", level], sort=False)["z"].mean().unstack(level)
    items = [lev for lev in _levels(cells[level].astype(str)) if lev in Y.columns] if level in used else ["all"]
    Y = Y[items]
    res = crossed_contrast(Y.dropna(axis=1).to_numpy(), random_items=len(items) > 1)
    out = [{"model": "all", "condition": "all", **_contrast_row(res, res["n"])}]
    if level in used:
        for lev in items:
            r = crossed_contrast(Y[[lev]].dropna().to_numpy(), random_items=False)
            out.append({"model": "all", "condition": lev, **_contrast_row(r, r["n"])})
    return out


def domain_crossed_effects(
    lpr: pd.DataFrame, forms: Mapping, sigma: float, groups: list[str], wording: pd.Series, order: Mapping[str, list[str]]
) -> tuple[list[dict], list[str]]:
    """The concept-level variant of 3B/3C (``inference: crossed``, ours, not the paper's): the
    phrases of each domain (``A_word`` of an ATTRIB group) random, crossed with the models.

    ``Z[model, phrase]``: the within-sentence contrast averaged over the wordings.  A form's d:
    ``crossed_contrast(Z, domain, {focal: 1, reference: -1})``.  ``all``: the j-th phrase of
    each form's focal (reference) group is one item, the mean of its forms' z; forms whose
    groups differ in size take every phrase as an item (weights +-1/forms), with a note, as a
    phrase a model lacks.  Returns rows as :func:`model_effects` and notes."""
    y = pd.DataFrame({c: lpr[c].astype(str).to_numpy() for c in ("model", "MASK", "ATTRIB", "A_word")})
    y = y.assign(wording=wording.to_numpy(), y=lpr["LPR"].to_numpy(dtype=float) / float(sigma))
    m = y.groupby(["model", "ATTRIB", "A_word", "wording", "MASK"], sort=False)["y"].mean().unstack("MASK")
    if groups[0] not in m or groups[1] not in m:
        return [], []
    z = (m[groups[0]] - m[groups[1]]).groupby(level=["model", "ATTRIB", "A_word"], sort=False).mean()
    Z = z.unstack(["ATTRIB", "A_word"])
    Z = Z.reindex(index=list(dict.fromkeys(y["model"])))
    notes: list[str] = []
    gone = [f"{a}: {w}" for a, w in Z.columns[Z.isna().any(axis=0)]]
    if gone:
        notes.append(f"inference: crossed left out {len(gone)} phrase(s) a model lacks: {', '.join(gone[:5])}")
    out: list[dict] = []
    pairs = {str(f): [str(p) for p in pair] for f, pair in forms.items()}
    for form, (focal, ref) in pairs.items():
        cols = [(g, w) for g in (focal, ref) for w in order.get(g, []) if (g, w) in Z.columns and not Z[(g, w)].isna().any()]
        res = crossed_contrast(Z[cols].to_numpy(), [g for g, _ in cols], {focal: 1.0, ref: -1.0})
        out.append({"model": "all", "condition": form, **_contrast_row(res, res["n"])})
    sizes = {(len(order.get(f, [])), len(order.get(r, []))) for f, r in pairs.values()}
    if len(sizes) == 1:
        k_f, k_r = sizes.pop()
        items, labels = {}, []
        for side, k, i in (("focal", k_f, 0), ("reference", k_r, 1)):
            for j in range(k):
                cols = [(pair[i], order[pair[i]][j]) for pair in pairs.values()]
                if all(c in Z.columns for c in cols):
                    items[f"{side}{j + 1}"] = Z[cols].mean(axis=1, skipna=False)
                    labels.append(side)
        Y = pd.DataFrame(items)
        keep = ~Y.isna().any(axis=0).to_numpy()
        res = crossed_contrast(
            Y.loc[:, keep].to_numpy(), np.asarray(labels, dtype=object)[keep], {"focal": 1.0, "reference": -1.0}
        )
    else:
        cols = [(g, w) for pair in pairs.values() for g in pair for w in order.get(g, []) if (g, w) in Z.columns]
        cols = [c for c in cols if not Z[c].isna().any()]
        weights = {}
        for f, r in pairs.values():
            weights[f] = weights.get(f, 0.0) + 1.0 / len(pairs)
            weights[r] = weights.get(r, 0.0) - 1.0 / len(pairs)
        res = crossed_contrast(Z[cols].to_numpy(), [g for g, _ in cols], weights)
        notes.append(
            "inference: crossed: the forms' groups differ in size, so the overall d takes every phrase as an item of its own"
        )
    out.insert(0, {"model": "all", "condition": "all", **_contrast_row(res, res["n"])})
    return out, notes


def calibrated_table(paper: list[dict], ours: list[dict], alpha: float = 0.05) -> pd.DataFrame:
    """Figure table ``calibrated``: per condition the d with the paper's p and 95% CI beside
    :func:`sentence_effects`' (``*_ours``), and whether each is significant at ``alpha``
    (``holds``: under both, or under neither)."""
    mine = {e["condition"]: e for e in ours}
    rows = []
    for e in paper:
        o = mine.get(e["condition"])
        if o is None or e["model"] != "all":
            continue
        theirs = {k: e[k] for k in ("d", "p", "ci_low", "ci_high")}
        mine_ = {f"{k}_ours": o[k] for k in ("p", "ci_low", "ci_high")}
        verdicts = {"significant": bool(e["p"] < alpha), "significant_ours": bool(o["p"] < alpha)}
        rows.append({"condition": e["condition"], **theirs, **mine_, **verdicts})
    out = pd.DataFrame(rows)
    if len(out):
        out["holds"] = out["significant"] == out["significant_ours"]
    return out


def per_model_d(cells: pd.DataFrame, factor: str, groups: list[str], others: list[str]) -> list[dict]:
    """d within each model: the mean over the cells of ``others`` of (mean y of the first group
    - mean y of the second group), the LMM's equal-weight contrast without a test."""
    rows = []
    for model, g in cells.groupby("model", observed=True, sort=False):
        keys = [f for f in others if f in g.columns]
        m = (
            g.groupby(keys + [factor], observed=True)["y"].mean().unstack(factor)
            if keys
            else g.groupby(factor, observed=True)["y"].mean().to_frame().T
        )
        if groups[0] not in m or groups[1] not in m:
            continue
        diff = (m[groups[0]] - m[groups[1]]).dropna()
        if len(diff):
            rows.append(
                {"model": model_slug(str(model)), "condition": "all", "d": float(diff.mean()), "n": float(g["y"].notna().sum())}
            )
    return rows


def _rows(study: str, fit, anova_tab: pd.DataFrame, factor: str, effects: list[dict]) -> pd.DataFrame:
    rows = []
    for r in anova_tab.itertuples():
        if r.condition == factor or r.condition.startswith(f"{factor}_x_"):
            f_test = {"value": r.F, "df": r.num_df, "df2": r.den_df, "p": r.p, "n": fit.n}
            rows.append({"study": study, "statistic": "F", "condition": r.condition, "model": "all", **f_test})
    for e in effects:
        if e["condition"].startswith("wording:"):
            continue  # not in the condition vocabulary: figure table only
        base = {"study": study, "condition": e["condition"], "model": e["model"], "n": e.get("n")}
        if e["model"] == "all":
            test = {k: e[k] for k in ("df", "p")}
            rows.append(
                {**base, **test, "statistic": "d", "value": e["d"], "se": e["se"], "ci_low": e["ci_low"], "ci_high": e["ci_high"]}
            )
            rows.append({**base, **test, "statistic": "t", "value": e["t"]})
        else:
            rows.append({**base, "statistic": "d", "value": e["d"]})
    for stat, val in (("R2m", fit.r2m), ("R2c", fit.r2c)):
        rows.append({"study": study, "statistic": stat, "condition": "all", "model": "all", "value": val, "n": fit.n})
    return results_frame(rows)


def _effects_table(effects: list[dict]) -> pd.DataFrame:
    cols = ["model", "condition", "d", "se", "t", "df", "p", "ci_low", "ci_high", "n"]
    df = pd.DataFrame(effects).reindex(columns=cols)
    for c in cols[2:]:
        df[c] = pd.to_numeric(df[c]).astype(float)
    return df


def _notes(fit, cells: pd.DataFrame, dropped: int) -> list[str]:
    notes = [
        f"LMM {fit.formula} (random intercept per model): N = {fit.n}, {fit.n_groups} models, "
        f"tau^2 = {fit.var_group:.4g}, sigma^2 = {fit.var_resid:.4g}"
    ]
    if dropped:
        notes.append(f"{dropped} row(s) with a missing LPR dropped (out-of-vocabulary [MASK] word)")
    if fit.singular:
        notes.append("singular fit: the random-intercept variance is ~0 (estimates equal OLS)")
    return notes


def _check_inference(inference: str, where: str) -> None:
    if inference not in INFERENCE:
        raise InputError(
            f"unknown inference {inference!r}",
            where=where,
            fix="use 'paper' (the paper's model), 'sentence' (one observation per sentence: calibrated) or "
            "'crossed' (the items random, crossed with the models: the concept-level test)",
        )


# --------------------------------------------------------------------------- 3A / 3D
def pair_index(data: AnalysisInput, lpr: pd.DataFrame, attrib_contrast, where: str) -> dict:
    """Map each attribute-pair label of the LPR table (``"a_j - b_j"``) to ``pair<j>``, j in the
    study file's order (from the study's query table when there is one, else the LPR's)."""
    labels = _levels(lpr["A_word"])
    q = getattr(data.study, "queries", None)
    order: list[str] = []
    if isinstance(q, pd.DataFrame) and {"ATTRIB", "A_word"} <= set(q.columns):
        groups = [str(g) for g in (attrib_contrast or _levels(q["ATTRIB"])[:2])]
        sides = []
        for g in groups:
            sub = q[q["ATTRIB"].astype(str) == g]
            if "A_pair" in sub.columns and isinstance(sub["A_pair"].dtype, pd.CategoricalDtype):
                sub = sub.sort_values("A_pair", kind="stable")
            sides.append(list(dict.fromkeys(sub["A_word"].astype(str))))
        if len(sides) == 2 and len(sides[0]) == len(sides[1]) and sides[0]:
            order = [f"{x} - {y}" for x, y in zip(*sides)]
    if not order or not set(labels) <= set(order):
        order = labels
    return {lab: f"pair{j + 1}" for j, lab in enumerate(order) if lab in set(labels)}


def _fit_and_report(
    data: AnalysisInput,
    cells: pd.DataFrame,
    name: str,
    groups: list[str],
    level: str,
    anova: str,
    inference: str = "paper",
    crossed: tuple[list[dict], list[str]] | None = None,
) -> AnalysisOutput:
    """What 3A/3D (``level`` = "pair") and 3B/3C (``level`` = "form") share once their cells are
    built: fit ``y ~ mask * wording * level`` (non-finite y dropped) and report."""
    dropped = int((~np.isfinite(cells["y"])).sum())
    cells = cells[np.isfinite(cells["y"])].reset_index(drop=True)
    fit, used, tab = fit_factorial(cells, name, groups, ["wording", level], anova)
    effects = model_effects(fit, name, groups, level if level in used else None, "wording" in used)
    notes = _notes(fit, cells, dropped)
    calibrated = sentence_effects(cells, name, groups, used, level if level in used else None)
    side_by_side = calibrated_table(effects, calibrated)
    if inference == "crossed":
        mine, more = crossed if crossed is not None else (crossed_effects(cells, name, groups, used, level), [])
        by_cond = {e["condition"]: e for e in mine}
        effects = [by_cond[e["condition"]] for e in effects if e["condition"] in by_cond]
        items = "attribute pairs" if level == "pair" else "phrases of each domain"
        notes.append(
            f"inference: crossed (ours, not the paper's): d, t, p and CI with the models and the "
            f"{items} as crossed random factors (the concept-level test: "
            "fmat.stats.crossed, docs/calibration.md); F rows are the paper's model's"
        )
        notes += more
    if inference == "sentence":
        by_cond = {e["condition"]: e for e in calibrated}
        effects = [by_cond.get(e["condition"], e) for e in effects if not e["condition"].startswith("wording:")]
        notes.append(
            "inference: sentence (ours, not the paper's): d, t, p and CI from one observation per model x sentence "
            "(the within-sentence contrast of the two [MASK] groups); F rows are the paper's model's"
        )
    effects += per_model_d(cells, name, groups, used)
    return AnalysisOutput(
        stats=_rows(_study_id(data), fit, tab, name, effects),
        figures={
            "effects": _effects_table(effects),
            "anova": tab,
            "cells": cells.assign(model=cells["model"].map(model_slug), **{level: cells[level].astype(str)}),
            "calibrated": side_by_side,
        },
        notes=notes,
    )


def _rewhere(err: InputError, where: str) -> InputError:
    """``err`` with its ``analysis.options...`` place under ``where`` (the study file's)."""
    at = str(err.where or "")
    i = at.find("analysis.options")
    at = where + at[i + len("analysis.options") :] if i >= 0 else where
    return InputError(err.message, where=at, fix=err.fix)


def _check_mask(options: Mapping, lpr: pd.DataFrame, where: str) -> list[str]:
    groups = mask_groups(lpr, options.get("mask_contrast"), f"{where}.mask_contrast")
    sub = lpr[lpr["MASK"].astype(str).isin(groups)]
    wording_of(sub["M_word"], options.get("mask_wordings"), groups, f"{where}.mask_wordings")
    return groups


def _paired_label(lpr: pd.DataFrame, attrib_contrast, where: str, where_paired: str, design: bool = False) -> str | None:
    """The ``attrib_contrast`` label (``"Career - Family"``) of an attribute-paired LPR table,
    ``None`` without the option; an InputError where the table (``design``: the one the design
    will have) lacks it or is not paired."""
    fix = "make the LPR with lpr: {mask_pair: false, attrib_pair: true}"
    found = _levels(lpr["ATTRIB"])
    if attrib_contrast:
        label = f"{attrib_contrast[0]} - {attrib_contrast[1]}"
        if label not in found:
            raise InputError(
                f"the LPR table {'will have' if design else 'has'} ATTRIB {found}, not the paired {label!r}",
                where=where,
                fix=fix + (", the two groups in the queries' ATTRIB order" if design else ""),
            )
        return label
    if any(" - " not in a for a in found):
        raise InputError(
            f"the LPR table {'will not be' if design else 'is not'} attribute-paired",
            where=where_paired,
            fix=fix + (", or use stereotype_domains" if design else ""),
        )
    return None


def check_pairs(options: Mapping, queries: pd.DataFrame, where: str, *, lpr: pd.DataFrame | None = None) -> None:
    """``stereotype_pairs``' options against the LPR table the design will have
    (:func:`fmat.analyses.design_lpr`): attribute-paired with the ``attrib_contrast`` label,
    the ``mask_contrast`` groups among its MASK groups, each of their words in a ``mask_wordings`` pair."""
    if lpr is None:
        return
    try:
        _paired_label(lpr, options.get("attrib_contrast"), f"{where}.attrib_contrast", f"{where}.attrib_contrast", design=True)
        _check_mask(options, lpr, where)
    except InputError as err:
        raise _rewhere(err, where) from None


def check_domains(options: Mapping, queries: pd.DataFrame, where: str, *, lpr: pd.DataFrame | None = None) -> None:
    """``stereotype_domains``' options against the LPR table the design will have: the ``forms``
    name ATTRIB groups of an unpaired table, ``mask_contrast`` and ``mask_wordings`` as :func:`check_pairs`."""
    if lpr is None:
        return
    try:
        forms = options.get("forms")
        groups = set(_levels(lpr["ATTRIB"]))
        for form, pair in forms.items() if isinstance(forms, Mapping) else []:
            pair = [str(p) for p in pair] if isinstance(pair, list) else [str(pair)]
            if len(pair) != 2 or not set(pair) <= groups:
                raise InputError(
                    f"form {form!r}: {pair} must be two ATTRIB groups of the LPR table ({sorted(groups)})",
                    where=f"{where}.forms.{form}",
                    fix="make the LPR with lpr: {attrib_pair: false} and name ATTRIB groups of the queries",
                )
        _check_mask(options, lpr, where)
    except InputError as err:
        raise _rewhere(err, where) from None


@register("stereotype_pairs", check=check_pairs, items=("M_word", "A_word"), needs=("MASK", "M_word", "ATTRIB", "A_word"))
def stereotype_pairs(
    data: AnalysisInput,
    *,
    sigma: float = LPR_SIGMA,
    mask_contrast=None,
    mask_wordings=None,
    attrib_contrast=None,
    factor: str | None = None,
    anova: Literal["sequential", "marginal"] = "sequential",
    inference: Inference = "paper",
) -> AnalysisOutput:
    """Studies 3A/3D: LMM ``y ~ mask * wording * pair`` of the attribute-paired LPR / sigma.

    Options (study file ``analysis.options``; docs/analyses-3-4.md): ``sigma`` (default
    LPR_SIGMA = √2), ``mask_contrast`` (d = first minus second MASK group), ``mask_wordings``,
    ``attrib_contrast`` (the paired ATTRIB label's groups), ``factor`` (default: gender, race...
    by groups), ``anova`` (sequential or marginal), ``inference`` ("sentence":
    :func:`sentence_effects`; "crossed": :func:`crossed_effects`).
    """
    _check_inference(inference, _where(data, "inference"))
    where = _where(data, "mask_contrast")
    lpr = data.lpr
    _need(lpr, ["model", "MASK", "M_word", "ATTRIB", "A_word", "LPR"], where="data.lpr (stereotype_pairs)")
    label = _paired_label(lpr, attrib_contrast, _where(data, "attrib_contrast"), "data.lpr (stereotype_pairs)")
    if label is not None:
        lpr = lpr[lpr["ATTRIB"].astype(str) == label]
    groups = mask_groups(lpr, mask_contrast, where)
    name = factor_name(groups, factor)
    lpr = lpr[lpr["MASK"].astype(str).isin(groups)]
    pairs = pair_index(data, lpr, attrib_contrast, where)
    cells = pd.DataFrame(
        {
            "model": lpr["model"].astype(str).to_numpy(),
            name: lpr["MASK"].astype(str).to_numpy(),
            "wording": wording_of(lpr["M_word"], mask_wordings, groups, _where(data, "mask_wordings")).to_numpy(),
            "pair": lpr["A_word"].astype(str).map(pairs).to_numpy(),
            "y": lpr["LPR"].to_numpy(dtype=float) / float(sigma),
        }
    )
    cells["pair"] = pd.Categorical(cells["pair"], categories=list(dict.fromkeys(pairs.values())))
    return _fit_and_report(data, cells, name, groups, "pair", anova, inference)


# --------------------------------------------------------------------------- 3B / 3C
def domain_cells(lpr: pd.DataFrame, forms: Mapping, sigma: float, where: str) -> pd.DataFrame:
    """Per model, [MASK] word and form: mean(y of the focal group's items) - mean(y of the
    reference group's items), y = LPR / sigma (items with a missing LPR are left out of the
    means).  Columns model, MASK, M_word, form, y."""
    groups = set(_levels(lpr["ATTRIB"]))
    rows = []
    y = lpr.assign(y=lpr["LPR"].to_numpy(dtype=float) / float(sigma))
    keys = ["model", "MASK", "M_word"]
    y = y.astype({c: str for c in [*keys, "ATTRIB"]})
    means = y.groupby(keys + ["ATTRIB"], sort=False)["y"].mean().unstack("ATTRIB")
    for form, pair in forms.items():
        pair = [str(p) for p in pair]
        if len(pair) != 2 or not set(pair) <= groups:
            raise InputError(
                f"form {form!r}: {pair} must be two ATTRIB groups of the LPR table ({sorted(groups)})",
                where=where,
                fix="write forms: {interest: [MathInterest, ArtsInterest], ...} and make the LPR with attrib_pair: false",
            )
        diff = (means[pair[0]] - means[pair[1]]).rename("y").reset_index()
        rows.append(diff.assign(form=str(form)))
    return pd.concat(rows, ignore_index=True)


@register("stereotype_domains", check=check_domains, items=("M_word", "A_word"), needs=("MASK", "M_word", "ATTRIB"))
def stereotype_domains(
    data: AnalysisInput,
    *,
    sigma: float = LPR_SIGMA,
    mask_contrast=None,
    mask_wordings=None,
    forms: Mapping | None = None,
    factor: str | None = None,
    anova: Literal["sequential", "marginal"] = "sequential",
    inference: DomainInference = "paper",
) -> AnalysisOutput:
    """Studies 3B/3C: LMM ``y ~ mask * wording * form`` of (focal - reference domain) mean
    LPR / sigma.

    Options as :func:`stereotype_pairs`, and ``forms: {interest: [MathInterest, ArtsInterest],
    ...}`` (form name, the per-form condition -> [focal, reference] ATTRIB groups); "crossed":
    :func:`domain_crossed_effects`.
    """
    _check_inference(inference, _where(data, "inference"))
    where = _where(data, "forms")
    lpr = data.lpr
    _need(lpr, ["model", "MASK", "M_word", "ATTRIB", "LPR"], where="data.lpr (stereotype_domains)")
    if not forms:
        raise InputError(
            "stereotype_domains needs forms",
            where=where,
            fix="write forms: {interest: [MathInterest, ArtsInterest], talent: [MathTalent, ArtsTalent]}",
        )
    groups = mask_groups(lpr, mask_contrast, _where(data, "mask_contrast"))
    name = factor_name(groups, factor)
    lpr = lpr[lpr["MASK"].astype(str).isin(groups)]
    cells = domain_cells(lpr, forms, sigma, where)
    cells = cells.rename(columns={"MASK": name})
    cells["wording"] = wording_of(cells["M_word"], mask_wordings, groups, _where(data, "mask_wordings")).to_numpy()
    cells["form"] = pd.Categorical(cells["form"], categories=[str(f) for f in forms])
    crossed = None
    if inference == "crossed":
        _need(lpr, ["A_word"], where="data.lpr (stereotype_domains, inference: crossed)")
        wording = wording_of(lpr["M_word"], mask_wordings, groups, _where(data, "mask_wordings"))
        crossed = domain_crossed_effects(lpr, forms, sigma, groups, wording, phrase_order(data, lpr))
    return _fit_and_report(data, cells, name, groups, "form", anova, inference, crossed)


def phrase_order(data: AnalysisInput, lpr: pd.DataFrame) -> dict[str, list[str]]:
    """Each ATTRIB group's phrases (``A_word``) in the study file's order (its query table when
    there is one, else the LPR table's order of appearance)."""
    q = getattr(data.study, "queries", None)
    src = q if isinstance(q, pd.DataFrame) and {"ATTRIB", "A_word"} <= set(q.columns) else lpr
    return {g: list(dict.fromkeys(src.loc[src["ATTRIB"].astype(str) == g, "A_word"].astype(str))) for g in _levels(src["ATTRIB"])}
