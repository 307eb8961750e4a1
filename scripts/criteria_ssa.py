"""rules criteria_ssa_names_wefat2 / criteria_ssa_names_1c (rules/criteria.smk): SSA counts
-> resources/criteria/ssa_names_{wefat2,1c}.parquet (fmat.criteria)."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat import criteria  # noqa: E402
from fmat.embeddings import read_word2vec  # noqa: E402
from fmat.io import write_table  # noqa: E402
from fmat.workflow import run_script  # noqa: E402


def main():
    logging.captureWarnings(True)  # "GloVe filter not applied" -> the log
    i, p = snakemake.input, snakemake.params  # noqa: F821
    counts = criteria.read_ssa_counts(i.counts, years=tuple(int(y) for y in p.years))
    source = criteria.source_note("ssa", i.counts, p.lock) + f", births {p.years[0]}–{p.years[1]}"
    if p.table == "wefat2":
        out = criteria.ssa_names_wefat2(counts, criteria.read_wefat_words(i.words)["names"], source=source)
    else:
        vocab = None
        if i.glove:
            logging.info("looking the names up in %s (minutes)", i.glove[0])
            names = counts["name"].astype(str).unique().tolist()
            vocab = set(read_word2vec(i.glove[0], words=names, dims=criteria.GLOVE_DIMS).index)
        else:
            logging.warning("GloVe 840B is not available (mirror has only the 457-word extract): "
                            "the 1C names are NOT filtered by GloVe")
        out = criteria.ssa_names_1c(counts, min_each=int(p.min_each), vocabulary=vocab, source=source)
    logging.info("%d names; source: %s", len(out), out["source"].iloc[0] if len(out) else source)
    write_table(out, snakemake.output[0])  # noqa: F821


run_script(main, snakemake.log[0])  # noqa: F821
