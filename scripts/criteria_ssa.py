"""rules criteria_ssa_names_wefat2 / criteria_ssa_names_1c (rules/criteria.smk): SSA counts ->
% male of Study 1B's or 1C's names.
Thin: it calls fmat_replication.criteria.ssa_criterion."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.criteria import ssa_criterion  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    ssa_criterion(sm.input.counts, sm.input.words, list(sm.input.get("glove", [])), sm.output[0], table=p.table,
                  years=p.years, min_each=p.get("min_each", 100), lock=sm.input.lock)


run_script(main, snakemake.log[0])  # noqa: F821
