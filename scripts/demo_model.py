"""rule demo_model (rules/demo.smk): one tiny demo model (trained on the world, when one is
configured) and its marker. Thin: it calls fmat_replication.demo.demo_model."""

from fmat_replication.demo import demo_model
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    demo_model(
        sm.input.queries,
        sm.input.studies,
        sm.input.world or None,
        sm.params.criteria_dir,
        name=sm.params.name,
        slug=sm.wildcards.model,
        family=sm.params.family,
        seed=sm.params.seed,
        steps=sm.params.steps,
        batch=sm.params.batch,
        folder=sm.output.folder,
        marker=sm.output.marker,
        threads=sm.threads,
    )


run_script(main, snakemake.log[0])  # noqa: F821
