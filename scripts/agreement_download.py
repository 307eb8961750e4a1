"""rule agreement_download (rules/agreement.smk): the agreement pairs from config agreement.url.
Thin: it calls fmat_replication.agreement.download."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.agreement import download  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    download(sm.output[0], url=sm.params.url, sha256=sm.params.sha256)


run_script(main, snakemake.log[0])  # noqa: F821
