# Stage 6: the study's analysis (fmat.analyses, the study file's `analysis: {name, options}`).
# Reads the LPRs, every model's scores, the reliability rows and the criterion tables the
# analysis asks for (fmat.analyses.criteria_needed); an analysis that is not registered yet
# is logged, and stats.parquet then holds the reliability rows only.
# Outputs (fmat_replication.analysis): results/analysis/{study}/stats.parquet (results shape),
# status.json (whether the analysis ran, its notes, its figure tables) and the folder figures/
# with one <name>.parquet per figure table; where the analysis declares `inference: crossed`
# (fmat.analyses.option_values), the stage runs it too and writes its rows as figures/crossed.parquet
# (the concept-level test, which the study pages and the overview set beside the paper's inference).


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
        status="results/analysis/{study}/status.json",
        figures=directory("results/analysis/{study}/figures"),
    log:
        "logs/analysis/{study}.log",
    benchmark:
        "results/benchmarks/analysis/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    params:
        criteria_dir="resources/criteria",
    script:
        "../scripts/analysis.py"
