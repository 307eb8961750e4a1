"""fmat's modules import one another without cycles (checked on the source, lazy imports included).

A cycle (scoring -> lpbs -> scoring, models -> scoring -> models) makes each module's
meaning depend on import order and blocks splitting them; graphlib finds one if it comes back.
"""
import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "fmat"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, from every import statement (also inside
    functions); ``from . import x`` counts as importing ``x``."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [mod] + [f"{mod}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in files and t != name and t != "fmat")
    return graph


def test_no_import_cycles():
    graph = import_graph()
    assert {"fmat.scoring", "fmat.lpbs", "fmat.models", "fmat.workflow.config"} <= set(graph)
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle among fmat's modules: {' -> '.join(err.args[1])}")


def test_scoring_layers():
    """lpbs builds on scoring; models and scoring need only the tokenizer helpers, not each other."""
    graph = import_graph()
    assert "fmat.scoring" in graph["fmat.lpbs"]
    assert "fmat.scoring" not in graph["fmat.models"]
    assert not {"fmat.models", "fmat.lpbs"} & graph["fmat.scoring"]


def test_the_check_finds_a_cycle(tmp_path):
    """The graph sees relative imports inside functions (so the test above can fail)."""
    pkg = tmp_path / "fmat"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import a\n")
    graph = import_graph(pkg)
    assert graph == {"fmat": set(), "fmat.a": {"fmat.b"}, "fmat.b": {"fmat.a"}}
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(graph).static_order())
