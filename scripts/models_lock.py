"""rule models_lock (rules/models.smk): the models' own lock records -> resources/models.lock.tsv.
Thin: it calls fmat_replication.models.gather_lock."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.models import gather_lock  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    gather_lock(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
