"""Power and false-positive rate of a study's design and analysis (``fmat power``,
docs/calibration.md).

For each number of models, ``worlds`` worlds of perfect learners (:mod:`fmat.calibration`)
are drawn with the world file's plant for the study (power: the share of worlds whose test is
significant at ``alpha``) and with nothing planted (the false-positive rate), and the study's
own analysis (and its declared :data:`INFERENCES`) runs on each.  Two questions (``level``):
"these words" (null worlds: :func:`fmat.calibration.null_plant`) and "the concept" (null
worlds that keep the item and model variation: :func:`fmat.calibration.concept_null_plant`).
World k of a setting is seeded ``seed + k`` for every number of models, so the rows differ
only by the design.
"""

from __future__ import annotations

import signal
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import yaml

from fmat import analyses, arguments
from fmat import calibration as cal
from fmat import plant as fplant
from fmat.errors import InputError
from fmat.oracle import oracle
from fmat.stats.mixed import SingularFitWarning
from fmat.study import load_study

#: the inference variants power runs where the study's analysis declares them
#: (:func:`fmat.analyses.option_values`): the stereotype analyses' calibrated ``sentence`` and
#: the concept-level ``crossed`` (words and templates random, crossed with the models)
INFERENCES = ("sentence", "crossed")
#: the concept-level variant
CROSSED = "crossed"
#: the question a row answers (column ``level``), by ``power_table``'s ``level``
LEVELS = {"words": "these words", "concept": "the concept"}


def variants_of(study) -> dict[str, dict]:
    """``{"paper": {}}`` plus ``{name: {"inference": name}}`` for each of :data:`INFERENCES`
    that the study's analysis declares (``inference: Literal[...]``)."""
    name = str((getattr(study, "analysis", None) or {}).get("name") or "")
    declared = analyses.option_values(name, "inference") if name else ()
    return {"paper": {}, **{v: {"inference": v} for v in INFERENCES if v in declared}}


def level_variants(variants: Mapping[str, Mapping], level: str) -> list[str]:
    """The variants whose rows answer ``level``'s question: "words", every variant but the
    concept-level one; "concept", the concept-level one and the others beside it (the paper's
    shows the contrast), none where the analysis has no concept-level variant."""
    if level == "words":
        return [v for v in variants if v != CROSSED]
    return list(variants) if CROSSED in variants else []


#: planted worlds per (items, models) whose realised value is computed (it costs one more
#: analysis a world; the table's ``realised`` is their mean, a description, not a test)
REALISED_WORLDS = 3


def item_slot(study) -> str:
    """The slot whose words are the study's items for ``--items``: of TARGET and ATTRIB, the
    one with the most words per group in the study file (MASK when neither has groups)."""
    best, size = "MASK", 0
    for q in study.raw.get("queries") or []:
        for slot in ("TARGET", "ATTRIB"):
            groups = q.get(slot)
            if isinstance(groups, Mapping):
                n = max((len(v) for v in groups.values() if isinstance(v, list)), default=0)
                if n > size:
                    best, size = slot, n
    return best


def study_with_items(study, n_items: int, slot: str | None = None, folder=None):
    """The study with the first ``n_items`` words of each group of ``slot`` (default
    :func:`item_slot`) in every query block, loaded from a copy of its file written into
    ``folder`` (a temporary folder by default).  Groups written as a plain word list only."""
    slot = slot or item_slot(study)
    data = yaml.safe_load(Path(study.path).read_text(encoding="utf-8"))  # plain types (raw holds the parser's)
    cut = 0
    for q in data.get("queries") or []:
        groups = q.get(slot)
        if not isinstance(groups, dict):
            continue
        for g, words in groups.items():
            if not isinstance(words, list):
                raise InputError(
                    f"--items: group {g!r} of {slot} is not a plain word list",
                    where=f"{study.path}: queries",
                    fix="leave --items out",
                )
            if n_items > len(words):
                raise InputError(
                    f"--items {n_items}: group {g!r} of {slot} has only {len(words)} words",
                    where="--items",
                    fix=f"give at most {len(words)} items (more items than the file holds cannot be planted from it)",
                )
            groups[g] = words[:n_items]
            cut += 1
    if not cut:
        raise InputError(f"--items: the study has no {slot} groups", where=f"{study.path}: queries", fix="leave --items out")
    folder = Path(folder or tempfile.mkdtemp(prefix="fmat-power-"))
    path = folder / f"items-{n_items}" / f"{study.id}.yaml"  # the file's stem must be its id
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return load_study(path)


