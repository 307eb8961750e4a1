"""The two layers and their imports (checked on the source, lazy imports included).

- The library ``fmat`` (what ``pip install fmat`` gives) imports nothing of the replication
  ``fmat_replication``, nothing of Snakemake, and no test-only package; the replication builds
  on the library.
- Neither package has an import cycle: a cycle (scoring -> lpbs -> scoring, models -> scoring
  -> models) makes each module's meaning depend on import order and blocks splitting them;
  graphlib finds one if it comes back.
"""

import ast
import graphlib
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parent.parent
LIBRARY = REPO / "fmat"
REPLICATION = REPO / "fmat_replication"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package: str) -> set[str]:
    """Every module named by an import statement of ``path`` (also inside functions);
    ``from . import x`` counts as importing ``x``, ``from a import b`` as ``a`` and ``a.b``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.update([mod] + [f"{mod}.{alias.name}" for alias in node.names])
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def import_graph(*roots: Path) -> dict[str, set[str]]:
    """``{module: modules of these packages it imports}`` for every module under ``roots``."""
    files = {module_name(p, root): p for root in roots for p in root.rglob("*.py")}
    tops = {root.name for root in roots}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name].update(t for t in imports_of(path, package) if t in files and t != name and t not in tops)
    return graph


def external_imports(root: Path) -> dict[str, set[str]]:
    """``{module: top-level names of everything it imports}`` for every module under ``root``."""
    out = {}
    for path in root.rglob("*.py"):
        name = module_name(path, root)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out[name] = {t.split(".")[0] for t in imports_of(path, package) if t}
    return out


def test_no_import_cycles():
    graph = import_graph(LIBRARY, REPLICATION)
    assert {"fmat.scoring", "fmat.lpbs", "fmat.models", "fmat_replication.config", "fmat.analyses.factual"} <= set(graph)
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_the_library_imports_nothing_of_the_replication_snakemake_or_the_tests():
    """``pip install fmat`` gives a library that stands alone: the replication (and the
    workflow's tools) build on it, never the other way round."""
    test_only = {"pytest", "pingouin", "wefe", "gensim", "hypothesis", "playwright", "tests"}
    bad = {
        mod: sorted(names & ({"fmat_replication", "snakemake"} | test_only)) for mod, names in external_imports(LIBRARY).items()
    }
    bad = {mod: names for mod, names in bad.items() if names}
    assert not bad, f"the library imports the replication, Snakemake or test-only packages: {bad}"


def test_the_replication_builds_on_the_library():
    uses = set().union(*external_imports(REPLICATION).values())
    assert "fmat" in uses


def test_the_installed_distribution_is_the_library_only():
    """pyproject's package list gives ``fmat`` and its subpackages, not ``fmat_replication``
    (a distribution of its own: fmat_replication/pyproject.toml)."""
    from setuptools import find_packages

    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(REPO), include=find.get("include", ["*"]), exclude=find.get("exclude", ()))
    assert "fmat" in packages and "fmat.commands" in packages
    assert not [p for p in packages if p.startswith("fmat_replication")], packages


def test_test_helpers_live_under_tests():
    """Test code is not shipped: no module of either package is only there for the tests."""
    for root in (LIBRARY, REPLICATION):
        names = {p.stem for p in root.rglob("*.py")}
        assert not names & {"testhooks", "browser", "fixtures", "conftest"}, (root, names)


def test_scoring_layers():
    """lpbs builds on scoring; models and scoring need only the tokenizer helpers, not each other."""
    graph = import_graph(LIBRARY)
    assert "fmat.scoring" in graph["fmat.lpbs"]
    assert "fmat.scoring" not in graph["fmat.models"]
    assert not {"fmat.models", "fmat.lpbs"} & graph["fmat.scoring"]


def test_the_checks_can_fail(tmp_path):
    """The graph sees relative imports inside functions, and the layer check sees a library
    module that imports the replication (so the tests above can fail)."""
    pkg = tmp_path / "fmat"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import a\n\ndef h():\n    import fmat_replication.pages\n")
    graph = import_graph(pkg)
    assert graph == {"fmat": set(), "fmat.a": {"fmat.b"}, "fmat.b": {"fmat.a"}}
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(graph).static_order())
    assert "fmat_replication" in external_imports(pkg)["fmat.b"]


def _replication_setuptools() -> dict:
    return tomllib.loads((REPLICATION / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_the_replication_distribution_holds_every_subpackage_and_data_file():
    """fmat_replication/pyproject.toml (the package folder is its project: package-dir ``.``)
    lists every package of fmat_replication, and its package data covers every file that is not
    Python (the templates, the schema, data/): what a module reads is installed with it."""
    config = _replication_setuptools()
    assert config["package-dir"] == {"fmat_replication": "."}
    packages = {module_name(p, REPLICATION) for p in REPLICATION.rglob("__init__.py")}
    assert sorted(config["packages"]) == sorted(packages)
    data = config["package-data"]
    for path in REPLICATION.rglob("*"):
        rel = path.relative_to(REPLICATION)
        if (
            path.is_dir()
            or path.suffix in (".py", ".pyc")
            or path.name == "pyproject.toml"
            or any(part == "__pycache__" or part.endswith(".egg-info") for part in rel.parts)
        ):
            continue
        owner = max((p for p in packages if rel.parts[: p.count(".")] == tuple(p.split(".")[1:])), key=len)
        inner = Path(*rel.parts[owner.count(".") :])
        assert any(inner.match(glob) for glob in data.get(owner, ())), f"{rel} is not package data of {owner}"
