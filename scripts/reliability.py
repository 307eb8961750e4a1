"""rule reliability (rules/reliability.smk): ICC among the models (raw log probabilities and
LPRs) and alpha among the study's items, in the fmat.results shape ->
results/reliability/{study}.parquet, and the detailed tables -> {study}_details.parquet."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.io import read_table, write_table  # noqa: E402
from fmat.workflow import load_scores, load_study_file, reliability_tables, run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    study = load_study_file(sm.input.study, sm.params.criteria_dir)
    details, stats = reliability_tables(study, load_scores(sm.input.scores), read_table(sm.input.lpr),
                                        sid=sm.wildcards.study)
    write_table(details, sm.output.details)
    write_table(stats, sm.output.stats)


run_script(main, snakemake.log[0])  # noqa: F821
