"""What a report page reads, declared once: :data:`STUDY_INPUTS` and :data:`INDEX_INPUTS` name each
input and where the workflow writes it, for the rules (:func:`study_inputs`, :func:`index_inputs`,
``unpack``) and for a page rendered by hand (:func:`hand_inputs`, the same with the repository's
configuration). :func:`read_study` and :func:`read_index` read them (a missing file is an error
naming the input); study files through :func:`fmat.study.read_study_yaml`, so that a word written
``010`` is shown as ``010``, as it was scored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd
import yaml

from fmat.errors import InputError
from fmat.io import read_table
from fmat.study import read_study_yaml

from ..paper import load_paper_results
from .cards import read_cards

#: a study page's inputs and where the workflow writes them (``{study}``; ``study_file`` is the
#: study's file in the configuration's ``studies_dir``; ``recovery`` exists with a world file only)
STUDY_INPUTS = {
    "study_file": "{studies_dir}/{study}.yaml",
    "paper": "config/paper_results.tsv",
    "replication": "results/replication/{study}.parquet",
    "stats": "results/analysis/{study}/stats.parquet",
    "status": "results/analysis/{study}/status.json",
    "figures": "results/analysis/{study}/figures",
    "drawn": "results/figures/{study}",
    "oov": "results/oov/{study}.parquet",
    "recovery": "results/recovery/{study}.parquet",
}
#: the overview's inputs: one file, or one per study (``{study}``) or per model (``{model}``); the
#: per-study ones are the study pages' own (one path each, written once)
INDEX_INPUTS = {
    "paper": STUDY_INPUTS["paper"],
    "replication": "results/replication.parquet",
    "stats": STUDY_INPUTS["stats"],
    "figures": STUDY_INPUTS["figures"],  # each study's analysis figure tables: its crossed rows
    "study_files": STUDY_INPUTS["study_file"],
    "oov": STUDY_INPUTS["oov"],
    "drawn": "results/figures/index",
    "checks": "results/models/checks.parquet",
    "agreement": "results/models/agreement.parquet",
    "provenance": "results/models/provenance.parquet",
    "cards": "results/models/{model}.json",
    "recovery": "results/recovery.parquet",
}
#: inputs that exist only in a run with a world file (the demo's planted associations)
WORLD_ONLY = ("recovery",)


def _fill(pattern: str, root: Path, repo: Path, **names) -> str:
    """A pattern filled in: a file of the repository (``config/...``, the paper's numbers) under
    ``repo``, a result under ``root``; relative as given when the folder is "."."""
    base = repo if pattern.startswith("config/") else root
    return str(base / pattern.format(**names)) if str(base) != "." else pattern.format(**names)


def study_inputs(study: str, config: Mapping, *, world: bool, root=".", repo=".") -> dict:
    """A study page's inputs (:data:`STUDY_INPUTS`) for ``study``: results under ``root``, the
    paper's file under ``repo``, study files in the configuration's ``studies_dir``; without a
    world (``world`` False) no ``recovery``."""
    names = {"study": study, "studies_dir": str(config.get("studies_dir", "config/studies")).rstrip("/")}
    return {k: _fill(v, Path(root), Path(repo), **names) for k, v in STUDY_INPUTS.items() if world or k not in WORLD_ONLY}


def index_inputs(studies: Sequence[str], models: Sequence[str], config: Mapping, *, world: bool, root=".", repo=".") -> dict:
    """The overview's inputs (:data:`INDEX_INPUTS`): a list per study or per model where the
    pattern names one, in the order of ``studies`` and ``models``."""
    sdir = str(config.get("studies_dir", "config/studies")).rstrip("/")

    def filled(pattern: str):
        if "{study}" in pattern:
            return [_fill(pattern, Path(root), Path(repo), study=s, studies_dir=sdir) for s in studies]
        if "{model}" in pattern:
            return [_fill(pattern, Path(root), Path(repo), model=m) for m in models]
        return _fill(pattern, Path(root), Path(repo))

    return {key: filled(pattern) for key, pattern in INDEX_INPUTS.items() if world or key not in WORLD_ONLY}


def hand_inputs(kind: str, study: str | None = None, root=None) -> dict:
    """A page's inputs by hand (the Quarto documents' default): :func:`study_inputs` or
    :func:`index_inputs` under :func:`repository_root` with its ``config/config.yaml``, a world
    where the run left a recovery table; the overview's studies are those analysed (in the
    configuration's order, then any other), its models those with a card."""
    root = repository_root(root)
    cfg_file = root / "config" / "config.yaml"
    config = yaml.safe_load(cfg_file.read_text(encoding="utf-8")) if cfg_file.is_file() else {}
    res = root / "results"
    if kind == "study":
        return study_inputs(str(study), config, world=(res / "recovery" / f"{study}.parquet").is_file(), root=root, repo=root)
    analysed = {p.parent.name for p in (res / "analysis").glob("*/stats.parquet")}
    studies = [s for s in config.get("studies", []) if s in analysed] + sorted(analysed - set(config.get("studies", [])))
    models = sorted(p.stem for p in (res / "models").glob("*.json"))
    return index_inputs(studies, models, config, world=(res / "recovery.parquet").is_file(), root=root, repo=root)


