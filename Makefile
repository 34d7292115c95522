# Quick start (README): `make run` runs the default experiment offline, `make test` runs the tests.
# Both install the locked environment (uv.lock) into .venv on first use; docs/install.md has the details.
# The Python the lock was made and tested with: the CPU torch file it names is for CPython 3.11.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed
PYPROJECTS := pyproject.toml $(wildcard plugins/*/pyproject.toml)
# uv installs uv.lock's own uv version, so the tool that checks the lock is the one it was made with.
UV_VERSION := $(shell sed -n '/^name = "uv"$$/{n;s/^version = "\(.*\)"$$/\1/p;}' uv.lock)
# `make test-latest`: the newest versions the ranges in pyproject.toml allow, in a venv of their own.
LATEST ?= .venv-latest
PLUGINS := $(patsubst %/pyproject.toml,%,$(wildcard plugins/*/pyproject.toml))

# Nothing may call outside hosts: MLflow telemetry and similar are off everywhere.
export MLFLOW_DISABLE_TELEMETRY := true
export DO_NOT_TRACK := true
export RAY_USAGE_STATS_ENABLED := 0
# uv uses the Python it is given and never downloads one.
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: setup lock run test test-stress test-latest bench clean uv

# The venv and uv at the version uv.lock names; nothing else. `lock` needs only this: after a pyproject.toml
# edit the environment cannot be synced until the lock is remade.
uv:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "uv.lock is made and tested for Python 3.11; $(PYTHON) is " + sys.version.split()[0] + ". Run make PYTHON=python3.11 ... (docs/install.md).")'
	@test -x $(UV) && [ "$$($(UV) --version | cut -d" " -f2)" = "$(UV_VERSION)" ] || \
		{ $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); }

# Exactly the locked set, nothing else (--locked: a pyproject.toml changed without `make lock` is an error).
# --compile-bytecode: the installed packages' bytecode is written now, as pip does, not by the first processes
# that import them (a fresh venv's first run, or the test workers starting together, each compiling MLflow,
# torch and the rest: about 50 s of CPU).
$(STAMP): uv.lock $(PYPROJECTS) | uv
	$(UV) sync --locked --all-packages --all-extras --compile-bytecode --python $(BIN)/python
	touch $@

setup: $(STAMP)

# After a change of the ranges in any pyproject.toml (or to take newer releases: make lock LOCK_ARGS=--upgrade).
lock: uv
	$(UV) lock $(LOCK_ARGS)

run: $(STAMP)
	$(BIN)/python -m faceedit_bench $(ARGS)

# Three workers on two cores: about a sixth of the suite's time waits (for the runs it starts, fake servers'
# latency, kill loops' polls), and a third worker fills it (measured on 2 cores: 7 min 05 s with -n 2, 6 min
# 52 s with -n 3, 2026-12-04; on 2026-12-08's tests, idle machine: 6 min 48 s to 7 min 05 s with -n 3 over
# three runs, 7 min 05 s with -n 4; docs/install.md).
PYTEST_ARGS ?= -n 3
# Python writes its bytecode caches for the tests even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): the suite starts hundreds of Python processes (workers, CLI runs, kill
# tests), and without the caches each one compiles MLflow, SQLAlchemy and the rest from source again
# (seconds of CPU apiece). The caches sit in __pycache__ folders, which git ignores.
# `make test` leaves out the stress tests (marked `stress`: kill loops, disk-fill levels, the oversubscribed
# commit measurement); `make test-stress` runs only them. CI (.ci/run) runs both.
test: export PYTHONDONTWRITEBYTECODE =
test: $(STAMP)
	$(BIN)/python -m pytest -m "not stress" $(PYTEST_ARGS)

test-stress: export PYTHONDONTWRITEBYTECODE =
test-stress: $(STAMP)
	$(BIN)/python -m pytest -m stress $(PYTEST_ARGS)

# Drift on purpose: a fresh venv with the newest releases every range allows (torch stays 2.13.0, the
# CPU file), the differences from the lock, then the tests.
test-latest: export PYTHONDONTWRITEBYTECODE =
test-latest: $(STAMP)
	rm -rf $(LATEST)
	$(UV) venv --quiet --python $(BIN)/python $(LATEST)
	$(UV) pip install --quiet --python $(LATEST)/bin/python --resolution highest torch==2.13.0 \
		-e '.[test,sample,joblib,docs]' $(foreach p,$(PLUGINS),-e '$(p)[test]')
	$(UV) pip freeze --python $(BIN)/python --exclude-editable > $(LATEST)/locked.txt
	$(UV) pip freeze --python $(LATEST)/bin/python --exclude-editable > $(LATEST)/latest.txt
	@echo "Newest allowed versions that differ from uv.lock (< locked, > newest):"
	@diff $(LATEST)/locked.txt $(LATEST)/latest.txt || true
	$(LATEST)/bin/python -m pytest $(PYTEST_ARGS)

# The benchmarks measure the software as a user runs it: with its bytecode caches (see test:).
bench: export PYTHONDONTWRITEBYTECODE =
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_identity.py
	$(BIN)/python benchmarks/bench_image_metrics.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_statistics.py
	$(BIN)/python benchmarks/bench_hosted.py
	$(BIN)/python benchmarks/bench_overlap.py
	$(BIN)/python benchmarks/bench_memory.py
	$(BIN)/python benchmarks/bench_merge.py

clean:
	rm -rf $(VENV) $(LATEST) .faceedit_bench
