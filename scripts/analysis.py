"""rule analysis (rules/analysis.smk): one study's analysis (fmat.analyses, named by the study
file) -> results/analysis/{study}/stats.parquet (reliability rows + analysis rows, results
shape), figure tables results/analysis/{study}/figure_<name>.parquet, and figures.json (the
list of figure tables, whether the analysis is implemented, its notes)."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.compare import analysis_stage  # noqa: E402
from fmat.io import read_table, write_table  # noqa: E402
from fmat.workflow import load_scores, load_study_file, run_script, write_json  # noqa: E402


def main():
    sm = snakemake  # noqa: F821
    log = logging.getLogger("fmat.analysis")
    study = load_study_file(sm.input.study, criteria_dir=sm.params.criteria_dir)
    criteria = {Path(p).stem: read_table(p) for p in sm.input.criteria}
    stats, figures, status = analysis_stage(
        study, load_scores(sm.input.scores), read_table(sm.input.lpr), read_table(sm.input.reliability),
        criteria, sid=sm.wildcards.study)
    out_dir = Path(sm.output.stats).parent
    for old in out_dir.glob("figure_*.parquet"):  # figure tables of an earlier run
        if old.stem.removeprefix("figure_") not in figures:
            old.unlink()
    for name, table in figures.items():
        path = out_dir / f"figure_{name}.parquet"
        write_table(table, path)
        status["figures"][name] = path.name
    write_table(stats, sm.output.stats)
    write_json(status, sm.output.listing)
    for note in status["notes"]:
        log.info("study %s: %s", sm.wildcards.study, note)
    log.info("study %s: %d result rows, %d figure table(s)", sm.wildcards.study, len(stats), len(figures))


run_script(main, snakemake.log[0])  # noqa: F821