def worker_start() -> None:
    """The initializer of a pool's worker processes: they ignore SIGINT (Ctrl-C reaches the whole
    process group; the parent alone handles it and stops the pool: :func:`stop_pool`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now (Ctrl-C or an error in the parent): its queued worlds are cancelled and
    its workers terminated, without waiting for the worlds they run; no process is left behind.
    (``with ProcessPoolExecutor()`` would wait for every world queued: minutes.)"""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # before shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=2)


def _one_world(task) -> pd.DataFrame:
    """One world of :func:`power_table` (a top-level function: it runs in worker processes).
    The concept-level variant runs on its own (its realised value is not computed: its target
    is the planted effect); the others together (one analysis run where they allow it)."""
    study, plant, n, kind, others, seed, criteria, variants, items, realised = task
    world = cal.World(study, plant, n_models=int(n), others=float(others))
    rest = {k: v for k, v in variants.items() if k != CROSSED}
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        if rest:
            frames.append(cal.run_world(world, seed, criteria, rest, realised=realised, one_run=True))
        if CROSSED in variants:
            frames.append(cal.run_world(world, seed, criteria, {CROSSED: variants[CROSSED]}, realised=False))
    return pd.concat(frames, ignore_index=True).assign(models=int(n), kind=kind, items=items)


