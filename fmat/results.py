"""One long table shape for every statistic the workflow reports (and the paper reports).

Every analysis, the reliability stage and the paper's numbers (``config/paper_results.tsv``) emit
rows with :data:`RESULT_COLUMNS`, so that "paper vs ours" is a join on :data:`KEY`:
docs/results.md. :class:`StudyResult` holds one study's tables and says them as text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .errors import InputError

_SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def model_slug(name: str) -> str:
    """A model's name in results and file names (``results/scores/{study}/{model}.parquet``): a
    Hugging Face id with ``/`` as ``__``; a name that cannot be one (``..``, spaces, other
    characters, more than one ``/``) is an InputError.

    Examples
    --------
    >>> model_slug("vinai/bertweet-base"), model_slug("bert-base-uncased")
    ('vinai__bertweet-base', 'bert-base-uncased')
    >>> model_slug("../etc")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: model name '../etc' cannot be made into a file name
      fix: use a Hugging Face id such as 'bert-base-uncased' or 'vinai/bertweet-base'
    """
    slug = str(name).strip().replace("/", "__")
    if not _SLUG_RE.match(slug) or ".." in slug or str(name).count("/") > 1:
        raise InputError(
            f"model name {name!r} cannot be made into a file name",
            fix="use a Hugging Face id such as 'bert-base-uncased' or 'vinai/bertweet-base'",
        )
    return slug


KEY = ["study", "statistic", "condition", "model"]
NUMERIC = ["value", "se", "df", "df2", "p", "ci_low", "ci_high", "n"]
RESULT_COLUMNS = KEY + NUMERIC

#: the statistic names this project's analyses report, and what they mean (docs/results.md). A
#: vocabulary, not a closed list: :func:`validate_results` takes other names unless told otherwise
STATISTICS = {
    "ICC_average": "ICC(2,k) / ICC(A,k): two-way random, absolute agreement, average of the models",
    "ICC_single": "ICC(2,1) / ICC(A,1): two-way random, absolute agreement, a single model",
    "ICC_consistency_average": "ICC(C,k): two-way, consistency, average measures",
    "ICC_consistency_single": "ICC(C,1): two-way, consistency, single measures",
    "alpha": "Cronbach's raw alpha among items (queries, target or attribute words)",
    "alpha_std": "Cronbach's standardized alpha",
    "r": "Pearson correlation (ci_low/ci_high: Fisher-z 95% CI; df = n - 2)",
    "t_williams": "Williams' t for two dependent correlations sharing a variable (df = n - 3)",
    "d": "effect size d (value) with its t test in the row's p/df; see the analysis docs",
    "t": "t statistic (value) of a contrast or coefficient, with df and p",
    "F": "F statistic (value) with df, df2 and p",
    "b": "unstandardized coefficient (value, se, df, p, ci_low, ci_high)",
    "beta": "standardized coefficient",
    "R2": "R squared of an OLS model",
    "R2_delta": "increase in R squared when a predictor enters last",
    "R2m": "marginal R squared of a mixed model (Nakagawa & Schielzeth 2013)",
    "R2c": "conditional R squared of a mixed model",
    "n_items": "number of items used",
    "mean": "a mean (e.g. of LPRs)",
    "accuracy": "share correct (subject-verb agreement check)",
}


def results_frame(rows: Iterable[Mapping] | pd.DataFrame) -> pd.DataFrame:
    """Rows (dicts or a DataFrame) -> a results table with exactly :data:`RESULT_COLUMNS`: missing
    numbers NaN, ``condition`` and ``model`` "all" by default; unknown columns are an error.

    Examples
    --------
    >>> row = results_frame([{"study": "1A", "statistic": "d", "value": 0.5, "p": 0.01}]).iloc[0]
    >>> row.to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'study': '1A', 'statistic': 'd', 'condition': 'all', 'model': 'all', 'value': 0.5, 'se': nan, 'df': nan, 'df2': nan, 'p':
    0.01, 'ci_low': nan, 'ci_high': nan, 'n': nan}
    """
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    extra = [c for c in df.columns if c not in RESULT_COLUMNS]
    if extra:
        raise InputError(f"unknown result columns {extra}", fix=f"use only {RESULT_COLUMNS}")
    for col in ("condition", "model"):  # a missing column, or rows that leave it out
        df[col] = df[col].fillna("all") if col in df else "all"
    for col in NUMERIC:
        if col not in df:
            df[col] = np.nan
    if "study" not in df or "statistic" not in df:
        raise InputError("result rows need 'study' and 'statistic'")
    df = df[RESULT_COLUMNS]
    for col in KEY:
        df[col] = df[col].astype(str)
    for col in NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="raise").astype(float)
    return df.reset_index(drop=True)


_STATISTIC_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*$")


def validate_results(df: pd.DataFrame, *, where: str = "results", statistics: Iterable[str] | None = None) -> pd.DataFrame:
    """Check a results table: columns, statistic names, unique keys. Returns it.

    Statistic names are open (letters, digits, ``_`` and ``.``, starting with a letter);
    ``statistics`` closes the list, so that a typo in a table that must join another one (the
    paper's numbers with ours) is an error, not a row that never joins.

    Examples
    --------
    >>> rows = results_frame([{"study": "1A", "statistic": "d", "value": 0.5}])
    >>> len(validate_results(rows))
    1
    >>> validate_results(rows, statistics=["r"])
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: results: unknown statistic(s) ['d']
      fix: use one of r
    """
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"missing columns {missing}", where=where)
    names = set(df["statistic"].astype(str))
    bad = sorted(n for n in names if not _STATISTIC_RE.match(n))
    if bad:
        raise InputError(
            f"statistic name(s) {bad} are not names",
            where=where,
            fix="use letters, digits, '_' and '.', starting with a letter (e.g. 'd', 'ICC_average')",
        )
    if statistics is not None:
        unknown = sorted(names - set(statistics))
        if unknown:
            raise InputError(
                f"unknown statistic(s) {unknown}", where=where, fix=f"use one of {', '.join(sorted(set(statistics)))}"
            )
    blank = df[KEY].isna().any(axis=1) | df[KEY].astype(str).isin(["", "nan", "None"]).any(axis=1)
    if blank.any():
        raise InputError(
            f"{int(blank.sum())} rows have an empty key column {KEY}",
            where=where,
            fix="give every row a study, statistic, condition and model",
        )
    dup = df.duplicated(KEY, keep=False)
    if dup.any():
        raise InputError(f"{int(dup.sum())} rows share a key {KEY}", where=where, fix="make 'condition' tell the rows apart")
    return df


#: the statistics that are an effect (a size with CI and p), in the order shown
EFFECT_STATISTICS = ("d", "b", "beta", "r")


def p_text(p) -> str:
    """A p value as every page and summary shows it (APA): ``< .001``, else three decimals
    without the leading zero; ``NA`` when missing.

    Examples
    --------
    >>> from fmat.results import p_text
    >>> p_text(0.0123), p_text(0.0004), p_text(0.5), p_text(float("nan"))
    ('.012', '< .001', '.500', 'NA')
    """
    p = _float(p)
    if p != p:
        return "NA"
    return "< .001" if p < 0.001 else f"{p:.3f}".replace("0.", ".", 1) if p < 1 else f"{p:.3f}"


#: alpha over fewer rows (observations: models or words, as the reliability block spreads them)
#: than this is shown as NA (docs/reports.md, "Reliability that means nothing")
MIN_ALPHA_ROWS = 4


def reliability_note(statistic: str, value, n=None) -> str:
    """Why a reliability row's value is not shown ("" when it is): alpha over fewer than
    :data:`MIN_ALPHA_ROWS` rows (the tiny models gave alpha = -4.2 and alpha_std = 1.6e16), any
    alpha above 1 or not finite, an ICC that is not finite or outside [-1, 1].

    Examples
    --------
    >>> from fmat.results import reliability_note
    >>> reliability_note("alpha", -4.2, 3)
    'NA: alpha over 3 rows (fewer than 4): each covariance of two items rests on 3 points'
    >>> print(reliability_note("alpha_std", 1.6e16, 12))
    NA: alpha_std = 1.6e+16 is impossible (above 1): the items' correlation matrix is singular
    >>> reliability_note("alpha", 0.81, 12)
    ''
    """
    stat, v, rows = str(statistic), _float(value), _float(n)
    if stat.startswith("alpha"):
        if rows < MIN_ALPHA_ROWS:  # False for NaN (no n)
            rows = int(rows)
            return (
                f"NA: alpha over {rows} rows (fewer than {MIN_ALPHA_ROWS}): each covariance of two items rests on {rows} points"
            )
        if not math.isfinite(v):
            return "NA: not defined (an item without variance)"
        if v > 1:
            return f"NA: {stat} = {v:.2g} is impossible (above 1): the items' correlation matrix is singular"
    elif stat.startswith("ICC"):
        if not math.isfinite(v):
            return "NA: not defined (no variance among the items, or fewer than two models)"
        if abs(v) > 1:
            return f"NA: {stat} = {v:.2g} is outside [-1, 1]: a degenerate fit (no variance among the items)"
    return ""


def _float(x) -> float:
    """``float(x)``, NaN where it is none."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def effect_rows(stats: pd.DataFrame) -> pd.DataFrame:
    """The effect rows (d, b, beta, r) of model ``all`` in a results table, with their CI, p and df.

    Examples
    --------
    >>> from fmat.results import effect_rows, results_frame
    >>> stats = results_frame([
    ...     {"study": "S", "statistic": "d", "condition": "all", "model": "all", "value": 0.8,
    ...      "ci_low": 0.6, "ci_high": 1.0, "p": 0.001},
    ...     {"study": "S", "statistic": "d", "condition": "all", "model": "m1", "value": 0.7},
    ...     {"study": "S", "statistic": "ICC1k", "condition": "all", "model": "all", "value": 0.9}])
    >>> effect_rows(stats)[["statistic", "condition", "value", "ci_low", "ci_high"]]
      statistic condition  value  ci_low  ci_high
    0         d       all    0.8     0.6      1.0
    """
    s = stats[stats["statistic"].astype(str).isin(EFFECT_STATISTICS) & (stats["model"].astype(str) == "all")]
    keep = [c for c in ("statistic", "condition", "value", "ci_low", "ci_high", "p", "df", "n") if c in s.columns]
    order = {k: i for i, k in enumerate(EFFECT_STATISTICS)}
    s = s.assign(_o=s["statistic"].astype(str).map(order)).sort_values("_o", kind="stable")
    return s[keep].reset_index(drop=True)


def per_model_effects(stats: pd.DataFrame) -> pd.DataFrame:
    """The effect rows (d, b, beta, r) per model, one column per model (model ``all`` left out).

    Examples
    --------
    >>> stats = results_frame([{"study": "S", "statistic": "d", "model": m, "value": v} for m, v in [("m1", 0.7), ("m2", 0.9)]])
    >>> per_model_effects(stats)
      statistic condition   m1   m2
    0         d       all  0.7  0.9
    """
    s = stats[stats["statistic"].astype(str).isin(EFFECT_STATISTICS) & (stats["model"].astype(str) != "all")]
    if s.empty:
        return pd.DataFrame(columns=["statistic", "condition"])
    wide = s.pivot_table(index=["statistic", "condition"], columns="model", values="value", aggfunc="first", sort=False)
    wide.columns = [str(c) for c in wide.columns]
    return wide.reset_index()


@dataclass
class StudyResult:
    """What :func:`run_study` computed for one study file.

    Attributes
    ----------
    study : fmat.study.Study
    models : list of str
        The models' names, in the order given.
    queries, scores, lpr : pandas.DataFrame
        The query table, every model's scores (column ``model``), the LPRs.
    reliability : pandas.DataFrame
        The reliability details (ICC and alpha outputs, column ``analysis``).
    stats : pandas.DataFrame
        Every statistic in the :mod:`fmat.results` shape: the reliability rows and the analysis'.
    figures : dict of str to pandas.DataFrame
        The analysis' tables; with ``report=True``, also ``crossed``: its concept-level rows
        (:func:`fmat.analyses.crossed_variant`).
    status : dict
        ``analysis`` (its name), ``implemented`` (registered and run), ``notes``.
    files : list of pathlib.Path
        The files written (none without ``out``).
    page : pathlib.Path or None
        The page (``report=True``).

    Examples
    --------
    :func:`run_study` returns one (its Examples run a study); its views of the statistics:

    >>> import pandas as pd
    >>> from fmat.results import StudyResult, results_frame
    >>> stats = results_frame([
    ...     {"study": "S", "statistic": "d", "condition": "all", "model": "all", "value": 0.75,
    ...      "ci_low": 0.64, "ci_high": 0.87, "p": 1e-6},
    ...     {"study": "S", "statistic": "d", "condition": "all", "model": "m1", "value": 0.7},
    ...     {"study": "S", "statistic": "ICC_average", "condition": "all", "model": "all", "value": 0.9}])
    >>> empty = pd.DataFrame()
    >>> res = StudyResult(None, ["m1"], empty, empty, empty, empty, stats, status={"analysis": "stereotype_pairs"})
    >>> res.effect[["statistic", "value", "ci_low", "ci_high"]]
      statistic  value  ci_low  ci_high
    0         d   0.75    0.64     0.87
    >>> res.per_model
      statistic condition   m1
    0         d       all  0.7
    """

    study: object
    models: list[str]
    queries: pd.DataFrame
    scores: pd.DataFrame
    lpr: pd.DataFrame
    reliability: pd.DataFrame
    stats: pd.DataFrame
    figures: dict[str, pd.DataFrame] = field(default_factory=dict)
    status: dict = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    page: Path | None = None

    @property
    def effect(self) -> pd.DataFrame:
        """The analysis' effects over all models (:func:`effect_rows`)."""
        return effect_rows(self.stats)

    @property
    def per_model(self) -> pd.DataFrame:
        """The analysis' effects per model, one column per model (:func:`per_model_effects`)."""
        return per_model_effects(self.stats)

    @property
    def reliability_stats(self) -> pd.DataFrame:
        """The reliability rows of :attr:`stats` (ICC among the models, alpha among the items)."""
        return self.stats[self.stats["statistic"].astype(str).str.startswith(("ICC", "alpha"))].reset_index(drop=True)

    def summary(self) -> str:
        """The effect(s), the reliability and the analysis' notes as text (what ``fmat study`` prints)."""
        sid = str(getattr(self.study, "id", ""))
        name = self.status.get("analysis") or "(none)"
        lines = [f"study {sid}: analysis {name} on {len(self.models)} model(s)"]
        eff = self.effect
        if len(eff):
            lines.append(_effect_text(eff))
            lines += [f"  note: {n}" for n in self.status.get("notes", [])]  # e.g. a relation left out (OOV words)
        elif not self.status.get("implemented") or not self.status.get("run", True):
            lines += [f"  no effect: {n}" for n in self.status.get("notes", [])]
        rel = self.reliability_stats
        if len(rel):
            shown, notes = _shown_reliability(rel, ("statistic", "condition", "model", "value", "ci_low", "ci_high"))
            if any(notes):
                shown = shown.assign(note=notes)
            lines.append("reliability:\n" + shown.to_string(index=False))
        return "\n".join(lines)


def _shown_reliability(rel: pd.DataFrame, columns) -> tuple[pd.DataFrame, list[str]]:
    """The ``columns`` of reliability rows, value and CI as text, and each row's :func:`reliability_note`
    (a value undefined or meaningless is NA with its reason, never a number)."""
    shown = rel[[c for c in columns if c in rel.columns]].astype(object)
    notes = [reliability_note(r["statistic"], r.get("value"), r.get("n")) for r in rel.to_dict("records")]
    for col in ("value", "ci_low", "ci_high"):
        if col in shown.columns:
            shown[col] = ["NA" if note or pd.isna(v) else f"{float(v):.3f}" for v, note in zip(rel[col], notes)]
    return shown, notes


def _effect_text(eff: pd.DataFrame) -> str:
    """``d (all) = 0.75 [0.64, 0.87], p < .001`` lines."""
    out = []
    for r in eff.itertuples(index=False):
        text = f"  {r.statistic} ({r.condition}) = {r.value:.3f}"
        lo, hi = getattr(r, "ci_low", float("nan")), getattr(r, "ci_high", float("nan"))
        if pd.notna(lo) and pd.notna(hi):
            text += f" [{lo:.3f}, {hi:.3f}]"
        p = getattr(r, "p", float("nan"))
        if pd.notna(p):
            text += ", p < .001" if p < 0.001 else f", p = {p_text(p)}"
        out.append(text)
    return "effect (95% CI):\n" + "\n".join(out)
