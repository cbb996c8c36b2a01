# neom-sim: one command for the main job (make run), one for the tests (make test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PY_DIRS := sim strategies analysis tests
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: install run test test-slow bench bench-compile bench-report lint clean-cache clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

install: $(STAMP)

# The main job: simulate the default field, then write its design report.
RUN_NAME ?= default
RUN_PLAYERS ?= 4
RUN_GAMES ?= 20000
RUN_STRATEGIES ?= greedy,builder,merchant,industrialist
RUN_SEED ?= 1

run: $(STAMP)
	$(BIN)/neom simulate --players $(RUN_PLAYERS) --games $(RUN_GAMES) \
		--strategies $(RUN_STRATEGIES) --seed $(RUN_SEED) --events --overwrite --out runs/$(RUN_NAME)
	$(BIN)/neom report runs/$(RUN_NAME) --out reports/$(RUN_NAME)

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# Engine speed on one core (bench/results.json), each strategy's games/s on one core
# (bench/strategies.json), runner scaling and memory (bench/runner.json), then Tangram City's
# games/s per strategy and player count (bench/tangram.json).
bench: $(STAMP)
	$(BIN)/python -m sim.tools.bench
	$(BIN)/python -m strategies.tools.bench
	$(BIN)/python -m sim.tools.bench_runner
	$(BIN)/python -m sim.tangram.bench

# The cold compile a new user waits through (fresh process, empty cache; bench/compile.json)
bench-compile: $(STAMP)
	$(BIN)/python -m sim.tools.bench_compile

# neom report's peak memory and games/s on random 4-player runs of 150,000 and 1,000,000 games
# with events and 1,000,000 without (bench/report.json; plays the runs first: ~1 GB of
# disk while it runs, deleted after).
bench-report: $(STAMP)
	$(BIN)/python -m analysis.tools.bench_report

lint: $(STAMP)
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)

clean-cache:
	rm -rf .numba_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

clean: clean-cache
	rm -rf $(VENV)
