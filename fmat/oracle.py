"""An independent oracle of the realised truth of a planted world (docs/planting.md, "The oracle").

For a study file and a plant (:class:`fmat.plant.Plant`), :func:`oracle` gives the exact value
that each statistic with a closed form in the planted log probabilities takes in that world,
for these items and these models: every d (overall, per attribute pair, per form, per
relation and perceiver, their average and personal - societal difference, per model), the
slope b of the yearly d on year / 100 and its standardized beta, the century contrasts, and
r of the FMAT score with a criterion. It is what the workflow must compute from the planted
scores (``fmat.plant.planted_scores``) to the last digit, and, for a world with item and model
variation, the *realised* value that a recovery's confidence interval has to cover (the
nominal planted size is the value only where those variations are zero).

Independence is the point: this module reads the study file's YAML itself (its templates,
groups and words, in the file's order; its ``analysis.options``), plants with
:func:`fmat.plant.planted_logp` on that raw table, and computes each statistic by plain
arithmetic (means, differences, standard deviations, an OLS slope, a Pearson r). It imports
neither the analyses (:mod:`fmat.analyses`), nor the LPR stage
(:mod:`fmat.lpr`, :mod:`fmat.pipeline`), nor the query design (:mod:`fmat.design`,
:mod:`fmat.study`): a mislabelled group, a pair joined in the wrong order or a forgotten
division there changes the workflow's number and not this one
(``tests/test_oracle.py`` checks the import rule).

Notes
-----
Notation: ``lp(w | c, m)`` is the planted natural log probability of [MASK] word ``w`` in
context ``c`` (a template with its TARGET and ATTRIB filled) for model ``m``; ``sigma`` is
the study's ``analysis.options.sigma`` (default sqrt 2, as the analyses'); a contrast the
options do not name is the first two groups of the slot in the file's order; means are plain means over every
model, template, word and item of the study file (all designs here are balanced, so the
mixed models' estimated marginal means equal these means).

``stereotype_pairs`` (3A, 3D, X1, N0): with ``A_j``, ``B_j`` the j-th phrases of the two
``attrib_contrast`` groups, ``y(m, q, w, j) = (lp(w | q, A_j) - lp(w | q, B_j)) / sigma``;
``d = mean y over the first mask_contrast group's words - mean y over the second's``
(condition ``all``), the same within pair j (``pairj``) and within model m (model = slug).

``stereotype_domains`` (3B, 3C): ``y(m, w, g) = mean over the phrases p of ATTRIB group g of
lp(w | p) / sigma``; per form ``f = [focal, reference]``: ``x(m, w, f) = y(m, w, focal) -
y(m, w, reference)``; ``d(f) = mean x over the first [MASK] group's words - mean over the
second's``; ``d(all) = mean over the forms of d(f)``; per model the same within m.

``attitude_weat`` (2A-2D): ``LPR(m, q, r, t) = lp(pos_r | q, t) - lp(neg_r | q, t)`` for
relation ``r = [pos, neg]``; within (m, q, r) ``z = LPR / SD`` (SD with ddof = 1 over the
words of both ``target_contrast`` categories: of the planted LPRs, or, given the ``scores``
the analysis is run on, of those scores' LPRs, the scale a pooled-SD d is measured on);
``d(r, q) = mean over m of (mean z of category
1 - mean z of category 2)``; ``d(r, average) = (d(r, q1) + d(r, q2)) / 2``;
``d(r, q1-q2) = d(r, q1) - d(r, q2)``.

``change_over_time`` (4A-4D): ``LPR(m, year, k) = lp(year | k, G1) - lp(year | k, G2)`` for
the paired TARGET (or ATTRIB) groups' j-th words ``G1_j, G2_j`` and template ``k``;
``d(m, year) = mean over the averaged level of LPR / sigma``; ``b`` = the OLS slope of d on
``year / year_scale`` over all models and years (with every model holding every year the
random-intercept LMM's slope equals it); ``beta = b * SD(year / year_scale) / SD(d)``
(ddof = 1 both); per model the OLS slope within m; century contrast ``[a, b]``: ``mean over
m of d(m, a) - d(m, b)``.

``factual_wefat`` / ``factual_names`` (1A-1C): ``LPR(m, q, i) = lp(male word | q, i) - lp(female
word | q, i)``; ``z`` = LPR standardized (mean 0, SD 1 with ddof = 1) over the items within
(m, q); FMAT score of item i = mean z over m and q; ``r`` = Pearson r of the FMAT score with
% male (``fmat~pct_male``) and with WEFAT (``fmat~wefat``) over the items both criterion
tables hold; per template q (``fmat~pct_male:Q<k>``, k in the file's template order) the z
averaged over the models; per model (model = slug) the z averaged over the templates, and
per model and template the z itself.

Degrees of freedom (column ``df``, where the row has a test): a Pearson r and a per-model OLS
slope ``n - 2``; a mixed model's term that varies within the models (nlme's level-1 df) ``N -
M - k``, with ``N`` the modelled rows, ``M`` the models and ``k`` the fixed effects beside the
intercept (the full factorial's cells - 1: 3A ``2 x 2 x 9 - 1 = 35``; 2A ``2 x 2 x 2 - 1 = 7``;
the slope on year ``1``); a pairwise century contrast ``M - 1``.

What has no closed form here is not given: t, F, p, SEs, R2 (they depend on the mixed
model's variance estimates); :func:`oracle` gives each d the sign its t must have, and the
checking test asks that of the t rows.
"""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import yaml

