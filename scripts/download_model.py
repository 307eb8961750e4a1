"""rule download_model (rules/models.smk): a hub model into the cache with its commit locked, or a
local folder hashed into the lock -> the marker resources/models/{model}.json and the model's
lock record resources/models/{model}.lock.tsv.
Thin: it calls fmat_replication.model_stage.download_model."""

from fmat_replication.model_stage import download_model
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    download_model(
        sm.output.marker,
        name=p.name,
        revision=p.revision,
        path=p.path,
        cache_dir=p.cache_dir,
        lock=sm.output.lock,
        timeout=p.timeout,
    )


run_script(main, snakemake.log[0])  # noqa: F821
