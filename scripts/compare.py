"""rules compare and compare_study (rules/compare.smk): the paper's numbers
(config/paper_results.tsv) joined with every study's results/analysis/{study}/stats.parquet ->
results/replication.parquet (+ .csv), one row per paper row with a verdict (fmat.compare; the
rule in docs/reports.md); compare_study: the rows of one study -> results/replication/{study}.parquet."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

import pandas as pd  # noqa: E402

from fmat.compare import compare, read_status, summarise  # noqa: E402
from fmat.io import read_table, write_table  # noqa: E402
from fmat.paper import load_paper_results  # noqa: E402
from fmat.results import RESULT_COLUMNS  # noqa: E402
from fmat.workflow import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    log = logging.getLogger("fmat.compare")
    paper = load_paper_results(sm.input.paper)
    stats = [sm.input.stats] if isinstance(sm.input.stats, str) else list(sm.input.stats)
    listings = [sm.input.listings] if isinstance(sm.input.listings, str) else list(sm.input.listings)
    study = getattr(sm.wildcards, "study", None)
    if study is not None:  # compare_study: that study's paper rows only
        paper = paper[paper["study"].astype(str) == study].reset_index(drop=True)
    ours = pd.concat([read_table(p)[RESULT_COLUMNS] for p in stats], ignore_index=True)
    table = compare(paper, ours, read_status(listings))
    write_table(table, sm.output.parquet)
    if "csv" in sm.output.keys():
        write_table(table, sm.output.csv)
    for rec in summarise(table).to_dict("records"):
        log.info("study %s: %d replicated, %d not replicated, %d not computable", rec["study"],
                 rec["replicated"], rec["not replicated"], rec["not computable"])


run_script(main, snakemake.log[0])  # noqa: F821
