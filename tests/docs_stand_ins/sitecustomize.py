"""The Hugging Face hub stand-in for the documentation's commands (tests/test_docs.py).

Imported by every Python process the docs test starts (this folder is on its PYTHONPATH). When
``FMAT_DOCS_HUB`` names a folder of tiny models (one sub-folder per model id, ``/`` written
``--``), ``fmat.download`` "downloads" from it into the real hub-cache layout of ``$HF_HOME``
(``models--NAME/snapshots/COMMIT``, ``refs/main``), so that the documented ``fmat download
bert-base-uncased`` and every later offline load work as written. Nothing reaches the network.
"""

import os

if os.environ.get("FMAT_DOCS_HUB"):
    import hashlib
    import shutil
    import types
    from pathlib import Path

    import fmat.models as _models

    _HUB = Path(os.environ["FMAT_DOCS_HUB"])

    def _folder(model: str) -> Path:
        src = _HUB / model.replace("/", "--")
        if not src.is_dir():
            raise OSError(f"{model}: no such model on the stand-in hub ({_HUB})")
        return src

    def _model_info(model, revision):
        src = _folder(model)
        return types.SimpleNamespace(
            sha=hashlib.sha1(model.encode()).hexdigest(),
            created_at=None,
            siblings=[types.SimpleNamespace(rfilename=f.name) for f in src.iterdir() if f.is_file()],
        )

    def _snapshot_download(repo_id, revision, cache_dir=None, allow_patterns=(), **_):
        cache = Path(cache_dir) if cache_dir else _models.cache_dir()
        repo = cache / ("models--" + repo_id.replace("/", "--"))
        dest = repo / "snapshots" / revision
        dest.mkdir(parents=True, exist_ok=True)
        for name in allow_patterns:
            shutil.copy(_folder(repo_id) / name, dest / name)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(revision)
        return str(dest)

    _models._hub_model_info = _model_info
    _models._hub_snapshot_download = _snapshot_download
