"""rule reliability (rules/reliability.smk): ICC among the models and alpha among the items ->
results/reliability/{study}.parquet and {study}_details.parquet.
Thin: it calls fmat_replication.reliability.reliability."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.reliability import reliability  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    reliability(sm.input.study, sm.params.criteria_dir, sm.input.scores, sm.input.lpr, sid=sm.wildcards.study,
                out_stats=sm.output.stats, out_details=sm.output.details)


run_script(main, snakemake.log[0])  # noqa: F821
