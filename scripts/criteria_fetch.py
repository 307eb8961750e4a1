"""rule criteria_fetch (rules/criteria.smk): download one criterion source (or copy it from
mirror_dir) to resources/criteria/raw/{source}/{filename}; record it in the lock table."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 - the repository's fmat

from fmat.criteria import Origin, fetch  # noqa: E402
from fmat.workflow import run_script  # noqa: E402


def main():
    logging.captureWarnings(True)  # CriterionChangedWarning -> the log
    origin = Origin(**snakemake.params.origin)  # noqa: F821
    logging.info("%s %s", "copying" if origin.kind == "mirror" else "downloading", origin.location)
    row = fetch(origin, snakemake.output[0], lock_path=snakemake.params.lock,  # noqa: F821
                timeout=float(snakemake.params.timeout))  # noqa: F821
    logging.info("sha256 %s, %s bytes, first retrieved %s", row["sha256"], row["bytes"], row["first_retrieved"])


run_script(main, snakemake.log[0])  # noqa: F821
