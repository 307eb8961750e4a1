# Stage 1: download each model once into the Hugging Face cache and lock its revision.
# Online, so it runs on the machine that starts Snakemake (localrules), never on a compute node.
# Offline it stops within seconds and says how to run offline (make demo, or a filled cache).
# A local folder ({name: LABEL, path: FOLDER}) needs no network: its weights are hashed into the
# lock file, and a change of its files makes the marker (and that model's scoring) run again.


localrules:
    download_model,


rule download_model:
    input:
        local_model_files,
    output:
        "resources/models/{model}.json",
    log:
        "logs/download_model/{model}.log",
    priority: 100
    conda:
        "../envs/models.yaml"
    params:
        name=lambda wc: MODELS[wc.model].name,
        revision=lambda wc: MODELS[wc.model].revision,
        path=lambda wc: local_folder(wc.model),
        cache_dir=config["cache_dir"],
        lock="resources/models.lock.tsv",
        timeout=config["hub_timeout"],
    script:
        "../scripts/download_model.py"


# The overview's card of each model (fmat.cards.model_card): architecture, parameters,
# vocabulary, locked commit or local sha256, hub creation date, fast path or full head, and the
# top-5 fills of three probe sentences, so that a broken model shows at once. Three sentences:
# on the CPU (no GPU job), with the scoring job's memory.
rule model_card:
    input:
        model=model_marker,
    output:
        "results/models/{model}.json",
    log:
        "logs/model_card/{model}.log",
    conda:
        "../envs/score.yaml"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: score_resources(MODELS[wc.model].name, attempt, 1)["mem_mb"],
    params:
        device="cpu",
        cache_dir=config["cache_dir"],
        lock="resources/models.lock.tsv",
        offline=not DEMO,
    script:
        "../scripts/model_card.py"
