"""rule oov_study (rules/checks.smk): one study's score tables -> results/oov/{study}.parquet.
Thin: it calls fmat_replication.checks.oov_study."""

from fmat_replication.checks import oov_study
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    oov_study(list(sm.input.scores), sm.output[0], study=sm.wildcards.study)


run_script(main, snakemake.log[0])  # noqa: F821
