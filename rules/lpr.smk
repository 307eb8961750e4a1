# Stage 4: scores of all models -> log probability ratios (fmat.lpr.summary, the study's `lpr:`).


rule lpr:
    input:
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
        study=study_yaml,
        criteria=criteria_inputs,
    output:
        "results/lpr/{study}.parquet",
    log:
        "logs/lpr/{study}.log",
    benchmark:
        "results/benchmarks/lpr/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    params:
        criteria_dir="resources/criteria",
    script:
        "../scripts/lpr.py"
