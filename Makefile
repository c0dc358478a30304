# entropic-bound: the commands a user runs. `make reproduce` and `make test` are the two that matter.
PY      ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SMK     := $(BIN)/snakemake

.PHONY: venv reproduce quick test bench bench-gpu test-cluster

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,workflow,cluster]'  # library + Snakemake, plotting, SLURM, test tools
	touch $(STAMP)

venv: $(STAMP)  ## create .venv and install the project with its exact pins (idempotent)

reproduce: $(STAMP)  ## paper scale, every figure, table and claim verdict
	$(SMK) reproduce-all --cores all
	$(SMK) reproduce-all --cores all --report results/paper/report.html

quick: $(STAMP)  ## CI scale, about two minutes
	$(SMK) reproduce-all --cores all --configfile config/quick.yaml

test: $(STAMP)  ## lint, unit and property tests, the quick pipeline end to end
	$(SMK) --lint
	$(BIN)/snakefmt --check .
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q

bench: $(STAMP)  ## training-engine, frontier and predict benchmarks (one JSON line each)
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_frontier.py
	$(BIN)/python benchmarks/bench_predict.py

bench-gpu: $(STAMP)
	$(BIN)/python benchmarks/bench_gpu.py

test-cluster: $(STAMP)  ## the quick pipeline on a real local SLURM cluster (root only)
	bash tests/cluster/run_cluster_test.sh
