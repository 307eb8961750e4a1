# Model check: subject-verb agreement (Goldberg 2019 on Marvin & Linzen 2018 stimuli; fmat.agreement).
# Per model: accuracy on minimal pairs (P(correct verb) > P(incorrect verb)), pairs skipped when a
# verb is not one whole-word token of that model. Not part of `all`; ask for it:
#   snakemake --profile profiles/default results/agreement/summary.parquet
# Config (all optional):
#   agreement:
#     pairs: null          # null: the project's fixture (fmat/data/agreement_fixture.tsv); or a TSV path
#     url: null            # set: rule agreement_download fetches it to `pairs`
#                          #   (default path resources/agreement/marvin_linzen_dataset.tsv)
#     sha256: unverified   # expected sha256 of the download ("unverified": not checked, logged)
#     constructions: null  # null: the verb-agreement constructions; "all"; or a list


AGREEMENT = config.get("agreement") or {}
AGREEMENT_DEFAULT_PAIRS = "resources/agreement/marvin_linzen_dataset.tsv"


def agreement_pairs_file():
    """The pairs TSV the agreement rule reads, or None for the package fixture."""
    if AGREEMENT.get("url"):
        return AGREEMENT.get("pairs") or AGREEMENT_DEFAULT_PAIRS
    return AGREEMENT.get("pairs")


if AGREEMENT.get("url"):

    rule agreement_download:
        output:
            AGREEMENT.get("pairs") or AGREEMENT_DEFAULT_PAIRS,
        params:
            url=AGREEMENT.get("url"),
            sha256=AGREEMENT.get("sha256", "unverified"),
        log:
            "logs/agreement/download.log",
        conda:
            "../envs/fmat.yaml"
        script:
            "../scripts/agreement.py"


rule agreement:
    input:
        model=model_marker,
        pairs=lambda wc: [agreement_pairs_file()] if agreement_pairs_file() else [],
    output:
        "results/agreement/{model}.parquet",
    params:
        constructions=AGREEMENT.get("constructions"),
        device=config["device"],
        batch_size=config["batch_size"],
        cache_dir=config["cache_dir"],
        lock="resources/models.lock.tsv",
        offline=not DEMO,
    threads: config["score_threads"]
    resources:
        gpu=score_gpus,
    log:
        "logs/agreement/{model}.log",
    benchmark:
        "results/benchmarks/agreement/{model}.tsv"
    conda:
        "../envs/score.yaml"
    script:
        "../scripts/agreement.py"


rule agreement_summary:
    input:
        expand("results/agreement/{model}.parquet", model=SLUGS),
    output:
        "results/agreement/summary.parquet",
    log:
        "logs/agreement/summary.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/agreement.py"
