# Stage 8: the reports. One HTML page per study and an overview, each built by a plain function
# of the files its rule declares (fmat_replication.pages.study.study_page, .overview.overview_page)
# and written by scripts/report.py (fmat_replication.pages.render.render_page): with Quarto
# (reports/study.qmd, reports/index.qmd) when `quarto` is on PATH, else by a Jinja2 template, no
# notebook run; config `report_engine` (auto | quarto | offline) forces one. The log names the
# engine used (and holds Quarto's output). `snakemake --report report.zip` holds the pages
# (report(); captions in report/).
# `script:`, not `shell:`: no path is put into a shell command line, so a folder name with a
# space or `$(...)` is only a name.
# In the demo (tiny models) every page carries a banner: its numbers are not the paper's.
# The Snakefile's `rule all` adds REPORT_TARGETS.

from fmat_replication.config import config_hash as _config_hash

REPORT_TARGETS = expand("results/reports/{page}.html", page=[*STUDIES, "index"])

# what the pages print as provenance
# a study page's provenance hash leaves out the list of studies (and their scoring groups), so
# that adding a study does not change the other pages' parameters (and re-render them)
_CONFIG_HASH = _config_hash(config)
_STUDY_CONFIG_HASH = _config_hash({k: v for k, v in config.items() if k not in ("studies", "score_groups")})

# the pages' arguments that are not input files (no absolute path, so that moving the project
# folder changes no parameter)
_REPORT_COMMON = {"demo": DEMO, "device": str(config.get("device", ""))}


rule report_study:
    input:
        source=repo_path("reports/study.qmd"),
        paper=repo_path("config/paper_results.tsv"),
        study_file=study_yaml,
        replication="results/replication/{study}.parquet",
        stats="results/analysis/{study}/stats.parquet",
        status="results/analysis/{study}/status.json",
        figures="results/analysis/{study}/figures",
        oov="results/oov/{study}.parquet",
        recovery=lambda w: f"results/recovery/{w.study}.parquet" if WORLD_FILE else [],
    output:
        report(
            "results/reports/{study}.html",
            caption="../report/study.rst",
            category="Study pages",
            labels={"study": "{study}"},
        ),
    log:
        "logs/report/{study}.log",
    benchmark:
        "results/benchmarks/report/{study}.tsv"
    conda:
        "../envs/report.yaml"
    params:
        page=lambda w: {**_REPORT_COMMON, "study": w.study, "config_hash": _STUDY_CONFIG_HASH},
        engine=config.get("report_engine", "auto"),
    script:
        "../scripts/report.py"


rule report_index:
    input:
        source=repo_path("reports/index.qmd"),
        paper=repo_path("config/paper_results.tsv"),
        replication="results/replication.parquet",
        stats=expand("results/analysis/{study}/stats.parquet", study=STUDIES),
        study_files=[str(study_file(config, s)) for s in STUDIES],
        oov=expand("results/oov/{study}.parquet", study=STUDIES),
        checks="results/models/checks.parquet",
        agreement="results/models/agreement.parquet",
        provenance="results/models/provenance.parquet",
        cards=expand("results/models/{model}.json", model=SLUGS),
        recovery="results/recovery.parquet" if WORLD_FILE else [],
    output:
        report(
            "results/reports/index.html",
            caption="../report/index.rst",
            category="Overview",
            labels={"page": "overview"},
        ),
    log:
        "logs/report/index.log",
    benchmark:
        "results/benchmarks/report/index.tsv"
    conda:
        "../envs/report.yaml"
    params:
        page={
            **_REPORT_COMMON,
            "studies": list(STUDIES),
            "models": list(SLUGS),
            "config_hash": _CONFIG_HASH,
        },
        engine=config.get("report_engine", "auto"),
    script:
        "../scripts/report.py"
