# Stage 5: reliability of a study (fmat.reliability): ICC among the models on raw log
# probabilities and on LPRs, and alpha among the items the study file's `reliability:` names.
# Writes the numbers in the fmat.results shape (results/reliability/{study}.parquet; the
# analysis stage adds its rows to them in results/analysis/{study}/stats.parquet) and the
# detailed tables of icc_models / lpr_reliability ({study}_details.parquet).


rule reliability:
    input:
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
        lpr="results/lpr/{study}.parquet",
        study=study_yaml,
        criteria=criteria_inputs,
    output:
        stats="results/reliability/{study}.parquet",
        details="results/reliability/{study}_details.parquet",
    log:
        "logs/reliability/{study}.log",
    benchmark:
        "results/benchmarks/reliability/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    params:
        criteria_dir="resources/criteria",
    script:
        "../scripts/reliability.py"
