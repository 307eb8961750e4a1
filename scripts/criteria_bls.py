"""rule criteria_bls2021_occupations (rules/criteria.smk): BLS table 11 -> % male of the occupations.
Thin: it calls fmat_replication.criteria.bls_criterion."""

from fmat_replication.criteria import bls_criterion
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    bls_criterion(sm.input.table, sm.input.mapping, sm.input.words, sm.output[0], lock=sm.input.lock)


run_script(main, snakemake.log[0])  # noqa: F821
