# entropic-bound: the commands a user runs. `make reproduce` and `make test` are the two that matter.
PY      ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SMK     := $(BIN)/snakemake

.PHONY: venv lock reproduce figures verify quick test test-install bench bench-gpu test-cluster

LOCK    := requirements/lock.txt
# the run's config: `make reproduce CONFIG=config/quick.yaml` (its run_name names results/<run_name>/)
CONFIG  ?= config/config.yaml
RUN_DIR  = results/$(shell sed -n 's/^run_name: *\([^ #]*\).*/\1/p' $(CONFIG))

# torch's CPU build (the lock's torch==<version>+cpu): PyPI's Linux wheel is the CUDA build
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first, from PyTorch's CPU index, its hash checked (the lock's torch lines)
	awk '/^torch==/ {p = 1; print; next} p && /^ +--hash/ {print; next} {p = 0}' $(LOCK) > $(VENV)/torch.txt
	$(BIN)/pip install --quiet --require-hashes --no-deps --index-url $(TORCH_INDEX) -r $(VENV)/torch.txt
	# then every other dependency (Snakemake, plotting, SLURM, test tools) at the lock's version,
	# each hash checked, nothing the lock does not name (--no-deps; pip check below)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(LOCK)
	# the project itself, editable (a source tree has no hash): its dependencies are all in
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	touch $(STAMP)

venv: $(STAMP)  ## create .venv and install the lock's exact versions, every hash checked (idempotent)

lock:  ## regenerate requirements/lock.txt with hashes (needs the network; requirements/lock.sh)
	bash requirements/lock.sh $(PY)

reproduce: $(STAMP)  ## paper scale (or CONFIG=...), every figure, table and claim verdict, and the report
	$(SMK) reproduce-all --cores all --configfile $(CONFIG)
	$(SMK) reproduce-all --cores all --configfile $(CONFIG) --report $(RUN_DIR)/report.html

figures: $(STAMP)  ## every paper figure and table from the shipped reference, no run: results/reference_figures/
	$(SMK) reference_figures --cores 1

verify: $(STAMP)  ## results/paper against the shipped reference, within measured tolerances (docs/reproducibility.md)
	$(BIN)/entropic-bound verify results/paper

quick: $(STAMP)  ## CI scale, 30-40 s on 2 cores (docs/notebook.md)
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
