"""rule demo_models (rules/demo.smk): build the demo's tiny models (fmat.tiny) from a corpus
holding every configured study's words, and write a marker {demo_dir}/{model}.json for each."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.io import read_table  # noqa: E402
from fmat.workflow import build_demo, run_script, write_json  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    tables = [read_table(path) for path in sm.input.queries]
    records = build_demo(sm.params.models, tables, sm.params.out_dir, threads=sm.threads)
    for path in sm.output:
        write_json(records[Path(path).stem], path)


run_script(main, snakemake.log[0])  # noqa: F821
