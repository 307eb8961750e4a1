"""CLI subcommands: one module per area, each with ``register(subparsers)``.

Shared argument helpers live in :mod:`fmat.commands._common`.
"""
