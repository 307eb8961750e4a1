# Stage 1: download each model once into the Hugging Face cache and lock its revision.
# Online, so it runs on the machine that starts Snakemake (localrules), never on a compute node.
# Offline it stops within seconds and says how to run offline (make demo, or a filled cache).
# A local folder ({name: LABEL, path: FOLDER}) needs no network: its weights are hashed into its
# lock record, and a change of its files makes the marker (and that model's scoring) run again.
# Each model's lock record resources/models/{model}.lock.tsv is an output of its own download
# job (update(): kept when the job reruns, so a rerun keeps the locked commit) and an input of
# every job that loads the model; rule models_lock gathers them into resources/models.lock.tsv.


localrules:
    download_model,
    models_lock,


rule download_model:
    input:
        local_model_files,
    output:
        marker="resources/models/{model}.json",
        lock=update("resources/models/{model}.lock.tsv"),
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
        lock=model_lock,
        folder=demo_model_folder,
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
        offline=not DEMO,
    script:
        "../scripts/model_card.py"


# Every configured model's lock record in one file, for people and `fmat` commands (--lock);
# no job reads it (they read the models' own records). Part of `all` unless in the demo.
rule models_lock:
    input:
        expand("resources/models/{model}.lock.tsv", model=SLUGS),
    output:
        "resources/models.lock.tsv",
    log:
        "logs/models_lock.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/models_lock.py"
