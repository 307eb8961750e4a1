# The offline demo (config/demo.yaml): tiny masked language models, one per tokenizer family,
# built by fmat.tiny from a corpus that contains every configured study's words, so every
# query can be scored without the network. Scoring then reads these local folders.


rule demo_models:
    input:
        queries=expand("results/queries/{study}.parquet", study=STUDIES),
    output:
        expand(f"{DEMO_DIR}/{{model}}.json", model=SLUGS),
    log:
        "logs/demo_models/demo_models.log",
    benchmark:
        "results/benchmarks/demo_models/demo_models.tsv"
    conda:
        "../envs/score.yaml"
    threads: 2
    params:
        models={slug: (spec.name, spec.tiny) for slug, spec in MODELS.items()},
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    script:
        "../scripts/demo_models.py"
