"""rule model_card (rules/models.smk): one model's card -> results/models/{model}.json.
Thin: it calls fmat_replication.models.model_card."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.models import model_card  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    model_card(sm.input.model, sm.output[0], offline=p.offline, cache_dir=p.cache_dir, lock=sm.input.lock or None,
               device=p.device, threads=sm.threads)


run_script(main, snakemake.log[0])  # noqa: F821
