"""Every function and class of the public API (``fmat.__all__``) has an Examples section, and
its examples run (issue 42: the exported functions had one ``>>>`` line between them)."""

from __future__ import annotations

import doctest

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
