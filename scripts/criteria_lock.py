"""rule criteria_lock (rules/criteria.smk): the sources' lock records -> resources/criteria.lock.tsv.
Thin: it calls fmat_replication.criteria.gather_lock."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.criteria import gather_lock  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    gather_lock(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
