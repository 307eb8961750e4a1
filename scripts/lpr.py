"""rule lpr (rules/lpr.smk): every model's scores of a study -> results/lpr/{study}.parquet
(fmat.lpr.summary with the study file's `lpr:` options)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.io import write_table  # noqa: E402
from fmat.workflow import load_scores, load_study_file, lpr_table, run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    study = load_study_file(sm.input.study, sm.params.criteria_dir)
    write_table(lpr_table(study, load_scores(sm.input.scores)), sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
