"""Study analyses, registered by name and named in each study file's ``analysis`` key.

An analysis is a function ``fn(data: AnalysisInput, **options) -> AnalysisOutput``:

- ``data.study``     the loaded :class:`fmat.study.Study` (id, queries, options, ...)
- ``data.scores``    all models' scores for the study (``fmat.run`` output, ``model`` column)
- ``data.lpr``       the LPR table (``fmat.summary`` output with the study's options)
- ``data.criteria``  criterion tables by name (``resources/criteria/<name>.parquet``)

It returns rows in the results shape (:mod:`fmat.results`) and named figure tables that the
reports draw (written to ``results/analysis/{study}/figures/<name>.parquet``). Adding a kind
of analysis is one function decorated with :func:`register`; no rule changes.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
import typing
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import pandas as pd

from fmat.errors import FmatError, InputError
from fmat.lpr import summary as lpr_summary
from fmat.results import KEY, RESULT_COLUMNS, results_frame, validate_results


@dataclass
class AnalysisInput:
    study: object
    scores: pd.DataFrame
    lpr: pd.DataFrame
    criteria: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class AnalysisOutput:
    stats: pd.DataFrame
    figures: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


_REGISTRY: dict[str, Callable[..., AnalysisOutput]] = {}
_CRITERIA: dict[str, Callable[[Mapping], list[str]]] = {}
_DESIGN_CHECKS: dict[str, Callable[..., None]] = {}
_CRITERIA_CHECKS: dict[str, Callable[..., None]] = {}
_ITEMS: dict[str, tuple[str, ...]] = {}
_NEEDS: dict[str, tuple[str, ...]] = {}
_POOLED_SD: dict[str, dict[str, object]] = {}


def register(
    name: str,
    *,
    criteria: Callable[[Mapping], list[str]] | None = None,
    check: Callable[..., None] | None = None,
    check_criteria: Callable[..., None] | None = None,
    items: tuple[str, ...] | list[str] = (),
    needs: tuple[str, ...] | list[str] = (),
    pooled_sd: Mapping[str, object] | None = None,
):
    """Register ``fn`` as analysis ``name``.

    ``criteria(options) -> [table names]``: the criterion tables it reads.  ``check(options,
    queries, where[, lpr=])``: :func:`check_design`'s check of the options (an InputError naming
    ``where`` and the fix).  ``items``: the LPR columns that key one observation, the item last
    (:func:`item_columns`).  ``needs``: the LPR label columns it reads (:func:`check_design`).
    ``check_criteria(options, tables, items, where)``: :func:`check_criteria`.  ``pooled_sd``:
    the option values that make its d a pooled-SD d (:func:`pooled_sd`).
    """

    def deco(fn):
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"analysis {name!r} registered twice")
        _REGISTRY[name] = fn
        for table, value in ((_CRITERIA, criteria), (_DESIGN_CHECKS, check), (_CRITERIA_CHECKS, check_criteria)):
            if value is not None:
                table[name] = value
        _ITEMS[name] = tuple(items)
        _NEEDS[name] = tuple(needs)
        if pooled_sd:
            _POOLED_SD[name] = dict(pooled_sd)
        return fn

    return deco


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def available() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def item_columns(name: str | None) -> list[str]:
    """The LPR columns that key one item of analysis ``name`` (given to :func:`register` as
    ``items``; the last is the item itself); empty for a name not registered or none given.

    Examples
    --------
    >>> from fmat import analyses
    >>> analyses.item_columns("factual_wefat")
    ['T_word']
    >>> analyses.item_columns("no_such_analysis")
    []
    """
    _load_all()
    return list(_ITEMS.get(str(name), ()))


def pooled_sd(name: str | None, options: Mapping | None = None) -> dict[str, object]:
    """The options (given to :func:`register` as ``pooled_sd``) that make analysis ``name``'s d
    a pooled-SD d, where ``options`` (an option not given: its default in the analysis's
    signature) have those values; ``{}`` otherwise, and for a name not registered.

    Examples
    --------
    >>> from fmat import analyses
    >>> analyses.pooled_sd("attitude_weat", {})
    {'effect_size': 'pooled_sd'}
    >>> analyses.pooled_sd("attitude_weat", {"effect_size": "sigma"})
    {}
    >>> analyses.pooled_sd("factual_wefat", {})
    {}
    """
    _load_all()
    name = str(name)
    declared = _POOLED_SD.get(name)
    if not declared:
        return {}
    params = inspect.signature(_REGISTRY[name]).parameters
    options = dict(options or {})
    given = {k: options[k] if k in options else getattr(params.get(k), "default", inspect.Parameter.empty) for k in declared}
    return dict(declared) if all(str(given[k]) == str(v) for k, v in declared.items()) else {}


def get(name: str) -> Callable[..., AnalysisOutput]:
    _load_all()
    if name not in _REGISTRY:
        raise _unknown(name, "analysis.name")
    return _REGISTRY[name]


def _unknown(name: str, where: str, hint: str = "", more: str = "") -> InputError:
    return InputError(
        f"unknown analysis {name!r}" + hint,
        where=where,
        fix=f"use one of {', '.join(sorted(_REGISTRY)) or '(none registered)'}" + more,
    )


def _keywords(name: str) -> list:
    """The parameters of analysis ``name`` after ``data``."""
    return list(inspect.signature(_REGISTRY[name]).parameters.values())[1:]


def check(name: str, options: Mapping | None = None, where: str = "analysis") -> None:
    """Analysis ``name`` is registered and ``options`` fit its keyword arguments (unknown and
    missing options named); called when a study file is checked, before any model loads."""
    _load_all()
    if name not in _REGISTRY:
        raise _unknown(name, f"{where}.name", nearest(name, _REGISTRY), ", or register a new one (docs/adding-a-study.md)")
    params = _keywords(name)
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    names = [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    options = dict(options or {})
    unknown = [k for k in options if k not in names]
    if unknown:
        fit = [n for n in sorted(_REGISTRY) if n != name and _takes(n, options)]
        raise InputError(
            f"analysis {name!r} has no option(s) {', '.join(map(repr, unknown))}" + nearest(unknown[0], names),
            where=f"{where}.options",
            fix=f"its options are: {', '.join(names) or '(none)'}"
            + (f"; the analyses that take these options: {', '.join(fit)} (a wrong analysis.name?)" if fit else ""),
        )
    missing = [p.name for p in params if p.default is p.empty and p.kind is not p.VAR_POSITIONAL and p.name not in options]
    if missing:
        raise InputError(
            f"analysis {name!r} needs option(s) {', '.join(map(repr, missing))}",
            where=f"{where}.options",
            fix="add them under analysis.options (docs/study-files.md)",
        )
    for key, value in options.items():
        allowed = option_values(name, key)
        if allowed and value not in allowed:
            raise InputError(
                f"analysis {name!r} has no {key} {value!r}" + nearest(value, [str(a) for a in allowed]),
                where=f"{where}.options.{key}",
                fix=f"use one of {', '.join(map(repr, allowed))} (docs/study-files.md)",
            )


def _takes(name: str, options: Mapping) -> bool:
    """Analysis ``name`` takes every key of ``options`` and needs no other."""
    params = [p for p in _keywords(name) if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return set(options) <= {p.name for p in params} and {p.name for p in params if p.default is p.empty} <= set(options)


def option_values(name: str, option: str) -> tuple:
    """The values option ``option`` of analysis ``name`` may take, where its function declares
    a closed set (``typing.Literal``: e.g. ``inference: Literal["paper", "sentence"]``); ``()``
    for any other option.  :func:`check` holds a study file's options to them before any model
    loads."""
    _load_all()
    fn = _REGISTRY.get(name)
    if fn is None:
        return ()
    try:
        hint = typing.get_type_hints(fn).get(option)
    except Exception:  # an annotation that does not resolve: no closed set to check
        return ()
    if typing.get_origin(hint) is typing.Literal:
        return typing.get_args(hint)
    return ()


def design_lpr(queries: pd.DataFrame, lpr_options: Mapping | None = None) -> pd.DataFrame:
    """The LPR table a design will have, before any model is scored: :func:`fmat.lpr.summary`
    with the study's ``lpr`` options of a stand-in model's scores (every option's probability
    0.5, so every LPR is 0): its columns and labels are those of the real table (``M_word`` of
    a mask-paired table ``like - dislike``, in the MASK groups' order).

    Examples
    --------
    >>> import fmat
    >>> q = fmat.query("I [MASK] {TARGET}.", MASK={"Pos": ["like"], "Neg": ["dislike"]},
    ...                TARGET={"A": ["cats"], "B": ["dogs"]})
    >>> t = design_lpr(q, {"mask_pair": True, "target_pair": False})
    >>> list(t.columns), sorted(set(t["M_word"].astype(str)))
    (['model', 'query', 'TARGET', 'T_pair', 'T_word', 'MASK', 'M_word', 'LPR'], ['like - dislike'])
    """
    opts = {k: bool(v) for k, v in dict(lpr_options or {}).items() if k in ("mask_pair", "target_pair", "attrib_pair")}
    return lpr_summary(queries.assign(model="design", prob=0.5), **opts)


def families_for(columns) -> list[str]:
    """The registered analyses whose LPR columns (``needs`` of :func:`register`) a table with
    ``columns`` has."""
    _load_all()
    have = set(columns)
    return [n for n in sorted(_REGISTRY) if set(_NEEDS.get(n, ())) <= have]


def check_design(
    name: str,
    options: Mapping | None,
    queries: pd.DataFrame,
    where: str = "analysis.options",
    lpr_options: Mapping | None = None,
) -> None:
    """Can the design feed analysis ``name``? Checked by :func:`fmat.study.load_study`, before
    any model loads: the LPR table the design will have (:func:`design_lpr`) has the columns the
    analysis reads (``needs``; else the error names the families that fit), and the analysis'
    own ``check`` passes (given that LPR table where it takes ``lpr``). An InputError names
    ``where`` and the fix."""
    _load_all()
    options = dict(options or {})
    table = None
    if name in _REGISTRY and lpr_options is not None:
        table = design_lpr(queries, lpr_options)
        missing = [c for c in _NEEDS.get(name, ()) if c not in table.columns]
        if missing:
            fit = [n for n in families_for(table.columns) if n != name]
            have = [c for c in table.columns if c not in ("model", "LPR")]
            raise InputError(
                f"analysis {name!r} reads LPR column(s) {missing} that this design's LPR table will not have "
                f"(with its lpr options it has {have})",
                where=where.rsplit(".options", 1)[0] + ".name" if where.endswith(".options") else where,
                fix=(f"the analyses that fit this design: {', '.join(fit)}" if fit else "no registered analysis fits this design")
                + "; or change the queries' slots or the lpr: options (docs/study-files.md)",
            )
    fn = _DESIGN_CHECKS.get(name)
    if fn is None:
        return
    if table is not None and "lpr" in inspect.signature(fn).parameters:
        fn(options, queries, where, lpr=table)
    else:
        fn(options, queries, where)


def nearest(word, known, cutoff: float = 0.6, fallback: Sequence[str] = ()) -> str:
    """`` (did you mean 'x'?)`` for the known name nearest ``word`` (difflib's ratio at least
    ``cutoff``; else the first of ``fallback``), or nothing."""
    close = difflib.get_close_matches(str(word), sorted(known), n=1, cutoff=cutoff) or list(fallback)[:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def criteria_needed(name: str, options: Mapping | None = None) -> list[str]:
    """Names of the criterion tables analysis ``name`` reads with these options."""
    get(name)  # an unknown name: the clear error
    fn = _CRITERIA.get(name)
    return list(fn(options or {})) if fn else []


def check_criteria(
    name: str,
    options: Mapping | None,
    tables: Mapping[str, pd.DataFrame],
    items: pd.DataFrame | None,
    where: str = "analysis.options",
) -> None:
    """The criterion tables analysis ``name`` will read (``tables``, by name) fit its options and
    the study's item keys (``items``: :attr:`fmat.study.Study.items`), checked before any model
    loads; an InputError names ``where``, the table, the column and the fix."""
    _load_all()
    fn = _CRITERIA_CHECKS.get(name)
    if fn is not None and tables:
        fn(dict(options or {}), tables, items, where)


def run_analysis(name: str, data: AnalysisInput, options: Mapping | None = None) -> AnalysisOutput:
    """Run analysis ``name`` and check that its rows have the results shape."""
    out = get(name)(data, **dict(options or {}))
    out.stats = validate_results(results_frame(out.stats), where=f"analysis {name!r}")
    return out


def check_results_table(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """``df`` in the results shape (exactly :data:`fmat.results.RESULT_COLUMNS`), or a clear error."""
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"not a results table: columns {missing} are missing (has {list(df.columns)[:8]}...)",
            where=where,
            fix="the reliability stage must write rows in the fmat.results shape "
            "(fmat.stages.reliability_tables / fmat.results.results_frame)",
        )
    return validate_results(results_frame(df[RESULT_COLUMNS]), where=where)


def _one_producer(reliability: pd.DataFrame, analysis: pd.DataFrame, name: str, sid: str) -> None:
    """An analysis must not emit a row the reliability stage already made (ICC, alpha)."""
    both = reliability[KEY].merge(analysis[KEY], on=KEY)
    if len(both):
        keys = ", ".join(f"{r.statistic}:{r.condition}:{r.model}" for r in both.head(6).itertuples())
        raise FmatError(
            f"analysis {name!r} of study {sid} emits {len(both)} row(s) that the reliability stage already produced: {keys}",
            fix="leave ICC and alpha to the reliability stage (the study file's reliability "
            "block); an analysis adds only its own statistics",
        )


def analysis_stage(
    study,
    scores: pd.DataFrame,
    lpr: pd.DataFrame,
    reliability: pd.DataFrame,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    *,
    sid: str | None = None,
):
    """One study's analysis stage -> ``(stats, figures, status)``: the reliability rows + the
    rows of the analysis the study file names (a note where it is not registered), the figure
    tables by name, and the ``status.json`` record (figures filled by the caller)."""
    sid = str(sid or getattr(study, "id", ""))
    name, options = _named(study)
    reliability = check_results_table(reliability, where=f"reliability rows of study {sid}")
    status = {"study": sid, "analysis": name, "implemented": False, "run": True, "notes": [], "figures": {}}
    figures: dict[str, pd.DataFrame] = {}
    parts = [reliability]
    if name and name in available():
        try:
            out = run_analysis(name, AnalysisInput(study, scores, lpr, dict(criteria or {})), options)
        except InputError as err:  # an option the scores cannot feed: named with the study file, as at load time
            path = str(getattr(study, "path", None) or "")
            if not path or path in str(err.where or ""):
                raise
            raise InputError(err.message, where=f"{path}: {err.where}" if err.where else path, fix=err.fix) from err
        _one_producer(reliability, out.stats, name, sid)
        parts = [reliability, out.stats]
        figures = dict(out.figures or {})
        status["implemented"] = True
        status["notes"] = [str(n) for n in (out.notes or [])]
    else:
        status["notes"] = [
            f"no analysis named {name!r} is registered (fmat.analyses.available()): only the reliability rows are reported"
        ]
    stats = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else reliability
    stats = validate_results(stats[RESULT_COLUMNS], where=f"results/analysis/{sid}/stats.parquet")
    return stats.reset_index(drop=True), figures, status


#: the value of ``inference`` whose rows generalize over the words and templates too (the
#: concept-level test, docs/calibration.md); the statistics whose test it changes
CROSSED = "crossed"
CROSSED_STATISTICS = ("d", "b", "r")


def _named(study) -> tuple[str, dict]:
    """The analysis name and options of the study file's ``analysis`` key."""
    spec = dict(getattr(study, "analysis", None) or {})
    return str(spec.get("name") or ""), dict(spec.get("options") or {})


def crossed_variant(study, scores: pd.DataFrame, lpr: pd.DataFrame, criteria: Mapping[str, pd.DataFrame] | None = None):
    """The concept-level variant of a study's analysis, beside the paper's inference:
    ``(rows, notes)``. ``rows``: the analysis's rows of :data:`CROSSED_STATISTICS` with a p, run
    again with ``inference: crossed``, or ``None`` where the analysis has no such variant
    (:func:`option_values`), the study file chooses another inference, or the variant cannot run
    on these scores (the reason in ``notes``)."""

    name, options = _named(study)
    if not name or name not in available() or CROSSED not in option_values(name, "inference"):
        return None, []
    if str(options.get("inference", "paper")) != "paper":  # the study file chose another inference
        return None, []
    try:
        out = run_analysis(name, AnalysisInput(study, scores, lpr, dict(criteria or {})), {**options, "inference": CROSSED})
    except FmatError as err:
        return None, [f"the concept-level variant (inference: crossed) did not run: {err.message}"]
    s = out.stats
    keep = s["statistic"].isin(CROSSED_STATISTICS) & s["p"].notna()
    notes = [str(n) for n in (out.notes or []) if CROSSED in str(n)]  # the paper's own notes are the paper run's
    return s.loc[keep, RESULT_COLUMNS].reset_index(drop=True), notes


#: the verdict keys of a number judged at both levels (:func:`concept_verdict`): significant
#: under both inferences; under the paper's only; under neither; under the crossed one only
CONCEPT_VERDICTS = ("holds", "lost", "neither", "gained")


def concept_verdict(p_paper, p_crossed, alpha: float = 0.05) -> str:
    """``holds`` (p < alpha under the paper's inference and the concept-level one), ``lost``
    (under the paper's only: it does not hold when the words are a sample), ``neither`` or
    ``gained`` (under the concept-level one only); a missing p counts as not significant."""

    def sig(p) -> bool:
        return p is not None and not pd.isna(p) and float(p) < alpha

    if sig(p_paper):
        return "holds" if sig(p_crossed) else "lost"
    return "gained" if sig(p_crossed) else "neither"


def concept_side_by_side(stats: pd.DataFrame, crossed: pd.DataFrame | None) -> pd.DataFrame:
    """Each headline row (model ``all``) of ``crossed`` (:func:`crossed_variant`) beside the same
    row of ``stats`` (the paper's inference): statistic, condition, value, the paper's
    ``ci_low, ci_high, p``, the concept-level ``ci_low_crossed, ci_high_crossed, p_crossed`` and
    ``verdict`` (:func:`concept_verdict`). Empty where there is no crossed row."""
    cols = ["statistic", "condition", "value", "ci_low", "ci_high", "p", "ci_low_crossed", "ci_high_crossed", "p_crossed"]
    if crossed is None or not len(crossed):
        return pd.DataFrame(columns=[*cols, "verdict"])
    key = ["statistic", "condition", "model"]
    paper = stats[stats["model"].astype(str) == "all"].drop_duplicates(key)
    mine = crossed[crossed["model"].astype(str) == "all"][[*key, "ci_low", "ci_high", "p"]]
    both = mine.merge(paper[[*key, "value", "ci_low", "ci_high", "p"]], on=key, suffixes=("_crossed", ""))  # mine's order
    out = both[cols].reset_index(drop=True)
    out["verdict"] = [concept_verdict(a, b) for a, b in zip(out["p"], out["p_crossed"])]
    return out
