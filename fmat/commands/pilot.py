"""``fmat pilot``: pilot a study design on tiny models that learned a planted world (docs/planting.md)."""

from __future__ import annotations

import math
import re
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import claim_folder, read_table, settle_folder_record, write_table
from ._common import add_world_args, command, positive_int


def register(sub) -> None:
    p = command(
        sub,
        "pilot",
        help="train tiny models on a planted world and see whether a study's design recovers it",
        description="Known truth for your own design, before any real model is run. The world file "
        "(docs/planting.md) says which associations hold for the study; fmat trains one tiny "
        "masked LM per tokenizer family on sentences generated from it (the study's own "
        "templates and words), scores the study on them, and compares their LPRs with the "
        "planted ones, model by model (r, slope), runs the study's own analysis (fmat.analyses: "
        "d, b, r with CI and p) and judges every expectation of the world at its level: words (the default: "
        "against the value the world implies for these items and models, fmat.oracle) or concept (level: concept: "
        "the concept-level test, inference: crossed, against the planted effect). Writes models/, scores.parquet, "
        "lpr.parquet, planted_lpr.parquet, stats.parquet, recovery.csv and expectations.csv into "
        "the output folder. Small models, generated text: this shows "
        "whether the design finds what is there, not what real BERT models hold.",
        example="fmat pilot config/studies/3A.yaml --world config/world.yaml -o pilot-3A",
    )
    add_world_args(
        p,
        force="an output folder that holds another study's pilot: remove the files that pilot recorded first "
        "(without it, refused; your own files and models are never removed)",
    )
    p.add_argument(
        "--families",
        default="bert-uncased,roberta,albert",
        help="tokenizer families of the tiny models, comma-separated (default: %(default)s)",
    )
    p.add_argument("--steps", type=int, default=600, help="training steps per model (default: %(default)s)")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch CPU threads for training and scoring (default: %(default)s: tiny models train fastest "
        "on one thread; beside other work, 2 threads took 15 times longer: docs/planting.md)",
    )
    p.set_defaults(func=_run)


def _run(args) -> int:
    """``fmat pilot``: train tiny models on the world's plant, run the study's stages on them and
    judge what they recover."""
    from .. import plant, stages

    families = _families(args)
    study = stages.design(args.study, args.criteria)
    plant.check_plantable(study, str(args.study), "fmat pilot")  # LPBS: no planted prior; before any training
    planted, criteria = _planted_world(args, study, families)
    out = Path(args.output)
    models = _train_models(args, study, planted, criteria, families, out)
    args.kept = list(models.values())  # Ctrl-C from here on: the cli names the trained models as kept
    per_model, status, checks = _score_and_judge(args, study, planted, criteria, models, out)
    settle_folder_record(out)  # the record lists what this pilot wrote (expectations.csv only with expectations)
    _print_results(study, planted, per_model, status, checks, out)
    return 0


def _families(args) -> list[str]:
    """The tiny model families of ``--families``: known ones, two or more (ICC among the models)."""
    from .. import tiny

    families = [f for f in str(args.families).split(",") if f]
    bad = [f for f in families if f not in tiny.FAMILIES]
    if bad or not families:
        raise InputError(
            f"unknown tiny model famil{'y' if len(bad) == 1 else 'ies'} {', '.join(bad) or '(none)'}",
            where="--families",
            fix=f"use some of {', '.join(tiny.FAMILIES)}",
        )
    if len(families) < 2:
        raise InputError(
            "a pilot needs two or more models (ICC among the models)",
            where="--families",
            fix="name two or more families, e.g. bert-uncased,roberta",
        )
    return families


def _planted_world(args, study, families) -> tuple:
    """``(planted, criteria)``: the world's plant for the study and the criterion tables, checked."""
    from .. import plant
    from ..stages import check_study_criteria, criterion_table_path

    world = plant.load_world(args.world)
    planted = world.plant(study.id)
    if planted is None:
        raise InputError(
            f"the world plants nothing for study {study.id!r} (it names {', '.join(world.plants)})",
            where=f"{args.world}: studies",
            fix=f"add a block `{study.id}:` with its effects (docs/planting.md)",
        )
    tables = {str(e.per_item["table"]) for e in planted.effects if e.per_item}
    criteria = {}
    for name in sorted(tables):
        path = criterion_table_path(args.criteria, name)
        if not path.is_file():
            raise InputError(
                f"criterion table {name!r} (per_item.table) not found: {path}",
                where=str(args.world),
                fix="give the folder that holds it with --criteria",
            )
        criteria[name] = read_table(path)
    plant.check_plant(planted, study, criteria, where=str(args.world))
    criteria.update(_analysis_criteria(study, args.criteria, criteria))
    check_study_criteria(study, criteria)  # the analysis' criterion columns, numbers and items
    _check_judgeable(planted, study, args.world)  # before any training
    # every expectation names a row the analysis will produce (run on the world's own probabilities: seconds)
    plant.check_expected_rows(planted, study, [f"pilot-{f}" for f in families], criteria, where=str(args.world))
    return planted, criteria


