"""``fmat pilot``: pilot a study design on tiny models that learned a planted world (docs/planting.md)."""

from __future__ import annotations

from ..io import claim_folder
from ._common import command, files, positive_int


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
        "d, b, r with CI and p) and judges every expectation of the world against the value the "
        "world implies for these items and models (fmat.oracle). Writes models/, scores.parquet, "
        "lpr.parquet, planted_lpr.parquet, stats.parquet, recovery.csv and expectations.csv into "
        "the output folder. Small models, generated text: this shows "
        "whether the design finds what is there, not what real BERT models hold.",
        example="fmat pilot config/studies/3A.yaml --world config/world.yaml -o pilot-3A",
    )
    p.add_argument("study", help="the study file (config/studies/<id>.yaml or your own)")
    p.add_argument("--world", required=True, help="world file that plants associations for the study's id")
    p.add_argument("-o", "--output", required=True, help="output folder (created)")
    p.add_argument(
        "--families",
        default="bert-uncased,roberta,albert",
        help="tokenizer families of the tiny models, comma-separated (default: %(default)s)",
    )
    p.add_argument("--steps", type=int, default=600, help="training steps per model (default: %(default)s)")
    p.add_argument(
        "--criteria",
        default="resources/criteria",
        help="folder of criterion tables the study or the world names (default: %(default)s)",
    )
    p.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch CPU threads for training and scoring (default: %(default)s: tiny models train fastest "
        "on one thread; beside other work, 2 threads took 15 times longer: docs/planting.md)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="an output folder that holds another study's pilot: remove its files first (without it, refused)",
    )
    files(p, inputs=("study", "world"), output="folder")
    p.set_defaults(func=_run)


def _run(args) -> int:
    import sys
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from .. import analyses, plant, tiny
    from ..errors import InputError
    from ..io import read_table, write_table
    from ..oracle import oracle
    from ..pipeline import lpr_table, reliability_tables
    from ..runner import run
    from ..study import load_study

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
    study = load_study(args.study, criteria_dir=args.criteria)
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
        path = Path(args.criteria) / f"{name}.parquet"
        if not path.is_file():
            raise InputError(
                f"criterion table {name!r} (per_item.table) not found: {path}",
                where=str(args.world),
                fix="give the folder that holds it with --criteria",
            )
        criteria[name] = read_table(path)
    plant.check_plant(planted, study, criteria, where=str(args.world))
    criteria.update(_analysis_criteria(study, args.criteria, criteria))
    _check_judgeable(planted, study, args.world)  # before any training
    out = Path(args.output)
    names = [
        "models",
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
    except KeyboardInterrupt:
        # Ctrl-C: what was kept (a pilot has no --resume: its models are trained again)
        kept = ", ".join(models.values()) or "no trained model yet"
        print(f"fmat pilot: interrupted; kept: {kept}", file=sys.stderr)
        print("  run the same command again to start over (a pilot trains its models anew)", file=sys.stderr)
        raise
    scores = run(models, study.queries, threads=args.threads, progress=True)  # a progress bar per model
    write_table(scores, out / "scores.parquet")
    ours = lpr_table(study, scores)
    truth = lpr_table(study, plant.planted_scores(study, planted, list(models), criteria))
    write_table(ours, out / "lpr.parquet")
    write_table(truth, out / "planted_lpr.parquet")
    per_model = _per_model(models, ours, truth)
    _, rel = reliability_tables(study, scores, ours, sid=study.id)
    # the study's own analysis, as fmat study and the workflow run it (fmat.analyses)
    stats, _, status = analyses.analysis_stage(study, scores, ours, rel, criteria, sid=study.id)
    write_table(stats, out / "stats.parquet")
    # what this world implies for these items and models (fmat.oracle): the value each CI must cover
    # a pooled-SD d is realised on the scale of these scores' own SD (docs/calibration.md)
    realised = oracle(args.study, planted, list(models), criteria, scores=scores)
    checks = plant.recovery(planted, stats, realised)
    per_model.to_csv(out / "recovery.csv", index=False)
    if len(checks):
        checks.to_csv(out / "expectations.csv", index=False)
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 70):
        print(per_model.round(3).to_string(index=False))
        for note in status.get("notes", []):
            print(f"analysis {status.get('analysis')}: {note}")
        if len(checks):
            shown = checks.assign(realised=checks["realised"].round(3), value=checks["value"].round(3))
            print(
                shown[["statistic", "condition", "model", "planted", "realised", "value", "ci_low", "ci_high", "p", "verdict"]]
                .round(3)
                .to_string(index=False)
            )
            for r in checks.itertuples():
                if r.verdict != plant.RECOVERED:
                    print(f"  {r.statistic} {r.condition} {r.model}: {r.verdict}: {r.reason}")
                elif not np.isfinite(r.realised) and str(r.planted)[:1] in "-0123456789":
                    print(
                        f"  {r.statistic} {r.condition} {r.model}: no realised value (fmat.oracle has no closed form "
                        "for it): judged against the planted value"
                    )
            counts = checks["verdict"].value_counts()
            print(f"fmat pilot: {counts.get(plant.RECOVERED, 0)} of {len(checks)} expectation row(s) recovered")
        else:
            print("fmat pilot: the world states no expectation for this study (expect:): only the per-model agreement above")
    print(
        f"fmat pilot: wrote {out}/ (models/, scores.parquet, lpr.parquet, planted_lpr.parquet, stats.parquet, recovery.csv"
        + (", expectations.csv)" if len(checks) else ")")
    )
    return 0


def _per_model(models, ours, truth):
    """Per model: r and slope of its LPRs on the planted ones, and both means."""
    import numpy as np
    import pandas as pd

    rows = []
    for m in models:
        a = ours.loc[ours["model"].astype(str) == m, "LPR"].to_numpy(float)
        b = truth.loc[truth["model"].astype(str) == m, "LPR"].to_numpy(float)
        ok = np.isfinite(a) & np.isfinite(b)
        fit = ok.sum() > 2 and np.std(b[ok]) > 0
        rows.append(
            {
                "model": m,
                "n": int(ok.sum()),
                "r_planted": float(np.corrcoef(a[ok], b[ok])[0, 1]) if fit else float("nan"),
                "slope": float(np.polyfit(b[ok], a[ok], 1)[0]) if fit else float("nan"),
                "mean_planted": float(np.mean(b[ok])),
                "mean_ours": float(np.mean(a[ok])),
            }
        )
    return pd.DataFrame(rows)


#: statistics the reliability stage makes whatever the analysis
RELIABILITY_STATISTICS = ("ICC", "alpha")


def _analysis_criteria(study, folder, have) -> dict:
    """The criterion tables the study's analysis reads, from ``folder`` (before any training)."""
    from ..study_run import study_criteria_tables

    spec = dict(getattr(study, "analysis", None) or {})
    if not spec.get("name"):
        return {}
    from .. import analyses

    need = [t for t in analyses.criteria_needed(str(spec["name"]), spec.get("options")) if t not in have]
    return study_criteria_tables(study, folder) if need else {}


def _check_judgeable(planted, study, world_path) -> None:
    """Every expectation of the world can be judged: one on a statistic other than ICC and alpha
    needs the study's analysis (a registered one); else an error now, before any training."""
    from .. import analyses
    from ..errors import InputError

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
