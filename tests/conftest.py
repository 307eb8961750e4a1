"""Shared test fixtures.

Tiny models are built once per session by :mod:`fmat.tiny` into a temporary folder
(see the ``tiny_models`` fixture in tests/test_scoring.py and friends).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO / "data" / "mirror"  # the criterion data the repository carries (data/mirror/README.md)
# the test suite's own tools (tests/tools: tiny models of every architecture, sharpen,
# compare_results), importable by name from every test module
sys.path.insert(0, str(REPO / "tests" / "tools"))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror_data() -> Path:
    """The criterion data the repository carries (data/mirror: BLS, SSA, Caliskan et al. 2017)."""
    assert MIRROR.is_dir(), f"{MIRROR} is missing: it is tracked in git, so the checkout is incomplete"
    return MIRROR


#: a real Quarto, for the tests that render with it (tests/test_quarto.py, test_workflow's
#: test_demo_pages_with_quarto). Without one they are skipped and say why; .ci/run sets
#: FMAT_REQUIRE_QUARTO=1 (CI has Quarto), and then they fail instead.
from fmat_replication.pages.render import QUARTO_TESTED  # noqa: E402

QUARTO = shutil.which("quarto")
REQUIRE_QUARTO = os.environ.get("FMAT_REQUIRE_QUARTO") == "1"
needs_quarto = pytest.mark.skipif(
    not QUARTO and not REQUIRE_QUARTO,
    reason=f"quarto is not on PATH: install Quarto (quarto.org; tested with {QUARTO_TESTED}) to run this test; CI has it",
)


@pytest.fixture(scope="session")
def quarto() -> str:
    """The quarto executable. Under FMAT_REQUIRE_QUARTO=1 its absence fails the test (before
    any other fixture of the test is built)."""
    if not QUARTO:
        pytest.fail(
            "FMAT_REQUIRE_QUARTO=1 but quarto is not on PATH (.ci/run installs it from the "
            "Quarto kit beside the checkout when that kit is there)"
        )
    return QUARTO


@pytest.fixture(autouse=True)
def _logging_enabled_again():
    """The benchmarks' ``main`` (bench_calibration, bench_null, bench_power) disable logging
    below WARNING for the whole process, as a script may; a test that calls one must not leave
    that to the tests after it (bench_paper reads the runner's INFO line of the load time)."""
    yield
    logging.disable(logging.NOTSET)


#: the longest test modules, longest first (seconds each took in CI, one process, 2026-11-28):
#: `make test` runs the suite on two processes (pytest-xdist, a module stays on one), which take
#: the modules in collection order; the longest first, so that no long one starts last
LONGEST_FIRST = (
    "test_workflow.py",  # 724: the demo workflow, trained models, Quarto
    "test_slurm.py",  # 212
    "test_clone_paths.py",  # 198
    "test_docs.py",  # 178
    "test_install.py",  # 93
    "test_demo_own_study.py",  # 86
    "test_incremental.py",  # 79
    "test_declared_locks.py",  # 78
    "test_resume.py",  # 68
    "test_study_run.py",  # 53
    "test_plant.py",  # 47
)


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (a worker's collection): the modules of LONGEST_FIRST first, in its
    order, then the others as collected; a module's own tests keep their order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