def _train_models(args, study, planted, criteria, families, out) -> dict:
    """Claim the output folder and train one tiny model per family: ``{name: folder}``."""
    from .. import plant, tiny

    names = [
        "models/",  # the folder that holds the models: removed by --force only when nothing else is left in it
        *(f"models/pilot-{fam}" for fam in families),
        "scores.parquet",
        "lpr.parquet",
        "planted_lpr.parquet",
        "recovery.csv",
        "expectations.csv",
        "stats.parquet",
    ]
    claim_folder(out, command="pilot", study=study.id, names=names, force=args.force)
    import torch

    torch.set_num_threads(int(args.threads))  # training and scoring: the threads given, never every core
    words = sorted({w for c in ("M_word", "T_word", "A_word") if c in study.queries for w in study.queries[c].astype(str)})
    models = {}
    try:
        for k, fam in enumerate(families):
            name = f"pilot-{fam}"
            sentences = plant.training_sentences([(study, planted)], name, criteria)
            print(
                f"fmat pilot: training {name} on {len(sentences)} sentences ({len(sentences.contexts)} contexts), "
                f"{args.steps} steps",
                flush=True,
            )
            models[name] = str(
                tiny.build_trained_model(out / "models" / name, fam, words, sentences, seed=k, steps=args.steps, progress=True)
            )
    except KeyboardInterrupt as err:  # a pilot has no --resume: its models are trained again
        kept = ", ".join(models.values()) or "no trained model yet"
        print(f"fmat pilot: interrupted; kept: {kept}", file=sys.stderr)
        print("  run the same command again to start over (a pilot trains its models anew)", file=sys.stderr)
        err.fmat_told = True  # type: ignore[attr-defined]  # the cli adds nothing
        raise
    return models


def _score_and_judge(args, study, planted, criteria, models, out) -> tuple:
    """The stages on the trained models (:mod:`fmat.stages`) and the planted truth beside them
    -> ``(per_model, status, checks)``, each table written."""
    from .. import plant, stages
    from ..oracle import oracle
    from ..runner import concat_scores

    scored = [  # with the study file's score: options, as fmat study runs it
        stages.score(folder, study.queries, stages.study_options(study, "score"), name=name, threads=args.threads, progress=True)
        for name, folder in models.items()
    ]
    scores = concat_scores(scored, models=list(models))
    write_table(scores, out / "scores.parquet")
    ours = stages.lpr_table(study, scores)
    truth = stages.lpr_table(study, plant.planted_scores(study, planted, list(models), criteria))
    write_table(ours, out / "lpr.parquet")
    write_table(truth, out / "planted_lpr.parquet")
    per_model = _per_model(models, ours, truth)
    _, rel = stages.reliability_tables(study, scores, ours, sid=study.id)
    stats, _, status = stages.analyse(study, scores, ours, rel, criteria, sid=study.id)
    write_table(stats, out / "stats.parquet")
    # what this world implies for these items and models, the value each CI must cover (fmat.oracle);
    # an expectation at level: concept: the concept-level test against the planted effect (docs/planting.md)
    realised = oracle(args.study, planted, list(models), criteria, scores=scores)
    concept = crossed = None
    if any(plant.expectation_level(e) == "concept" for e in planted.expect):
        crossed = plant.concept_rows(study, scores, ours, criteria, stats)
        concept = plant.concept_values(args.study, planted, list(models), criteria, scores=scores)
    checks = plant.recovery(planted, stats, realised, crossed, concept)
    per_model.to_csv(out / "recovery.csv", index=False)
    if len(checks):
        checks.to_csv(out / "expectations.csv", index=False)
    return per_model, status, checks