def study_of(stats_path) -> str:
    """The study id of a ``results/analysis/{study}/stats.parquet`` path."""
    return Path(stats_path).parent.name


#: the fix of a missing or unreadable page input
_FIX = (
    "render the page through the workflow (snakemake results/reports/<page>.html), which builds "
    "its inputs first; by hand, run the workflow first (docs/reports.md)"
)


def path_list(value) -> list[Path]:
    """A page input (a list or tuple of paths, one path, None or "") as a list of paths."""
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


def check_names(inputs: Mapping, declared: Mapping, where: str) -> None:
    """Every input of ``inputs`` is declared, and every declared one given (world-only ones may
    be left out); else an InputError naming them."""
    unknown = sorted(set(inputs) - set(declared))
    missing = sorted(set(declared) - set(inputs) - set(WORLD_ONLY))
    if unknown or missing:
        problems = (("takes no input", unknown), ("needs", missing))
        raise InputError(
            f"the {where} page " + "; ".join(f"{what} {', '.join(names)}" for what, names in problems if names),
            where=", ".join(unknown + missing),
            fix=f"give the inputs of fmat_replication.pages.inputs.{'STUDY' if where == 'study' else 'INDEX'}_INPUTS",
        )


def provenance_demo(oov: pd.DataFrame) -> bool | None:
    """Whether the scores come from tiny demo models, as their scoring jobs recorded it (the
    ``demo`` column of ``results/oov``); None when no job recorded it."""
    if "demo" not in oov.columns or oov["demo"].isna().all():
        return None
    return bool(oov["demo"].fillna(False).astype(bool).any())


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
    drawn: list = field(default_factory=list)  # the figures rule's figures: {file, title, caption, svg}
    oov: pd.DataFrame | None = None  # results/oov/{study}.parquet (rule oov_study)
    recovery: pd.DataFrame | None = None  # results/recovery/{study}.parquet (demo with a world), else None
    demo: bool | None = None  # scored by tiny demo models, as the scoring jobs recorded (None: not recorded)


def optional_table(name: str, value) -> pd.DataFrame | None:
    """The table of an optional page input (None or empty: not part of this run), else None."""
    return read_table(required(name, value)) if path_list(value) else None


def read_drawn(name: str, value) -> list[dict]:
    """The figures rule's folder (``figures.json``: file, title, caption of each figure, in
    order), each figure's SVG text read in."""
    folder = required(name, value)
    items = json.loads(existing(name, [folder / "figures.json"])[0].read_text(encoding="utf-8"))
    return [
        {**f, "svg": existing(name, [folder / f["file"]])[0].read_text(encoding="utf-8") if f.get("file") else ""} for f in items
    ]


