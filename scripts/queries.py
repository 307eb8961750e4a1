"""rule queries (rules/queries.smk): a study file -> results/queries/{study}.parquet.
Thin: it calls fmat_replication.queries.queries."""

from fmat_replication.queries import queries
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    queries(sm.input.study, sm.params.criteria_dir, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
