"""Unit tests of the workflow's logic (fmat_replication and the study pipeline in fmat): names,
configuration validation, the model lock, reliability rows.

Fast (no Snakemake, no models). The workflow itself is tested in tests/test_workflow.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import fmat.runner
import fmat.stages
import fmat.study
import fmat_replication.config
import fmat_replication.demo
import fmat_replication.model_stage
import fmat_replication.score
import fmat_replication.scripts
from fmat.errors import InputError, OfflineError
from fmat.reliability import with_item_keys
from fmat.results import model_slug

REPO = Path(__file__).resolve().parents[1]
PAPER_MODELS = [
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-large-cased",
    "distilbert-base-uncased",
    "distilbert-base-cased",
    "albert-base-v1",
    "albert-base-v2",
    "roberta-base",
    "distilroberta-base",
    "vinai/bertweet-base",
    "vinai/bertweet-large",
]
STUDIES = ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "3A", "3B", "3C", "3D", "4A", "4B", "4C", "4D"]


@pytest.fixture
def paper_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))


def _validate(cfg, **kw):
    return fmat_replication.config.validate_config(cfg, root=REPO, **kw)


# ----------------------------------------------------------------------------- names


def test_model_slug_is_filesystem_safe_and_reversible_through_the_config():
    assert model_slug("vinai/bertweet-base") == "vinai__bertweet-base"
    assert model_slug("bert-base-uncased") == "bert-base-uncased"
    table = fmat_replication.config.model_table({"models": ["vinai/bertweet-base", {"name": "roberta-base", "revision": "abc"}]})
    assert list(table) == ["vinai__bertweet-base", "roberta-base"]
    assert table["vinai__bertweet-base"].name == "vinai/bertweet-base"
    assert table["roberta-base"].revision == "abc"
    with pytest.raises(InputError, match="file name"):
        model_slug("bad name")


def test_duplicate_model_is_an_error_naming_the_entry():
    with pytest.raises(InputError) as err:
        fmat_replication.config.model_table({"models": ["roberta-base", {"name": "roberta-base"}]})
    assert "config.models[1]" in str(err.value)


# ----------------------------------------------------------------------------- configuration


def test_paper_config_has_the_12_models_and_15_studies_and_validates(paper_config):
    cfg = _validate(paper_config)
    assert [s.name for s in fmat_replication.config.model_table(cfg).values()] == PAPER_MODELS
    assert cfg["studies"] == STUDIES
    assert cfg["mirror_dir"] is None and cfg["device"] == "auto"
    assert cfg["batch_size"] is None and cfg["max_tokens"] is None  # automatic batches


def test_demo_config_is_tiny_models_of_every_family(paper_config):
    from fmat.tiny import FAMILIES

    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text(encoding="utf-8"))
    cfg = _validate({**paper_config, **demo}, load_studies=False)
    specs = list(fmat_replication.config.model_table(cfg).values())
    assert {s.tiny for s in specs} == set(FAMILIES)
    assert all(s.name == FAMILIES[s.tiny][1] for s in specs)  # folder names drive FMAT's name rules
    assert {"2A", "3A"} <= set(cfg["studies"])


@pytest.mark.parametrize(
    "change, where, what",
    [
        ({"foo": 1}, "config.foo", "unknown key 'foo'"),
        ({"batch_size": "32"}, "config.batch_size", "expected integer"),
        ({"studies": "2A"}, "config.studies", "expected array"),
        ({"device": "gpu"}, "config.device", "allowed: auto"),
        ({"models": [{"name": "roberta-base", "revison": "x"}]}, "config.models[0].revison", "unknown key"),
        ({"models": [3]}, "config.models[0]", "model id"),
        ({"models": []}, "config.models", "non-empty"),
        ({"studies": ["2A", "9Z"]}, "config.studies[1]", "unknown study '9Z'"),
        ({"cache_dir": 3}, "config.cache_dir", "expected string or null"),
    ],
)
def test_bad_config_names_the_key(paper_config, change, where, what):
    with pytest.raises(InputError) as err:
        _validate({**paper_config, **change}, load_studies=False)
    msg = str(err.value)
    assert msg.startswith(where + ":"), msg
    assert what in msg
    assert "fix:" in msg


def test_defaults_are_filled(paper_config):
    cfg = _validate({"models": ["roberta-base"], "studies": ["2A"]}, load_studies=False)
    assert cfg["studies_dir"] == "config/studies" and cfg["cache_dir"] is None
    assert cfg["hub_timeout"] > 0 and cfg["score_threads"] >= 1


def test_a_broken_study_file_fails_validation(tmp_path):
    src = (REPO / "config" / "studies" / "2A.yaml").read_text(encoding="utf-8")
    (tmp_path / "2A.yaml").write_text(src.replace("item: T_word", "item: X_word"), encoding="utf-8")
    cfg = {"models": ["roberta-base"], "studies": ["2A"], "studies_dir": str(tmp_path)}
    with pytest.raises(InputError) as err:
        fmat_replication.config.validate_config(cfg)
    assert "2A.yaml" in str(err.value)


def test_study_criteria_lists_the_criterion_tables_a_study_reads():
    assert fmat.study.study_criteria(REPO / "config" / "studies" / "1C.yaml") == ["ssa_names_1c"]
    assert fmat.study.study_criteria(REPO / "config" / "studies" / "2A.yaml") == []


# ----------------------------------------------------------------------------- resources


def test_score_resources_grow_with_attempt():
    a1 = fmat_replication.score.score_resources("bert-large-cased", 1)
    a2 = fmat_replication.score.score_resources("bert-large-cased", 2)
    assert a2["mem_mb"] == 2 * a1["mem_mb"] and a2["runtime"] == 2 * a1["runtime"]
    assert fmat_replication.score.score_resources("bert-base-cased")["mem_mb"] < a1["mem_mb"]


# ----------------------------------------------------------------------------- network, lock


def test_hub_unreachable_is_detected_without_waiting(monkeypatch):
    import socket

    # HF_HUB_OFFLINE: answered without opening any connection
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_connection(*a, **k):  # pragma: no cover - must not be called
        raise AssertionError("hub_reachable opened a connection although HF_HUB_OFFLINE is set")

    with monkeypatch.context() as m:
        m.setattr(socket, "create_connection", no_connection)
        assert fmat_replication.model_stage.hub_reachable(5) is False
    monkeypatch.delenv("HF_HUB_OFFLINE")
    # a closed local port: refused at once

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert fmat_replication.model_stage.hub_reachable(2, endpoint=f"http://127.0.0.1:{port}") is False


def test_offline_and_not_cached_says_how_to_run_offline(monkeypatch, tmp_path):
    monkeypatch.setattr(fmat_replication.model_stage, "cached_snapshot", lambda name, revision: None)
    monkeypatch.setattr(fmat_replication.model_stage, "hub_reachable", lambda timeout: False)
    with pytest.raises(OfflineError) as err:
        fmat_replication.model_stage.ensure_model("bert-base-uncased", lock=tmp_path / "models.lock.tsv", timeout=1)
    msg = str(err.value)
    assert "make demo" in msg and "HF_HUB_OFFLINE=1" in msg
    assert not (tmp_path / "models.lock.tsv").exists()


def _fake_hub_cache(root: Path, repo: str, commit: str) -> Path:
    """The Hugging Face cache layout (hub/models--org--name/{refs/main, snapshots/<commit>/})."""
    folder = root / ("models--" + repo.replace("/", "--"))
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "bert"}')
    (snap / "model.safetensors").write_bytes(b"weights")
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    return snap


def test_a_cached_model_is_locked_without_the_network(monkeypatch, tmp_path):
    import hashlib

    commit = "0123456789abcdef0123456789abcdef01234567"
    hub = tmp_path / "hf" / "hub"
    _fake_hub_cache(hub, "vinai/bertweet-base", commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(hub))

    def no_network(timeout):  # pragma: no cover - must not be called
        raise AssertionError("the hub was probed although the model is cached")

    monkeypatch.setattr(fmat_replication.model_stage, "hub_reachable", no_network)
    lock = tmp_path / "models.lock.tsv"
    rec = fmat_replication.model_stage.ensure_model("vinai/bertweet-base", lock=lock)
    assert rec["commit"] == commit and rec["slug"] == "vinai__bertweet-base" and rec["source"] == "cache"
    rows = pd.read_csv(lock, sep="\t", dtype=str)
    assert rows["model"].tolist() == ["vinai/bertweet-base"]
    assert rows["commit"].iloc[0] == commit
    assert rows["sha256"].iloc[0] == hashlib.sha256(b"weights").hexdigest()
    assert "model.safetensors" in rows["files"].iloc[0]
    # the second model is added, the first kept
    _fake_hub_cache(hub, "roberta-base", "f" * 40)
    fmat_replication.model_stage.ensure_model("roberta-base", lock=lock)
    assert sorted(pd.read_csv(lock, sep="\t", dtype=str)["model"]) == ["roberta-base", "vinai/bertweet-base"]


def test_json_marker_roundtrip(tmp_path):
    rec = {"name": "vinai/bertweet-base", "path": None, "files": ["a", "b"]}
    fmat_replication.scripts.write_json(rec, tmp_path / "m" / "x.json")
    assert fmat_replication.scripts.read_json(tmp_path / "m" / "x.json") == rec


# ----------------------------------------------------------------------------- tables


def _scores(n_items=6, models=("m/one", "two", "three"), seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    base = rng.normal(-6, 2, size=n_items)
    for m in models:
        for i in range(n_items):
            for g, w in (("Male", "he"), ("Female", "she")):
                rows.append(
                    {
                        "model": m,
                        "query": f"q{i % 2} [MASK] {{TARGET}}.",
                        "MASK": g,
                        "M_pair": "1",
                        "M_word": w,
                        "TARGET": "T",
                        "T_pair": "T.1",
                        "T_word": f"w{i // 2}",
                        "prob": float(np.exp(base[i] + rng.normal(0, 0.5) + (0.3 if g == "Male" else 0))),
                    }
                )
    df = pd.DataFrame(rows)
    for c in df.columns:
        if c != "prob":
            df[c] = pd.Categorical(df[c], categories=list(dict.fromkeys(df[c])))
    df.attrs["type"] = "MT"
    return df


def test_load_scores_keeps_model_order_and_levels(tmp_path):
    from fmat.io import write_table

    s = _scores()
    paths = []
    for m in s["model"].cat.categories:
        part = s[s["model"] == m].copy()
        part["model"] = pd.Categorical([m] * len(part), categories=[m])
        paths.append(write_table(part, tmp_path / f"{model_slug(m)}.parquet"))
    back = fmat.runner.read_scores(paths)
    assert list(back["model"].cat.categories) == ["m/one", "two", "three"]
    assert list(back["T_word"].cat.categories) == list(s["T_word"].cat.categories)
    np.testing.assert_allclose(back["prob"], s["prob"])


def test_reliability_rows_match_pingouin_and_the_results_shape():
    import pingouin as pg

    from fmat.results import validate_results

    scores = _scores()
    study = {"lpr": {"mask_pair": True, "target_pair": False}, "reliability": {"item": "query", "by": ["model"]}}
    lpr = fmat.stages.lpr_table(study, scores)
    details, stats = fmat.stages.reliability_tables(study, scores, lpr, sid="XX")
    validate_results(stats)
    # ICC(A,k) / ICC(A,1) on log(prob): items = rows within each model, raters = models
    long = scores.assign(item=scores.groupby("model", observed=True).cumcount(), logp=np.log(scores["prob"]))
    ref = pg.intraclass_corr(long, targets="item", raters="model", ratings="logp").set_index("Type")["ICC"]
    got = stats.set_index(["statistic", "condition"])["value"]
    assert math.isclose(got[("ICC_average", "all")], ref["ICC(A,k)"], rel_tol=1e-9)
    assert math.isclose(got[("ICC_single", "all")], ref["ICC(A,1)"], rel_tol=1e-9)
    # on the LPRs
    long = lpr.assign(item=lpr.groupby("model", observed=True).cumcount())
    ref = pg.intraclass_corr(long, targets="item", raters="model", ratings="LPR").set_index("Type")["ICC"]
    assert math.isclose(got[("ICC_average", "LPR")], ref["ICC(A,k)"], rel_tol=1e-9)
    # alpha per model (model column = slug) and pooled over models (model "all")
    alpha = stats[stats["statistic"] == "alpha"]
    assert sorted(alpha["model"]) == sorted(["m__one", "two", "three", "all"])
    one = lpr[lpr["model"] == "m/one"].pivot(index="T_word", columns="query", values="LPR")
    ref_alpha = pg.cronbach_alpha(one)[0]
    assert math.isclose(alpha.set_index("model").loc["m__one", "value"], ref_alpha, rel_tol=1e-9)
    assert set(details["analysis"]) == {"ICC", "alpha"}


def test_demo_words_collects_words_and_phrase_parts():
    t = pd.DataFrame({"M_word": ["He", "She"], "A_word": ["lead teams", "raise children"]})
    years = pd.DataFrame({"M_word": ["1800", "1801"], "T_word": ["men", "women"]})
    words = fmat_replication.demo.demo_words([t, years])
    assert {"He", "She", "lead teams", "lead", "teams", "raise", "children", "1800", "1801", "men"} <= set(words)


def test_phrases_become_item_keys_so_templates_line_up():
    """Study 1A words an item "an engineer" in three templates and "engineer" in the fourth."""

    items = pd.DataFrame(
        {
            "slot": ["TARGET"] * 4,
            "word": ["an engineer", "a nurse", "engineer", "nurse"],
            "item": ["engineer", "nurse", "engineer", "nurse"],
        }
    )
    lpr = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "query": ["q1", "q1", "q2", "q2"],
            "T_word": ["an engineer", "a nurse", "engineer", "nurse"],
            "LPR": [1.0, 2.0, 1.5, 2.5],
        }
    )
    out = with_item_keys(lpr, items, "query")
    assert out["T_word"].astype(str).tolist() == ["engineer", "nurse", "engineer", "nurse"]
    assert lpr["T_word"].tolist()[0] == "an engineer"  # the input is not changed
    # the item column itself is never rewritten
    assert with_item_keys(lpr, items, "T_word") is lpr


def test_config_hash_is_stable_and_sensitive():
    from fmat_replication.config import config_hash

    a = config_hash({"studies": ["2A"], "device": "cpu"})
    assert a == config_hash({"device": "cpu", "studies": ["2A"]})  # key order does not matter
    assert a != config_hash({"studies": ["2A", "3A"], "device": "cpu"})
    assert a.startswith("sha256-") and len(a) == len("sha256-") + 12


def test_unknown_agreement_construction_is_named_with_the_known_ones(paper_config):
    from fmat.agreement import SV_AGREEMENT, known_constructions

    def check(spec):
        return _validate({**paper_config, "agreement": spec}, load_studies=False)

    with pytest.raises(InputError) as err:
        check({"constructions": ["simple_agrmt", "bogus"]})
    msg = str(err.value)
    assert "config.agreement.constructions" in msg and "unknown construction(s) 'bogus'" in msg
    assert "simple_agrmt" in msg  # the known names are listed
    # Marvin & Linzen's file (agreement.url) also has its reflexive and NPI constructions
    check({"url": "https://example.org/ml.tsv", "constructions": ["simple_reflexives", "simple_agrmt"]})
    with pytest.raises(InputError, match="Marvin & Linzen"):
        check({"url": "https://example.org/ml.tsv", "constructions": ["simple_agrmnt"]})
    # a user's own pairs file is checked when it is read, not here
    check({"pairs": "my_pairs.tsv", "constructions": ["mine"]})
    assert known_constructions() and set(known_constructions()) <= set(SV_AGREEMENT)


def test_a_world_block_keyed_by_no_study_is_an_error_naming_the_nearest_id(tmp_path):
    """Issue 44: a world file whose block for 3A is keyed `3a` planted nothing for 3A, silently
    ("Nothing was planted for this study"). Now the configuration check refuses it before any
    job, naming the key and the nearest configured id; a world that plants a study the run does
    not configure, but which exists, stays fine (the demo world with --config studies=[2A])."""
    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text(encoding="utf-8"))
    raw = yaml.safe_load((REPO / "config" / "world.yaml").read_text(encoding="utf-8"))
    cfg = {**demo, "studies": ["2A", "3A"], "studies_dir": str(REPO / "config" / "studies")}
    good = tmp_path / "world.yaml"
    good.write_text(yaml.safe_dump(raw), encoding="utf-8")
    fmat_replication.config.validate_config({**cfg, "world": str(good)}, root=REPO, repo=REPO, load_studies=False)

    raw["studies"]["3a"] = raw["studies"].pop("3A")
    bad = tmp_path / "bad-world.yaml"
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(InputError) as err:
        fmat_replication.config.validate_config({**cfg, "world": str(bad)}, root=REPO, repo=REPO, load_studies=False)
    text = str(err.value)
    assert f"{bad}: studies.3a" in text and "did you mean '3A'?" in text and "key the block '3A'" in text, text

    raw["studies"]["3Z"] = raw["studies"].pop("3a")  # a typo, not a case
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(InputError, match=r"plants study '3Z'.*did you mean '3A'\?"):
        fmat_replication.config.validate_config({**cfg, "world": str(bad)}, root=REPO, repo=REPO, load_studies=False)


@pytest.mark.parametrize("size", [".nan", "1.0e+6", "1.0e+308"])
def test_a_world_size_out_of_range_stops_the_configuration_check(tmp_path, size):
    """Issue 55: the workflow's dry run accepted a world with d: .nan, 1.0e+6 or 1.0e+308. Now the
    configuration check (run before any job, the dry run's too) names the file and the key."""
    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text(encoding="utf-8"))
    text = (REPO / "config" / "world.yaml").read_text(encoding="utf-8")
    assert "d: 0.8}" in text  # X1's effect
    bad = tmp_path / "world.yaml"
    bad.write_text(text.replace("d: 0.8}", f"d: {size}}}", 1), encoding="utf-8")
    cfg = {**demo, "studies": ["X1"], "studies_dir": str(REPO / "config" / "studies"), "world": str(bad)}
    with pytest.raises(InputError) as err:
        fmat_replication.config.validate_config(cfg, root=REPO, repo=REPO, load_studies=False)
    assert str(err.value).startswith(f"{bad}: studies.X1.effects[0].d: d ") and "docs/planting.md" in str(err.value)


