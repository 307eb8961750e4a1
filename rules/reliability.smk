# Stage 5: reliability of a study (fmat.reliability): ICC among the models on raw log
# probabilities and on LPRs, and alpha among the items the study file's `reliability:` names.
# Writes the detailed tables and the same numbers in the fmat.results shape (stats.parquet).


rule reliability:
    input:
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
        lpr="results/lpr/{study}.parquet",
        study=study_yaml,
        criteria=criteria_inputs,
    output:
        details="results/reliability/{study}.parquet",
        stats="results/analysis/{study}/stats.parquet",
    params:
        criteria_dir="resources/criteria",
    log:
        "logs/reliability/{study}.log",
    benchmark:
        "results/benchmarks/reliability/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/reliability.py"