def power_table(
    study,
    plant,
    *,
    models: Sequence[int] = (3, 6, 12, 24),
    items: Sequence[int] | None = None,
    worlds: int = 20,
    others: float = 0.0,
    seed: int = 1,
    alpha: float = 0.05,
    criteria: Mapping[str, pd.DataFrame] | None = None,
    progress: Callable[[int], None] | None = None,
    jobs: int = 1,
    level: str = "words",
) -> pd.DataFrame:
    """Per number of items (``items``: :func:`study_with_items`; default the study's own, column
    ``items`` 0), number of models, analysis variant and judged row (statistic, condition):
    power (planted worlds, p < alpha) and false-positive rate (null worlds), each with its
    exact binomial 95% CI, the mean estimate over the planted worlds and the mean realised
    value of the first :data:`REALISED_WORLDS` of them.  ``progress(1)`` is called after each
    world; ``jobs`` > 1 runs the worlds in that many processes (the same numbers).  A wrong
    argument is an InputError naming it, before any world is drawn (:mod:`fmat.arguments`).

    ``level`` (column ``level``, :data:`LEVELS`): "words", "concept" (the ``crossed`` variant
    and the others beside it, null worlds of :func:`fmat.calibration.concept_null_plant`,
    ``realised`` from :func:`concept_targets`) or "both" (module docstring)."""
    if not isinstance(getattr(study, "queries", None), pd.DataFrame):
        raise InputError(
            f"study must be a study (fmat.load_study), not {arguments.shown(study)}",
            where="study",
            fix="give study=fmat.load_study('config/studies/3A.yaml')",
        )
    if not isinstance(plant, fplant.Plant):
        raise InputError(
            f"plant must be a world's plant for the study (fmat.plant.Plant), not {arguments.shown(plant)}",
            where="plant",
            fix="give plant=fmat.plant.load_world('config/world.yaml').plant(study.id)",
        )
    models = arguments.wholes("models", models, minimum=2)
    items = arguments.wholes("items", items, minimum=2, optional=True)
    worlds = arguments.whole("worlds", worlds, minimum=1)
    others = arguments.number("others", others, low=0, high=1, high_open=True)
    seed = arguments.whole("seed", seed, minimum=0, maximum=arguments.SEED_MAX)
    alpha = arguments.number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    criteria = arguments.mapping("criteria", criteria)
    progress = arguments.function("progress", progress)
    jobs = arguments.whole("jobs", jobs, minimum=1)
    level = arguments.text("level", level, choices=("words", "concept", "both"))
    fplant.check_plantable(study, str(getattr(study, "path", None) or "study"), "fmat power")  # before any world
    variants = variants_of(study)
    levels = ["words", "concept"] if level == "both" else [level]
    if "concept" in levels and CROSSED not in variants:
        name = (getattr(study, "analysis", None) or {}).get("name")
        raise InputError(
            f"study {study.id}'s analysis ({name}) has no concept-level test (inference: crossed)",
            where="level",
            fix="give level 'words' (these words in these models)",
        )
    # per level: its null worlds and the variants its rows report
    nulls = {"words": "null", "concept": "concept-null"}
    mine = {lv: level_variants(variants, lv) for lv in levels}
    plants = {"planted": plant, "null": cal.null_plant(plant), "concept-null": cal.concept_null_plant(plant)}
    runs_of = {"planted": sorted({v for lv in levels for v in mine[lv]}, key=list(variants).index)}
    for lv in levels:
        runs_of[nulls[lv]] = mine[lv]
    designs = {0: study} if not items else {int(i): study_with_items(study, int(i)) for i in items}
    tasks = [
        (
            design,
            plants[kind],
            int(n),
            kind,
            float(others),
            seed + k,
            dict(criteria or {}),
            {v: variants[v] for v in runs_of[kind]},
            i,
            kind == "planted" and k < REALISED_WORLDS,
        )
        for i, design in designs.items()
        for n in models
        for kind in runs_of
        for k in range(worlds)
    ]
    frames = []
    pool = ProcessPoolExecutor(max_workers=int(jobs), initializer=worker_start) if jobs > 1 else None
    try:
        done = (f.result() for f in as_completed([pool.submit(_one_world, t) for t in tasks])) if pool else map(_one_world, tasks)
        for frame in done:
            frames.append(frame)
            if progress:
                progress(1)
    except BaseException:  # Ctrl-C (KeyboardInterrupt) or a world's error: the pool stops now
        if pool:
            stop_pool(pool)
        raise
    if pool:
        pool.shutdown()
    runs = pd.concat(frames, ignore_index=True)
    concept = concept_targets(study, plant, criteria) if "concept" in levels else {}
    settings = [(i, n, lv) for i in designs for n in models for lv in levels]
    return _summary(runs, settings, {lv: nulls[lv] for lv in levels}, mine, alpha, concept)


def _summary(runs: pd.DataFrame, settings, nulls: Mapping, mine: Mapping, alpha: float, concept: Mapping) -> pd.DataFrame:
    """:func:`power_table`'s rows from its worlds' ``runs``: per (items, models, level) of
    ``settings``, variant and judged row, power and false-positive rate with their CIs."""
    keys = ["variant", "statistic", "condition"]
    rows = []
    for i, n, lv in settings:
        here = runs[(runs["models"] == int(n)) & (runs["items"] == i)]
        null = here[here["kind"] == nulls[lv]].groupby(keys, sort=False)["p"].apply(lambda s: list(s < alpha))
        planted = here[(here["kind"] == "planted") & here["variant"].isin(mine[lv])]
        for key, g in planted.groupby(keys, sort=False):
            hit = list(g["p"] < alpha)
            fp = null.get(key, [])
            pw, fr = cal.binomial(sum(hit), len(hit)), cal.binomial(sum(fp), len(fp))
            rows.append(
                {
                    "items": i,
                    "models": int(n),
                    "level": LEVELS[lv],
                    **dict(zip(keys, key)),
                    "worlds": len(hit),
                    # these words: the mean over the first worlds (NaNs skipped); the concept: the
                    # planted effect on the analysis's scale (concept_targets)
                    "realised": float(g["realised"].mean()) if lv == "words" else concept.get(key[1:], np.nan),
                    "estimate": float(g["value"].mean()),
                    **dict(zip(("power", "power_low", "power_high"), pw)),
                    **dict(zip(("fpr", "fpr_low", "fpr_high"), fr)),
                }
            )
    return pd.DataFrame(rows)


