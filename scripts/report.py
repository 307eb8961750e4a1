"""rules report_study / report_index (rules/report.smk): one report page.
Thin: it calls fmat_replication.pages.render.render_page with the rule's inputs (lists stay lists)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's packages

from fmat_replication.pages.render import render_page  # noqa: E402
from fmat_replication.scripts import run_script  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    inputs = {}
    for name in sm.input.keys():
        if name == "source":
            continue
        value = sm.input[name]
        inputs[name] = value if isinstance(value, str) else [str(v) for v in value]
    if not inputs.get("recovery"):
        inputs["recovery"] = None  # no world file in this run
    params = {**inputs, **sm.params.page}
    render_page("study" if "study" in params else "index", sm.output[0], params,
                engine=sm.params.engine, log_file=sm.log[0])


run_script(main, snakemake.log[0])  # noqa: F821
