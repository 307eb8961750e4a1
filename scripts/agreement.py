"""rule agreement (rules/agreement.smk): one model's subject-verb agreement check.
Thin: it calls fmat_replication.agreement_stage.check_model."""

from fmat_replication.agreement_stage import check_model
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    check_model(
        sm.input.model,
        list(sm.input.pairs),
        sm.output[0],
        constructions=p.constructions,
        offline=p.offline,
        cache_dir=p.cache_dir,
        lock=sm.input.lock or None,
        device=p.device,
        batch_size=p.batch_size,
        max_tokens=p.max_tokens,
        threads=sm.threads,
    )


run_script(main, snakemake.log[0])  # noqa: F821
