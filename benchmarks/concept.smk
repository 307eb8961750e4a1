# The concept-level calibration of issue 52 (docs/calibration.md, "Concept-level nulls and
# coverage") cut into jobs, so that a cluster runs 500 worlds a setting in parallel: one job per
# study, kind of world and block of seeds (benchmarks/bench_concept.py --first-seed), then one
# summary of every block's rows. A block that fails or is killed is run again on the next
# invocation; the blocks done are kept.
#
#   snakemake -s benchmarks/concept.smk --profile profiles/slurm --config studies=3A,2A worlds=500
#   snakemake -s benchmarks/concept.smk -c2 --config studies=3A kinds=concept-null item_sd=0.1 worlds=4 block=2
#
# --config keys (all optional): studies (default every paper study 1A-4D), kinds (concept-null,
# planted), item_sd (0,0.05,0.1,0.2), worlds (500), block (50 worlds a job), models (12 perfect
# learners a world), criteria_dir (resources/criteria: 1C's names; the workflow's criteria rule
# builds it), out (results/calibration/concept). Outputs under out: runs/<study>-<kind>-<first>-<last>.csv.gz
# (every judged row of a block), runs.csv.gz (all of them), summary.csv (pooled per study, kind
# and item SD) and summary-by-condition.csv (a line per judged row). Each job runs one process on
# one core (threads: 1); its runtime request is estimated from the block (1C's 3,832 names take
# about four times as long). With --sdm conda each job runs in envs/fmat.yaml.

import os
import sys

BENCH = os.path.join(workflow.basedir, "bench_concept.py")
# the checkout envs/fmat.post-deploy.sh installs fmat from (--sdm conda), as the Snakefile sets it
os.environ.update(FMAT_CHECKOUT=os.path.dirname(workflow.basedir))
PAPER = "1A,1B,1C,2A,2B,2C,2D,3A,3B,3C,3D,4A,4B,4C,4D"


def _list(key, default):
    value = config.get(key, default)
    items = [str(v).strip() for v in (value if isinstance(value, (list, tuple)) else str(value).split(","))]
    return [v for v in items if v]


STUDIES = _list("studies", PAPER)
KINDS = _list("kinds", "concept-null,planted")
ITEM_SD = ",".join(_list("item_sd", "0,0.05,0.1,0.2"))
WORLDS, BLOCK, MODELS = (int(config.get(k, d)) for k, d in (("worlds", 500), ("block", 50), ("models", 12)))
CRITERIA = str(config.get("criteria_dir", "resources/criteria"))
OUT = str(config.get("out", "results/calibration/concept"))
if WORLDS < 1 or BLOCK < 1 or MODELS < 2:
    raise ValueError(f"--config worlds, block (1 or more) and models (2 or more): got {WORLDS}, {BLOCK}, {MODELS}")
BLOCKS = [(first, min(first + BLOCK - 1, WORLDS)) for first in range(1, WORLDS + 1, BLOCK)]
RUNS = [f"{OUT}/runs/{s}-{k}-{a}-{b}.csv.gz" for s in STUDIES for k in KINDS for a, b in BLOCKS]
SELECT = f"--studies {','.join(STUDIES)} --kinds {','.join(KINDS)} --item-sd {ITEM_SD}"


def _minutes(wildcards):
    """A block's runtime request: about 1.2 core-seconds a world-setting (1C: 5), four times over."""
    per = 5.0 if wildcards.study == "1C" else 1.2
    n = (int(wildcards.last) - int(wildcards.first) + 1) * len(ITEM_SD.split(","))
    return max(10, int(4 * per * n * MODELS / 12 / 60) + 1)


wildcard_constraints:
    study="|".join(STUDIES),
    kind="|".join(KINDS),
    first=r"\d+",
    last=r"\d+",


localrules:
    all,
    summary,


rule all:
    input:
        f"{OUT}/summary.csv",
        f"{OUT}/summary-by-condition.csv",


rule block:
    output:
        f"{OUT}/runs/{{study}}-{{kind}}-{{first}}-{{last}}.csv.gz",
    log:
        f"{OUT}/logs/{{study}}-{{kind}}-{{first}}-{{last}}.log",
    params:
        worlds=lambda wc: int(wc.last) - int(wc.first) + 1,
        criteria=f"--criteria-dir {CRITERIA}" if os.path.isdir(CRITERIA) else "",
    threads: 1
    conda:
        "../envs/fmat.yaml"
    resources:
        mem_mb=lambda wc: 4000 if wc.study == "1C" else 2000,
        runtime=_minutes,
    shell:
        f"OMP_NUM_THREADS=1 {sys.executable} {BENCH} --studies {{wildcards.study}} --kinds {{wildcards.kind}}"
        f" --item-sd {ITEM_SD} --models {MODELS} --first-seed {{wildcards.first}} --worlds {{params.worlds}} --jobs 1"
        " {params.criteria} --runs {output} > {log} 2>&1"


rule summary:
    input:
        RUNS,
    output:
        runs=f"{OUT}/runs.csv.gz",
        pooled=f"{OUT}/summary.csv",
        rows=f"{OUT}/summary-by-condition.csv",
    log:
        f"{OUT}/logs/summary.log",
    params:
        blocks=lambda wc, input: " ".join(f"--from-runs {p}" for p in input),
    conda:
        "../envs/fmat.yaml"
    shell:
        f"{sys.executable} {BENCH} {{params.blocks}} {SELECT} --runs {{output.runs}} --out {{output.pooled}} > {{log}} 2>&1"
        f" && {sys.executable} {BENCH} --from-runs {{output.runs}} {SELECT} --by-condition --out {{output.rows}} >> {{log}} 2>&1"
