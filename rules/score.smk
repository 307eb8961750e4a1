# Stage 3: score every study's queries on one model, loading the model ONCE (fmat.runner.run).
# One job per model writes results/scores/{study}/{model}.parquet for every study: loading a
# model costs more than scoring a small study (docs/workflow.md has the measurement).


rule score_model:
    input:
        model=model_marker,
        queries=expand("results/queries/{study}.parquet", study=STUDIES),
        studies=[str(study_file(config, s)) for s in STUDIES],
    output:
        expand("results/scores/{study}/{{model}}.parquet", study=STUDIES),
    params:
        studies=STUDIES,
        name=lambda wc: MODELS[wc.model].name,
        device=config["device"],
        batch_size=config["batch_size"],
        max_tokens=config["max_tokens"],
        cache_dir=config["cache_dir"],
        lock="resources/models.lock.tsv",
        offline=True,  # models come from the cache (locked commit) or a local folder
    threads: config["score_threads"]
    resources:
        gpu=score_gpus,
        mem_mb=lambda wc, attempt: score_resources(MODELS[wc.model].name, attempt, len(STUDIES))["mem_mb"],
        runtime=lambda wc, attempt: score_resources(MODELS[wc.model].name, attempt, len(STUDIES))["runtime"],
    log:
        "logs/score_model/{model}.log",
    benchmark:
        "results/benchmarks/score_model/{model}.tsv"
    conda:
        "../envs/score.yaml"
    script:
        "../scripts/score_model.py"