@pytest.mark.parametrize("mine_first", [True, False])
def test_a_group_clash_fix_names_only_the_file_read_last(tmp_path, paper_config, mine_first):
    """Issue 44: with the user's file given alone (Snakemake lists its groups first), the fix said
    "give that group again in config/config.yaml", which cannot work: that file is read first.
    Whatever the merge's key order, both ways of the fix name the user's file, and doing what it
    says (giving `paper` again there without the study) is accepted."""
    extra = tmp_path / "extra.yaml"
    extra.write_text("studies: [2A, X1]\nscore_groups: {mine: [2A]}\n", encoding="utf-8")
    base = REPO / "config" / "config.yaml"
    groups = {"mine": ["2A"], **paper_config["score_groups"]}
    if not mine_first:
        groups = {**paper_config["score_groups"], "mine": ["2A"]}
    cfg = {**paper_config, "studies": ["2A", "X1"], "score_groups": groups}
    with pytest.raises(InputError) as err:
        _validate(cfg, files=[base, extra], load_studies=False)
    fix = err.value.fix
    assert f"take '2A' out of 'mine' in {extra}, or give the group 'paper' again in {extra} without '2A'" in fix, fix
    assert f"again in {base}" not in fix
    paper = [s for s in paper_config["score_groups"]["paper"] if s != "2A"]
    _validate({**cfg, "score_groups": {**groups, "paper": paper}}, files=[base, extra], load_studies=False)


