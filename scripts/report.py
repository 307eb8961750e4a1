"""rules report_study / report_index (rules/report.smk): one report page.
Thin: it calls fmat_replication.report.report_page with the rule's inputs (lists stay lists)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.report import report_page  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    inputs = {name: sm.input[name] for name in sm.input.keys()}
    report_page(sm.output[0], inputs, sm.params.page, engine=sm.params.engine, log=sm.log[0])


run_script(main, snakemake.log[0])  # noqa: F821
