"""rule agreement_summary (rules/agreement.smk): every model's check -> results/agreement/summary.parquet.
Thin: it calls fmat_replication.agreement.summary."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.agreement import summary  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    summary(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
