"""rules report_figures / report_figures_index (rules/report.smk): a page's figures as SVG files
and figures.json (titles and captions) in the rule's output folder.
Thin: it calls fmat_replication.report_stage.draw_figures."""

from fmat_replication.report_stage import draw_figures
from fmat_replication.scripts import run_script


def main():
    sm = snakemake  # noqa: F821
    p = sm.params
    inputs = {name: sm.input[name] for name in sm.input.keys()}
    draw_figures(sm.output[0], inputs, study=p.get("study"), studies=p.get("studies", ()))


run_script(main, snakemake.log[0])  # noqa: F821