def _print_results(study, planted, per_model, status, checks, out) -> None:
    """What the pilot found: the plant, each model's agreement with it, the expectations' verdicts."""
    from .. import plant

    learned = learned_warnings(per_model)
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 70):
        print(*planted_lines(planted, study), sep="\n")  # one line or more
        print(
            "per model: its LPRs against the planted ones (r_planted; slope: 1 = the planted size; "
            "spread: their SD over the items of a template and relation / the planted SD, about 1 or more when learned)"
        )
        print(per_model.round(3).to_string(index=False))
        for note in status.get("notes", []):
            print(f"analysis {status.get('analysis')}: {note}")
        if len(checks):
            print(*scale_lines(study, checks), sep="\n")
            shown = checks.assign(
                nominal=[nominal_text(e, planted) for e in _expectation_of_rows(planted, checks)],
                realised=checks["realised"].round(3),
                ours=checks["value"].round(3),
            )
            cols = ["statistic", "condition", "model", "level", "nominal", "realised", "ours", "ci_low", "ci_high", "p"]
            print(shown[[*cols, "verdict"]].round(3).to_string(index=False))
            for r in checks.itertuples():
                if r.verdict != plant.RECOVERED or "level: concept judges" in str(r.reason):
                    print(f"  {r.statistic} {r.condition} {r.model} ({r.level}): {r.verdict}: {r.reason}")
                elif not np.isfinite(r.realised) and str(r.planted)[:1] in "-0123456789":
                    print(
                        f"  {r.statistic} {r.condition} {r.model}: no realised value (fmat.oracle has no closed form "
                        "for it): judged against the planted value"
                    )
            counts = checks["verdict"].value_counts()
            nothing = counts.get(plant.NOTHING_FOUND, 0)
            print(
                f"fmat pilot: {counts.get(plant.RECOVERED, 0)} of {len(checks)} expectation row(s) recovered"
                + (f", {nothing} {plant.NOTHING_FOUND} (controls: nothing planted for the concept)" if nothing else "")
                + (" (but the models have not learned the world: see the warning below)" if learned else "")
            )
        else:
            print("fmat pilot: the world states no expectation for this study (expect:): only the per-model agreement above")
    for line in learned:
        print(line)
    print(
        f"fmat pilot: wrote {out}/ (models/, scores.parquet, lpr.parquet, planted_lpr.parquet, stats.parquet, recovery.csv"
        + (", expectations.csv)" if len(checks) else ")")
    )


def _cells(table) -> list[str]:
    """The LPR table's columns that hold one context and relation apart from its items; the
    [MASK] words only where a cell then holds 3 or more LPRs (a trend study's are its items)."""
    keys = [c for c in ("query", "M_word") if c in table.columns]
    if "M_word" in keys and table.groupby(keys, observed=True).size().median() < 3:
        keys.remove("M_word")
    return keys


def spread_ratio(ours, truth) -> float:
    """The median, over cells (:func:`_cells`), of the SD of one model's LPRs over the items of
    a cell divided by the SD of the planted ones (the same rows): about 1 or more for a model that
    learned the items' differences, near 0 for one that did not (docs/planting.md).

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"query": ["q"] * 4, "T_word": list("abcd"), "LPR": [1.0, -1.0, 0.5, -0.5]})
    >>> round(spread_ratio(truth.assign(LPR=truth["LPR"] * 0.1), truth), 3)
    0.1
    """
    keys = _cells(truth)
    a = ours.reset_index(drop=True).assign(_p=truth["LPR"].to_numpy(float))
    groups = a.groupby(keys, observed=True, sort=False) if keys else [((), a)]
    ratios = []
    for _, g in groups:
        o, p = g["LPR"].to_numpy(float), g["_p"].to_numpy(float)
        ok = np.isfinite(o) & np.isfinite(p)
        if ok.sum() >= 3 and np.std(p[ok]) > 0:
            ratios.append(np.std(o[ok], ddof=1) / np.std(p[ok], ddof=1))
    return float(np.median(ratios)) if ratios else float("nan")


def _per_model(models, ours, truth):
    """Per model: r and slope of its LPRs on the planted ones, their spread within a cell
    relative to the planted (:func:`spread_ratio`), and both means."""
    rows = []
    for m in models:
        mine, plant_rows = ours["model"].astype(str) == m, truth["model"].astype(str) == m
        a = ours.loc[mine, "LPR"].to_numpy(float)
        b = truth.loc[plant_rows, "LPR"].to_numpy(float)
        ok = np.isfinite(a) & np.isfinite(b)
        fit = ok.sum() > 2 and np.std(b[ok]) > 0
        rows.append(
            {
                "model": m,
                "n": int(ok.sum()),
                "r_planted": float(np.corrcoef(a[ok], b[ok])[0, 1]) if fit else float("nan"),
                "slope": float(np.polyfit(b[ok], a[ok], 1)[0]) if fit else float("nan"),
                "spread": spread_ratio(ours.loc[mine], truth.loc[plant_rows].reset_index(drop=True)),
                "mean_planted": float(np.mean(b[ok])),
                "mean_ours": float(np.mean(a[ok])),
            }
        )
    return pd.DataFrame(rows)


