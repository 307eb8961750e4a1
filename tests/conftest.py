"""Shared test fixtures.

Tiny models are built once per session by :mod:`fmat.tiny` into a temporary folder
(see the ``tiny_models`` fixture in tests/test_scoring.py and friends).
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The offline mirror of criterion data (../shared/data); tests skip with a reason without it."""
    path = SHARED / "data"
    if not path.exists():
        pytest.skip("../shared/data (the offline criterion mirror) is not beside this checkout")
    return path
