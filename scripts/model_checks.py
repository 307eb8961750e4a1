"""rule model_checks (rules/checks.smk): agreement, alphas, OOV counts and cards -> the tables
results/models/{checks,agreement,provenance}.parquet. Thin: it calls fmat_replication.checks.model_checks."""

from fmat_replication.checks import model_checks
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    model_checks(
        sm.input.agreement,
        list(sm.input.stats),
        list(sm.input.oov),
        list(sm.input.cards),
        checks_out=sm.output.checks,
        agreement_out=sm.output.agreement,
        provenance_out=sm.output.provenance,
    )


run_script(main, snakemake.log[0])  # noqa: F821
