"""Check workflow config files before Snakemake reads them (``make demo``, ``make replicate``).

A file given to Snakemake with ``--configfile`` is read by Snakemake itself, while it parses its
command line and before the workflow's code runs: a missing file ends in Snakemake's traceback,
a tab or a list in Snakemake's message without the file or the line. The documented commands
run this first, on every file they will give Snakemake::

    python -m fmat_replication.check_config config/demo.yaml my.yaml

Each file must exist, be UTF-8 YAML without tabs in its indentation, and be a mapping of keys
(:func:`fmat_replication.config.check_config_file`). The first problem is printed as
``invalid configuration: FILE: line N: what`` with its fix, and the exit status is 2; the keys
themselves are checked by the workflow (docs/workflow.md, "Configuration").
"""

from __future__ import annotations

import sys
from typing import Sequence

from fmat.errors import EXIT_USAGE, FmatError

from .config import check_config_file


def main(argv: Sequence[str] | None = None) -> int:
    files = list(sys.argv[1:] if argv is None else argv)
    for path in files:
        try:
            check_config_file(path)
        except FmatError as err:
            print(f"invalid configuration: {err}", file=sys.stderr)
            return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
