"""rule download_model (rules/models.smk): put one model in the Hugging Face cache, record its
commit in resources/models.lock.tsv and write the marker resources/models/{model}.json
(a local model folder: its weights' sha256 in the lock file, the folder in the marker).
Offline and not cached: fails within seconds and says how to run offline."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.workflow import ensure_model, local_model, run_script, write_json  # noqa: E402


def main():
    p = snakemake.params  # noqa: F821
    if p.path:  # a local model folder: hashed into the lock file, no hub, no cache
        write_json(local_model(p.name, p.path, lock=p.lock), snakemake.output[0])  # noqa: F821
        return
    if p.cache_dir:
        from fmat.models import set_cache_folder

        set_cache_folder(p.cache_dir)
    record = ensure_model(p.name, revision=p.revision, lock=p.lock, timeout=float(p.timeout))
    write_json(record, snakemake.output[0])  # noqa: F821


run_script(main, snakemake.log[0])  # noqa: F821
