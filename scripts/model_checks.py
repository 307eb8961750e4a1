"""rule model_checks (rules/checks.smk): agreement, alphas, OOV counts and cards -> the tables
results/models/{checks,agreement,provenance}.parquet. Thin: it calls fmat_replication.checks.model_checks."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.checks import model_checks  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    model_checks(sm.input.agreement, list(sm.input.stats), list(sm.input.oov), list(sm.input.cards),
                 checks_out=sm.output.checks, agreement_out=sm.output.agreement, provenance_out=sm.output.provenance)


run_script(main, snakemake.log[0])  # noqa: F821
