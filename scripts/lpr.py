"""rule lpr (rules/lpr.smk): every model's scores of a study -> results/lpr/{study}.parquet.
Thin: it calls fmat_replication.lpr_stage.lpr."""

from fmat_replication.lpr_stage import lpr
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    lpr(sm.input.study, sm.params.criteria_dir, sm.input.scores, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
