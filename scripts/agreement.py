"""rules agreement_download / agreement / agreement_summary (rules/agreement.smk):

- agreement_download: config agreement.url -> the pairs TSV (fmat.agreement.download_pairs, sha256 checked);
- agreement: ONE model's subject-verb agreement check (fmat.agreement.check) on the pairs
  (config agreement.pairs, or the package fixture) -> results/agreement/{model}.parquet (per pair);
- agreement_summary: every model's per-pair table -> results/agreement/summary.parquet
  (fmat.agreement.summarize: accuracy, n, skipped per model x construction)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.workflow import prepare_model_env, run_script  # noqa: E402


def download(sm):
    from fmat.agreement import download_pairs

    download_pairs(sm.output[0], url=sm.params.url, sha256=sm.params.sha256)


def check(sm):
    p = sm.params
    prepare_model_env(p.offline, p.cache_dir)  # a downloaded model: its locked commit, from the cache only
    from fmat.agreement import SV_AGREEMENT, check, read_pairs
    from fmat.io import write_table
    from fmat.workflow import read_json

    marker = read_json(sm.input.model)
    name = marker["name"]
    source = marker.get("path") or name
    constructions = p.constructions if p.constructions is not None else SV_AGREEMENT
    pairs = read_pairs(sm.input.pairs[0] if sm.input.pairs else None, constructions=constructions)
    device = None if p.device in (None, "auto") else p.device
    per_pair, _ = check({name: source}, pairs, device=device, batch_size=p.batch_size,
                        max_tokens=p.max_tokens, threads=sm.threads,
                        lock_path=p.lock if Path(p.lock).exists() else None)
    write_table(per_pair, sm.output[0])


def summary(sm):
    import pandas as pd

    from fmat.agreement import summarize
    from fmat.io import read_table, write_table

    tables = [read_table(f) for f in sm.input]
    models = [str(t["model"].iloc[0]) for t in tables if len(t)]
    per_pair = pd.concat(tables, ignore_index=True)
    per_pair["model"] = pd.Categorical(per_pair["model"].astype(str), categories=list(dict.fromkeys(models)))
    write_table(summarize(per_pair), sm.output[0])


def main():
    sm = snakemake  # noqa: F821
    {"agreement_download": download, "agreement": check, "agreement_summary": summary}[sm.rule](sm)


run_script(main, snakemake.log[0])  # noqa: F821
