# Stage 6: the study's analysis (fmat.analyses, the study file's `analysis: {name, options}`).
# Reads the LPRs, every model's scores, the reliability rows and the criterion tables the
# analysis asks for (fmat.analyses.criteria_needed); an analysis that is not registered yet
# is logged, and stats.parquet then holds the reliability rows only.
# Outputs: results/analysis/{study}/stats.parquet (results shape), figures.json (the figure
# tables figure_<name>.parquet written beside it, whether the analysis ran, its notes).

rule analysis:
    input:
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
        lpr="results/lpr/{study}.parquet",
        reliability="results/reliability/{study}.parquet",
        study=study_yaml,
        words=criteria_inputs,
        criteria=analysis_criteria,
    output:
        stats="results/analysis/{study}/stats.parquet",
        listing="results/analysis/{study}/figures.json",
    params:
        criteria_dir="resources/criteria",
    log:
        "logs/analysis/{study}.log",
    benchmark:
        "results/benchmarks/analysis/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/analysis.py"
