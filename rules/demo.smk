# The offline demo (config/demo.yaml): tiny masked language models, one per configured model
# (config `tiny`: its tokenizer family), so every query can be scored without the network.
# With a world file (config `world`, docs/planting.md) each model is TRAINED on text generated
# from the planted associations of every configured study (its own seed and corpus sample);
# without one its weights stay random. Scoring then reads these local folders; rule recovery
# (rules/recovery.smk) checks that the studies' results find what was planted.


rule demo_model:
    input:
        queries=expand("results/queries/{study}.parquet", study=STUDIES),
        studies=[str(study_file(config, s)) for s in STUDIES],
        criteria=demo_criteria,
        world=WORLD_FILE or [],
    output:
        marker=f"{DEMO_DIR}/{{model}}.json",
        folder=directory(f"{DEMO_DIR}/{{model}}"),
    log:
        "logs/demo_model/{model}.log",
    benchmark:
        "results/benchmarks/demo_model/{model}.tsv"
    conda:
        "../envs/score.yaml"
    threads: 1
    params:
        name=lambda w: MODELS[w.model].name,
        family=lambda w: MODELS[w.model].tiny,
        seed=lambda w: SLUGS.index(w.model),
        steps=config["demo_steps"],
        batch=config["demo_batch"],
        criteria_dir="resources/criteria",
    script:
        "../scripts/demo_model.py"
