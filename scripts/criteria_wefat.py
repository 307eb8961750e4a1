"""rule criteria_wefat (rules/criteria.smk): GloVe vectors -> WEFAT_male of Study 1A/1B/1C's items.
Thin: it calls fmat_replication.criteria.wefat_criterion."""

from fmat_replication.criteria import wefat_criterion
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    wefat_criterion(
        sm.input.glove,
        sm.input.words,
        list(sm.input.names),
        sm.output[0],
        study=sm.wildcards.wefat_study,
        lock=sm.input.lock,
        demo_embedding=sm.params.demo_embedding,
    )


run_script(main, snakemake.log[0])  # noqa: F821