from fmat.errors import InputError
from fmat.plant import Plant, SimpleStudy, planted_logp, world_rows
from fmat.results import model_slug

#: the slots of a study file and the query-table column of each slot's word
SLOTS = {"MASK": "M_word", "TARGET": "T_word", "ATTRIB": "A_word"}
#: default population SD of an LPR where a study file gives no ``sigma`` (the analyses'
#: default: sqrt 2; the paper prints 1.414, which the study files state)
SIGMA = math.sqrt(2.0)
#: the columns of :func:`oracle`'s table
ORACLE_COLUMNS = ["study", "statistic", "condition", "model", "value", "df"]


# ----------------------------------------------------------------------------- the study file, read raw
def read_study_file(path: str | os.PathLike) -> dict:
    """The study file's YAML as a mapping (no schema check: the workflow checks study files)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise InputError(f"cannot read the study file: {err}", where=str(path), fix="give a readable YAML study file") from err
    if not isinstance(data, dict) or "queries" not in data:
        raise InputError("not a study file (no queries key)", where=str(path), fix="give a study file (docs/study-files.md)")
    return data


def _words(spec, criteria: Mapping[str, pd.DataFrame] | None, where: str) -> list[tuple[str, str]]:
    """(word, item key) of one group's word list as written."""
    if isinstance(spec, dict) and "range" in spec:
        a, b = spec["range"]
        return [(str(y), str(y)) for y in range(int(a), int(b) + 1)]
    if isinstance(spec, dict) and "criterion" in spec:
        table = (criteria or {}).get(str(spec["criterion"]))
        if table is None:
            raise InputError(
                f"the word list reads criterion table {spec['criterion']!r}, which was not given",
                where=where,
                fix="pass the criterion tables (criteria=) to the oracle",
            )
        return [(str(w), str(w)) for w in table[str(spec["column"])].tolist()]
    if not isinstance(spec, list):
        spec = [spec]
    out = []
    for w in spec:
        if isinstance(w, dict):
            out.append((str(w["phrase"]), str(w.get("item", w["phrase"]))))
        else:
            out.append((str(w), str(w)))
    return out


def raw_queries(data: Mapping, criteria: Mapping[str, pd.DataFrame] | None = None) -> SimpleStudy:
    """The study's rows from its YAML words: one per template x MASK word x TARGET word x
    ATTRIB word, with each word's group, its position in the group (``M_pos``, ``T_pos``,
    ``A_pos``) and item key; ``items`` maps phrases to item keys (for ``per_item`` plants)."""
    rows, items = [], []
    for k, entry in enumerate(data["queries"]):
        templates = entry["query"] if isinstance(entry["query"], list) else [entry["query"]]
        slots = {}
        for slot in SLOTS:
            if slot in entry:
                slots[slot] = [
                    (g, pos, w, item)
                    for g, spec in entry[slot].items()
                    for pos, (w, item) in enumerate(_words(spec, criteria, f"queries[{k}].{slot}.{g}"))
                ]
                items += [(slot, w, item) for _, _, w, item in slots[slot]]
        for template in templates:
            for combo in itertools.product(*slots.values()):
                row = {"query": str(template)}
                for slot, (g, pos, w, item) in zip(slots, combo):
                    c = SLOTS[slot]
                    row.update({slot: str(g), c: w, c[0] + "_pos": pos, c[0] + "_item": item})
                rows.append(row)
    q = pd.DataFrame(rows)
    it = pd.DataFrame(items, columns=["slot", "word", "item"]).drop_duplicates(["slot", "word"])
    return SimpleStudy(str(data["id"]), q, it)


