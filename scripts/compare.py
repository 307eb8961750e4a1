"""rules compare / compare_study (rules/compare.smk): the paper's numbers beside ours, with a verdict.
Thin: it calls fmat_replication.compare.compare_studies."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.compare import compare_studies  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    compare_studies(sm.input.paper, sm.input.stats, sm.input.status, sm.output.parquet,
                    csv=sm.output.get("csv"), study=sm.wildcards.get("study"))


run_script(main, snakemake.log[0])  # noqa: F821
