"""Paper vs ours: every number of Bao (2024) next to the number this workflow computed.

:func:`compare` joins the paper's file (:func:`fmat_replication.paper.load_paper_results`) with every
study's ``results/analysis/{study}/stats.parquet`` on ``(study, statistic, condition, model)`` and
gives each paper row a verdict: ``replicated`` (every check that applies holds), ``not replicated``
(``reason`` names the failed check) or ``not computable`` (``reason`` says why). The checks
(:func:`check_sign`, :func:`check_significance`, :func:`check_closeness`, :func:`check_bound`) and
pattern rows (:func:`fmat_replication.paper.matching_rows`) are described in ``docs/reports.md``;
``exact`` says whether ours equals the paper *as printed* (:func:`as_printed`).
"""

from __future__ import annotations

import json
import logging
import math
import operator
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from fmat import checking
from fmat.io import read_table, write_table
from fmat.results import KEY, RESULT_COLUMNS
from fmat_replication.formats import missing, p_text, short
from fmat_replication.paper import is_pattern, load_paper_results, matching_rows, stars_for, within_rounding

#: verdict values
REPLICATED, NOT_REPLICATED, NOT_COMPUTABLE = "replicated", "not replicated", "not computable"
VERDICTS = [REPLICATED, NOT_REPLICATED, NOT_COMPUTABLE]

#: |ours - paper| allowed, per statistic (why these: docs/reports.md, "Close enough")
TOLERANCES: dict[str, float] = dict.fromkeys(
    ["r", "d", "beta", "ICC_average", "ICC_single", "ICC_consistency_average", "ICC_consistency_single", "alpha"]
    + ["alpha_std", "R2", "R2m", "R2c", "R2_delta"],
    0.05,
) | {"d": 0.10}

#: significance level of the "same significance" check (the plant check's too: fmat.checking.LEVEL)
ALPHA_LEVEL = checking.LEVEL

#: why a cited criterion (condition ``ref:...``) is not computed here
REF_REASONS = {
    "ref:iat": "criterion cited by the paper (IAT d from Caliskan et al., 2017), not an FMAT result",
    "ref:weat_word2vec": "criterion cited by the paper (WEAT d with word2vec, Caliskan et al., 2017), not an FMAT result",
    "ref:weat_glove": "criterion cited by the paper (WEAT d with GloVe, Caliskan et al., 2017); "
    "reproducible with fmat.embeddings only where GloVe vectors are available",
    "ref:explicit": "criterion cited by the paper (Galinsky et al., 2013), not an FMAT result",
    "ref:implicit_masculine": "criterion cited by the paper (Galinsky et al., 2013), not an FMAT result",
    "ref:implicit_feminine": "criterion cited by the paper (Galinsky et al., 2013), not an FMAT result",
}

PAPER_OUT = [
    "value",
    "value_low",
    "value_high",
    "value_bound",
    "se",
    "df",
    "p",
    "bound",
    "stars",
    "ci_low",
    "ci_high",
    "n",
    "digits",
]
OURS_OUT = ["value", "se", "df", "df2", "p", "ci_low", "ci_high", "n"]
#: a row's p and 95% CI under its analysis's calibrated variant (docs/calibration.md), and its
#: verdict with that p; empty where the analysis has none
CALIBRATED_COLUMNS = ["calibrated_p", "calibrated_ci_low", "calibrated_ci_high", "verdict_calibrated"]
#: the columns of the replication table, in order
REPLICATION_COLUMNS = (
    KEY
    + [f"paper_{c}" for c in PAPER_OUT]
    + [f"ours_{c}" for c in OURS_OUT]
    + ["ours_min", "ours_max", "n_matched", "diff", "tolerance", "exact", "verdict", "reason", "source"]
    + CALIBRATED_COLUMNS
)


