"""What every workflow script (scripts/*.py) shares: logging to the rule's log file, errors as
messages (:func:`run_script`), JSON markers (:func:`write_json`, :func:`read_json`)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Mapping

from fmat.errors import FmatError, InputError, os_error
from fmat.io import atomic_path


def script_logging(log_file: str | os.PathLike | None) -> None:
    """Log to the rule's log file and to stderr (INFO)."""

    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )


def run_script(main, log_file=None) -> None:
    """Run a script's ``main()``; an :class:`~fmat.errors.FmatError` or a failure of the
    environment (:func:`fmat.errors.os_error`) is logged as a message (no traceback) and the job
    fails with exit status 1."""

    script_logging(log_file)
    log = logging.getLogger("fmat_replication")
    try:
        main()
    except Exception as err:
        known = err if isinstance(err, FmatError) else os_error(err)
        if known is None:
            log.exception("unexpected error")
            raise
        log.error("%s", known)
        sys.exit(1)


def write_json(record: Mapping, path: str | os.PathLike) -> Path:
    """Write a JSON marker atomically."""

    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path


def read_json(path: str | os.PathLike) -> dict:
    """Read a model marker written by :func:`write_json`, checked: a JSON object with a ``name``
    (text) and a ``path`` (a folder, or null for a cached hub model); else an InputError."""

    p = Path(path)
    fix = f"delete {p} and run the workflow again: its rule (download_model, or demo_models in the demo) writes it again"
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"the model marker is not valid JSON ({err})", where=str(p), fix=fix) from err
    if not isinstance(record, dict):
        raise InputError(f"the model marker holds a {type(record).__name__}, not a JSON object", where=str(p), fix=fix)
    if not isinstance(record.get("name"), str) or not record["name"].strip():
        raise InputError("the model marker has no model name (key 'name')", where=str(p), fix=fix)
    if record.get("path") is not None and (not isinstance(record["path"], str) or not record["path"].strip()):
        raise InputError(f"the model marker's 'path' is {record['path']!r}, not a folder or null", where=str(p), fix=fix)
    return record
