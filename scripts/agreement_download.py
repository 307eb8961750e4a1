"""rule agreement_download (rules/agreement.smk): the agreement pairs from config agreement.url.
Thin: it calls fmat_replication.agreement_stage.download."""

from fmat_replication.agreement_stage import download
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    download(sm.output[0], url=sm.params.url, sha256=sm.params.sha256)


run_script(main, snakemake.log[0])  # noqa: F821
