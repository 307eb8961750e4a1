# What the pages say of each model, made here (declared inputs and outputs), not at render
# time: per study, the rows each model's vocabulary could not score (results/oov/{study}.parquet);
# per model, its subject-verb agreement beside its FMAT alphas and OOV share, its agreement per
# construction, and where it came from (its card: source, revision, locked commit or weights
# hash) in results/models/. Functions: fmat_replication.checks.


rule oov_study:
    input:
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
    output:
        "results/oov/{study}.parquet",
    log:
        "logs/checks/oov_{study}.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/oov_study.py"


rule model_checks:
    input:
        agreement="results/agreement/summary.parquet",
        stats=expand("results/analysis/{study}/stats.parquet", study=STUDIES),
        oov=expand("results/oov/{study}.parquet", study=STUDIES),
        cards=expand("results/models/{model}.json", model=SLUGS),
    output:
        checks="results/models/checks.parquet",
        agreement="results/models/agreement.parquet",
        provenance="results/models/provenance.parquet",
    log:
        "logs/checks/model_checks.log",
    conda:
        "../envs/fmat.yaml"
    script:
        "../scripts/model_checks.py"
