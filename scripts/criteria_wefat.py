"""rule criteria_wefat (rules/criteria.smk): GloVe vectors -> WEFAT_male of Study 1A/1B/1C's
items, resources/criteria/wefat_{wefat_study}.parquet (fmat.criteria.wefat_table, with
fmat.embeddings.wefat_criterion)."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat import criteria  # noqa: E402
from fmat.embeddings import read_word2vec  # noqa: E402
from fmat.io import read_table, write_table  # noqa: E402
from fmat.workflow import run_script  # noqa: E402


def main():
    logging.captureWarnings(True)
    i, p, wc = snakemake.input, snakemake.params, snakemake.wildcards  # noqa: F821
    words = criteria.read_wefat_words(i.words)
    if wc.wefat_study == "1A":
        items = words["occupations"]
    elif wc.wefat_study == "1B":
        items = words["names"]
    else:
        items = read_table(i.names[0])["item"].astype(str).tolist()
    vectors = read_word2vec(i.glove, words=[*items, *words["male"], *words["female"]], dims=criteria.GLOVE_DIMS)
    source = criteria.source_note("glove", i.glove, p.lock)
    out = criteria.wefat_table(vectors, items, words["male"], words["female"], source=source,
                               demo_missing=p.demo_embedding)
    missing = out.attrs["missing_items"]
    if missing:
        what = "demo vectors stand in (source: 'demo embedding, not GloVe')" if p.demo_embedding \
            else "their wefat_male is NaN"
        logging.warning("%d of %d items are not in %s; %s: %s", len(missing), len(items),
                        Path(i.glove).name, what, ", ".join(missing[:50]) + (" …" if len(missing) > 50 else ""))
    logging.info("%d items scored; source: %s", out["wefat_male"].notna().sum(), source)
    write_table(out, snakemake.output[0])  # noqa: F821


run_script(main, snakemake.log[0])  # noqa: F821