def concept_targets(study, plant, criteria: Mapping[str, pd.DataFrame] | None = None) -> dict[tuple[str, str], float]:
    """``{(statistic, condition): value}``: the concept-level value of each headline row (model
    ``all``), the ``realised`` column of the rows of level "the concept"
    (:func:`fmat.plant.concept_values`). Empty where the oracle has no closed form for the design."""
    try:
        table = fplant.concept_values(study.path, plant, ["m1", "m2", "m3"], criteria)
    except Exception:  # no closed form for this design (the oracle's gaps): no value, as before
        return {}
    table = table[table["model"].astype(str) == "all"]
    return {(str(r.statistic), str(r.condition)): float(r.value) for r in table.itertuples()}


def controls(study, plant, criteria: Mapping[str, pd.DataFrame] | None = None) -> tuple[set[tuple[str, str]], list]:
    """Where the world plants nothing: ``(rows, patterns)``. ``rows``: the judged rows
    (statistic, condition) whose exact value (:func:`fmat.oracle.oracle`, three models) is the
    same with the plant's effects as without them (e.g. 2A's notice-ignore relation beside a
    planted like-dislike); ``patterns``: (statistic, condition pattern) of the world's
    ``absent: true`` expectations (2A's personal-societal: planted alike for both perceivers).
    A control's rate of p < alpha in the planted worlds is a false-positive rate, not power.
    Analyses without closed forms (LPBS) give the patterns only."""
    try:
        models = ["m1", "m2", "m3"]
        with_effects = oracle(study.path, plant, models, criteria)
        without = oracle(study.path, replace(plant, effects=[]), models, criteria)
    except Exception:  # no closed form for this design (the oracle's gaps): the expectations alone
        with_effects = without = pd.DataFrame(columns=["statistic", "condition", "model", "value"])
    key = ["statistic", "condition"]
    both = with_effects[with_effects["model"].astype(str) == "all"].merge(
        without[without["model"].astype(str) == "all"], on=key, suffixes=("", "_null")
    )
    same = np.isclose(both["value"].astype(float), both["value_null"].astype(float), rtol=1e-9, atol=1e-12)
    rows = {(str(r.statistic), str(r.condition)) for r in both[same].itertuples()}
    patterns = [
        (str(e.get("statistic")), str(e.get("condition", "all")))
        for e in plant.expect
        if e.get("absent") and str(e.get("model", "all")) in ("all", "*")
    ]
    return rows, patterns


