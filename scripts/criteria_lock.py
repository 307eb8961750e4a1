"""rule criteria_lock (rules/criteria.smk): the sources' lock records -> resources/criteria.lock.tsv.
Thin: it calls fmat_replication.criteria.gather_lock."""

from fmat_replication.criteria import gather_lock
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    gather_lock(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
