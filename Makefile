# Two commands on a fresh machine (see README):
#   make replicate   set up .venv, then run the whole paper replication (needs the network once)
#   make test        set up .venv, then run the test suite (offline)
# Other targets: make env, make demo (offline demo workflow on tiny models), make lint, make bench

PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
CORES   ?= all
PROFILE ?= profiles/default

.PHONY: env replicate demo test test-fast test-deps lint bench clean-demo

# The whole environment (library, replication, development tools), marked done by a stamp of its
# own: a .venv that holds only the library (README "Installing the library": it also has
# .venv/bin/fmat) is completed by `make env`, never taken for a finished one.
ENV_STAMP := $(VENV)/.fmat-env

$(ENV_STAMP): pyproject.toml fmat_replication/pyproject.toml envs/lock.txt
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, at the locked version: on the project's CPU machines this takes a local wheel;
	# elsewhere pip picks the right CUDA/CPU build for the machine. envs/lock.txt: the exact
	# versions tested together (pyproject.toml gives the library's ranges)
	$(BIN)/python -m pip install -q -c envs/lock.txt torch
	# the library (fill-mask-association-test) and the replication (fmat-replication, with the
	# workflow's tools: fmat_replication/pyproject.toml), both editable: the workflow's scripts
	# import them as installed; then the development group (tests, linters: pyproject.toml)
	$(BIN)/python -m pip install -q -c envs/lock.txt -e . -e ./fmat_replication --group dev
	@touch $@

env: $(ENV_STAMP)

# CONFIG=my.yaml: a configuration of one's own, given after the others (docs/workflow.md). Every
# config file is checked first (fmat_replication.check_config: file, line and fix), since
# Snakemake reads a --configfile itself, before the workflow's own checks can run.
# (quoted: a PROFILE, CORES or CONFIG given on the command line reaches snakemake as one word, never the shell)
CONFIG  ?=
replicate: env
	"$(BIN)/python" -m fmat_replication.check_config config/config.yaml $(if $(CONFIG),"$(CONFIG)")
	"$(BIN)/snakemake" --profile "$(PROFILE)" --cores "$(CORES)" $(if $(CONFIG),--configfile "$(CONFIG)")

demo: env
	"$(BIN)/python" -m fmat_replication.check_config config/config.yaml config/demo.yaml $(if $(CONFIG),"$(CONFIG)")
	"$(BIN)/snakemake" --profile "$(PROFILE)" --cores "$(CORES)" --configfile config/demo.yaml $(if $(CONFIG),"$(CONFIG)")

# the whole suite, slow tier included: the demo workflow, the reports in headless Chromium
# (installed here when run as root on Debian/Ubuntu; driven by Playwright, never its own browser
# download), the reports rendered with Quarto (when `quarto` is on PATH; skipped, and said so,
# without it) and a one-node SLURM cluster (the test installs and starts it; needs root).
# Without root: `make test-fast`, or see README "Development".
# Two pytest runs: every test but those marked `serial` on TEST_WORKERS processes (pytest-xdist;
# a test module stays on one process: its fixtures are built once), then the `serial` ones alone
# (they depend on timing: Ctrl-C obeyed within 5 s, SLURM's time limit and a kill mid-run).
# JUNIT=folder: each run's JUnit file in it
# (parallel.xml, serial.xml; .ci/run reads them).
TEST_WORKERS ?= 2
JUNIT ?=
test: env test-deps
	$(BIN)/python -m pytest -n "$(TEST_WORKERS)" --dist loadfile --no-loadscope-reorder -m "not serial" $(if $(JUNIT),--junitxml="$(JUNIT)/parallel.xml")
	$(BIN)/python -m pytest -m serial $(if $(JUNIT),--junitxml="$(JUNIT)/serial.xml")

# everything but the slow tier (no demo run, no browser, no SLURM): a few minutes
test-fast: env
	$(BIN)/python -m pytest -n "$(TEST_WORKERS)" --dist loadfile --no-loadscope-reorder -m "not slow and not serial"
	$(BIN)/python -m pytest -m "serial and not slow"

test-deps:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make test: installing chromium (the reports' browser test)"; \
	    apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make test: the browser test needs Chromium (Debian/Ubuntu: sudo apt-get install chromium);" \
	         "'make test-fast' runs the fast tier without it"; \
	  fi; }
	@command -v quarto >/dev/null 2>&1 || echo "make test: quarto is not on PATH: the test that renders the" \
	  "reports with Quarto is skipped (install Quarto from quarto.org to run it; CI runs it)"

lint: env
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

bench: env
	$(BIN)/python benchmarks/bench_scoring.py
	$(BIN)/python benchmarks/bench_paper.py --sample 0.005 --least 5 --fmat-way-sample 0.001 --fmat-way-least 1
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_validate.py
