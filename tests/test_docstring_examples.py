"""Docstrings are the manual (issues 42 and 53).

- Every ``>>>`` in ``fmat/`` runs: each module found by walking the package (nothing listed by
  hand, so a new module or a new example is run without touching this file) has its doctests
  found and run as ``pytest --doctest-modules fmat`` would (``doctest.DocTestFinder`` on the
  module, its names as globals, ELLIPSIS and NORMALIZE_WHITESPACE on).
- Every function and class of the public API (``fmat.__all__``) has an Examples section.
- At least half of the public functions and classes of ``fmat/`` have an example (``>>>``)
  (see :func:`public_api` for what counts).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import fmat

EXPORTED = [n for n in fmat.__all__ if n != "__version__"]
#: functions outside ``__all__`` whose examples document the public path too
ALSO = [
    "fmat.results.effect_rows",
    "fmat.study_page.lpr_definition",
    # issue 54: what the pages and fmat power show (p format, NA reliability, the overall test)
    "fmat.results.p_text",
    "fmat.results.reliability_note",
    "fmat.study_page.reliability_view",
    "fmat.study_page.compared_columns",
    "fmat.power.headline",
]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _resolve(name: str):
    if "." not in name:
        return getattr(fmat, name)
    import importlib

    module, attr = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), attr)


def _run(obj, name: str) -> doctest.TestResults:
    """Run the examples of ``obj`` as ``pytest --doctest-modules`` would: in its module's names."""
    import importlib
    import sys

    module = sys.modules.get(obj.__module__) or importlib.import_module(obj.__module__)
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in finder.find(obj, name, globs=dict(vars(module))):
        runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", EXPORTED + ALSO)
def test_every_exported_name_has_examples_that_run(name, monkeypatch, tmp_path):
    monkeypatch.setenv("FMAT_MODELS_LOCK", str(tmp_path / "lock.tsv"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    obj = _resolve(name)
    doc = obj.__doc__ or ""
    assert "Examples\n" in doc and "--------" in doc, f"{name}: no Examples section (numpydoc)"
    result = _run(obj, name)
    assert result.attempted > 0, f"{name}: its Examples section has no >>> line"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} example(s) failed (see the output above)"


def test_a_wrong_example_fails():
    """The check can fail: an example whose output is wrong is counted as failed."""

    def wrong():
        """Examples
        --------
        >>> 1 + 1
        3
        """

    result = _run(wrong, "wrong")
    assert (result.attempted, result.failed) == (1, 1)


# -- every example in fmat/ runs (issue 53) -----------------------------------------------------

MODULES = sorted(m.name for m in pkgutil.walk_packages(fmat.__path__, "fmat."))


def test_the_walk_finds_the_modules():
    assert {"fmat.lpr", "fmat.stats.icc", "fmat.reliability", "fmat.commands.weat"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_every_example_in_the_module_runs(module, monkeypatch, tmp_path):
    """As ``pytest --doctest-modules`` (no option flags: an example that needs ELLIPSIS or
    NORMALIZE_WHITESPACE says so in a ``# doctest:`` directive, so that docs/architecture.md's
    command passes from any folder): every docstring of the module (functions, classes, their
    methods), in a fresh working folder, with a throwaway models lock and one torch thread."""
    monkeypatch.setenv("FMAT_MODELS_LOCK", str(tmp_path / "lock.tsv"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.chdir(tmp_path)
    result = _run_module(importlib.import_module(module))
    assert result.failed == 0, f"{module}: {result.failed} of {result.attempted} example(s) failed (see the output above)"


def _run_module(mod) -> doctest.TestResults:
    runner = doctest.DocTestRunner(optionflags=0)
    for test in doctest.DocTestFinder().find(mod, mod.__name__, globs=dict(vars(mod))):
        runner.run(test)
    return runner.summarize(verbose=False)


def test_a_wrong_example_in_a_module_fails(tmp_path, monkeypatch):
    """The module check can fail: a method's wrong example is found and counted as failed, and an
    example that needs NORMALIZE_WHITESPACE fails without its directive."""
    (tmp_path / "docmod_53.py").write_text(
        "class Thing:\n"
        "    def act(self):\n"
        '        """\n        >>> Thing().act()\n        2\n        """\n'
        "        return 1\n\n\n"
        "def spaced():\n"
        '    """\n    >>> print("a  b")\n    a b\n    """\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = _run_module(importlib.import_module("docmod_53"))
    assert (result.attempted, result.failed) == (2, 2)


# -- half of the public API has an example (issue 53) -------------------------------------------

FMAT = Path(fmat.__file__).parent
#: the command-line layer: documented by ``fmat COMMAND --help`` and docs/*.md (run by test_docs.py)
CLI = ("fmat.cli", "fmat.commands")
SHARE = 0.5


def public_api(root: Path = FMAT, package: str = "fmat") -> dict[str, str]:
    """The public functions and classes of ``root``, by dotted name, with their docstrings.

    Read from the source (``ast``), so a module another change breaks does not hide its names.
    Counted: in every module whose path has no part starting with ``_`` (``__init__.py``
    excepted) and that is not the command-line layer (:data:`CLI`), each function and class
    defined at module level whose name does not start with ``_``, and each method of such a
    class whose name does not start with ``_`` (dunders such as ``__init__`` are not counted;
    properties are attributes, not counted). Imported names are counted where they are defined.
    """
    api = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue
        module = ".".join((package, *rel.with_suffix("").parts)).removesuffix(".__init__")
        if any(module == c or module.startswith(c + ".") for c in CLI):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                continue
            api[f"{module}.{node.name}"] = ast.get_docstring(node) or ""
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if (
                        isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not sub.name.startswith("_")
                        and not {ast.unparse(d) for d in sub.decorator_list}
                        & {"property", "functools.cached_property", "cached_property"}
                    ):
                        api[f"{module}.{node.name}.{sub.name}"] = ast.get_docstring(sub) or ""
    return api


def example_share(api: dict[str, str]) -> tuple[int, int]:
    """How many of ``api``'s docstrings hold an example (a ``>>>`` line), and of how many."""
    return sum(">>>" in doc for doc in api.values()), len(api)


def test_half_of_the_public_api_has_an_example():
    api = public_api()
    have, total = example_share(api)
    assert total > 200, f"only {total} public names found in {FMAT}: the walk is broken"
    print(f"public functions and classes of fmat/ with a >>> example: {have} of {total}")
    missing = "\n".join(name for name, doc in api.items() if ">>>" not in doc)
    assert have >= SHARE * total, (
        f"{have} of {total} public functions and classes of fmat/ have a >>> example, under {SHARE:.0%}; "
        f"add a numpydoc Examples section to some of these:\n{missing}"
    )


def test_the_share_can_fail(tmp_path):
    """Two public functions, a public class and its public method, one example: 1 of 4, under half."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_private.py").write_text("def hidden():\n    pass\n")
    (pkg / "mod.py").write_text(
        'def shown():\n    """\n    >>> shown()\n    """\n\n'
        "def bare():\n    pass\n\n"
        "def _helper():\n    pass\n\n"
        "class Thing:\n    def __init__(self):\n        pass\n\n"
        "    def act(self):\n        pass\n"
    )
    api = public_api(pkg, "pkg")
    assert sorted(api) == ["pkg.mod.Thing", "pkg.mod.Thing.act", "pkg.mod.bare", "pkg.mod.shown"]
    have, total = example_share(api)
    assert (have, total) == (1, 4) and have < SHARE * total
