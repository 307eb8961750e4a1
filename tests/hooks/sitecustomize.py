"""Imported by Python at start-up when tests/hooks is on PYTHONPATH (only tests put it there):
installs the slow-scoring test hook when FMAT_TEST_SLOW_SCORING is set (tests/hooks/slow_scoring.py)."""

import os

if os.environ.get("FMAT_TEST_SLOW_SCORING"):
    import slow_scoring

    slow_scoring.install()
