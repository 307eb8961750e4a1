"""rules compare / compare_study (rules/compare.smk): the paper's numbers beside ours, with a verdict.
Thin: it calls fmat_replication.compare.compare_studies."""

from fmat_replication.compare import compare_studies
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    compare_studies(
        sm.input.paper,
        sm.input.stats,
        sm.input.status,
        sm.output.parquet,
        csv=sm.output.get("csv"),
        study=sm.wildcards.get("study"),
    )


run_script(main, snakemake.log[0])  # noqa: F821
