"""rule reliability (rules/reliability.smk): ICC among the models and alpha among the items ->
results/reliability/{study}.parquet and {study}_details.parquet.
Thin: it calls fmat_replication.reliability_stage.reliability."""

from fmat_replication.reliability_stage import reliability
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    reliability(
        sm.input.study,
        sm.params.criteria_dir,
        sm.input.scores,
        sm.input.lpr,
        sid=sm.wildcards.study,
        out_stats=sm.output.stats,
        out_details=sm.output.details,
    )


run_script(main, snakemake.log[0])  # noqa: F821
