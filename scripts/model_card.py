"""rule model_card (rules/models.smk): one model's card for the overview (fmat.cards.model_card)
-> results/models/{model}.json."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.workflow import prepare_model_env, read_json, run_script, write_json  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    prepare_model_env(p.offline, p.cache_dir)  # a downloaded model: its locked commit, from the cache only
    if sm.threads:
        import torch

        torch.set_num_threads(int(sm.threads))
    from fmat.cards import model_card

    marker = read_json(sm.input.model)
    device = None if p.device in (None, "auto") else p.device
    card = model_card(marker["name"], marker.get("path") or marker["name"], device=device,
                      lock_path=p.lock if Path(p.lock).exists() else None)
    write_json(card, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
