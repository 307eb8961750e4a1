"""rule analysis (rules/analysis.smk): one study's analysis -> results/analysis/{study}/stats.parquet,
status.json and figures/.
Thin: it calls fmat_replication.analysis.analysis."""

from fmat_replication.analysis import analysis
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    analysis(
        sm.input.study,
        sm.params.criteria_dir,
        sm.input.scores,
        sm.input.lpr,
        sm.input.reliability,
        sm.input.criteria,
        sid=sm.wildcards.study,
        out_stats=sm.output.stats,
        out_status=sm.output.status,
        out_figures=sm.output.figures,
    )


run_script(main, snakemake.log[0])  # noqa: F821
