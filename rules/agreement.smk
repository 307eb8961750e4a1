# Model check: subject-verb agreement (Goldberg 2019 on Marvin & Linzen 2018 stimuli; fmat.agreement).
# Per model: accuracy on minimal pairs (P(correct verb) > P(incorrect verb)), pairs skipped when a
# verb is not one whole-word token of that model. Part of `all` (the overview report shows it); alone:
#   snakemake --profile profiles/default results/agreement/summary.parquet
# Config (all optional):
#   agreement:
#     pairs: null          # null: the project's fixture (fmat/data/agreement_fixture.tsv); or a TSV path
#     url: null            # set: rule agreement_download fetches it to `pairs`
#                          #   (default path resources/agreement/marvin_linzen_dataset.tsv)
#     sha256: unverified   # expected sha256 of the download ("unverified": not checked, logged)
#     constructions: null  # null: the verb-agreement constructions; "all"; or a list


AGREEMENT = config.get("agreement") or {}


# runs only when agreement.url is set (then the agreement rule needs its output); a download,
# so on a cluster it runs on the login node (compute nodes are often offline)
localrules:
    agreement_download,


rule agreement_download:
    output:
        pairs="resources/agreement/marvin_linzen_dataset.tsv",
        sha256="resources/agreement/marvin_linzen_dataset.tsv.sha256",  # its digest (sha256sum format)
    log:
        "logs/agreement/download.log",
    conda:
        "../envs/fmat.yaml"
    params:
        url=AGREEMENT.get("url") or "",
        sha256=AGREEMENT.get("sha256", "unverified"),
    script:
        "../scripts/agreement_download.py"


rule agreement:
    input:
        model=model_marker,
        lock=model_lock,
        folder=demo_model_folder,
        pairs=lambda wc: [agreement_pairs_file(config)] if agreement_pairs_file(config) else [],
    output:
        "results/agreement/{model}.parquet",
    log:
        "logs/agreement/{model}.log",
    benchmark:
        "results/benchmarks/agreement/{model}.tsv"
    conda:
        "../envs/score.yaml"
    threads: config["score_threads"]
    resources:
        gpu=score_gpus,
    params:
        constructions=AGREEMENT.get("constructions"),
        device=config["device"],
        batch_size=config["batch_size"],
        max_tokens=config["max_tokens"],
        cache_dir=config["cache_dir"],
        offline=not DEMO,
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
        "../scripts/agreement_summary.py"