#: a model has learned the world when its per-item LPRs reach these r, slope and spread on the
#: planted ones (:func:`_per_model`; docs/planting.md, "Has the model learned the world?")
LEARNED_R = 0.5
LEARNED_SLOPE = 0.5
LEARNED_SPREAD = 0.5


def learned_warnings(per_model) -> list[str]:
    """Warning lines (none when every model learned the world): a model whose ``r_planted``,
    ``slope`` or ``spread`` (where the table has it) is below :data:`LEARNED_R`,
    :data:`LEARNED_SLOPE` or :data:`LEARNED_SPREAD` has not learned what was planted.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": ["a", "b"], "r_planted": [0.95, 0.07], "slope": [0.99, 0.005]})
    >>> print("\\n".join(learned_warnings(rows)))  # doctest: +ELLIPSIS
    fmat pilot: WARNING: 1 of 2 model(s) have not learned the world ...
      b: r_planted = 0.07 (< 0.5), slope = 0.005 (< 0.5)
      ...
    >>> learned_warnings(rows.iloc[:1])
    []
    """
    bad = []
    for r in per_model.itertuples():
        why = []
        for name, least in (("r_planted", LEARNED_R), ("slope", LEARNED_SLOPE)):
            value = float(getattr(r, name))
            if not math.isfinite(value) or value < least:
                why.append(f"{name} = {value:.2g} (< {least:g})")
        spread = float(getattr(r, "spread", float("nan")))
        if math.isfinite(spread) and spread < LEARNED_SPREAD:
            why.append(f"spread = {spread:.2g} (< {LEARNED_SPREAD:g}: its LPRs hardly differ between the items)")
        if why:
            bad.append(f"  {r.model}: {', '.join(why)}")
    if not bad:
        return []
    return [
        f"fmat pilot: WARNING: {len(bad)} of {len(per_model)} model(s) have not learned the world "
        "(their LPRs do not follow the planted ones): the realised values and verdicts above say nothing about the design",
        *bad,
        "  train longer (--steps, e.g. 600) or plant more sentences (samples: in the world file); docs/planting.md, "
        '"Has the model learned the world?"',
    ]


def planted_lines(planted, study) -> list[str]:
    """What the world plants for the study, each effect in the units the world file states it
    (a ``d`` in sigma units: LPR = d x sigma)."""
    effects = [e for e in planted.effects if e.lpr != 0]
    if not effects:
        return [f"fmat pilot: the world plants nothing for {study.id} (a null control): every expectation is of no effect"]
    lines = [f"fmat pilot: the world plants for {study.id} (nominal, in the world file's units):"]
    for e in effects:
        what = " x ".join(f"{slot} {a} vs {b}" for slot, (a, b) in e.contrast.items())
        where = "; ".join(f"{k}: {', '.join(v)}" for k, v in e.where.items())
        form = " per item" if e.per_item else " per unit of the trend" if e.trend else ""
        lines.append(f"  {what}{' (where ' + where + ')' if where else ''}:{form} {e.stated}")
    return lines


def scale_lines(study, checks) -> list[str]:
    """How to read the expectation table; for a pooled-SD d (:func:`fmat.analyses.pooled_sd`),
    why its realised d differs from the nominal."""
    from .. import analyses

    lines = [
        "expectations: nominal = as the world file states it (a d in sigma units: LPR / sigma); realised = the target "
        "the row is judged against, on the analysis's own scale, by its level: words (these words in these models: "
        "the paper's inference against the realised value, the statistic on the world's noise-free planted "
        "probabilities for these items and models, fmat.oracle) or concept (the concept: the concept-level test, "
        "inference: crossed, against the planted effect itself, 0 where nothing is planted; docs/planting.md, "
        '"Three targets"); ours = the estimate, with its 95% CI and p'
    ]
    spec = dict(getattr(study, "analysis", None) or {})
    name = str(spec.get("name"))
    pooled = analyses.pooled_sd(name, spec.get("options"))
    if pooled and "d" in set(checks["statistic"].astype(str)):
        set_as = "; ".join(f"{k}: {v}" for k, v in pooled.items())
        other = "; ".join(
            f"{k}: {'/'.join(str(a) for a in analyses.option_values(name, k) if str(a) != str(v)) or 'another value'}"
            for k, v in pooled.items()
        )
        lines.append(
            f"  {name}'s d is a pooled-SD d (WEAT; {set_as}): the LPR difference divided by the SD "
            "of the items' LPRs, not by sigma. The items' LPRs vary less than sigma, so its realised d is larger than "
            f"the world's nominal d (e.g. 0.8 -> 1.1-1.5); {other} in the study file measures d as the world does"
        )
    return lines


