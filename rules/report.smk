# Stage 8: the reports. Figures first (rules report_figures, report_figures_index: SVG files and
# figures.json with each figure's title and caption, written from the data; report() items), then
# one HTML page per study and an overview, each one Jinja2 template filled from the files its rule
# declares (fmat_replication.pages.study.study_page, .overview.overview_page) and written by
# scripts/report.py (fmat_replication.pages.render.render_page): with Quarto (the page's markdown
# under the front matter of reports/study.qmd or reports/index.qmd, which print the same filled
# template when rendered by hand; Quarto's markdown engine, no kernel) when `quarto` is on PATH, else
# without it; config `report_engine` (auto | quarto | offline) forces one. The log names the
# engine used (and holds Quarto's output). `snakemake --report report.zip` holds the pages and
# the figures (report(); captions in report/: a figure's is its title and caption from
# figures.json, see below): the pages through rule report_pages, one folder of copies, so that
# in the report they lie side by side and their links to each other work.
# The inputs of a page are declared once, in fmat_replication.pages.inputs (STUDY_INPUTS,
# INDEX_INPUTS): these rules unpack them, a page rendered by hand reads the same declaration.
# `script:`, not `shell:`: no path is put into a shell command line, so a folder name with a
# space or `$(...)` is only a name.
# Whether a page says DEMO is read from the results (what the scoring jobs recorded), not set here.
# The Snakefile's `rule all` adds REPORT_TARGETS.

from fmat_replication.config import FIGURE_CAPTIONS as _FIGURE_CAPTIONS
from fmat_replication.config import config_hash as _config_hash
from fmat_replication.pages.captions import FIGURE_CAPTION as _FIGURE_CAPTION
from fmat_replication.pages.drawing import figure_inputs as _figure_inputs
from fmat_replication.pages.inputs import index_inputs as _index_inputs
from fmat_replication.pages.inputs import study_inputs as _study_inputs

REPORT_TARGETS = [*expand("results/reports/{page}.html", page=[*STUDIES, "index"]), "results/report_pages"]

# what the pages print as provenance
# a study page's provenance hash leaves out the list of studies (and their scoring groups), so
# that adding a study does not change the other pages' parameters (and re-render them)
_CONFIG_HASH = _config_hash(config)
_STUDY_CONFIG_HASH = _config_hash({k: v for k, v in config.items() if k not in ("studies", "score_groups")})
_WORLD = bool(WORLD_FILE)
_REPO = repo_path(".")

# `snakemake --report`: a caption file is one static template per rule (report/figures.rst),
# rendered with the job's input, output, params, wildcards and the workflow's config, nothing
# else. So that each figure's caption in the report is the one written from the data (its title
# and caption in figures.json, as on the pages), the config carries the function that reads it;
# the template calls it with the rule's output folder and the figure's name. Not a params value:
# params are a rerun trigger, and figures.json changes when the figures are drawn. The key is no
# setting (the schema check ran before; config_hash leaves it out), and in a script job's
# pickled config it is {} (fmat_replication.pages.captions).
config[_FIGURE_CAPTIONS] = _FIGURE_CAPTION


rule report_figures:
    input:
        unpack(lambda w: _figure_inputs(w.study, config, world=_WORLD, repo=_REPO)),
    output:
        report(
            directory("results/figures/{study}"),
            patterns=["{name}.svg"],
            caption="../report/figures.rst",
            category="Figures",
            subcategory="Study {study}",
            labels={"study": "{study}", "figure": "{name}"},
        ),
    log:
        "logs/figures/{study}.log",
    conda:
        "../envs/report.yaml"
    params:
        study=lambda w: w.study,
    script:
        "../scripts/figures.py"


rule report_figures_index:
    input:
        stats=expand("results/analysis/{study}/stats.parquet", study=STUDIES),
        replication="results/replication.parquet",
    output:
        report(
            directory("results/figures/index"),
            patterns=["{name}.svg"],
            caption="../report/figures.rst",
            category="Figures",
            subcategory="Overview",
            labels={"study": "all", "figure": "{name}"},
        ),
    log:
        "logs/figures/index.log",
    conda:
        "../envs/report.yaml"
    params:
        studies=list(STUDIES),
    script:
        "../scripts/figures.py"


rule report_study:
    input:
        unpack(lambda w: _study_inputs(w.study, config, world=_WORLD, repo=_REPO)),
        source=repo_path("reports/study.qmd"),
    output:
        "results/reports/{study}.html",
    log:
        "logs/report/{study}.log",
    benchmark:
        "results/benchmarks/report/{study}.tsv"
    conda:
        "../envs/report.yaml"
    params:
        page=lambda w: {"study": w.study, "device": str(config.get("device", "")), "config_hash": _STUDY_CONFIG_HASH},
        engine=config.get("report_engine", "auto"),
    script:
        "../scripts/report.py"


rule report_index:
    input:
        **_index_inputs(STUDIES, SLUGS, config, world=_WORLD, repo=_REPO),
        source=repo_path("reports/index.qmd"),
    output:
        "results/reports/index.html",
    log:
        "logs/report/index.log",
    benchmark:
        "results/benchmarks/report/index.tsv"
    conda:
        "../envs/report.yaml"
    params:
        page={
            "studies": list(STUDIES),
            "models": list(SLUGS),
            "device": str(config.get("device", "")),
            "config_hash": _CONFIG_HASH,
        },
        engine=config.get("report_engine", "auto"),
    script:
        "../scripts/report.py"


rule report_pages:
    input:
        expand("results/reports/{page}.html", page=[*STUDIES, "index"]),
    output:
        report(
            directory("results/report_pages"),
            patterns=["{page}.html"],
            caption="../report/pages.rst",
            category="Pages",
            labels={"page": "{page}"},
        ),
    log:
        "logs/report_pages.log",
    conda:
        "../envs/report.yaml"
    script:
        "../scripts/report_pages.py"
