"""rules recovery_study / recovery (rules/recovery.smk): what the world planted, against what
the study's results found. Thin: it calls fmat_replication.recovery.recovery_stage."""

from fmat_replication.recovery import recovery_stage
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    if sm.wildcards.get("study"):
        recovery_stage(
            sm.input.world,
            sm.input.stats,
            sid=sm.wildcards.study,
            out=sm.output[0],
            study_path=sm.input.study,
            models=list(sm.params.models),
            criteria_paths=[*sm.input.words, *sm.input.criteria],
            figures=sm.input.get("figures"),
        )
    else:
        recovery_stage(None, list(sm.input), out=sm.output.parquet, csv=sm.output.csv)


run_script(main, snakemake.log[0])  # noqa: F821
