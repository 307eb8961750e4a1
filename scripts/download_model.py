"""rule download_model (rules/models.smk): a hub model into the cache with its commit locked, or a
local folder hashed into the lock -> the marker resources/models/{model}.json and the model's
lock record resources/models/{model}.lock.tsv.
Thin: it calls fmat_replication.models.download_model."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.models import download_model  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    download_model(sm.output.marker, name=p.name, revision=p.revision, path=p.path, cache_dir=p.cache_dir,
                   lock=sm.output.lock, timeout=p.timeout)


run_script(main, snakemake.log[0])  # noqa: F821
