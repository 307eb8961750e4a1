"""rule agreement_summary (rules/agreement.smk): every model's check -> results/agreement/summary.parquet.
Thin: it calls fmat_replication.agreement_stage.summary."""

from fmat_replication.agreement_stage import summary
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    summary(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
