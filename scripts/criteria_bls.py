"""rule criteria_bls2021_occupations (rules/criteria.smk): BLS table 11 -> % male of the occupations.
Thin: it calls fmat_replication.criteria.bls_criterion."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.criteria import bls_criterion  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    bls_criterion(sm.input.table, sm.input.mapping, sm.input.words, sm.output[0], lock=sm.input.lock)


run_script(main, snakemake.log[0])  # noqa: F821
