"""rules report_study / report_index (rules/report.smk): one report page.
Thin: it calls fmat_replication.report_stage.report_page with the rule's inputs (lists stay lists)."""

from fmat_replication.report_stage import report_page
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    inputs = {name: sm.input[name] for name in sm.input.keys()}
    report_page(sm.output[0], inputs, sm.params.page, engine=sm.params.engine, log=sm.log[0])


run_script(main, snakemake.log[0])  # noqa: F821
