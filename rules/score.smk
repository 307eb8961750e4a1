# Stage 3: score studies' queries on one model, loading the model ONCE per job (fmat_replication.score.score_studies).
# One rule per study group (config `score_groups`; fmat_replication.config.score_groups), one job per model
# and group: rule score_<group> writes results/scores/{study}/{model}.parquet for the group's
# studies. Loading a model costs more than scoring a small study, so the paper's 15 studies are
# one group (config/config.yaml: 12 jobs, one per model); a study in no group gets its own rule,
# so adding it runs only its own jobs and leaves every other study's scores (bytes and file
# times) as they are (docs/workflow.md has the measurements).

for _group, _studies in SCORE_GROUPS.items():

    rule:
        name:
            f"score_{_group}"
        input:
            model=model_marker,
            lock=model_lock,
            folder=demo_model_folder,
            queries=expand("results/queries/{study}.parquet", study=_studies),
            studies=[str(study_file(config, s)) for s in _studies],
        output:
            expand("results/scores/{study}/{{model}}.parquet", study=_studies),
        log:
            f"logs/score_{_group}/{{model}}.log",
        benchmark:
            f"results/benchmarks/score_{_group}/{{model}}.tsv"
        conda:
            "../envs/score.yaml"
        threads: config["score_threads"]
        resources:
            gpu=score_gpus,
            mem_mb=lambda wc, attempt, n=len(_studies): score_resources(
                MODELS[wc.model].name, attempt, n, config.get("score_runtime")
            )["mem_mb"],
            runtime=lambda wc, attempt, n=len(_studies): score_resources(
                MODELS[wc.model].name, attempt, n, config.get("score_runtime")
            )["runtime"],
        params:
            studies=_studies,
            name=lambda wc: MODELS[wc.model].name,
            device=config["device"],
            batch_size=config["batch_size"],
            max_tokens=config["max_tokens"],
            cache_dir=config["cache_dir"],
            offline=True,  # models come from the cache (locked commit) or a local folder
        script:
            "../scripts/score_model.py"
