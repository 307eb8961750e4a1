"""Power and false-positive rate of a study's design and analysis (``fmat power``,
docs/calibration.md).

For each number of models, ``worlds`` worlds of perfect learners (:mod:`fmat.calibration`)
are drawn twice: with the world file's plant for the study (the association the researcher
expects: power = the share of worlds whose test is significant at ``alpha``) and with nothing
planted (:func:`fmat.calibration.null_plant`: the false-positive rate).  The study's
own analysis runs on each (its study file's options; for the stereotype analyses also the
calibrated ``inference: sentence``).  Seeds: world k of a setting is seeded ``seed + k``, the
same for every number of models, so the rows differ only by the design.

Library code: ``fmat power`` runs it after the library's own install (no replication needed).
"""

from __future__ import annotations

import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd
import yaml

from fmat import calibration as cal
from fmat.errors import InputError
from fmat.stats.mixed import SingularFitWarning
from fmat.study import load_study

#: the calibrated variant of the analyses that have one
CALIBRATED = {"stereotype_pairs": {"inference": "sentence"}, "stereotype_domains": {"inference": "sentence"}}


def variants_of(study) -> dict[str, dict]:
    """``{"paper": {}}`` plus ``{"sentence": ...}`` for the analyses with a calibrated variant."""
    name = str((getattr(study, "analysis", None) or {}).get("name") or "")
    return {"paper": {}, **({"sentence": CALIBRATED[name]} if name in CALIBRATED else {})}


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


def _one_world(task) -> pd.DataFrame:
    """One world of :func:`power_table` (a top-level function: it runs in worker processes)."""
    study, plant, n, kind, others, seed, criteria, variants, items, realised = task
    world = cal.World(study, plant, n_models=int(n), others=float(others))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        out = cal.run_world(world, seed, criteria, variants, realised=realised, one_run=True)
    return out.assign(models=int(n), kind=kind, items=items)


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
) -> pd.DataFrame:
    """Per number of items (``items``: :func:`study_with_items`; default the study's own, column
    ``items`` 0), number of models, analysis variant and judged row (statistic, condition):
    power (planted worlds, p < alpha) and false-positive rate (null worlds), each with its
    exact binomial 95% CI, the mean estimate over the planted worlds and the mean realised
    value of the first :data:`REALISED_WORLDS` of them.
    ``progress(1)`` is called after each world; ``jobs`` > 1 runs the worlds in that many
    processes (the same numbers: each world is seeded on its own)."""
    variants = variants_of(study)
    plants = {"planted": plant, "null": cal.null_plant(plant)}
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
            variants,
            i,
            kind == "planted" and k < REALISED_WORLDS,
        )
        for i, design in designs.items()
        for n in models
        for kind in ("planted", "null")
        for k in range(worlds)
    ]
    frames = []
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=int(jobs)) as pool:
            for fut in as_completed([pool.submit(_one_world, t) for t in tasks]):
                frames.append(fut.result())
                if progress:
                    progress(1)
    else:
        for t in tasks:
            frames.append(_one_world(t))
            if progress:
                progress(1)
    runs = pd.concat(frames, ignore_index=True)
    keys = ["variant", "statistic", "condition"]
    rows = []
    for i, n in [(i, n) for i in designs for n in models]:
        mine = runs[(runs["models"] == int(n)) & (runs["items"] == i)]
        null = mine[mine["kind"] == "null"].groupby(keys, sort=False)["p"].apply(lambda s: list(s < alpha))
        for key, g in mine[mine["kind"] == "planted"].groupby(keys, sort=False):
            hit = list(g["p"] < alpha)
            fp = null.get(key, [])
            pw, fr = cal.binomial(sum(hit), len(hit)), cal.binomial(sum(fp), len(fp))
            rows.append(
                {
                    "items": i,
                    "models": int(n),
                    **dict(zip(keys, key)),
                    "worlds": len(hit),
                    "realised": float(g["realised"].mean()),  # NaNs skipped: the first worlds
                    "estimate": float(g["value"].mean()),
                    "power": pw[0],
                    "power_low": pw[1],
                    "power_high": pw[2],
                    "fpr": fr[0],
                    "fpr_low": fr[1],
                    "fpr_high": fr[2],
                }
            )
    return pd.DataFrame(rows)


def power_plot(table: pd.DataFrame, path, title: str = "") -> None:
    """Power and false-positive rate against the number of models (one line per variant and
    judged row, or with several numbers of items one per number of items and variant for the
    overall row; at most 8 lines, the first ones), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    if "items" not in table.columns:
        table = table.assign(items=0)
    several = table["items"].nunique() > 1
    if several:  # one line per number of items and variant: the overall row only
        first = table.groupby("variant", sort=False)["condition"].transform("first")
        table = table[table["condition"].eq("all") | (~table["condition"].eq("all").any() & table["condition"].eq(first))]
    lines = table.groupby(["items", "variant", "statistic", "condition"], sort=False)
    for j, (key, g) in enumerate(lines):
        if j >= 8:
            break
        label = f"{key[2]} {key[3]} ({key[1]})" + (f", {key[0]} items" if several else "")
        for ax, col in zip(axes, ("power", "fpr")):
            ax.errorbar(
                g["models"],
                100 * g[col],
                yerr=[100 * (g[col] - g[f"{col}_low"]), 100 * (g[f"{col}_high"] - g[col])],
                marker="o",
                label=label,
                capsize=2,
            )
    axes[0].set_ylabel("power at the planted size, %")
    axes[1].set_ylabel("false-positive rate (nothing planted), %")
    axes[1].axhline(5, color="grey", ls="--")
    for ax in axes:
        ax.set_xlabel("number of models")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(table["models"].unique()), [str(m) for m in sorted(table["models"].unique())])
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
