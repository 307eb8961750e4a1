"""rule criteria_bls2021_occupations (rules/criteria.smk): BLS 2021 table 11 + the curated
mapping -> resources/criteria/bls2021_occupations.parquet (fmat.criteria)."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat import criteria  # noqa: E402
from fmat.io import write_table  # noqa: E402
from fmat.workflow import run_script  # noqa: E402


def main():
    logging.captureWarnings(True)
    i = snakemake.input  # noqa: F821
    table = criteria.read_bls_table11(i.table)
    mapping = criteria.read_occupation_mapping(i.mapping)
    items = criteria.read_wefat_words(i.words)["occupations"]
    source = criteria.source_note("bls2021", i.table, snakemake.params.lock)  # noqa: F821
    out = criteria.bls_occupation_criterion(table, mapping, source=source, items=items,
                                            mapping_path=str(i.mapping))
    logging.info("%d occupations, %% male %.1f–%.1f; source: %s", len(out), out.pct_male.min(),
                 out.pct_male.max(), source)
    write_table(out, snakemake.output[0])  # noqa: F821


run_script(main, snakemake.log[0])  # noqa: F821
