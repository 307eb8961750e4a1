"""rule report_pages (rules/report.smk): the pages, copied into one folder for `snakemake --report`.
Thin: it calls fmat_replication.report_stage.bundle_pages."""

from fmat_replication.report_stage import bundle_pages
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    bundle_pages(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