def read_study(study: str, inputs: Mapping) -> StudyPage:
    """Read a study page's inputs (:data:`STUDY_INPUTS`: one path each, ``recovery`` left out or
    None where the run has no world file)."""
    check_names(inputs, STUDY_INPUTS, "study")
    study = str(study)
    sfile = required("study_file", inputs["study_file"])
    status_rec = json.loads(required("status", inputs["status"]).read_text(encoding="utf-8"))
    folder = required("figures", inputs["figures"])
    tables = {
        n: read_table(existing("figures", [folder / Path(f).name])[0]) for n, f in (status_rec.get("figures") or {}).items()
    }
    rep = read_table(required("replication", inputs["replication"]))
    oov = read_table(required("oov", inputs["oov"]))
    return StudyPage(
        study=study,
        raw=read_study_yaml(sfile),
        study_file=sfile,
        paper=load_paper_results(required("paper", inputs["paper"])),
        replication=rep[rep["study"].astype(str) == study].reset_index(drop=True),
        stats=read_table(required("stats", inputs["stats"])),
        status=status_rec,
        figures=tables,
        drawn=read_drawn("drawn", inputs["drawn"]),
        oov=oov,
        recovery=optional_table("recovery", inputs.get("recovery")),
        demo=provenance_demo(oov),
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
    analyses: dict = field(default_factory=dict)  # study id -> the name of its analysis
    drawn: list = field(default_factory=list)  # the figures rule's overview figures
    recovery: pd.DataFrame | None = None  # results/recovery.parquet (demo with a world), else None
    demo: bool | None = None  # scored by tiny demo models, as the scoring jobs recorded (None: not recorded)
    crossed: dict = field(default_factory=dict)  # study id -> its figure table crossed (the concept-level rows)


def crossed_tables(ids: Sequence[str], folders: Sequence[Path]) -> dict:
    """``{study: figure table crossed}`` for the studies whose analysis wrote one (the
    analysis's ``figures/crossed.parquet``: :func:`fmat.analyses.crossed_variant`)."""
    return {s: read_table(Path(f) / "crossed.parquet") for s, f in zip(ids, folders) if (Path(f) / "crossed.parquet").is_file()}


def read_index(studies, inputs: Mapping) -> IndexPage:
    """Read the overview's inputs (:data:`INDEX_INPUTS`). ``studies`` is a list of ids;
    ``stats``, ``study_files`` and ``oov`` are lists in the order of ``studies``; ``cards`` a list."""
    check_names(inputs, INDEX_INPUTS, "index")
    if isinstance(studies, str):
        raise InputError(
            f"page input 'studies' must be a list of study ids, not the string {studies!r}",
            where="studies",
            fix="give a list, e.g. ['1A', '2A'] (in YAML: [1A, 2A])",
        )
    ids = [str(s) for s in studies]
    stats_paths = existing("stats", path_list(inputs["stats"]))
    files = existing("study_files", path_list(inputs["study_files"]))
    if len(stats_paths) != len(ids) or len(files) != len(ids):
        raise InputError(
            f"the overview has {len(ids)} studies but {len(stats_paths)} stats tables and {len(files)} study files",
            where="studies",
            fix=_FIX,
        )
    oov_paths = existing("oov", path_list(inputs["oov"]))
    figure_folders = existing("figures", path_list(inputs["figures"]))
    raws = [read_study_yaml(f) for f in files]
    oov = pd.concat([read_table(p) for p in oov_paths], ignore_index=True) if oov_paths else pd.DataFrame()
    return IndexPage(
        studies=ids,
        paper=load_paper_results(required("paper", inputs["paper"])),
        replication=read_table(required("replication", inputs["replication"])),
        stats=pd.concat([read_table(p) for p in stats_paths], ignore_index=True),
        titles={s: str(r.get("title", "")) for s, r in zip(ids, raws)},
        analyses={s: str((r.get("analysis") or {}).get("name", "")) for s, r in zip(ids, raws)},
        oov=oov,
        checks=read_table(required("checks", inputs["checks"])),
        agreement=read_table(required("agreement", inputs["agreement"])),
        provenance=read_table(required("provenance", inputs["provenance"])),
        cards=read_cards(existing("cards", path_list(inputs["cards"]))),
        drawn=read_drawn("drawn", inputs["drawn"]),
        recovery=optional_table("recovery", inputs.get("recovery")),
        demo=provenance_demo(oov),
        crossed=crossed_tables(ids, figure_folders),
    )


def repository_root(start: str | Path | None = None) -> Path:
    """The folder whose ``results/`` and ``config/`` a page rendered by hand reads: ``start``
    (default: the current folder), or its parent where ``start`` is a ``reports/`` folder beside
    ``results/`` (Quarto runs a document's cells in the document's folder)."""
    here = Path(start or Path.cwd()).resolve()
    if not (here / "reports").is_dir() and here.name == "reports" and (here.parent / "results").is_dir():
        return here.parent
    return here
