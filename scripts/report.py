"""rules report_study and report_index (rules/report.smk): one report page,
reports/study.py or reports/index.py -> results/reports/{study,index}.html, rendered by
fmat.report.render (Quarto when `quarto` is on PATH, else offline; config report_engine).
The page's parameters: the rule's params.page, plus its input files `paper` and `study_file`."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.report import render  # noqa: E402
from fmat.workflow import run_script  # noqa: E402

#: input files that are page parameters of the same name
PAGE_INPUTS = ("paper", "study_file")


def main():
    sm = snakemake  # noqa: F821
    page = dict(sm.params.page)
    page.update({name: sm.input[name] for name in PAGE_INPUTS if name in sm.input.keys()})
    render(sm.input.source, sm.output[0], page, engine=sm.params.engine, log_file=sm.log[0])


run_script(main, snakemake.log[0])  # noqa: F821
