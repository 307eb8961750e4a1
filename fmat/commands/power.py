"""``fmat power``: power and false-positive rate of a study's design for 3 to 24 models
(docs/calibration.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..arguments import SEED_MAX
from ..errors import InputError
from ..io import claim_folder
from ._common import add_world_args, command


def register(sub) -> None:
    p = command(
        sub,
        "power",
        help="power and false-positive rate of a study's design and analysis, by number of models",
        description="How many models does your design need? For each number of models, fmat "
        "draws worlds of perfect learners (models that hold exactly the share of each option in "
        "their own sample of sentences) from the world file's plant for the study, runs the "
        "study's own analysis on them and counts how often its tests are significant (power at "
        "the planted size); the same with nothing planted gives the false-positive rate. Both "
        "with exact binomial 95% CIs, for the paper's analysis and, for the stereotype "
        "analyses, the calibrated within-sentence variant. --level concept asks the concept-level question: "
        "null worlds keep the world's item and model variation, and the analysis's crossed inference (words "
        "random, crossed with the models) runs beside the paper's. Writes power.csv and power.png into "
        "the output folder. Perfect learners show what sampling noise and the analysis do, not "
        "what a real model's training adds (docs/calibration.md).",
        example="fmat power config/studies/3A.yaml --world config/world.yaml -o power-3A",
    )
    add_world_args(
        p,
        force="an output folder that holds another study's or command's files: remove the files that run recorded "
        "first (without it, refused; your own files are never removed)",
    )
    _add_design_options(p)
    p.set_defaults(func=_run)


def _add_design_options(p) -> None:
    """The options of the simulated design: numbers of models and items, the level, the worlds,
    the share of other words, the seed and the processes."""
    p.add_argument("--models", default="3,6,12,24", help="numbers of models, comma-separated (default: %(default)s)")
    p.add_argument(
        "--items",
        dest="item_counts",  # numbers, not a file of items (the file commands' dest "items")
        default=None,
        help="numbers of items, comma-separated: the first N words of each group of the study's item slot "
        "(of TARGET and ATTRIB the one with the most words a group; default: the study's own items)",
    )
    p.add_argument(
        "--level",
        choices=("words", "concept", "both"),
        default="words",
        help="the question each row answers (column level): 'words', these words in these models (null worlds: nothing "
        "planted, no item variation); 'concept', the concept, the words a sample (null worlds keep the world's item, "
        "model and model-item variation; the crossed inference and the paper's beside it; analyses with "
        "inference: crossed only); 'both' (default: %(default)s)",
    )
    p.add_argument("--worlds", type=int, default=20, help="worlds per number of models and kind (default: %(default)s)")
    p.add_argument(
        "--others",
        type=float,
        default=0.0,
        help="share of each sentence's probability outside the study's options (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=1, help=f"seed of the first world, 0 to {SEED_MAX} (default: %(default)s)")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes (default: the CPU count, at most 8); the numbers do not depend on it",
    )


def _run(args) -> int:
    from tqdm.auto import tqdm

    from .. import plant
    from .. import power as engine
    from ..study import load_study

    models, items, jobs = _check_numbers(args)
    folder = Path(args.criteria)
    study = load_study(args.study, criteria_dir=args.criteria if folder.is_dir() else None)
    plant.check_plantable(study, str(args.study), "fmat power")  # LPBS: the simulated learners have no prior
    world = plant.load_world(args.world)
    planted = world.plant(str(study.id))
    if planted is None or planted.null:
        raise InputError(
            f"the world file plants nothing for study {study.id!r}",
            where=f"{args.world}: studies.{study.id}",
            fix="plant the association you expect (docs/planting.md): power is the rate at which it is found",
        )
    if args.level != "words" and engine.CROSSED not in engine.variants_of(study):
        raise InputError(
            f"--level {args.level}: study {study.id}'s analysis ({study.analysis.get('name')}) has no concept-level test "
            "(inference: crossed)",
            where="--level",
            fix="leave --level out (these words in these models)",
        )
    criteria = {f.stem: pd.read_parquet(f) for f in sorted(folder.glob("*.parquet"))} if folder.is_dir() else {}
    out = Path(args.output)
    claim_folder(out, command="power", study=str(study.id), names=["power.csv", "power.png"], force=args.force)
    kinds = 3 if args.level == "both" else 2
    with tqdm(total=max(1, len(items)) * len(models) * kinds * args.worlds, desc=f"power {study.id}", unit="world") as bar:
        table = engine.power_table(
            study,
            planted,
            models=models,
            items=items or None,
            worlds=args.worlds,
            others=args.others,
            seed=args.seed,
            criteria=criteria,
            progress=bar.update,
            jobs=jobs,
            level=args.level,
        )
    table = engine.mark_controls(table, study, planted, criteria)
    table.to_csv(out / "power.csv", index=False)
    engine.power_plot(table, out / "power.png", title=f"{study.id}: power and false positives ({args.worlds} worlds each)")
    _print_table(table, args, bool(items), out)
    return 0


def _check_numbers(args) -> tuple[list[int], list[int], int]:
    """``(models, items, jobs)`` of the command line, each checked (exit 2 before any world is drawn)."""
    try:
        models = [int(m) for m in str(args.models).split(",") if m.strip()]
    except ValueError:
        models = []
    if not models or min(models) < 2:
        raise InputError(
            f"--models {args.models!r}", where="--models", fix="give numbers of models of at least 2, e.g. 3,6,12,24"
        )
    try:
        items = [int(i) for i in str(args.item_counts).split(",") if i.strip()] if args.item_counts else []
    except ValueError:
        items = [0]
    if args.item_counts and (not items or min(items) < 2):
        raise InputError(f"--items {args.item_counts!r}", where="--items", fix="give numbers of items of at least 2, e.g. 3,6,9")
    if args.worlds < 1:
        raise InputError(f"--worlds {args.worlds}", where="--worlds", fix="give at least 1 world")
    jobs = args.jobs if args.jobs is not None else min(8, os.cpu_count() or 1)
    if jobs < 1:
        raise InputError(f"--jobs {args.jobs}", where="--jobs", fix="give at least 1 process")
    if not 0 <= args.others < 1:
        raise InputError(f"--others {args.others}", where="--others", fix="give a share in [0, 1)")
    if not 0 <= args.seed <= SEED_MAX:
        raise InputError(
            f"a seed is a whole number from 0 to {SEED_MAX}, not {args.seed}",
            where="--seed",
            fix="give a seed of 0 or more, e.g. --seed 1 (the same seed gives the same worlds)",
        )
    return models, items, jobs


def _pct(x):
    return (100 * x).round(0).astype(int).astype(str) + "%"


def _print_table(table, args, items: bool, out) -> None:
    """The headline rows (power and false-positive rate of the overall test), the controls, and
    where the files are."""
    from .. import power as engine

    top = engine.headline(table)
    what = ", ".join(dict.fromkeys(f"{s} {c}" for s, c in zip(top["statistic"], top["condition"])))
    print(
        f"the overall test: {what} (power: planted worlds; fpr: null worlds, for level 'these words' nothing planted, "
        "for 'the concept' nothing planted at the concept level but the world's item and model variation kept)"
    )
    show = top.assign(power=_pct(top["power"]), fpr=_pct(top["fpr"]))
    show = show[["items", "models", "level", "variant", "statistic", "condition", "realised", "power", "fpr"]]
    if not items:
        show = show.drop(columns="items")
    print(show.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if args.level != "words":
        print(
            "realised: for 'these words' what these models hold for these words (the first worlds' mean); for 'the concept' "
            "the planted effect on the analysis's scale (0 where nothing is planted; NaN for a pooled-SD d, which divides "
            "by the words' own spread, which the concept has not: docs/calibration.md)"
        )
    ctl = table[table["control"]]
    if len(ctl):
        print(
            "controls (nothing planted in these rows: their rate of p < .05 in the planted worlds is a false-positive "
            "rate, not power):"
        )
        ctl = ctl.assign(false_positives=_pct(ctl["power"]))
        ctl = ctl[["items", "models", "level", "variant", "statistic", "condition", "false_positives"]]
        print((ctl if items else ctl.drop(columns="items")).to_string(index=False))
    print(f"every row in power.csv (control: nothing planted); wrote {out / 'power.csv'} and {out / 'power.png'}")
