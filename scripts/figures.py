"""rules report_figures / report_figures_index (rules/report.smk): a page's figures as SVG files
and figures.json (titles and captions) in the rule's output folder.
Thin: it calls fmat_replication.pages.drawing.draw_study or draw_index."""

from fmat_replication.pages.drawing import draw_index, draw_study
from fmat_replication.report_stage import page_inputs
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    inputs = page_inputs({name: sm.input[name] for name in sm.input.keys()})
    if "study" in sm.params.keys():
        draw_study(sm.params.study, inputs, sm.output[0])
    else:
        draw_index(list(sm.params.studies), inputs, sm.output[0])


run_script(main, snakemake.log[0])  # noqa: F821
