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

_EXPORTS = {
    "query": "fmat.design",
    "query_bind": "fmat.design",
    "load_study": "fmat.study",
    "run_study": "fmat.study_run",
    "StudyResult": "fmat.results",
    "run": "fmat.runner",
    "summary": "fmat.lpr",
    "icc_models": "fmat.reliability",
    "lpr_reliability": "fmat.reliability",
    "download": "fmat.models",
    "info": "fmat.models",
    "info_date": "fmat.models",
    "vocab": "fmat.models",
    "remove": "fmat.models",
    "fill_mask_check": "fmat.models",
    "set_cache_folder": "fmat.models",
    "FmatError": "fmat.errors",
    "InputError": "fmat.errors",
    "ModelError": "fmat.errors",
}

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
