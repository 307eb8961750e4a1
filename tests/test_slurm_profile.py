"""profiles/slurm/config.yaml: parses, and its settings do what docs/cluster.md says.

Static checks against the installed snakemake-executor-plugin-slurm (no SLURM needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "profiles/slurm/config.yaml"


@pytest.fixture(scope="module")
def profile():
    return yaml.safe_load(PROFILE.read_text())


def test_profile_core_settings(profile):
    assert profile["executor"] == "slurm"
    assert profile["rerun-incomplete"] is True and profile["keep-going"] is True
    assert profile["retries"] >= 1 and profile["latency-wait"] >= 30
    d = profile["default-resources"]
    assert {"slurm_partition", "slurm_account", "mem_mb", "runtime"} <= set(d)
    # the plugin checks cpus_per_task BEFORE cpus_per_gpu: a default would starve GPU jobs
    assert "cpus_per_task" not in d


def test_gpu_rule_settings(profile):
    s = profile["set-resources"]["score_paper"]  # the paper's score group (rules/score.smk)
    assert s["slurm_partition"] and s["cpus_per_gpu"] >= 1
    assert "gres" not in s  # the rule asks for gpu=1; the plugin refuses gpu together with gres
    assert "mem_mb" not in s and "runtime" not in s  # keep the rule's per-attempt doubling
    assert profile["set-threads"]["score_paper"] == s["cpus_per_gpu"]


def test_set_resources_name_existing_rules(profile):
    rules = set()
    for smk in (REPO / "rules").glob("*.smk"):
        rules |= set(re.findall(r"^rule (\w+):", smk.read_text(), flags=re.M))
    # the scoring rules are generated per score group of config/config.yaml (rules/score.smk)
    from fmat_replication.config import score_groups

    rules |= {f"score_{g}" for g in score_groups(yaml.safe_load((REPO / "config/config.yaml").read_text()))}
    if not rules:
        pytest.skip("no rules yet")
    for name in list(profile.get("set-resources", {})) + list(profile.get("set-threads", {})):
        assert name in rules, f"profile names unknown rule {name}"


def test_plugin_accepts_the_settings(profile):
    plugin = pytest.importorskip("snakemake_executor_plugin_slurm")
    import dataclasses

    fields = {f.name for f in dataclasses.fields(plugin.ExecutorSettings)}
    for key in profile:
        if key.startswith("slurm-"):
            assert key[len("slurm-") :].replace("-", "_") in fields, key
