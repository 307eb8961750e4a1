#!/usr/bin/env bash
# Run by Snakemake (--sdm conda) in the new environment, once, after envs/<name>.yaml: fmat and
# fmat_replication from this checkout, editable and without their dependencies (the yaml pins
# the ones this environment's rules need). The checkout is FMAT_CHECKOUT, which the Snakefile
# sets to its own folder. Not tried here (no conda on the test machines; tests/test_envs.py
# checks the text). A pip requirement `-e ../fmat_replication` in the yaml would not do: Snakemake
# copies the yaml to .snakemake/conda/ (or --conda-prefix) first, and conda resolves pip paths
# from the folder of the file it is given.
set -euo pipefail
checkout="${FMAT_CHECKOUT:?FMAT_CHECKOUT is not set: run the workflow with its Snakefile}"
python -m pip install --no-deps -e "$checkout" -e "$checkout/fmat_replication"
