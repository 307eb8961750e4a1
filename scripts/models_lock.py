"""rule models_lock (rules/models.smk): the models' own lock records -> resources/models.lock.tsv.
Thin: it calls fmat_replication.model_stage.gather_lock."""

from fmat_replication.model_stage import gather_lock
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    gather_lock(list(sm.input), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
