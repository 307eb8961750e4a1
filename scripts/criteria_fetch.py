"""rule criteria_fetch (rules/criteria.smk): one source file, copied from mirror_dir or downloaded,
and locked.
Thin: it calls fmat_replication.criteria.fetch_source."""

from fmat_replication.criteria import fetch_source
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    fetch_source(sm.params.origin, sm.output.raw, lock=sm.output.lock, timeout=sm.params.timeout)


run_script(main, snakemake.log[0])  # noqa: F821
