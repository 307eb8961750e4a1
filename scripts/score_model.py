"""rules score_<group> (rules/score.smk): ONE model, loaded once, scores every study of the group
-> results/scores/{study}/{model}.parquet.
Thin: it calls fmat_replication.score.score_group."""

from fmat_replication.score import score_group
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    score_group(
        sm.input.model,
        p.studies,
        sm.input.studies,
        sm.input.queries,
        sm.output,
        device=p.device,
        batch_size=p.batch_size,
        max_tokens=p.max_tokens,
        threads=sm.threads,
        lock=sm.input.lock or None,
        offline=p.offline,
        cache_dir=p.cache_dir,
    )


run_script(main, snakemake.log[0])  # noqa: F821
