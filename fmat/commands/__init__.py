"""CLI subcommands: one module per area, each with ``register(subparsers)``; shared argument
helpers in :mod:`fmat.commands._common`."""
