# Quick start (README): `make run` runs the default experiment offline, `make test` runs the tests.
# Both create the virtual environment on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PLUGINS := plugins/dlib plugins/insightface plugins/mlflow plugins/gemini plugins/openai plugins/bfl plugins/diffusers \
	plugins/byteplus plugins/replicate \
	plugins/transformers
# torch's CPU build first, in one pip command with what depends on it (uv would fetch a CUDA build).
TORCH_STACK := torch==2.13.0 diffusers==0.42.1 transformers==5.24.0 accelerate==1.15.0

# Nothing may call outside hosts: MLflow telemetry and similar are off everywhere.
export MLFLOW_DISABLE_TELEMETRY := true
export DO_NOT_TRACK := true
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: setup run test bench clean

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv $(TORCH_STACK)
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
	$(BIN)/python benchmarks/bench_statistics.py
	$(BIN)/python benchmarks/bench_hosted.py
	$(BIN)/python benchmarks/bench_overlap.py
	$(BIN)/python benchmarks/bench_memory.py
	$(BIN)/python benchmarks/bench_merge.py

clean:
	rm -rf $(VENV) .faceedit_bench
