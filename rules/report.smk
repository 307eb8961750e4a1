# Stage 8: the reports. One HTML page per study (reports/study.py) and an overview
# (reports/index.py), rendered by `fmat report` (fmat.report): with Quarto when `quarto` is on
# PATH, else offline (jupytext + papermill + nbconvert); the log names the engine used.
# In the demo (tiny models) every page carries a banner: its numbers are not the paper's.
# The Snakefile's `rule all` adds REPORT_TARGETS.

import shlex as _shlex

from fmat.workflow import config_hash as _config_hash

REPORT_TARGETS = expand("results/reports/{page}.html", page=[*STUDIES, "index"])

# what the pages print as provenance
# a study page's provenance hash leaves out the list of studies (and their scoring groups), so
# that adding a study does not change the other pages' parameters (and re-render them)
_CONFIG_HASH = _config_hash(config)
_STUDY_CONFIG_HASH = _config_hash({k: v for k, v in config.items() if k not in ("studies", "score_groups")})


_REPORT_COMMON = (
    f"-P results:results -P paper:{_shlex.quote(repo_path('config/paper_results.tsv'))} "
    f"-P demo:{str(DEMO).lower()} "
    f"-P device:{_shlex.quote(str(config.get('device', '')))} -P lock:resources/models.lock.tsv"
)


rule report_study:
    input:
        source=repo_path("reports/study.py"),
        replication="results/replication/{study}.parquet",
        stats="results/analysis/{study}/stats.parquet",
        listing="results/analysis/{study}/figures.json",
        scores=expand("results/scores/{{study}}/{model}.parquet", model=SLUGS),
        study=study_yaml,
    output:
        "results/reports/{study}.html",
    params:
        common=f"{_REPORT_COMMON} -P config_hash:{_STUDY_CONFIG_HASH}",
        root=lambda w, input: os.path.dirname(os.path.dirname(input.source)) or ".",  # the repository
        python=shell_python(),
        models=",".join(SLUGS),
    log:
        "logs/report/{study}.log",
    benchmark:
        "results/benchmarks/report/{study}.tsv"
    conda:
        "../envs/report.yaml"
    shell:
        "PYTHONPATH={params.root:q}${{PYTHONPATH:+:$PYTHONPATH}} {params.python:q} -m fmat.cli report {input.source:q} "
        "-P study:{wildcards.study} -P study_file:{input.study:q} {params.common} "
        "-P models:{params.models} -o {output:q} > {log:q} 2>&1"


rule report_index:
    input:
        source=repo_path("reports/index.py"),
        replication="results/replication.parquet",
        stats=expand("results/analysis/{study}/stats.parquet", study=STUDIES),
        scores=expand("results/scores/{study}/{model}.parquet", study=STUDIES, model=SLUGS),
        agreement="results/agreement/summary.parquet",
        cards=expand("results/models/{model}.json", model=SLUGS),
    output:
        "results/reports/index.html",
    params:
        common=f"{_REPORT_COMMON} -P config_hash:{_CONFIG_HASH}",
        root=lambda w, input: os.path.dirname(os.path.dirname(input.source)) or ".",  # the repository
        python=shell_python(),
        studies=",".join(STUDIES),
        models=",".join(SLUGS),
    log:
        "logs/report/index.log",
    benchmark:
        "results/benchmarks/report/index.tsv"
    conda:
        "../envs/report.yaml"
    shell:
        "PYTHONPATH={params.root:q}${{PYTHONPATH:+:$PYTHONPATH}} {params.python:q} -m fmat.cli report {input.source:q} "
        "-P studies:{params.studies} {params.common} -P models:{params.models} -o {output:q} > {log:q} 2>&1"
