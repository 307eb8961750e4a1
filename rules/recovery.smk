# Stage 9 (demo with a world): known truth. Each study's results (results/analysis/{study}/stats.parquet)
# against what the world file (config `world`, docs/planting.md) planted for it: one row per
# expected statistic with the planted value, the realised value the world implies for these items
# and models (fmat.oracle, from the study file and the models' names), ours with its
# CI and the verdict recovered / not recovered (fmat.plant.recovery, the rule in docs/planting.md);
# an expectation at level: concept is judged by the analysis's figures/crossed.parquet (the
# concept-level test) against the planted effect: a control there is "nothing found for the concept".


rule recovery_study:
    input:
        world=WORLD_FILE or [],
        stats="results/analysis/{study}/stats.parquet",
        figures="results/analysis/{study}/figures",  # its crossed.parquet: the level: concept rows
        study=study_yaml,
        words=criteria_inputs,
        criteria=analysis_criteria,
    output:
        "results/recovery/{study}.parquet",
    log:
        "logs/recovery/{study}.log",
    conda:
        "../envs/fmat.yaml"
    params:
        models=[spec.name for spec in MODELS.values()],
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
