"""One way to key items (issue 34): the library's reliability (``fmat.lpr_reliability``,
``fmat reliability``) lines phrases up by their item keys as the workflow does, so both give
the same alpha on the same table (Study 1A words "an engineer" in three templates and
"engineer" in the fourth)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO

import fmat
from fmat.cli import main
from fmat.io import read_table, write_table
from fmat.runner import label_scores

STUDY = REPO / "config" / "studies" / "1A.yaml"


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    """Scores of two stand-in models for Study 1A's queries, and the workflow's lpr and
    reliability stages run on them (fmat_replication.lpr_stage, .reliability)."""
    from fmat.study import load_study
    from fmat_replication.lpr_stage import lpr
    from fmat_replication.reliability_stage import reliability

    tmp = tmp_path_factory.mktemp("keys")
    queries = load_study(STUDY).queries
    rng = np.random.default_rng(34)
    paths = []
    for k, model in enumerate(["model-a", "model-b"]):
        t = queries.copy()
        t["output"] = t["M_word"].astype(str)
        t["token"] = t["M_word"].astype(str)
        # an item effect shared by the templates (alpha clearly above 0), plus noise
        effect = t["T_word"].astype(str).str.split().str[-1].map(lambda w: (sum(map(ord, w)) % 7) / 3.0)
        t["prob"] = np.exp(-3 - effect * (t["MASK"].astype(str) == "Male") - rng.uniform(0, 0.5 + k, len(t)))
        path = tmp / f"{model}.parquet"
        write_table(label_scores(t, model, queries), path)
        paths.append(path)
    lpr_path, stats_path = tmp / "lpr.parquet", tmp / "rel.parquet"
    lpr(STUDY, None, paths, lpr_path)
    reliability(STUDY, None, paths, lpr_path, sid="1A", out_stats=stats_path, out_details=tmp / "details.parquet")
    stats = read_table(stats_path)
    alpha = stats[(stats["statistic"] == "alpha") & (stats["model"] != "all")].set_index("model")["value"]
    return tmp, lpr_path, alpha


def test_the_workflow_alpha_is_computed(workflow):
    _, _, alpha = workflow
    assert list(alpha.index) == ["model-a", "model-b"] and alpha.notna().all() and (alpha > 0).all()


def test_fmat_reliability_gives_the_workflows_alpha(workflow, capsys):
    """The documented command (docs/statistics.md) on the workflow's own LPR table."""
    tmp, lpr_path, alpha = workflow
    out = tmp / "cli.csv"
    assert main(["reliability", str(lpr_path), "--icc", "--alpha", "--item", "query", "--by", "model", "-o", str(out)]) == 0
    got = read_table(out)
    got = got[got["statistic"] == "alpha(query)"].set_index("model")["alpha"]
    np.testing.assert_allclose(got.loc[alpha.index].to_numpy(float), alpha.to_numpy(float), rtol=1e-12)


def test_lpr_reliability_gives_the_workflows_alpha(workflow):
    _, lpr_path, alpha = workflow
    got = fmat.lpr_reliability(read_table(lpr_path), item="query", by="model").set_index("model")["alpha"]
    np.testing.assert_allclose(got.loc[alpha.index].to_numpy(float), alpha.to_numpy(float), rtol=1e-12)


def test_a_csv_without_the_keys_gets_them_from_the_study_file_and_says_so_otherwise(workflow, capsys):
    tmp, lpr_path, alpha = workflow
    csv = tmp / "lpr.csv"
    write_table(read_table(lpr_path), csv)  # CSV: no room for the keys
    assert main(["reliability", str(csv), "--alpha", "--item", "query", "--by", "model"]) == 0
    assert "give --study FILE" in capsys.readouterr().err  # NA is never silent
    out = tmp / "csv.csv"
    assert (
        main(["reliability", str(csv), "--alpha", "--item", "query", "--by", "model", "--study", str(STUDY), "-o", str(out)]) == 0
    )
    got = read_table(out).set_index("model")["alpha"]
    np.testing.assert_allclose(got.loc[alpha.index].to_numpy(float), alpha.to_numpy(float), rtol=1e-12)


def test_the_keys_travel_from_the_study_through_run_and_summary():
    """load_study's query table carries the keys; fmat.summary keeps them."""
    from fmat.study import load_study

    queries = load_study(STUDY).queries
    assert queries.attrs["item_keys"]["T_word"]["an engineer"] == "engineer"
    t = queries.copy()
    t["prob"] = 0.5
    lpr = fmat.summary(label_scores(t, "m", queries), mask_pair=True, target_pair=False)
    assert lpr.attrs["item_keys"] == queries.attrs["item_keys"]