def test_the_config_check_names_an_analysis_option_typo_before_any_job(tmp_path, paper_config):
    """Issue 42: `snakemake -n` passed a study whose analysis.options.mask_contrast named no group;
    the analysis job failed after every model was scored. The workflow's config check reads the
    study file as fmat study --check does."""
    studies = tmp_path / "studies"
    studies.mkdir()
    text = (REPO / "config" / "studies" / "X1.yaml").read_text(encoding="utf-8")
    (studies / "X1.yaml").write_text(text.replace("mask_contrast: [Male, Female]", "mask_contrast: [Male, Femal]"))
    cfg = {**paper_config, "studies": ["X1"], "studies_dir": str(studies)}
    with pytest.raises(
        InputError, match=r"analysis\.options\.mask_contrast\[1\]: 'Femal' is not a group .*did you mean 'Female'"
    ):
        _validate(cfg)


def test_the_config_check_runs_each_analysis_design_check(tmp_path, paper_config):
    """Issue 42: an analysis' own design check (change_over_time: century_contrasts years of the
    design) runs in the workflow's config check too, not only in fmat study --check."""
    studies = tmp_path / "studies"
    studies.mkdir()
    text = (REPO / "config" / "studies" / "4A.yaml").read_text(encoding="utf-8")
    assert "[[2000, 1900], [1900, 1800]]" in text
    (studies / "4A.yaml").write_text(text.replace("[[2000, 1900], [1900, 1800]]", "[[2000, 1900], [1900, 1700]]"))
    cfg = {**paper_config, "studies": ["4A"], "studies_dir": str(studies)}
    with pytest.raises(InputError, match=r"century_contrasts\[1\] names the year 1700, which is not a \[MASK\] year"):
        _validate(cfg)
