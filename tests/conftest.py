"""Shared test fixtures.

Tiny models are built once per session by :mod:`fmat.tiny` into a temporary folder
(see the ``tiny_models`` fixture in tests/test_scoring.py and friends).
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO / "data" / "mirror"  # the criterion data the repository carries (data/mirror/README.md)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror_data() -> Path:
    """The criterion data the repository carries (data/mirror: BLS, SSA, Caliskan et al. 2017)."""
    assert MIRROR.is_dir(), f"{MIRROR} is missing: it is tracked in git, so the checkout is incomplete"
    return MIRROR
