"""rules criteria_ssa_names_wefat2 / criteria_ssa_names_1c (rules/criteria.smk): SSA counts ->
% male of Study 1B's or 1C's names.
Thin: it calls fmat_replication.criteria.ssa_criterion."""

from fmat_replication.criteria import ssa_criterion
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    ssa_criterion(
        sm.input.counts,
        sm.input.words,
        list(sm.input.get("glove", [])),
        sm.output[0],
        table=p.table,
        years=p.years,
        min_each=p.get("min_each", 100),
        lock=sm.input.lock,
    )


run_script(main, snakemake.log[0])  # noqa: F821