def mark_controls(table: pd.DataFrame, study, plant, criteria: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """``table`` (:func:`power_table`) with a column ``control``: True for a row where nothing is
    planted (:func:`controls`), whose ``power`` is then a false-positive rate in planted worlds."""
    rows, patterns = controls(study, plant, criteria)
    flags = [
        (str(s), str(c)) in rows or any(str(s) == ps and fnmatchcase(str(c), pc) for ps, pc in patterns)
        for s, c in zip(table["statistic"], table["condition"])
    ]
    return table.assign(control=pd.Series(flags, index=table.index, dtype=bool))


def headline(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the study's overall test, per variant: condition ``all`` where the design has
    one; else the first planted row whose condition is an average (e.g. 2A's
    ``like-dislike:average``: both perceivers); else the first planted row; else the first row.

    Examples
    --------
    >>> t = pd.DataFrame({"variant": "paper", "models": 3, "statistic": "d", "control": [False, False, False, True],
    ...     "condition": ["like-dislike:personal", "like-dislike:societal", "like-dislike:average", "notice-ignore:average"]})
    >>> headline(t)["condition"].tolist()
    ['like-dislike:average']
    """
    if "control" not in table.columns:
        table = table.assign(control=False)
    keep = []
    for _, g in table.groupby("variant", sort=False):
        planted = g[~g["control"].astype(bool)]
        cond = planted["condition"].astype(str)
        picks = (g[g["condition"].astype(str) == "all"], planted[cond.str.endswith("average")], planted, g)
        first = next(pick for pick in picks if len(pick)).iloc[0]
        keep.append((first["variant"], first["statistic"], first["condition"]))
    key = list(zip(table["variant"], table["statistic"], table["condition"]))
    return table[[k in keep for k in key]]


def power_plot(table: pd.DataFrame, path, title: str = "") -> None:
    """Power (left; rows where something is planted) and false-positive rate (right: each planted
    row's in the null worlds of its ``level``; each control's, :func:`mark_controls`, in the planted
    worlds) against the number of models, at most 8 lines a panel (the overall test first:
    :func:`headline`), as a PNG.  With several numbers of items: the overall test only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    defaults = {"items": 0, "control": False, "level": ""}  # level: the question a row answers
    table = table.assign(**{k: v for k, v in defaults.items() if k not in table.columns})
    table = table.assign(control=table["control"].astype(bool))
    several = table["items"].nunique() > 1
    key = ["items", "level", "variant", "statistic", "condition"]
    first = table.set_index(key[1:]).index.isin(headline(table).set_index(key[1:]).index)
    # several numbers of items: one line per number and variant, the overall row only; else the overall test first
    table = table[first] if several else pd.concat([table[first], table[~first]])
    planted = table[~table["control"]]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    handles: dict = {}
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour_of: dict = {}
    for ax, col in zip(axes, ("power", "fpr")):
        drawn = [(k, g, col, "") for k, g in planted.groupby(key, sort=False)]
        if col == "fpr":  # a control's rejections in the planted worlds are false positives too
            drawn += [(k, g, "power", " [control]") for k, g in table[table["control"]].groupby(key, sort=False)]
        for k, g, column, tag in drawn[:8]:
            name = f"{k[3]} {k[4]} ({k[2]}" + (f", {k[1]}" if k[1] else "") + ")" + (f", {k[0]} items" if several else "")
            if name not in colour_of:  # one colour per row, in both panels
                colour_of[name] = palette[len(colour_of) % len(palette)]
            h = ax.errorbar(
                g["models"],
                100 * g[column],
                yerr=[100 * (g[column] - g[f"{column}_low"]), 100 * (g[f"{column}_high"] - g[column])],
                marker="s" if tag else "o",
                ls=":" if tag else "-",
                color=colour_of[name],
                label=name + tag,
                capsize=2,
                alpha=0.9,
            )
            handles.setdefault(name + tag, h)
        ax.set_ylim(-3, 103)
    axes[0].set_ylabel("power at the planted size, %\n(rows where something is planted)")
    axes[1].set_ylabel("false-positive rate, %\n(nothing planted)")
    axes[1].axhline(5, color="grey", ls="--", lw=1)
    if not len(planted):
        axes[0].text(0.5, 0.5, "no row with a planted effect", ha="center", transform=axes[0].transAxes)
    for ax in axes:
        ax.set_xlabel("number of models")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(table["models"].unique()), [str(m) for m in sorted(table["models"].unique())])
        ax.minorticks_off()
    fig.suptitle(title)
    ncol = 2 if len(handles) > 3 else max(1, len(handles))
    fig.legend(
        list(handles.values()),
        list(handles),
        loc="lower center",
        ncol=ncol,
        fontsize=8,
        frameon=False,
        title="the overall test first; [control]: nothing planted, its rate in the planted worlds; grey dashes: 5%",
        title_fontsize=8,
    )
    rows = -(-len(handles) // ncol)
    fig.tight_layout(rect=(0, 0.05 + 0.045 * rows, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
