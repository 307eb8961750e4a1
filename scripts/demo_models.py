"""rule demo_models (rules/demo.smk): the offline demo's tiny models and their markers.
Thin: it calls fmat_replication.demo.demo_models."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.demo import demo_models  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    demo_models(sm.input.queries, sm.output, models=sm.params.models, out_dir=sm.params.out_dir,
                threads=sm.threads)


run_script(main, snakemake.log[0])  # noqa: F821
