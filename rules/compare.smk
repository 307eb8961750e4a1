# Stage 7: paper vs ours. config/paper_results.tsv (every number Bao, 2024 prints) joined with
# every study's stats.parquet on (study, statistic, condition, model); one row per paper row
# with a verdict: replicated / not replicated / not computable (fmat_replication.compare, docs/reports.md).
# compare_study writes one study's rows (results/replication/{study}.parquet), which its report
# reads: adding or editing one study then re-renders only that study's page (and the overview).


rule compare_study:
    input:
        paper=repo_path("config/paper_results.tsv"),
        stats="results/analysis/{study}/stats.parquet",
        status="results/analysis/{study}/status.json",
    output:
        parquet="results/replication/{study}.parquet",
    log:
        "logs/compare/{study}.log",
    benchmark:
        "results/benchmarks/compare/{study}.tsv"
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/compare.py"


rule compare:
    input:
        paper=repo_path("config/paper_results.tsv"),
        stats=expand("results/analysis/{study}/stats.parquet", study=STUDIES),
        status=expand("results/analysis/{study}/status.json", study=STUDIES),
    output:
        parquet="results/replication.parquet",
        csv="results/replication.csv",
    log:
        "logs/compare/compare.log",
    benchmark:
        "results/benchmarks/compare/compare.tsv"
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/compare.py"
