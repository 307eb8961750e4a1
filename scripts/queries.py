"""rule queries (rules/queries.smk): a study file -> results/queries/{study}.parquet (fmat.study)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.workflow import query_table, run_script  # noqa: E402
from fmat.io import write_table  # noqa: E402


def main():
    table = query_table(snakemake.input.study, snakemake.params.criteria_dir)  # noqa: F821
    write_table(table, snakemake.output[0])  # noqa: F821


run_script(main, snakemake.log[0])  # noqa: F821
