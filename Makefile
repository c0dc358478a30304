# entropic-bound: the commands a user runs. `make reproduce` and `make test` are the two that matter.
PY      ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SMK     := $(BIN)/snakemake

.PHONY: venv reproduce figures verify quick test test-install bench bench-gpu test-cluster

LOCK    := requirements/lock.txt
# the run's config: `make reproduce CONFIG=config/quick.yaml` (its run_name names results/<run_name>/)
CONFIG  ?= config/config.yaml
RUN_DIR  = results/$(shell sed -n 's/^run_name: *\([^ #]*\).*/\1/p' $(CONFIG))

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# library + Snakemake, plotting, SLURM, test tools, at the lock's exact versions
	$(BIN)/pip install --quiet -c $(LOCK) -e '.[dev,workflow,cluster]'
	touch $(STAMP)

venv: $(STAMP)  ## create .venv and install the project at the lock's exact versions (idempotent)

reproduce: $(STAMP)  ## paper scale (or CONFIG=...), every figure, table and claim verdict, and the report
	$(SMK) reproduce-all --cores all --configfile $(CONFIG)
	$(SMK) reproduce-all --cores all --configfile $(CONFIG) --report $(RUN_DIR)/report.html

figures: $(STAMP)  ## every paper figure and table from the shipped reference, no run: results/reference_figures/
	$(SMK) reference_figures --cores 1

verify: $(STAMP)  ## results/paper against the shipped reference, within measured tolerances (docs/reproducibility.md)
	$(BIN)/entropic-bound verify results/paper

quick: $(STAMP)  ## CI scale, about two minutes
	$(SMK) reproduce-all --cores all --configfile config/quick.yaml

test: $(STAMP)  ## lint, unit and property tests, the quick pipeline end to end
	$(SMK) --lint
	$(BIN)/snakefmt --check .
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q

test-install:  ## the wheel in a fresh venv, newest versions its ranges allow (torch: the lock's): unit tests, predict
	bash tests/packaging/install_test.sh $(PY)

bench: $(STAMP)  ## training-engine, frontier and predict benchmarks (one JSON line each)
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_frontier.py
	$(BIN)/python benchmarks/bench_predict.py

bench-gpu: $(STAMP)
	$(BIN)/python benchmarks/bench_gpu.py

test-cluster: $(STAMP)  ## the quick pipeline on a real local SLURM cluster (root only)
	bash tests/cluster/run_cluster_test.sh
