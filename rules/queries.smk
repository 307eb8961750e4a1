# Stage 2: a study file -> its query table (fmat.study.load_study).


rule queries:
    input:
        study=study_yaml,
        criteria=criteria_inputs,
    output:
        "results/queries/{study}.parquet",
    log:
        "logs/queries/{study}.log",
    benchmark:
        "results/benchmarks/queries/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    params:
        criteria_dir="resources/criteria",
    script:
        "../scripts/queries.py"
