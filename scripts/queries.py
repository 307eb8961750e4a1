"""rule queries (rules/queries.smk): a study file -> results/queries/{study}.parquet.
Thin: it calls fmat_replication.queries.queries."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.queries import queries  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    queries(sm.input.study, sm.params.criteria_dir, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
