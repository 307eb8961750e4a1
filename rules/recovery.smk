# Stage 9 (demo with a world): known truth. Each study's results (results/analysis/{study}/stats.parquet)
# against what the world file (config `world`, docs/planting.md) planted for it: one row per
# expected statistic with the planted value, ours and the verdict recovered / not recovered
# (fmat.plant.recovery, the rule in docs/planting.md). The null control must come out null.


rule recovery_study:
    input:
        world=WORLD_FILE or [],
        stats="results/analysis/{study}/stats.parquet",
    output:
        "results/recovery/{study}.parquet",
    log:
        "logs/recovery/{study}.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/recovery.py"


rule recovery:
    input:
        expand("results/recovery/{study}.parquet", study=STUDIES),
    output:
        parquet="results/recovery.parquet",
        csv="results/recovery.csv",
    log:
        "logs/recovery/recovery.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/recovery.py"
