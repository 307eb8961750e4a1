# The fmat workflow: Bao (2024) replicated, from model download to the report pages.
#
#   snakemake --profile profiles/default                              the paper (12 models, 15 studies)
#   snakemake --profile profiles/default --configfile config/demo.yaml   offline demo (tiny models)
#   snakemake -n                                                       list the jobs
#
# One file per stage under rules/; the logic is in the fmat_replication package, built on the fmat
# library (scripts/ only call it).
# docs/workflow.md explains the DAG, the outputs and how scoring is grouped.

import os
import sys

from snakemake.utils import min_version

min_version("9.0")

# The workflow's own config file, checked first (Snakemake's message names no file or line; a
# --configfile is read by Snakemake itself before this file runs, so it cannot be checked here).
# fmat and fmat_replication are installed with the environment (make env; README "Installing");
# with --sdm conda, each rule's environment installs them from FMAT_CHECKOUT (envs/*.post-deploy.sh)
os.environ.update(FMAT_CHECKOUT=workflow.basedir)
from fmat.errors import FmatError
from fmat_replication.config import check_config_file

try:
    if os.path.exists("config/config.yaml") or not workflow.overwrite_configfiles:
        check_config_file("config/config.yaml")
except FmatError as err:
    print(f"invalid configuration: {err}", file=sys.stderr)
    sys.exit(2)


configfile: "config/config.yaml"


include: "rules/common.smk"


# wildcards only take configured values (a model slug such as vinai__bertweet-base, a study id)
wildcard_constraints:
    model=alternatives(SLUGS),
    study=alternatives(STUDIES),


include: "rules/models.smk"
include: "rules/demo.smk"
include: "rules/queries.smk"
include: "rules/score.smk"
include: "rules/lpr.smk"
include: "rules/reliability.smk"
include: "rules/criteria.smk"
include: "rules/analysis.smk"
include: "rules/compare.smk"
include: "rules/report.smk"
include: "rules/agreement.smk"
include: "rules/checks.smk"
include: "rules/recovery.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
        REPORT_TARGETS,
        "results/agreement/summary.parquet",
        [] if DEMO else "resources/models.lock.tsv",


# the last line of a run: the page to open (after Snakemake's job list, which can be long)
onsuccess:
    index = Path("results/reports/index.html")
    if index.exists():
        print(
            f"\nfmat: done. Open {index} in a browser ({index.resolve().as_uri()}): the overview, linking each study's page."
        )
