# Quick start (README): `make run` runs the default experiment offline, `make test` runs the tests.
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PLUGINS := plugins/dlib plugins/insightface plugins/mlflow plugins/gemini plugins/openai

# Nothing may call outside hosts: MLflow telemetry and similar are off everywhere.
export MLFLOW_DISABLE_TELEMETRY := true
export DO_NOT_TRACK := true
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: setup run test bench clean

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --python $(BIN)/python -e '.[test,sample]' $(addprefix -e ,$(PLUGINS))
	touch $@

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/python -m faceedit_bench $(ARGS)

PYTEST_ARGS ?= -n 2
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_identity.py
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) .faceedit_bench