def _expectation_of_rows(planted, checks) -> list[dict]:
    """The expectation each row of :func:`fmat.plant.recovery` judged (rows come in the order of
    ``planted.expect``)."""
    out, k = [], 0
    expect = list(planted.expect)
    for r in checks.itertuples():
        while k < len(expect) and not _row_matches(expect[k], r):
            k += 1
        out.append(expect[k] if k < len(expect) else {})
    return out


def _row_matches(e, r) -> bool:
    cond, model = str(e.get("condition", "all")), str(e.get("model", "all"))
    return (
        str(e.get("statistic")) == str(r.statistic)
        and str(e.get("level", "words")) == str(getattr(r, "level", "words"))
        and (fnmatchcase(str(r.condition), cond) or str(r.condition) == cond)
        and (fnmatchcase(str(r.model), model) or str(r.model) == model)
    )


def nominal_text(e, planted) -> str:
    """An expectation's nominal value as the world states it; for a d stated by sign only, the
    planted d of the effects that apply to its condition (when they share one size).

    Examples
    --------
    >>> from fmat import plant
    >>> w = plant.world_from_mapping({"studies": {"s": {"effects": [
    ...     {"contrast": {"MASK": ["Pos", "Neg"], "TARGET": ["A", "B"]}, "where": {"MASK": ["like", "dislike"]}, "d": 0.8}]}}})
    >>> nominal_text({"statistic": "d", "condition": "like-dislike:personal", "sign": 1}, w.plant("s"))
    '> 0 (planted d = 0.8)'
    >>> nominal_text({"statistic": "d", "condition": "notice-ignore:*", "absent": True}, w.plant("s"))
    '0 (nothing planted)'
    """
    from ..plant import _rule_text

    if not e:
        return ""
    text = _rule_text(e)[0]
    if str(e.get("statistic")) != "d" or "value" in e or e.get("absent"):
        return text
    words = set(re.split(r"[^\w]+", str(e.get("condition", "all"))))
    sizes = {
        x.d
        for x in planted.effects
        if x.lpr != 0 and x.d is not None and all(str(v) in words for vs in x.where.values() for v in vs)
    }
    return f"{text} (planted d = {sizes.pop():g})" if len(sizes) == 1 else text


#: statistics the reliability stage makes whatever the analysis
RELIABILITY_STATISTICS = ("ICC", "alpha")


def _analysis_criteria(study, folder, have) -> dict:
    """The criterion tables the study's analysis reads, from ``folder`` (before any training)."""
    from .. import analyses
    from ..stages import study_criteria_tables

    spec = dict(getattr(study, "analysis", None) or {})
    if not spec.get("name"):
        return {}
    need = [t for t in analyses.criteria_needed(str(spec["name"]), spec.get("options")) if t not in have]
    return study_criteria_tables(study, folder) if need else {}


def _check_judgeable(planted, study, world_path) -> None:
    """Every expectation of the world can be judged: one on a statistic other than ICC and alpha
    needs a registered analysis; else an error, before any training."""
    from .. import analyses

    name = str((getattr(study, "analysis", None) or {}).get("name") or "")
    ran = name in analyses.available()
    for i, e in enumerate(planted.expect):
        stat = str(e.get("statistic", ""))
        if not stat.startswith(RELIABILITY_STATISTICS) and not ran:
            raise InputError(
                f"the world expects {stat} ({e.get('condition', 'all')}), which only the study's analysis computes, "
                f"and the study file names {'no analysis' if not name else 'the unregistered analysis ' + repr(name)}",
                where=f"{world_path}: studies.{planted.study}.expect[{i}]",
                fix="name a registered analysis in the study file (analysis: {name, options}; "
                "fmat.analyses.available()), or drop the expectation",
            )
