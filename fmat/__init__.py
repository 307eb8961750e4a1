"""fmat: the Fill-Mask Association Test (FMAT) in Python.

The public API mirrors the R package FMAT (Bao 2024) with Python names:

==========================  ============================  ===========================
R (FMAT)                    Python                        module
==========================  ============================  ===========================
FMAT_query                  fmat.query                    fmat.design
FMAT_query_bind             fmat.query_bind               fmat.design
FMAT_run                    fmat.run                      fmat.runner
summary.fmat                fmat.summary                  fmat.lpr
ICC_models                  fmat.icc_models               fmat.reliability
LPR_reliability             fmat.lpr_reliability          fmat.reliability
BERT_download               fmat.download                 fmat.models
BERT_info / BERT_vocab      fmat.info / fmat.vocab        fmat.models
BERT_info_date              fmat.info_date                fmat.models
BERT_remove                 fmat.remove                   fmat.models
fill_mask_check             fmat.fill_mask_check          fmat.models
set_cache_folder            fmat.set_cache_folder         fmat.models
(a study file)              fmat.load_study               fmat.study
(a study file, end to end)  fmat.run_study                fmat.study_run
==========================  ============================  ===========================

Names are imported lazily, so ``import fmat`` is fast and does not import torch.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_MODULES = {
    "fmat.design": ("query", "query_bind"),
    "fmat.study": ("load_study",),
    "fmat.study_run": ("run_study",),
    "fmat.results": ("StudyResult",),
    "fmat.runner": ("run",),
    "fmat.lpr": ("summary",),
    "fmat.reliability": ("icc_models", "lpr_reliability"),
    "fmat.models": ("download", "info", "info_date", "vocab", "remove", "fill_mask_check", "set_cache_folder"),
    "fmat.errors": ("FmatError", "InputError", "ModelError"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fmat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
