"""rule model_card (rules/models.smk): one model's card -> results/models/{model}.json.
Thin: it calls fmat_replication.model_stage.model_card."""

from fmat_replication.model_stage import model_card
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    model_card(
        sm.input.model,
        sm.output[0],
        offline=p.offline,
        cache_dir=p.cache_dir,
        lock=sm.input.lock or None,
        device=p.device,
        threads=sm.threads,
    )


run_script(main, snakemake.log[0])  # noqa: F821
