"""What a study file asks for after scoring: its LPR table and its reliability, for several
models together. ``fmat study`` (one study, no Snakemake) and the replication's lpr and
reliability stages call these same functions.

- :func:`lpr_table`: the LPRs (or LPBS, Kurita et al. 2019) with the file's ``lpr:`` options;
- :func:`reliability_tables`: ICC among the models and alpha among the items of its
  ``reliability:`` block, in the :mod:`fmat.results` shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import pandas as pd

from . import lpbs, lpr
from .errors import InputError
from .reliability import ITEM_KEYS, alpha_rows, icc_models, icc_rows, item_key_map, lpr_reliability, with_item_keys
from .results import model_slug


def study_options(study: Any, key: str) -> dict:
    """The study's ``lpr`` / ``reliability`` / ``score`` block as a dict ({} when absent): from a
    :class:`fmat.study.Study`, or anything with that attribute, or a mapping.

    Examples
    --------
    >>> study_options({"lpr": {"mask_pair": True}}, "lpr"), study_options({}, "score")
    ({'mask_pair': True}, {})
    """

    value = getattr(study, key, None)
    if value is None and isinstance(study, Mapping):
        value = study.get(key)
    if value is None:
        return {}
    if hasattr(value, "__dataclass_fields__"):
        value = asdict(value)
    return dict(value)


def summary_function(study: Any):
    """The contrast a study's scores get: :func:`fmat.lpr.summary` (LPR), or
    :func:`fmat.lpbs.summary` (LPBS, Kurita et al. 2019) when its file says ``score: {method:
    lpbs}``. Both keep the value in column ``LPR``; the LPBS table says so in
    ``attrs["measure"]``.

    Examples
    --------
    >>> summary_function({"score": {"method": "lpbs"}}).__module__, summary_function({}).__module__
    ('fmat.lpbs', 'fmat.lpr')
    """
    return lpbs.summary if study_options(study, "score").get("method", "fmat") == "lpbs" else lpr.summary


def lpr_table(study: Any, scores: pd.DataFrame) -> pd.DataFrame:
    """LPRs (or LPBS) of one study, with the study file's ``lpr`` options; its phrases' item keys
    in ``attrs["item_keys"]`` (kept in parquet files), so that ``fmat reliability`` on the written
    table keys items as the workflow does (:func:`fmat.reliability.with_item_keys`).

    Examples
    --------
    As R FMAT's ``summary(scores)`` (LPR of the two MASK groups):

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> lpr_table({"lpr": {"target_pair": False}}, scores)[["model", "M_word", "T_word", "LPR"]].round(3)
      model       M_word T_word    LPR
    0     a  man - woman  nurse -0.693
    1     a  man - woman  pilot  1.099
    2     b  man - woman  nurse -0.336
    3     b  man - woman  pilot  0.916
    """

    out = summary_function(study)(scores, **study_options(study, "lpr"))
    keys = item_key_map(_items(study))
    if keys:
        out.attrs[ITEM_KEYS] = keys
    return out


def reliability_tables(
    study: Any, scores: pd.DataFrame | None, lpr: pd.DataFrame, sid: str | None = None, icc: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Reliability of one study -> ``(details, stats)``.

    - ICC among the models (:func:`fmat.reliability.icc_models`; agreement, average and single)
      on the raw log probabilities (condition ``all``: the paper's ICC, footnote 1) and on the
      LPRs (condition ``LPR``); skipped with ``icc=False`` (one model);
    - alpha among the study file's ``reliability.item`` split by its ``by``
      (:func:`fmat.reliability.lpr_reliability`), on the LPRs of ``reliability.lpr`` (by default
      the study's ``lpr`` options); with ``model`` in ``by``, also pooled over the models
      (model ``all``: the "Overall" rows of Tables 3-4). Phrases are replaced by their item
      keys first (:func:`_item_keys`), so templates that word an item differently line up;
      ``reliability.names`` gives the conditions' words (Studies 2A-2D: personal, like-dislike).
      This is the only producer of alpha rows: no analysis computes them again.

    ``details`` stacks the raw outputs (column ``analysis`` = ICC / alpha); ``stats`` has the
    same numbers in the :mod:`fmat.results` shape (conditions as docs/results.md; ``model`` a
    slug, e.g. ``vinai__bertweet-base``).

    Examples
    --------
    ICC as R FMAT's ``ICC_models()``, alpha as its ``LPR_reliability()``:

    >>> import pandas as pd, fmat
    >>> q = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]},
    ...                TARGET={"Job": ["nurse", "pilot"]})
    >>> scores = pd.concat([q.assign(model="a", prob=[0.2, 0.4, 0.3, 0.1]),
    ...                     q.assign(model="b", prob=[0.25, 0.35, 0.3, 0.12])])
    >>> study = {"lpr": {"target_pair": False}, "reliability": {"item": "T_word"}}
    >>> details, stats = reliability_tables(study, scores, lpr_table(study, scores), sid="S")
    >>> stats[["statistic", "condition", "value", "n"]].head(4).round(3)
         statistic condition  value    n
    0  ICC_average       all  0.978  4.0
    1   ICC_single       all  0.957  4.0
    2  ICC_average       LPR  0.982  2.0
    3   ICC_single       LPR  0.965  2.0
    >>> stats["statistic"].tolist()[4:]
    ['alpha', 'alpha_std']
    """

    sid = str(sid or getattr(study, "id", "") or "")
    parts, details = [], []
    if icc:
        for condition, data in (("all", scores), ("LPR", lpr)):
            res = icc_models(data, type="agreement", unit="both")
            parts.append(icc_rows(sid, res, condition=condition))
            details.append(res.assign(analysis="ICC", condition=condition))
    opts = study_options(study, "reliability")
    item = opts.get("item", "query")
    by = opts.get("by") or []
    by = [by] if isinstance(by, str) else list(by)
    alpha_data = lpr
    lpr_opts = opts.get("lpr")
    if lpr_opts and dict(lpr_opts) != study_options(study, "lpr"):
        # alpha on another summary (e.g. log P before the contrast)
        alpha_data = summary_function(study)(scores, **lpr_opts)
    items = _items(study)
    splits = [by] + ([[b for b in by if b != "model"]] if "model" in by else [])
    names = dict(opts.get("names") or {})
    seen: set[str] = set()
    for split in splits:
        alpha = lpr_reliability(alpha_data, item=item, by=split or None, items=items)
        parts.append(alpha_rows(sid, alpha, by=split, names=names))
        details.append(alpha.assign(analysis="alpha", item=item, by=",".join(split)))
        seen.update(str(v) for b in split for v in alpha[b])
    unknown = [k for k in names if str(k) not in seen]
    if unknown:
        raise InputError(
            f"reliability.names: {', '.join(map(repr, unknown))} is not a value of the by columns {by}",
            where=f"study {sid}",
            fix="name values that the alpha splits have (a query template, an M_word pair "
            "such as 'like - dislike', a group), or remove the entry",
        )
    stats = pd.concat(parts, ignore_index=True)
    stats["model"] = [m if m == "all" else model_slug(m) for m in stats["model"]]
    detail = pd.concat(details, ignore_index=True)
    detail.insert(0, "study", sid)
    for col in detail.columns:
        if detail[col].dtype == object:
            detail[col] = detail[col].map(lambda v: v if v is None or isinstance(v, str) else str(v)).astype("string")
    return detail, stats


def _item_keys(study: Any, lpr: pd.DataFrame, item: str) -> pd.DataFrame:
    """Replace TARGET/ATTRIB phrases by their item keys (the study file's ``{phrase, item}``;
    ``Study.items``): :func:`fmat.reliability.with_item_keys`, the one way items are keyed."""

    return with_item_keys(lpr, _items(study), item)


def _items(study: Any) -> pd.DataFrame | None:
    """A study's items table (slot, word, item), or None (a study given as a plain mapping)."""
    items = getattr(study, "items", None)
    return items if isinstance(items, pd.DataFrame) else None
