"""What a report page reads: every file comes from a page parameter (the report rule passes its
inputs, fmat_replication.report.render_page), never from a path the page builds itself, and a
file that is missing is an error naming the parameter, not an empty table.

:func:`study_page` reads a study page's files, :func:`index_page` the overview's. Study files are
read with the project's loader (:func:`fmat.study.read_study_yaml`), so that a word written
``010`` is shown as ``010``, as it was scored.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fmat.errors import InputError
from fmat.study import read_study_yaml

#: the fix of a missing or unreadable page input
_FIX = ("render the page through the workflow (snakemake results/reports/<page>.html), which builds "
        "its inputs first; by hand, give every input with -P NAME:PATH (docs/reports.md)")


def path_list(value) -> list[Path]:
    """A page parameter holding one path or several, comma-joined (as render_page passes them)."""
    if isinstance(value, (list, tuple)):
        return [Path(str(v)) for v in value if str(v)]
    return [Path(p) for p in str(value or "").split(",") if p.strip()]


def required(name: str, value) -> Path:
    """The one file of page parameter ``name``; InputError when none is given or it is missing."""
    paths = path_list(value)
    if len(paths) != 1:
        raise InputError(f"page parameter {name!r} must name one file (got {str(value)!r})", where=name, fix=_FIX)
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
    raw: dict                       # the study file, as the project's loader reads it
    study_file: Path
    paper: pd.DataFrame             # the paper's numbers (config/paper_results.tsv)
    replication: pd.DataFrame       # this study's rows of the replication table
    stats: pd.DataFrame             # results/analysis/{study}/stats.parquet
    status: dict                    # results/analysis/{study}/status.json
    figures: dict = field(default_factory=dict)   # {name: figure table}
    scores: list = field(default_factory=list)    # results/scores/{study}/{model}.parquet, config order
    recovery: pd.DataFrame | None = None          # results/recovery/{study}.parquet (demo with a world), else None


def optional_table(name: str, value) -> pd.DataFrame | None:
    """The table of an optional page parameter (empty: not part of this run), else None."""
    return pd.read_parquet(required(name, value)) if path_list(value) else None


def study_page(study: str, *, study_file, paper, replication, stats, status, figures, scores,
               recovery="") -> StudyPage:
    """Read a study page's inputs (each a page parameter; ``scores`` comma-joined)."""
    from ..paper import load_paper_results

    study = str(study)
    sfile = required("study_file", study_file)
    status_rec = json.loads(required("status", status).read_text(encoding="utf-8"))
    folder = required("figures", figures)
    tables = {}
    for name, file in (status_rec.get("figures") or {}).items():
        tables[name] = pd.read_parquet(existing("figures", [folder / Path(file).name])[0])
    rep = pd.read_parquet(required("replication", replication))
    return StudyPage(study=study, raw=read_study_yaml(sfile), study_file=sfile,
                     paper=load_paper_results(required("paper", paper)),
                     replication=rep[rep["study"].astype(str) == study].reset_index(drop=True),
                     stats=pd.read_parquet(required("stats", stats)), status=status_rec, figures=tables,
                     scores=existing("scores", path_list(scores)), recovery=optional_table("recovery", recovery))


@dataclass
class IndexPage:
    """Everything the overview shows, read from its inputs."""

    studies: list
    paper: pd.DataFrame
    replication: pd.DataFrame
    stats: pd.DataFrame             # every study's stats.parquet, stacked
    titles: dict                    # study id -> the title of its study file
    scores: dict                    # study id -> its score tables (results/scores/{study}/*.parquet)
    agreement: pd.DataFrame
    cards: list
    recovery: pd.DataFrame | None = None          # results/recovery.parquet (demo with a world), else None


def index_page(studies, *, paper, replication, stats, study_files, scores, agreement, cards,
               recovery="") -> IndexPage:
    """Read the overview's inputs. ``stats`` and ``study_files`` are in the order of ``studies``;
    ``scores`` are grouped by their study's folder (``results/scores/{study}/``)."""
    from ..paper import load_paper_results
    from .cards import read_cards

    ids = [s for s in str(studies).split(",") if s]
    stats_paths = existing("stats", path_list(stats))
    files = existing("study_files", path_list(study_files))
    if len(stats_paths) != len(ids) or len(files) != len(ids):
        raise InputError(f"the overview has {len(ids)} studies but {len(stats_paths)} stats tables and "
                         f"{len(files)} study files", where="studies", fix=_FIX)
    by_study: dict[str, list[Path]] = {s: [] for s in ids}
    for p in existing("scores", path_list(scores)):
        by_study.setdefault(p.parent.name, []).append(p)
    frames = [pd.read_parquet(p) for p in stats_paths]
    return IndexPage(studies=ids, paper=load_paper_results(required("paper", paper)),
                     replication=pd.read_parquet(required("replication", replication)),
                     stats=pd.concat(frames, ignore_index=True),
                     titles={s: str(read_study_yaml(f).get("title", "")) for s, f in zip(ids, files)},
                     scores=by_study, agreement=pd.read_parquet(required("agreement", agreement)),
                     cards=read_cards(existing("cards", path_list(cards))),
                     recovery=optional_table("recovery", recovery))
