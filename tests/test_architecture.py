"""docs/architecture.md, "Where is this number made": every row names a rule that exists, whose
script calls the stage function named, and a producer function that writes the statistic; and
every statistic the paper prints has a row (so the table stays true when code moves)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmat import analyses, plant
from fmat import calibration as cal
from fmat.stages import lpr_table, reliability_tables
from fmat.stats.mixed import SingularFitWarning
from fmat.study import load_study

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _studies(cell: str) -> set[str]:
    """'1A–4D', '2A, 2B', 'all' -> study ids."""
    every = {f"{n}{c}" for n, cs in (("1", "ABC"), ("2", "ABCD"), ("3", "ABCD"), ("4", "ABCD")) for c in cs}
    cell = cell.strip()
    if cell == "all" or cell == "1A–4D":
        return every
    return {s.strip() for s in cell.split(",")}


def _section() -> str:
    return DOC.read_text(encoding="utf-8").split("## Where is this number made", 1)[1].split("\n## ", 1)[0]


def _table_rows(section: str, header: str) -> list[list[str]]:
    """The body rows (cells) of the markdown table of ``section`` whose first header cell is ``header``."""
    out, inside = [], False
    for line in section.splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == header:
            inside = True
        elif inside and not set(cells[0]) <= set("-: "):
            out.append(cells)
    return out


def _computed_by(cell: str) -> list[str]:
    """'`A` in `B`' -> [A, B]: the function that computes, then the one that calls it."""
    names = _names(cell)
    assert names and len(names) <= 2 and (len(names) == 1 or " in " in cell), f"not '`function` in `caller`': {cell!r}"
    return names


def where_rows() -> list[dict]:
    rows = []
    for cells in _table_rows(_section(), "statistic"):
        if len(cells) != 6:
            continue  # the variants' table (4 cells)
        rows.append(
            {
                "statistics": _names(cells[0]) or [cells[0]],
                "studies": _studies(cells[1]),
                "rule": _names(cells[2])[0],
                "stage": _names(cells[3])[0],
                "computed": _computed_by(cells[4]),
                "producer": _names(cells[5])[0],
                "via": _names(cells[5])[1:],
            }
        )
    return rows


def variant_rows() -> list[dict]:
    return [
        {"statistics": _names(c[0]), "studies": _studies(c[1]), "computed": _computed_by(c[3])}
        for c in _table_rows(_section(), "statistic")
        if len(c) == 4
    ]


def resolve(dotted: str):
    """``package.module.function`` or ``package.module.Class.method`` -> the object (the longest
    importable module prefix, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def calls(caller, callee: str) -> bool:
    """Whether the source of ``caller`` calls a function or method named like ``callee``'s last part."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(caller)))
    short = callee.rsplit(".", 1)[-1]
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            if (isinstance(f, ast.Name) and f.id == short) or (isinstance(f, ast.Attribute) and f.attr == short):
                return True
    return False


def rule_script(rule: str) -> Path:
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        m = re.search(rf"^rule {re.escape(rule)}:\n(.*?)(?=^\S|\Z)", text, re.M | re.S)
        if m:
            script = re.search(r'script:\s*\n\s*"([^"]+)"', m.group(1))
            assert script, f"rule {rule} in {smk.name} has no script:"
            return (smk.parent / script.group(1)).resolve()
    raise AssertionError(f"no rule {rule!r} in rules/*.smk")


ROWS = where_rows()
VARIANTS = variant_rows()


def test_the_table_is_there():
    assert len(ROWS) >= 9
    assert {"reliability", "analysis", "compare_study"} <= {r["rule"] for r in ROWS}
    assert len(VARIANTS) >= 5


def test_every_function_the_section_names_exists():
    """Every dotted name in backticks in the section (both tables, the checks' table, the text)
    that starts with a package of this project resolves to a function, class or module: a rename
    that leaves the doc behind breaks this test."""
    names = sorted({n for n in _names(_section()) if re.fullmatch(r"fmat(_replication)?(\.\w+)+", n)})
    assert len(names) >= 30
    missing = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
    assert not missing, f"docs/architecture.md names functions that do not exist: {missing}"


def check_computed_by(computed: list[str]) -> None:
    """The computing function exists and is callable; its caller exists and calls it."""
    fn = resolve(computed[0])
    assert callable(fn), computed[0]
    if len(computed) == 2:
        caller = resolve(computed[1])
        assert calls(caller, computed[0]), f"{computed[1]} does not call {computed[0]}"


@pytest.mark.parametrize(
    "row", VARIANTS, ids=[f"{'+'.join(r['statistics'])}@{r['computed'][-1].rsplit('.', 1)[-1]}" for r in VARIANTS]
)
def test_each_variant_row_is_true(row):
    check_computed_by(row["computed"])
    assert all(resolve(n).__module__.startswith("fmat.") for n in row["computed"])


@pytest.mark.parametrize("row", ROWS, ids=[f"{'+'.join(r['statistics'])}@{r['computed'][0].rsplit('.', 1)[-1]}" for r in ROWS])
def test_each_row_is_true(row):
    # the rule exists and its script calls the stage function
    script = rule_script(row["rule"])
    tree = ast.parse(script.read_text(encoding="utf-8"))
    module, _, func = row["stage"].rpartition(".")
    imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert (module, func) in imported and func in called, f"{script.name} does not call {row['stage']}"
    stage = resolve(row["stage"])
    # the computing function exists, and the function said to call it calls it
    check_computed_by(row["computed"])
    # the row writer exists, and its source (or its module's constants) writes each statistic
    producer = resolve(row["producer"])
    source = inspect.getsource(producer)
    module_source = inspect.getsource(inspect.getmodule(producer))
    for stat in row["statistics"]:
        if stat.startswith("verdict"):
            assert "verdict" in source
            continue
        literal = f'"{stat}"'
        assert literal in source or (literal in module_source and re.search(r"\b[A-Z_]{4,}\b", source)), (
            f"{row['producer']} does not write {stat}"
        )
    # the chain is connected: the stage reaches the row writer (directly or through the 'via' functions)
    chain = [stage] + [resolve(v) for v in row["via"]]
    names = {row["producer"].rsplit(".", 1)[-1]} | {v.rsplit(".", 1)[-1] for v in row["via"]}
    texts = [inspect.getsource(f) for f in chain]
    if row["rule"] == "analysis":
        # the analysis stage runs the study's registered analysis: the row writer lives in the package it dispatches to
        assert "run_analysis" in inspect.getsource(resolve("fmat_replication.analysis.analysis_stage"))
        assert producer.__module__.startswith("fmat.analyses.")
        for v in row["via"]:  # a 'via' function calls the row writer
            assert calls(resolve(v), row["producer"]), f"{v} does not call {row['producer']}"
    else:
        assert any(re.search(rf"\b{re.escape(n)}\b", t) for n in names for t in texts), (
            f"{row['stage']} does not reach {row['producer']}"
        )


def test_every_statistic_the_paper_prints_has_a_producer():
    paper = pd.read_csv(REPO / "config" / "paper_results.tsv", sep="\t", dtype=str)
    covered = {(s, stat) for r in ROWS for s in r["studies"] for stat in r["statistics"]}
    missing = sorted({(r.study, r.statistic) for r in paper.itertuples()} - covered)
    assert not missing, f"statistics of the paper with no row in docs/architecture.md: {missing}"


def test_one_producer_per_statistic_and_study():
    """Two rows may name one statistic (b in 1C: the mixed model and the OLS) only with
    different producers of different conditions; never two rules for the same study."""
    seen: dict[tuple[str, str], str] = {}
    for r in ROWS:
        for s in r["studies"]:
            for stat in r["statistics"]:
                if (s, stat) in seen:
                    assert seen[(s, stat)] == r["rule"], f"{stat} of {s} made by two rules"
                seen[(s, stat)] = r["rule"]
    # the reliability statistics never come from an analysis
    assert all(
        seen[(s, "alpha")] == "reliability" and seen[(s, "ICC_average")] == "reliability" for s in ("1A", "2A", "3A", "4A")
    )


def test_the_check_can_fail(tmp_path, monkeypatch):
    """A row naming a function that does not exist, a caller that does not call the computing
    function, or a statistic the row writer does not write, fails."""
    bad = dict(ROWS[0], producer="fmat.reliability.no_such_function")
    with pytest.raises(AttributeError):
        test_each_row_is_true(bad)
    renamed = dict(ROWS[0], computed=["fmat.stats.icc.no_such_icc", ROWS[0]["computed"][1]])
    with pytest.raises(AttributeError):
        test_each_row_is_true(renamed)
    method = dict(ROWS[0], computed=["fmat.stats.mixed.LmmFit.no_such_method"])
    with pytest.raises(AttributeError):
        test_each_row_is_true(method)
    not_called = dict(ROWS[0], computed=["fmat.stats.alpha.cronbach_alpha", "fmat.reliability.icc_models"])
    with pytest.raises(AssertionError, match="does not call"):
        test_each_row_is_true(not_called)
    wrong = dict(next(r for r in ROWS if r["rule"] == "analysis"), statistics=["no_such_statistic"])
    with pytest.raises(AssertionError, match="does not write"):
        test_each_row_is_true(wrong)
    with pytest.raises(AssertionError, match="not '`function` in `caller`'"):
        _computed_by("`fmat.stats.icc.icc`, `fmat.reliability.icc_models`")


# ------------------------------------------------------------- computed where the table says (issue 53)

#: studies whose statistics are checked at run time: their analysis runs on perfect learners of
#: config/world.yaml's plant (no model, no criterion table: 1A-1C need the workflow's tables)
RUN_STUDIES = ("2A", "3A", "3B", "4A")


def _floats(obj, depth: int = 0) -> list[float]:
    """The finite numbers inside ``obj``: scalars, containers, numeric cells of a table, and the
    fields of this project's result objects (an ``LmmFit``)."""
    if depth > 4 or obj is None or isinstance(obj, (str, bytes, bool)):
        return []
    if isinstance(obj, (int, float, np.number)):
        return [float(obj)] if np.isfinite(obj) else []
    if isinstance(obj, pd.DataFrame):
        num = obj.select_dtypes("number").to_numpy(dtype=float).ravel()
        return [float(x) for x in num[np.isfinite(num)]]
    if isinstance(obj, (pd.Series, np.ndarray)):
        arr = np.asarray(obj)
        if arr.dtype.kind not in "fiu":
            return []
        arr = arr.astype(float).ravel()
        return [float(x) for x in arr[np.isfinite(arr)]]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _floats(v, depth + 1)]
    if isinstance(obj, (list, tuple)):
        return [x for v in obj for x in _floats(v, depth + 1)]
    if type(obj).__module__.startswith("fmat.") and hasattr(obj, "__dict__"):
        return [x for k, v in vars(obj).items() if k not in ("data", "result") for x in _floats(v, depth + 1)]
    return []


def _given(obj) -> list[float]:
    """The numbers handed to a function as plain values: scalars, containers of them, tables (not
    the fields of a fit object, which a contrast legitimately reads)."""
    if isinstance(obj, (list, tuple)):
        return [x for v in obj for x in _given(v)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _given(v)]
    if type(obj).__module__.startswith("fmat."):
        return []
    return _floats(obj)


#: the statistics package: a number one of its functions returns is made there
STATS_DIR = str(REPO / "fmat" / "stats") + "/"


class _Calls:
    """A profile hook that keeps, for each call of a watched code object, the numbers it was given,
    the numbers it returned, and the numbers a fmat.stats function returned to it (or to a
    function it called) when the watched function is not itself of fmat.stats."""

    def __init__(self, codes):
        self.codes = set(codes)
        self.given: dict[int, list[float]] = {}
        self.from_stats: dict[int, list[float]] = {}
        self.seen: dict[object, list[tuple[list[float], list[float], list[float]]]] = {c: [] for c in self.codes}
        self._stats: dict[object, bool] = {}

    def _is_stats(self, code) -> bool:
        known = self._stats.get(code)
        if known is None:
            known = self._stats[code] = code.co_filename.startswith(STATS_DIR)
        return known

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event == "return" and self._is_stats(code):
            outer = frame.f_back
            while outer is not None and self._is_stats(outer.f_code):
                outer = outer.f_back  # the stats function called from the stats package: its caller's caller counts
            numbers = None
            while outer is not None:
                if outer.f_code in self.codes and not self._is_stats(outer.f_code):
                    numbers = _floats(arg) if numbers is None else numbers
                    self.from_stats.setdefault(id(outer), []).extend(numbers)
                outer = outer.f_back
        if code not in self.codes:
            return
        if event == "call":
            n = code.co_argcount + code.co_kwonlyargcount
            self.given[id(frame)] = [x for name in code.co_varnames[:n] for x in _given(frame.f_locals.get(name))]
        elif event == "return":
            self.seen[code].append((self.given.pop(id(frame), []), _floats(arg), self.from_stats.pop(id(frame), [])))


def _code(dotted: str):
    fn = resolve(dotted)
    return inspect.unwrap(fn).__code__


def _perfect(sid: str):
    """The study file and the sampled scores of four perfect learners of config/world.yaml's plant."""
    study = load_study(REPO / "config" / "studies" / f"{sid}.yaml")
    world = cal.World(study, plant.load_world(REPO / "config" / "world.yaml").plant(sid), n_models=4)
    return study, cal.perfect_learner_scores(world, seed=1)[1]


def _traced(calls: _Calls, run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)  # perfect learners agree: tau^2 ~ 0
        sys.setprofile(calls)
        try:
            return run()
        finally:
            sys.setprofile(None)


@pytest.fixture(scope="module")
def run_stats():
    """Each RUN_STUDIES study's reliability and analysis (the paper's inference) on perfect
    learners, with what every computing function of the table was given and returned."""
    codes = {r["computed"][0]: _code(r["computed"][0]) for r in ROWS}
    out = {}
    for sid in RUN_STUDIES:
        study, scores = _perfect(sid)
        spec = dict(study.analysis)
        calls = _Calls(codes.values())

        def run(study=study, scores=scores, spec=spec):
            lpr = lpr_table(study, scores)
            data = analyses.AnalysisInput(study=study, scores=scores, lpr=lpr, criteria={})
            options = {**dict(spec.get("options") or {}), "inference": "paper"}
            return reliability_tables(study, scores, lpr, sid=study.id)[1], analyses.run_analysis(
                str(spec["name"]), data, options
            )

        rel, res = _traced(calls, run)
        stats = pd.concat([rel, res.stats], ignore_index=True)
        out[sid] = (stats, {name: calls.seen[code] for name, code in codes.items()})
    return out


def _near(value: float, numbers: list[float]) -> bool:
    return bool(numbers) and bool(np.isclose(np.asarray(numbers), value, rtol=1e-10, atol=1e-12).any())


@pytest.mark.parametrize("sid", RUN_STUDIES)
def test_each_number_is_made_by_the_function_the_table_names(sid, run_stats):
    """Issue 53 ("for 3A's d it points one function too late"): every number of model ``all`` that a
    study's reliability and analysis write (of a statistic the table lists for the study) is
    returned by the function a row of the table names as computing it, and that function was not
    handed the number: it made it (a function that only copies a number into a row, as
    ``stereotype._rows``, is handed it and fails here)."""
    stats, seen = run_stats[sid]
    rows = [r for r in ROWS if sid in r["studies"] and r["rule"] != "compare_study"]
    for stat in sorted({s for r in rows for s in r["statistics"]}):
        mine = [r for r in rows if stat in r["statistics"]]
        values = pd.to_numeric(stats.loc[(stats["statistic"] == stat) & (stats["model"] == "all"), "value"]).to_numpy(float)
        values = values[np.isfinite(values)]
        assert len(values), f"{sid} wrote no {stat} of model all"
        covered = np.zeros(len(values), bool)
        for r in mine:
            name = r["computed"][0]
            made = [i for i, v in enumerate(values) if any(_near(v, ret) and not _near(v, given) for given, ret, _ in seen[name])]
            assert made, f"{sid}: no {stat} of model all is made by {name} (the function the table names)"
            late = [values[i] for i in made if any(_near(values[i], stats_made) for _, _, stats_made in seen[name])]
            assert not late, f"{sid}: {name} gets {stat} {late[:3]} from a fmat.stats function it calls: name that function"
            covered[made] = True
        assert covered.all(), f"{sid}: {stat} values {values[~covered]} are not made by {[r['computed'][0] for r in mine]}"


def test_the_run_check_can_fail(run_stats):
    """The row writer of 3A (``_rows``, the table's old answer for d) is handed every d it writes;
    ``model_effects`` is handed none and returns them, but gets them from ``LmmFit.compare``."""
    stats, _ = run_stats["3A"]
    d = pd.to_numeric(stats.loc[(stats["statistic"] == "d") & (stats["model"] == "all"), "value"]).to_numpy(float)
    calls = _Calls([_code("fmat.analyses.stereotype._rows"), _code("fmat.analyses.stereotype.model_effects")])
    study, scores = _perfect("3A")
    data = analyses.AnalysisInput(study=study, scores=scores, lpr=lpr_table(study, scores), criteria={})
    _traced(
        calls, lambda: analyses.run_analysis("stereotype_pairs", data, {**dict(study.analysis["options"]), "inference": "paper"})
    )
    ((rows_given, _, _),) = calls.seen[_code("fmat.analyses.stereotype._rows")]
    ((effects_given, effects_made, from_stats),) = calls.seen[_code("fmat.analyses.stereotype.model_effects")]
    assert all(_near(v, rows_given) for v in d)
    assert all(_near(v, effects_made) and not _near(v, effects_given) for v in d)
    assert all(_near(v, from_stats) for v in d)  # and LmmFit.compare made them: model_effects is one function too late


def test_each_rule_script_calls_one_function_of_its_stage():
    """scripts/*.py are thin: besides run_script, each imports exactly one function, from one
    stage module of fmat_replication, and calls it; nothing of the library directly."""
    for script in sorted((REPO / "scripts").glob("*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        imports = [
            (n.module, a.name)
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            for a in n.names
            if (n.module or "").startswith("fmat") and not (n.module == "fmat_replication.scripts" and a.name == "run_script")
        ]
        assert len(imports) == 1, (script.name, imports)
        module, name = imports[0]
        assert module.startswith("fmat_replication.") and module.count(".") == 1, (script.name, module)
        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert name in called, (script.name, name)
        assert callable(resolve(f"{module}.{name}"))


# ----------------------------------------------------------------------------- no detours (issue 33)

#: where the workflow's code lives: it imports fmat and fmat_replication as installed packages
WORKFLOW_CODE = ("Snakefile", "rules", "scripts", "reports", "fmat_replication")
_DETOUR = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=|\bPYTHONPATH\b")


def detours(root: Path = REPO) -> list[str]:
    """``file:line`` of every sys.path edit or PYTHONPATH set in the workflow's code under ``root``."""
    out = []
    for name in WORKFLOW_CODE:
        top = root / name
        files = (
            [top]
            if top.is_file()
            else sorted(p for p in top.rglob("*") if p.is_file() and p.suffix in (".py", ".smk", ".qmd", ".md"))
        )
        for path in files:
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _DETOUR.search(line):
                    out.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return out


def test_the_workflow_takes_no_detour_to_its_packages():
    """No script, rule, report or replication module puts the repository on sys.path or
    PYTHONPATH: fmat and fmat_replication are installed (make env; envs/*.post-deploy.sh)."""
    assert detours() == []


def test_the_detour_check_can_fail(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "x.py").write_text("import sys\nsys.path.insert(0, '..')\n")
    (tmp_path / "Snakefile").write_text('os.environ["PYTHONPATH"] = workflow.basedir\n')
    assert [d.split(":")[0] for d in detours(tmp_path)] == ["Snakefile", "scripts/x.py"]


def test_the_packages_import_from_outside_the_repository(tmp_path):
    """In a fresh interpreter started in a folder outside the repository, with no PYTHONPATH,
    fmat_replication (a stage module, the pages) imports: it is installed, not found through the
    working folder; and it is the one of this checkout (editable)."""
    import os
    import subprocess
    import sys

    code = (
        "import fmat, fmat_replication, fmat_replication.lpr_stage, fmat_replication.pages.render as r; "
        "print(fmat.__file__); print(fmat_replication.__file__); print(r.SOURCES['study'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    library, replication, source = res.stdout.split()
    assert Path(library).parent == REPO / "fmat"
    assert Path(replication).parent == REPO / "fmat_replication"
    assert Path(source) == REPO / "reports" / "study.qmd" and Path(source).is_file()


def test_no_module_name_means_two_things():
    """No top-level module name is in both packages: ``fmat.lpr`` is the library's LPR, and the
    replication's stage that makes the LPR table is ``fmat_replication.lpr_stage``."""

    def names(root: Path) -> set[str]:
        return {p.stem for p in root.glob("*.py") if p.stem != "__init__"} | {
            p.name for p in root.iterdir() if (p / "__init__.py").is_file()
        }

    shared = names(REPO / "fmat") & names(REPO / "fmat_replication")
    assert not shared, f"module names in both fmat/ and fmat_replication/: {sorted(shared)}"
