"""rule lpr (rules/lpr.smk): every model's scores of a study -> results/lpr/{study}.parquet.
Thin: it calls fmat_replication.lpr.lpr."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.lpr import lpr  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    lpr(sm.input.study, sm.params.criteria_dir, sm.input.scores, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