def planted_table(
    data: Mapping, plant: Plant, models: Sequence[str], criteria: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """The raw rows (:func:`raw_queries`) for every model, with ``lp`` = the planted log
    probability (:func:`fmat.plant.planted_logp`) and ``model``."""
    study = raw_queries(data, criteria)
    rows = world_rows(study, plant, criteria)  # the model-free parts, once for all models
    parts = [study.queries.assign(model=str(m), lp=planted_logp(study, plant, str(m), criteria, rows)) for m in models]
    return pd.concat(parts, ignore_index=True)


# ----------------------------------------------------------------------------- the statistics
def _row(sid, statistic, condition, model, value, df=np.nan) -> dict:
    return {"study": sid, "statistic": statistic, "condition": condition, "model": model, "value": float(value), "df": float(df)}


def _lmm_df(n: int, models: int, within: int) -> int:
    """nlme's level-1 df of a term that varies within the models: N - M - (fixed effects that
    vary within the models)."""
    return int(n - models - within)


def _first_two(t: pd.DataFrame, slot: str, named) -> tuple[str, str]:
    """The contrast an option names, else the slot's first two groups in the file's order."""
    a, b = [str(g) for g in (named or list(dict.fromkeys(t[slot]))[:2])]
    return a, b


def _stereotype_pairs(sid: str, t: pd.DataFrame, opts: Mapping) -> list[dict]:
    sigma = float(opts.get("sigma", SIGMA))
    ga, gb = _first_two(t, "MASK", opts.get("mask_contrast"))
    aa, ab = _first_two(t, "ATTRIB", opts.get("attrib_contrast"))
    keys = ["model", "query", "MASK", "M_word", "A_pos"]
    first = t[t["ATTRIB"] == aa].set_index(keys)["lp"]
    second = t[t["ATTRIB"] == ab].set_index(keys)["lp"]
    y = ((first - second.reindex(first.index)) / sigma).rename("y").reset_index()

    def d(sub):
        return sub.loc[sub["MASK"] == ga, "y"].mean() - sub.loc[sub["MASK"] == gb, "y"].mean()

    y = y[y["MASK"].isin([ga, gb])]
    cells = 2 * max(1, len(opts.get("mask_wordings") or [])) * y["A_pos"].nunique()
    df = _lmm_df(len(y), y["model"].nunique(), cells - 1)
    rows = [_row(sid, "d", "all", "all", d(y), df)]
    rows += [_row(sid, "d", f"pair{j + 1}", "all", d(g), df) for j, g in sorted(y.groupby("A_pos"), key=lambda kv: kv[0])]
    rows += [_row(sid, "d", "all", model_slug(m), d(g)) for m, g in y.groupby("model", sort=False)]
    return rows


def _stereotype_domains(sid: str, t: pd.DataFrame, opts: Mapping) -> list[dict]:
    sigma = float(opts.get("sigma", SIGMA))
    ga, gb = _first_two(t, "MASK", opts.get("mask_contrast"))
    y = t.assign(y=t["lp"] / sigma).groupby(["model", "MASK", "M_word", "ATTRIB"], sort=False)["y"].mean()
    forms = {}
    for form, (focal, ref) in opts["forms"].items():
        x = (y.xs(str(focal), level="ATTRIB") - y.xs(str(ref), level="ATTRIB")).rename("x").reset_index()
        forms[str(form)] = x

    def d(x):
        return x.loc[x["MASK"] == ga, "x"].mean() - x.loc[x["MASK"] == gb, "x"].mean()

    n = sum(int(x["MASK"].isin([ga, gb]).sum()) for x in forms.values())
    cells = 2 * max(1, len(opts.get("mask_wordings") or [])) * len(forms)
    df = _lmm_df(n, t["model"].nunique(), cells - 1)
    rows = [_row(sid, "d", f, "all", d(x), df) for f, x in forms.items()]
    rows.append(_row(sid, "d", "all", "all", np.mean([d(x) for x in forms.values()]), df))
    for m in dict.fromkeys(t["model"]):
        rows.append(_row(sid, "d", "all", model_slug(m), np.mean([d(x[x["model"] == m]) for x in forms.values()])))
    return rows


def _sample_sd(scores: pd.DataFrame | None, opts: Mapping) -> dict | None:
    """The SD (ddof 1) of the observed LPRs per (model, template, relation) over the items of
    both contrasted categories: the scale a pooled-SD d divides by (``None`` without scores, or
    for ``effect_size`` other than ``pooled_sd``)."""
    if scores is None or str(opts.get("effect_size", "pooled_sd")) != "pooled_sd":
        return None
    c1, c2 = (str(c) for c in opts["target_contrast"])
    s = scores[scores["TARGET"].astype(str).isin([c1, c2])].assign(
        lp=np.log(pd.to_numeric(scores["prob"], errors="coerce")),
        **{c: scores[c].astype(str) for c in ("model", "query", "TARGET", "T_word", "M_word")},
    )
    lp = s.set_index(["model", "query", "TARGET", "T_word", "M_word"])["lp"]
    out = {}
    for rel, (pos, neg) in opts["relations"].items():
        lpr = (lp.xs(str(pos), level="M_word") - lp.xs(str(neg), level="M_word")).rename("lpr").reset_index()
        for (m, q), g in lpr.groupby(["model", "query"], sort=False):
            out[(str(m), str(q), str(rel))] = float(g["lpr"].std(ddof=1))
    return out


def _attitude(sid: str, t: pd.DataFrame, opts: Mapping, scores: pd.DataFrame | None = None) -> list[dict]:
    c1, c2 = (str(c) for c in opts["target_contrast"])
    t = t[t["TARGET"].isin([c1, c2])]
    lp = t.set_index(["model", "query", "TARGET", "T_word", "M_word"])["lp"]
    sample_sd = _sample_sd(scores, opts)
    rows = []
    perceivers = {str(name): str(q) for name, q in opts["perceivers"].items()}
    n_items = t.drop_duplicates(["TARGET", "T_word"]).shape[0]
    n = t["model"].nunique() * len(perceivers) * len(opts["relations"]) * n_items
    df = _lmm_df(n, t["model"].nunique(), 2 * len(perceivers) * len(opts["relations"]) - 1)
    for rel, (pos, neg) in opts["relations"].items():
        lpr = (lp.xs(str(pos), level="M_word") - lp.xs(str(neg), level="M_word")).rename("lpr").reset_index()
        ds = {}
        for name, q in perceivers.items():
            per_model = []
            for m, g in lpr[lpr["query"] == q].groupby("model", sort=False):
                # pooled-SD d: the planted LPRs in units of the SD of the LPRs the analysis sees
                # (the observed scores' SD when given: docs/calibration.md, "Why 2A and 4A missed")
                sd = g["lpr"].std(ddof=1) if sample_sd is None else sample_sd[(str(m), str(q), str(rel))]
                z = g["lpr"] / sd
                per_model.append(z[g["TARGET"] == c1].mean() - z[g["TARGET"] == c2].mean())
            ds[name] = float(np.mean(per_model))
            rows.append(_row(sid, "d", f"{rel}:{name}", "all", ds[name], df))
        names = list(perceivers)
        if len(names) == 2:
            rows.append(_row(sid, "d", f"{rel}:average", "all", (ds[names[0]] + ds[names[1]]) / 2, df))
            rows.append(_row(sid, "d", f"{rel}:{names[0]}-{names[1]}", "all", ds[names[0]] - ds[names[1]], df))
    return rows


def _change(sid: str, data: Mapping, t: pd.DataFrame, opts: Mapping) -> list[dict]:
    sigma = float(opts.get("sigma", SIGMA))
    scale = float(opts.get("year_scale", 100))
    pairing = dict(data.get("lpr") or {})
    slot = "TARGET" if "TARGET" in t.columns and pairing.get("target_pair", True) else "ATTRIB"
    pos = SLOTS[slot][0] + "_pos"
    g1, g2 = _first_two(t, slot, None)  # the paired groups: the file's first minus its second
    keys = ["model", "query", "M_word", pos]
    lpr = t[t[slot] == g1].set_index(keys)["lp"] - t[t[slot] == g2].set_index(keys)["lp"]
    d = (lpr / sigma).groupby(level=["model", "M_word"], sort=False).mean().rename("d").reset_index()
    d["x"] = d["M_word"].astype(float) / scale

    def slope(g):
        x, y = g["x"].to_numpy(), g["d"].to_numpy()
        return float(((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum())

    b = slope(d)
    models = d["model"].nunique()
    rows = [
        _row(sid, "b", "year", "all", b, _lmm_df(len(d), models, 1)),
        _row(sid, "beta", "year", "all", b * d["x"].std(ddof=1) / d["d"].std(ddof=1)),
    ]
    rows += [_row(sid, "b", "year", model_slug(m), slope(g), len(g) - 2) for m, g in d.groupby("model", sort=False)]
    by_year = d.assign(year=d["M_word"].astype(int)).pivot(index="model", columns="year", values="d")
    for a, c in opts.get("century_contrasts") or []:
        rows.append(_row(sid, "d", f"{int(a)}vs{int(c)}", "all", (by_year[int(a)] - by_year[int(c)]).mean(), models - 1))
    return rows


def _factual(sid: str, t: pd.DataFrame, opts: Mapping, criteria: Mapping[str, pd.DataFrame] | None) -> list[dict]:
    columns = {}  # criterion name in the conditions -> {item: value}
    for key, var in (("criterion", "pct_male"), ("wefat", "wefat")):
        spec = opts.get(key)
        table = (criteria or {}).get(str(spec["table"])) if spec else None
        if table is not None:
            item = str(spec.get("item", "item"))
            columns[var] = dict(zip(table[item].astype(str), pd.to_numeric(table[str(spec["column"])])))
    if "pct_male" not in columns:
        return []
    male, female = list(dict.fromkeys(t["MASK"]))[:2]
    keys = ["model", "query", "T_item"]
    lpr = (t[t["MASK"] == male].set_index(keys)["lp"] - t[t["MASK"] == female].set_index(keys)["lp"]).rename("lpr")
    lpr = lpr.reset_index()
    g = lpr.groupby(["model", "query"], sort=False)["lpr"]
    lpr["z"] = (lpr["lpr"] - g.transform("mean")) / g.transform(lambda s: s.std(ddof=1))
    for crit in columns.values():
        lpr = lpr[lpr["T_item"].isin(crit)]
    qnum = {q: f"Q{k + 1}" for k, q in enumerate(dict.fromkeys(t["query"]))}

    def r(sub, var):
        s = sub.groupby("T_item", sort=False)["z"].mean()
        c = s.index.map(columns[var]).to_numpy(dtype=float)
        return float(np.corrcoef(s.to_numpy(dtype=float), c)[0, 1]), len(s) - 2

    rows = []
    for var in columns:
        rows.append(_row(sid, "r", f"fmat~{var}", "all", *r(lpr, var)))
        rows += [_row(sid, "r", f"fmat~{var}:{qnum[q]}", "all", *r(g, var)) for q, g in lpr.groupby("query", sort=False)]
        for m, g in lpr.groupby("model", sort=False):
            rows.append(_row(sid, "r", f"fmat~{var}", model_slug(m), *r(g, var)))
            rows += [
                _row(sid, "r", f"fmat~{var}:{qnum[q]}", model_slug(m), *r(h, var)) for q, h in g.groupby("query", sort=False)
            ]
    return rows


def oracle(
    study_path: str | os.PathLike,
    plant: Plant,
    models: Sequence[str],
    criteria: Mapping[str, pd.DataFrame] | None = None,
    scores: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The exact value of every statistic with a closed form (module Notes) that the study's
    analysis reports, in the world ``plant`` for ``models``.

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
        The scores the analysis is run on (``fmat.run`` output: ``model``, ``query``, the slot
        columns, ``prob``). A pooled-SD d (``attitude_weat`` with ``effect_size: pooled_sd``)
        divides by the SD of the LPRs it sees, so with scores its realised value is the planted
        LPRs in units of the SD of these scores' LPRs (per model, template and relation): the
        definition of ``fmat.calibration.on_the_sample_scale``, computed here
        without the analysis' code. Without scores, the SD of the planted LPRs.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ORACLE_COLUMNS` (results-table keys and the value); empty for an
        analysis without closed forms here (e.g. LPBS scores, whose priors the world does not plant).
    """
    data = read_study_file(study_path)
    spec = dict(data.get("analysis") or {})
    name, opts = str(spec.get("name", "")), dict(spec.get("options") or {})
    sid = str(data["id"])
    if str(dict(data.get("score") or {}).get("method", "fmat")) != "fmat":
        return pd.DataFrame(columns=ORACLE_COLUMNS)
    t = planted_table(data, plant, models, criteria)
    if name == "stereotype_pairs":
        rows = _stereotype_pairs(sid, t, opts)
    elif name == "stereotype_domains":
        rows = _stereotype_domains(sid, t, opts)
    elif name == "attitude_weat":
        rows = _attitude(sid, t, opts, scores)
    elif name == "change_over_time":
        rows = _change(sid, data, t, opts)
    elif name in ("factual_wefat", "factual_names"):
        rows = _factual(sid, t, opts, criteria)
    else:
        rows = []
    return pd.DataFrame(rows, columns=ORACLE_COLUMNS)