def with_calibrated_p(ours: pd.DataFrame, calibrated: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``ours`` with each row of model ``all`` that has a calibrated variant given that
    variant's p and CI (columns p, ci_low, ci_high replaced), marked in a boolean column
    ``calibrated``. ``calibrated``: per study, its figure table ``calibrated`` (condition, p_ours,
    ci_low_ours, ci_high_ours; without a ``statistic`` column: the d and t rows). The value stays ours."""
    out = ours.copy()
    out["calibrated"] = False
    for study, tab in (calibrated or {}).items():
        if tab is None or not len(tab):
            continue
        cal = tab.set_index(tab["condition"].astype(str))
        mine = (out["study"].astype(str) == str(study)) & (out["model"].astype(str) == "all")
        stats = ("d", "t") if "statistic" not in tab.columns else tuple(dict.fromkeys(tab["statistic"].astype(str)))
        for stat in stats:
            conds = cal.index if "statistic" not in tab.columns else cal.index[tab["statistic"].astype(str).to_numpy() == stat]
            rows = mine & (out["statistic"].astype(str) == stat) & out["condition"].astype(str).isin(conds)
            cond = out.loc[rows, "condition"].astype(str)
            out.loc[rows, "p"] = cal.loc[cond, "p_ours"].to_numpy(dtype=float)
            if stat != "t":
                out.loc[rows, ["ci_low", "ci_high"]] = cal.loc[cond, ["ci_low_ours", "ci_high_ours"]].to_numpy(dtype=float)
            out.loc[rows, "calibrated"] = True
    return out


@dataclass
class StudyStatus:
    """What the workflow did for a study (``results/analysis/{study}/status.json``): was it
    ``run``, its ``analysis`` name, is that analysis ``implemented`` (registered), its ``notes``."""

    run: bool = True
    analysis: str = ""
    implemented: bool = True
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, rec: Mapping) -> "StudyStatus":
        return cls(
            run=bool(rec.get("run", True)),
            analysis=str(rec.get("analysis") or ""),
            implemented=bool(rec.get("implemented", True)),
            notes=list(rec.get("notes") or []),
        )


# ----------------------------------------------------------------------------- small pure helpers


def _text(x) -> str:
    return "" if missing(x) else str(x)


def paper_significance(p: float, bound: str = "", stars: str = "", level: float = ALPHA_LEVEL) -> bool | None:
    """Is the paper's effect significant at ``level``? True / False / None (cannot tell): the
    printed p with its bound decides ("p < .01" is significant at .05, "p > .33" is not, "p < .10"
    cannot tell), else the table's stars ("ns": not significant)."""
    bound, stars = _text(bound), _text(stars)
    if not missing(p):
        if bound == "<":
            return True if p <= level else None
        if bound == ">":
            return False if p >= level else None
        return bool(p < level)
    return {"*": True, "**": True, "***": True, "ns": False}.get(stars)


def _sign(x: float, digits: float = math.nan) -> int:
    """Sign of a number; 0 when it is 0 at its printed precision (or NaN)."""
    if missing(x) or (not missing(digits) and abs(x) < 0.5 * 10 ** (-int(digits))):
        return 0
    return int(np.sign(x))


def _decimals_of(x: float) -> int:
    """Decimals of a printed p as stored (0.44 -> 2, 0.007 -> 3)."""
    text = repr(float(x))
    if "e" in text:
        return 3
    return len(text.split(".", 1)[1]) if "." in text else 0


#: a printed bound -> does it hold for (ours, the printed number)
_HOLDS = {">": operator.gt, "<": operator.lt, "abs<": lambda value, limit: abs(value) < limit}


def value_bound_holds(value: float, relation: str, limit: float) -> bool:
    """``value`` satisfies the printed bound: ">" value > limit, "<" value < limit, "abs<" |value| < limit."""
    if missing(value):
        return False
    if relation not in _HOLDS:
        raise ValueError(f"unknown value bound {relation!r}")
    return _HOLDS[relation](value, limit)


def p_bound_holds(p: float, bound: str, printed: float) -> bool:
    """Our p satisfies the paper's printed p: "<" p < printed, ">" p > printed, "" rounds to it."""
    if missing(p):
        return False
    if bound in ("<", ">"):
        return _HOLDS[bound](p, printed)
    return within_rounding(printed, float(_decimals_of(printed)), p)


# ----------------------------------------------------------------------------- one paper row


@dataclass
class Printed:
    """What the paper prints for one row, as the checks of :func:`judge` need it."""

    value: float
    digits: float
    low: float
    high: float
    vbound: str  # value bound: "", ">", "<", "abs<"
    pbound: str  # p bound: "", "<", ">"
    stars: str
    p: float
    tol: float  # the statistic's closeness tolerance (NaN: none)

    @classmethod
    def of(cls, row: Mapping, tolerances: Mapping[str, float]) -> "Printed":
        return cls(
            value=row.get("value", math.nan),
            digits=row.get("digits", math.nan),
            low=row.get("value_low", math.nan),
            high=row.get("value_high", math.nan),
            vbound=_text(row.get("value_bound")),
            pbound=_text(row.get("bound")),
            stars=_text(row.get("stars")),
            p=row.get("p", math.nan),
            tol=tolerances.get(str(row["statistic"]), math.nan),
        )

    @property
    def is_range(self) -> bool:
        return not missing(self.low) and not missing(self.high)

    @property
    def plain(self) -> bool:
        """One printed number, no range or bound."""
        return not self.is_range and self.vbound == "" and not missing(self.value)

    @property
    def significant(self) -> bool | None:
        return paper_significance(self.p, self.pbound, self.stars)

    def wanted_sign(self) -> int:
        """The sign the paper's number has (0: none to check)."""
        if self.is_range:
            return int(np.sign(self.low)) if np.sign(self.low) == np.sign(self.high) else 0
        if self.vbound == "abs<" or missing(self.value):
            return 0
        if self.vbound == ">" and self.value >= 0:
            return 1
        if self.vbound == "<" and self.value <= 0:
            return -1
        if self.vbound:
            return 0
        return _sign(self.value, self.digits)


@dataclass
class Checks:
    """What the checks found: passed, failed and skipped, each a list of reasons."""

    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _some_rows(bad: list, ours: np.ndarray) -> str:
    return f" ({len(bad)} of {len(ours)} rows)" if len(ours) > 1 else ""


def check_sign(paper: Printed, ours: np.ndarray, out: Checks) -> None:
    """1. Our rows have the paper's sign (when it prints one and does not call the effect null):
    :func:`fmat.checking.sign`, the test the plant check uses."""
    want = paper.wanted_sign()
    if want == 0 or paper.significant is False:
        return
    if np.isnan(ours).any():
        out.failed.append("sign: ours has no value")
        return
    res = checking.sign(want, ours)
    if res.ok:
        out.passed.append("same sign")
    else:
        out.failed.append(f"sign: paper {'+' if want > 0 else '-'}, ours {short(res.bad[0])}" + _some_rows(res.bad, ours))


def check_significance(paper: Printed, ours_p: np.ndarray, out: Checks) -> None:
    """2. Significant at .05 in both, or in neither (when the paper says which):
    :func:`fmat.checking.significance`, the test the plant check uses."""
    sig = paper.significant
    if sig is None:
        return
    res = checking.significance(sig, ours_p, ALPHA_LEVEL)
    word = "significant" if sig else "not significant"
    if res.ok is None:
        out.skipped.append("significance not checked: our row has no p")
    elif res.ok:
        out.passed.append(f"both {word} at .05")
    else:
        out.failed.append(f"significance: paper {word} at .05, ours {p_text(res.bad[0])}")


def check_closeness(paper: Printed, ours: np.ndarray, lo: float, hi: float, out: Checks) -> float:
    """3. Our number within the statistic's tolerance of the paper's (a printed range: both
    ends). Returns ours minus the paper's for one plain number, else NaN."""
    tol = paper.tol
    if missing(tol):
        return math.nan
    if paper.plain:
        if len(ours) != 1:
            out.skipped.append("closeness not checked: several rows matched")
            return math.nan
        diff = float(ours[0] - paper.value)
        if math.isnan(diff):
            out.failed.append("closeness: ours has no value")
        elif checking.closeness(paper.value, ours[0], tol).ok:
            out.passed.append(f"|ours - paper| = {short(abs(diff))} <= {short(tol)}")
        else:
            out.failed.append(
                f"closeness: ours {short(ours[0])} vs paper {short(paper.value)}, |diff| = {short(abs(diff))} > {short(tol)}"
            )
        return diff
    if paper.is_range:
        if math.isnan(lo):
            out.failed.append("range: ours has no value")
        elif checking.closeness(paper.low, lo, tol).ok and checking.closeness(paper.high, hi, tol).ok:
            out.passed.append(f"range {short(lo)}-{short(hi)} within {short(tol)} of {short(paper.low)}-{short(paper.high)}")
        else:
            out.failed.append(
                f"range: ours {short(lo)}-{short(hi)} vs paper {short(paper.low)}-{short(paper.high)} (tolerance {short(tol)})"
            )
    return math.nan


def check_bound(paper: Printed, ours: np.ndarray, out: Checks) -> None:
    """4. The paper's printed bound (> x, < x, |.| < x) holds for every row of ours."""
    if not paper.vbound:
        return
    holds = [value_bound_holds(v, paper.vbound, paper.value) for v in ours]
    shown = {"abs<": "|x| <"}.get(paper.vbound, paper.vbound)
    if all(holds):
        out.passed.append(f"bound {shown} {short(paper.value)} holds")
    else:
        bad = [v for v, h in zip(ours, holds) if not h]
        out.failed.append(f"bound: paper {shown} {short(paper.value)}, ours {short(bad[0])}" + _some_rows(bad, ours))


def as_printed(paper: Printed, ours: np.ndarray, ours_p: np.ndarray, lo: float, hi: float) -> bool | None:
    """Would ours print as the paper's row (value, range, bound, p and stars at the paper's
    precision)? None when nothing can be compared."""
    exact = []
    if paper.plain and len(ours) == 1:
        exact.append(within_rounding(float(paper.value), float(paper.digits), float(ours[0])))
    if paper.is_range and not math.isnan(lo):
        exact.append(
            within_rounding(float(paper.low), float(paper.digits), lo)
            and within_rounding(float(paper.high), float(paper.digits), hi)
        )
    if paper.vbound:
        exact.append(all(value_bound_holds(v, paper.vbound, paper.value) for v in ours))
    if not missing(paper.p) and not np.isnan(ours_p).all():
        exact.append(all(p_bound_holds(q, paper.pbound, paper.p) for q in ours_p))
    if paper.stars and not np.isnan(ours_p).all():
        exact.append(all(stars_for(float(q)) == paper.stars for q in ours_p))
    return bool(all(exact)) if exact else None


def verdict_of(found: Checks) -> tuple[str, str]:
    """Any failed check: not replicated; else any passed: replicated; else not computable."""
    if found.failed:
        return NOT_REPLICATED, "; ".join(found.failed + found.passed + found.skipped)
    if found.passed:
        return REPLICATED, "; ".join(found.passed + found.skipped)
    notes = "; ".join(found.skipped)
    return NOT_COMPUTABLE, "nothing comparable" + (
        f" ({notes})" if notes else ": the paper prints no p, stars, sign or bound for this statistic"
    )


def judge(paper_row: Mapping, matched: pd.DataFrame, tolerances: Mapping[str, float] | None = None) -> dict:
    """Verdict of one paper row against its matched computed rows (``matched``: results shape,
    non-empty; rows without a counterpart are :func:`not_computable_reason`): ``{"verdict",
    "reason", "diff", "tolerance", "exact", "ours_min", "ours_max"}``."""
    paper = Printed.of(paper_row, TOLERANCES if tolerances is None else tolerances)
    ours = pd.to_numeric(matched["value"], errors="coerce").to_numpy(dtype=float)
    ours_p = pd.to_numeric(matched["p"], errors="coerce").to_numpy(dtype=float)
    lo, hi = (float(np.nanmin(ours)), float(np.nanmax(ours))) if np.isfinite(ours).any() else (math.nan, math.nan)
    found = Checks()
    check_sign(paper, ours, found)
    check_significance(paper, ours_p, found)
    diff = check_closeness(paper, ours, lo, hi, found)
    check_bound(paper, ours, found)
    verdict, reason = verdict_of(found)
    exact = as_printed(paper, ours, ours_p, lo, hi)
    return {
        "diff": diff,
        "tolerance": paper.tol if (paper.plain or paper.is_range) else math.nan,
        "exact": pd.NA if exact is None else exact,
        "ours_min": lo,
        "ours_max": hi,
        "verdict": verdict,
        "reason": reason,
    }


def not_computable_reason(
    paper_row: Mapping, status: StudyStatus | None, computed_here: bool, models_here: Iterable[str] | None = None
) -> str:
    """Why a paper row has no computed counterpart. ``status``: what the workflow did for the
    row's study (None: not run); ``computed_here``: the study's results hold some row of this
    statistic; ``models_here``: the models of the study's results."""
    cond = str(paper_row["condition"])
    if cond in REF_REASONS:
        return REF_REASONS[cond]
    if status is None or not status.run:
        return "study not run (not in config 'studies', or its results are missing)"
    if not status.implemented:
        return f"no analysis named {status.analysis!r} is registered (only the reliability rows exist)"
    model = str(paper_row.get("model", "all"))
    here = sorted({str(m) for m in (models_here if models_here is not None else [])} - {"all"})
    if models_here is not None and model != "all" and not is_pattern(model) and model not in here:
        return (
            f"the paper's model {model} is not in this run (its models: {', '.join(here) or 'none'}); "
            "the rows for all models together are compared"
        )
    if "wefat" in cond:
        hint = [n for n in status.notes if "glove" in n.lower() or "wefat" in n.lower()]
        return "needs WEFAT scores (GloVe vectors), not produced in this run" + (f": {hint[0]}" if hint else "")
    stat = str(paper_row["statistic"])
    if stat.startswith("ICC"):
        return "the reliability stage emitted no such ICC row (condition 'all' = raw log probabilities)"
    what = "this statistic" if not computed_here else "this condition/model"
    return f"the analysis {status.analysis!r} emitted no row for {what}"


# ----------------------------------------------------------------------------- the whole table


def compare(
    paper: pd.DataFrame,
    ours: pd.DataFrame,
    status: Mapping[str, StudyStatus | Mapping] | None = None,
    *,
    tolerances: Mapping[str, float] | None = None,
    calibrated: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Paper rows (``load_paper_results()``) joined with our results rows -> the replication table
    (:data:`REPLICATION_COLUMNS`, one row per paper row, in order).

    ``ours``: every study's results rows stacked. ``status``: per study id, a :class:`StudyStatus`
    or a mapping (a study missing from it counts as run when ``ours`` has rows for it).
    ``calibrated``: per study, its analysis's figure table ``calibrated`` where it has one.
    """
    ours = (ours[RESULT_COLUMNS] if len(ours) else pd.DataFrame(columns=RESULT_COLUMNS)).reset_index(drop=True)
    ours_cal = with_calibrated_p(ours, calibrated or {})
    status = {str(k): (v if isinstance(v, StudyStatus) else StudyStatus.from_mapping(v)) for k, v in (status or {}).items()}
    studies_with_rows = set(ours["study"].astype(str))
    index = {tuple(r): i for i, r in enumerate(ours[KEY].astype(str).itertuples(index=False, name=None))}
    rows = []
    for rec in paper.to_dict("records"):
        st = status.get(str(rec["study"]))
        if st is None and str(rec["study"]) in studies_with_rows:
            st = StudyStatus()
        pattern = is_pattern(rec["condition"]) or is_pattern(rec["model"])
        if pattern:
            matched = matching_rows(pd.Series(rec), ours)
        else:
            i = index.get(tuple(str(rec[k]) for k in KEY))
            matched = ours.iloc[[i] if i is not None else []]
        matched_cal = ours_cal.loc[matched.index]
        one = len(matched) == 1 and not pattern  # a single row of ours: its numbers are shown
        row = {k: rec[k] for k in KEY} | {f"paper_{c}": rec.get(c, math.nan) for c in PAPER_OUT}
        row |= {f"ours_{c}": float(matched[c].iloc[0]) if one else math.nan for c in OURS_OUT}
        row |= {"n_matched": len(matched), "source": rec.get("source", "")}
        row |= {c: "" if c == "verdict_calibrated" else math.nan for c in CALIBRATED_COLUMNS}
        if len(matched_cal) and matched_cal["calibrated"].astype(bool).any():
            if one:
                for c in ("p", "ci_low", "ci_high"):
                    row[f"calibrated_{c}"] = float(matched_cal[c].iloc[0])
            row["verdict_calibrated"] = judge(rec, matched_cal[RESULT_COLUMNS], tolerances)["verdict"]
        if len(matched):
            row.update(judge(rec, matched, tolerances))
        else:
            has_stat = bool(((ours["study"] == rec["study"]) & (ours["statistic"] == rec["statistic"])).any())
            models = ours.loc[ours["study"].astype(str) == str(rec["study"]), "model"]
            tol = (TOLERANCES if tolerances is None else tolerances).get(str(rec["statistic"]), math.nan)
            row |= {"verdict": NOT_COMPUTABLE, "reason": not_computable_reason(rec, st, has_stat, models), "exact": pd.NA}
            row |= {"diff": math.nan, "ours_min": math.nan, "ours_max": math.nan, "tolerance": tol}
        rows.append(row)
    out = pd.DataFrame(rows, columns=REPLICATION_COLUMNS)
    for c in KEY + ["paper_value_bound", "paper_bound", "paper_stars", "verdict", "reason", "source", "verdict_calibrated"]:
        out[c] = out[c].fillna("").astype(str)
    out["exact"] = out["exact"].astype("boolean")
    out["n_matched"] = out["n_matched"].astype(int)
    return out


def summarise(replication: pd.DataFrame, by: Iterable[str] = ("study",)) -> pd.DataFrame:
    """Counts of each verdict per ``by`` group (columns: by..., replicated, not replicated,
    not computable, total, and ``share_replicated`` among the computable rows)."""
    by = list(by)
    counts = (
        replication.groupby(by + ["verdict"], sort=False)
        .size()
        .unstack("verdict", fill_value=0)
        .reindex(columns=VERDICTS, fill_value=0)
    )
    counts.columns.name = None
    counts["total"] = counts[VERDICTS].sum(axis=1)
    judged = counts[REPLICATED] + counts[NOT_REPLICATED]
    counts["share_replicated"] = np.where(judged > 0, counts[REPLICATED] / judged.where(judged > 0, 1), np.nan)
    return counts.reset_index()


# ------------------------------------- the analysis stage's bookkeeping (rule analysis) and the status the compare rule reads


def read_calibrated(stats_paths: Iterable) -> dict[str, pd.DataFrame]:
    """``{study: figure table calibrated}`` for the studies whose analysis wrote one
    (``figures/calibrated.parquet`` beside ``stats.parquet``: the same rule writes both)."""
    out = {}
    for p in stats_paths:
        f = Path(p).parent / "figures" / "calibrated.parquet"
        if f.exists():
            out[Path(p).parent.name] = read_table(f)
    return out


def read_status(paths: Iterable[str]) -> dict[str, StudyStatus]:
    """``{study: StudyStatus}`` from the analysis stage's ``status.json`` files."""
    out = {}
    for path in paths:
        rec = json.loads(Path(path).read_text(encoding="utf-8"))
        out[str(rec.get("study") or Path(path).parent.name)] = StudyStatus.from_mapping(rec)
    return out


__all__ = [
    "TOLERANCES",
    "ALPHA_LEVEL",
    "VERDICTS",
    "REPLICATED",
    "NOT_REPLICATED",
    "NOT_COMPUTABLE",
    "REPLICATION_COLUMNS",
    "StudyStatus",
    "paper_significance",
    "value_bound_holds",
    "p_bound_holds",
    "judge",
    "not_computable_reason",
    "compare",
    "summarise",
    "read_status",
    "read_calibrated",
    "with_calibrated_p",
    "CALIBRATED_COLUMNS",
    "compare_studies",
]


def compare_studies(
    paper_path, stats_paths: Iterable, status_paths: Iterable, out, *, csv=None, study: str | None = None
) -> pd.DataFrame:
    """Rules compare / compare_study: the paper's numbers (``paper_path``) beside every study's
    ``stats.parquet`` -> the replication table ``out`` (and ``csv``); with ``study``, that study's
    paper rows only."""

    log = logging.getLogger(__name__)
    # one study's rule gives one file (a string), the whole table's a list
    stats_paths, status_paths = ([p] if isinstance(p, (str, os.PathLike)) else list(p) for p in (stats_paths, status_paths))
    paper = load_paper_results(paper_path)
    if study is not None:
        paper = paper[paper["study"].astype(str) == study].reset_index(drop=True)
    ours = pd.concat([read_table(p)[RESULT_COLUMNS] for p in stats_paths], ignore_index=True)
    table = compare(paper, ours, read_status(status_paths), calibrated=read_calibrated(stats_paths))
    write_table(table, out)
    if csv:
        write_table(table, csv)
    for rec in summarise(table).to_dict("records"):
        log.info(
            "study %s: %d replicated, %d not replicated, %d not computable",
            rec["study"],
            rec["replicated"],
            rec["not replicated"],
            rec["not computable"],
        )
    return table
