"""rule score_model (rules/score.smk): load ONE model and score every study's queries with it
(fmat.workflow.score_studies: fmat.models.load_masked_lm once, fmat.scoring per study),
writing results/scores/{study}/{model}.parquet for each study."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.workflow import prepare_model_env, read_json, run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    prepare_model_env(p.offline, p.cache_dir)  # a downloaded model: its locked commit, from the cache only
    from fmat.io import write_table
    from fmat.workflow import score_studies

    marker = read_json(sm.input.model)
    studies = dict(zip(p.studies, sm.input.studies))
    queries = dict(zip(p.studies, sm.input.queries))
    out = dict(zip(p.studies, sm.output))
    for sid, table in score_studies(marker, studies, queries, device=p.device, batch_size=p.batch_size,
                                    max_tokens=p.max_tokens,
                                    threads=sm.threads, lock=p.lock):
        write_table(table, out[sid])


run_script(main, snakemake.log[0])  # noqa: F821
