# Stage 6: the study's analysis (fmat.analyses, the study file's `analysis: {name, options}`).
# Reads the LPRs, every model's scores, the reliability rows and the criterion tables the
# analysis asks for (fmat.analyses.criteria_needed); an analysis that is not registered yet
# is logged, and stats.parquet then holds the reliability rows only.
# Outputs: results/analysis/{study}/stats.parquet (results shape), figures.json (the figure
# tables figure_<name>.parquet written beside it, whether the analysis ran, its notes).

import yaml as _yaml

from fmat import analyses as _analyses


def analysis_criteria(wildcards):
    """Criterion tables the study's analysis reads (none when it is not registered yet).
    Reads only the study file's `analysis` block: its word lists may need criterion tables
    that do not exist yet when the DAG is built."""
    with open(study_file(config, wildcards.study), encoding="utf-8") as fh:
        spec = dict((_yaml.safe_load(fh) or {}).get("analysis") or {})
    name = spec.get("name")
    if not name or name not in _analyses.available():
        return []
    return [f"resources/criteria/{n}.parquet" for n in _analyses.criteria_needed(name, spec.get("options"))]


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
