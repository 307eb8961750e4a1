"""What a report page reads: every file is one of the page's inputs (the report rule passes its
declared inputs, :func:`fmat_replication.pages.render.render_page`), never a path the page builds
itself, and a file that is missing is an error naming the input, not an empty table.

:func:`read_study` reads a study page's files, :func:`read_index` the overview's. Study files are
read with the project's loader (:func:`fmat.study.read_study_yaml`), so that a word written
``010`` is shown as ``010``, as it was scored. :func:`study_layout` and :func:`index_layout` say
where the workflow writes those files, the defaults of the Quarto documents' parameters (a page
rendered by hand after a run: ``quarto render reports/study.qmd -P study:3A``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fmat.errors import InputError
from fmat.io import read_table
from fmat.study import read_study_yaml

from ..paper import load_paper_results
from .cards import read_cards

#: the fix of a missing or unreadable page input
_FIX = (
    "render the page through the workflow (snakemake results/reports/<page>.html), which builds "
    "its inputs first; by hand, run the workflow first, or give the input with -P NAME:PATH (docs/reports.md)"
)


def path_list(value) -> list[Path]:
    """A page input as a list of paths: a list (or tuple) of paths, one path, or none (None or
    an empty string)."""
    if isinstance(value, (list, tuple)):
        return [Path(str(v)) for v in value if str(v)]
    return [Path(value)] if value is not None and str(value) else []


def required(name: str, value) -> Path:
    """The one file of page input ``name``; InputError when none is given or it is missing."""
    paths = path_list(value)
    if len(paths) != 1:
        raise InputError(f"page input {name!r} must name one file (got {value!r})", where=name, fix=_FIX)
    return existing(name, paths)[0]


def existing(name: str, paths: list[Path]) -> list[Path]:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise InputError(f"page input {name!r}: {', '.join(missing[:5])} not found", where=name, fix=_FIX)
    return paths


@dataclass
class StudyPage:
    """Everything a study page shows, read from its inputs."""

    study: str
    raw: dict  # the study file, as the project's loader reads it
    study_file: Path
    paper: pd.DataFrame  # the paper's numbers (config/paper_results.tsv)
    replication: pd.DataFrame  # this study's rows of the replication table
    stats: pd.DataFrame  # results/analysis/{study}/stats.parquet
    status: dict  # results/analysis/{study}/status.json
    figures: dict = field(default_factory=dict)  # {name: figure table}
    oov: pd.DataFrame | None = None  # results/oov/{study}.parquet (rule oov_study)
    recovery: pd.DataFrame | None = None  # results/recovery/{study}.parquet (demo with a world), else None


def optional_table(name: str, value) -> pd.DataFrame | None:
    """The table of an optional page input (None or empty: not part of this run), else None."""
    return read_table(required(name, value)) if path_list(value) else None


def read_study(study: str, *, study_file, paper, replication, stats, status, figures, oov, recovery=None) -> StudyPage:
    """Read a study page's inputs: one path each, ``recovery`` None where the run has no world file."""

    study = str(study)
    sfile = required("study_file", study_file)
    status_rec = json.loads(required("status", status).read_text(encoding="utf-8"))
    folder = required("figures", figures)
    tables = {}
    for name, file in (status_rec.get("figures") or {}).items():
        tables[name] = read_table(existing("figures", [folder / Path(file).name])[0])
    rep = read_table(required("replication", replication))
    return StudyPage(
        study=study,
        raw=read_study_yaml(sfile),
        study_file=sfile,
        paper=load_paper_results(required("paper", paper)),
        replication=rep[rep["study"].astype(str) == study].reset_index(drop=True),
        stats=read_table(required("stats", stats)),
        status=status_rec,
        figures=tables,
        oov=read_table(required("oov", oov)),
        recovery=optional_table("recovery", recovery),
    )


@dataclass
class IndexPage:
    """Everything the overview shows, read from its inputs."""

    studies: list
    paper: pd.DataFrame
    replication: pd.DataFrame
    stats: pd.DataFrame  # every study's stats.parquet, stacked
    titles: dict  # study id -> the title of its study file
    oov: pd.DataFrame  # every study's results/oov/{study}.parquet, stacked
    checks: pd.DataFrame  # results/models/checks.parquet (rule model_checks)
    agreement: pd.DataFrame  # results/models/agreement.parquet: accuracy per construction
    provenance: pd.DataFrame  # results/models/provenance.parquet
    cards: list
    recovery: pd.DataFrame | None = None  # results/recovery.parquet (demo with a world), else None


