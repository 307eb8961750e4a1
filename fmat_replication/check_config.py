"""Check workflow config files before Snakemake reads them (``make demo``, ``make replicate``)::

    python -m fmat_replication.check_config config/demo.yaml my.yaml

Snakemake reads a ``--configfile`` before the workflow's code runs, and names neither the file
nor the line of a problem. The first problem (:func:`fmat_replication.config.check_config_file`)
is printed as ``invalid configuration: FILE: line N: what`` with its fix; the exit status is 2.
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
