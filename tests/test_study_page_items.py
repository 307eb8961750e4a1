"""The page of ``fmat study --report`` shows per-item values for every registered analysis
family (issue 42): the mean LPR per item and model, the item keyed as the analysis declares it
(``register(..., items=...)``), within each group that the LPR did not contrast. Parametrised by
the registry, so a family registered later is covered (it needs an example study under
config/studies/)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fmat import analyses
from fmat.errors import InputError
from fmat.reliability import with_item_keys
from fmat.results import results_frame
from fmat.stages import lpr_table
from fmat.study import load_study
from fmat.study_page import PAIRING, item_table, render_study_page

REPO = Path(__file__).resolve().parents[1]
STUDIES = REPO / "config" / "studies"


def _example(name: str) -> Path | None:
    for path in sorted(STUDIES.glob("*.yaml")):
        block = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("analysis") or {}
        if block.get("name") == name:
            return path
    return None


def _scores(queries: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = [queries.assign(model=m, prob=rng.uniform(0.01, 0.5, len(queries))) for m in ("m1", "m2")]
    return pd.concat(parts, ignore_index=True)


def _load(path: Path, tmp_path: Path):
    """The example study; a criterion table its word lists read that this checkout has not built
    (resources/criteria/<name>.parquet) is stood in for by 12 synthetic items."""
    crit = tmp_path / "criteria"
    crit.mkdir()
    for f in (REPO / "resources" / "criteria").glob("*.parquet"):
        (crit / f.name).symlink_to(f)
    for _ in range(5):
        try:
            return load_study(path, criteria_dir=crit)
        except InputError as err:
            m = re.search(r"criterion table \S*?([\w.-]+)\.parquet \(asked for by this word list\) does not exist", str(err))
            if not m:
                raise
            pd.DataFrame({"item": [f"Item{i}" for i in range(12)]}).to_parquet(crit / f"{m.group(1)}.parquet")
    raise AssertionError(f"{path}: could not stand in for its criterion tables")


def _rows(html: str, cls: str) -> list[list[str]]:
    m = re.search(rf'<table class="{cls}">(.*?)</table>', html, re.S)
    assert m, f"no table of class {cls!r} on the page"
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S):
        rows.append([unescape(c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)])
    return rows


@pytest.mark.parametrize("name", analyses.available())
def test_the_page_shows_per_item_values_for_every_registered_family(name, tmp_path):
    keys = analyses.item_columns(name)
    assert keys, f"analysis {name!r} declares no items: register it with items=(<LPR columns of one item>)"
    path = _example(name)
    assert path is not None, f"no study under config/studies/ uses analysis {name!r}: add an example study"
    study = _load(path, tmp_path)
    lpr = lpr_table(study, _scores(study.queries))
    assert keys[-1] in lpr.columns, (name, keys, list(lpr.columns))
    # an item is a unit that varies: a key that names one value for the whole study is no item
    assert lpr[keys[-1]].astype(str).nunique() >= 2, (name, keys[-1], "holds one value: not the analysis' item")
    html = render_study_page(
        study,
        study.queries,
        lpr,
        results_frame([{"study": study.id, "statistic": "ICC_average", "value": 0.5}]),
        ["m1", "m2"],
        {},
        {"analysis": name, "implemented": True},
    )
    rows = _rows(html, "per-item")
    header, body = rows[0], rows[1:]
    # independent: the groups the LPR did not contrast, then the item keys; mean per model
    d = with_item_keys(lpr, study.items)
    d = d.assign(LPR=d["LPR"].astype(float))
    apart = [g for g in PAIRING if g in d.columns and d[g].astype(str).nunique() >= 2]
    slot = {"M_word": "MASK", "T_word": "TARGET", "A_word": "ATTRIB"}.get(keys[-1])
    by = [g for g in apart if g not in keys and g != slot] + [k for k in keys if k in d.columns]
    assert header == by + ["m1", "m2", "mean"], (name, header)
    expected = {}
    for key, sub in d.groupby(by, observed=True):
        per = [sub.loc[sub["model"] == m, "LPR"].mean() for m in ("m1", "m2")]
        expected[tuple(map(str, key))] = per + [float(np.mean(per))]
    got = {tuple(r[: len(by)]): [float(v) for v in r[len(by) :]] for r in body}
    assert set(got) == set(expected), (name, sorted(set(got) ^ set(expected))[:5])
    for k, v in expected.items():
        assert np.allclose(got[k], v, atol=6e-4), (name, k, got[k], v)
    # a long table (1C: thousands of names) is folded, a short one shown
    assert ('<details class="per-item-fold">' in html) == (len(body) > 60), (name, len(body))
    for g in apart:  # the compared groups are rows of their own, never averaged together
        if g in by:
            assert {r[by.index(g)] for r in body} == set(d[g].astype(str)), (name, g)


def test_the_item_table_keeps_compared_groups_apart_and_fails_when_averaged():
    lpr = pd.DataFrame(
        {
            "model": ["m1", "m2"] * 4,
            "MASK": ["Male", "Male", "Female", "Female"] * 2,
            "A_word": ["kind - rude"] * 4 + ["warm - cold"] * 4,
            "LPR": [1.0, 3.0, -1.0, -3.0, 2.0, 2.0, -2.0, -2.0],
        }
    )
    t = item_table(lpr, ["A_word"])
    assert t["columns"] == ["MASK", "A_word", "m1", "m2", "mean"]
    means = {(r[0], r[1]): float(r[-1]) for r in t["rows"]}
    assert means == {
        ("Male", "kind - rude"): 2.0,
        ("Female", "kind - rude"): -2.0,
        ("Male", "warm - cold"): 2.0,
        ("Female", "warm - cold"): -2.0,
    }
    assert item_table(lpr, ["no_such_column"]) is None