def read_index(
    studies, *, paper, replication, stats, study_files, oov, checks, agreement, provenance, cards, recovery=None
) -> IndexPage:
    """Read the overview's inputs. ``studies`` is a list of ids; ``stats``, ``study_files`` and
    ``oov`` are lists in the order of ``studies``; ``cards`` a list."""

    if isinstance(studies, str):
        raise InputError(
            f"page input 'studies' must be a list of study ids, not the string {studies!r}",
            where="studies",
            fix="give a list, e.g. ['1A', '2A'] (in YAML: [1A, 2A])",
        )
    ids = [str(s) for s in studies]
    stats_paths = existing("stats", path_list(stats))
    files = existing("study_files", path_list(study_files))
    if len(stats_paths) != len(ids) or len(files) != len(ids):
        raise InputError(
            f"the overview has {len(ids)} studies but {len(stats_paths)} stats tables and {len(files)} study files",
            where="studies",
            fix=_FIX,
        )
    oov_paths = existing("oov", path_list(oov))
    frames = [read_table(p) for p in stats_paths]
    return IndexPage(
        studies=ids,
        paper=load_paper_results(required("paper", paper)),
        replication=read_table(required("replication", replication)),
        stats=pd.concat(frames, ignore_index=True),
        titles={s: str(read_study_yaml(f).get("title", "")) for s, f in zip(ids, files)},
        oov=pd.concat([read_table(p) for p in oov_paths], ignore_index=True) if oov_paths else pd.DataFrame(),
        checks=read_table(required("checks", checks)),
        agreement=read_table(required("agreement", agreement)),
        provenance=read_table(required("provenance", provenance)),
        cards=read_cards(existing("cards", path_list(cards))),
        recovery=optional_table("recovery", recovery),
    )


# ---------------------------------------------------------------------------------------
# Where the workflow writes a page's inputs (the Quarto documents' defaults)
# ---------------------------------------------------------------------------------------


def repository_root(start: str | Path | None = None) -> Path:
    """The folder whose ``results/`` and ``config/`` a page rendered by hand reads: ``start``
    (default: the current folder) if it holds ``reports/``, else its parent if ``start`` is a
    ``reports/`` folder (Quarto runs a document's cells in the document's own folder), else
    ``start`` itself."""
    here = Path(start or Path.cwd()).resolve()
    if not (here / "reports").is_dir() and here.name == "reports" and (here.parent / "results").is_dir():
        return here.parent
    return here


def study_layout(study: str, root: str | Path) -> dict:
    """A study page's inputs where the workflow writes them under ``root`` (rules/report.smk):
    config/studies/{study}.yaml, results/replication/{study}.parquet, results/analysis/{study}/...,
    results/oov/{study}.parquet, results/recovery/{study}.parquet if there is one."""
    root = Path(root)
    a = root / "results" / "analysis" / study
    recovery = root / "results" / "recovery" / f"{study}.parquet"
    return {
        "study_file": root / "config" / "studies" / f"{study}.yaml",
        "paper": root / "config" / "paper_results.tsv",
        "replication": root / "results" / "replication" / f"{study}.parquet",
        "stats": a / "stats.parquet",
        "status": a / "status.json",
        "figures": a / "figures",
        "oov": root / "results" / "oov" / f"{study}.parquet",
        "recovery": recovery if recovery.is_file() else None,
    }


def index_layout(root: str | Path, studies=None) -> dict:
    """The overview's inputs where the workflow writes them under ``root``; ``studies`` (default:
    every study with a results/analysis/{study}/stats.parquet, sorted) in that order."""
    root = Path(root)
    res = root / "results"
    if studies is None:
        studies = sorted(p.parent.name for p in (res / "analysis").glob("*/stats.parquet"))
    recovery = res / "recovery.parquet"
    return {
        "studies": list(studies),
        "paper": root / "config" / "paper_results.tsv",
        "replication": res / "replication.parquet",
        "stats": [res / "analysis" / s / "stats.parquet" for s in studies],
        "study_files": [root / "config" / "studies" / f"{s}.yaml" for s in studies],
        "oov": [res / "oov" / f"{s}.parquet" for s in studies],
        "checks": res / "models" / "checks.parquet",
        "agreement": res / "models" / "agreement.parquet",
        "provenance": res / "models" / "provenance.parquet",
        "cards": sorted((res / "models").glob("*.json")),
        "recovery": recovery if recovery.is_file() else None,
    }


def with_defaults(given: dict, layout: dict) -> dict:
    """``given`` (a document's parameters), each that is None taken from ``layout``."""
    return {k: layout.get(k) if v is None else v for k, v in given.items()}
