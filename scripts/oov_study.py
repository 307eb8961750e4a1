"""rule oov_study (rules/checks.smk): one study's score tables -> results/oov/{study}.parquet.
Thin: it calls fmat_replication.checks.oov_study."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.checks import oov_study  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    oov_study(list(sm.input.scores), sm.output[0], study=sm.wildcards.study)


run_script(main, snakemake.log[0])  # noqa: F821
