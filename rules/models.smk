# Stage 1: download each model once into the Hugging Face cache and lock its revision.
# Online, so it runs on the machine that starts Snakemake (localrules), never on a compute node.
# Offline it stops within seconds and says how to run offline (make demo, or a filled cache).


localrules:
    download_model,


rule download_model:
    output:
        "resources/models/{model}.json",
    params:
        name=lambda wc: MODELS[wc.model].name,
        revision=lambda wc: MODELS[wc.model].revision,
        cache_dir=config["cache_dir"],
        lock="resources/models.lock.tsv",
        timeout=config["hub_timeout"],
    log:
        "logs/download_model/{model}.log",
    priority: 100
    conda:
        "../envs/models.yaml"
    script:
        "../scripts/download_model.py"
