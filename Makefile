# neom-sim: one command for the main job (make run), one for the tests (make test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PY_DIRS := sim strategies analysis tests
# The compile cache: NUMBA_CACHE_DIR when set, else one folder per user
# (~/.cache/neom-sim/numba) that every clone and worktree of the same code shares (sim/__init__.py).

.PHONY: install run run-tangram browser test test-slow bench bench-compile bench-openspiel bench-report lint clean-cache clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

# Installs what is missing, then compiles every game's entries into the compile cache, one
# process per core (only what the cache lacks: a no-op after the first time, a resume after an
# interruption), so that no later command waits for the compiler. A piece that fails to compile
# is named and left out (the commands and tests that use it then show its error in full).
install: $(STAMP)
	$(BIN)/python -m sim.tools.build_cache || echo "make: the compile cache lacks the pieces named above"

# The main job: simulate the strong field (the verified tuned sets) and the archetype field on
# the same catalogue, then write the design report with every finding marked against the other
# field (robust, weaker/stronger, vanishes/appears, reversed: neom report --check). The strong
# field is read first: its tile flags recur on independent seeds and it makes every good, so a
# broken production chain shows in its economy (the archetypes never make some goods at all);
# the archetype field says which findings are about the players. Both fields play the same
# number of games: their effects' intervals are then about as wide (the report quotes both), on
# the same deals (same seed). RUN_CHECK_STRATEGIES= skips the check field.
RUN_NAME ?= default
RUN_PLAYERS ?= 4
RUN_GAMES ?= 20000
RUN_STRATEGIES ?= strong
RUN_SEED ?= 1
RUN_CHECK_STRATEGIES ?= greedy,builder,merchant,industrialist
RUN_CHECK_GAMES ?= $(RUN_GAMES)
RUN_CHECK_SEED ?= $(RUN_SEED)
RUN_CHECK := $(if $(strip $(RUN_CHECK_STRATEGIES)),--check runs/$(RUN_NAME)-check)
# VP equivalents of the report's top flagged items from their own paired slope (neom report
# --probe: 1-3 x 8,000 games of the main field each, about half a minute an item on 2 cores),
# cached in the report folder; RUN_PROBE=0 reads them off the owners' score lead instead.
RUN_PROBE ?= 3

run: install
	$(BIN)/neom simulate --players $(RUN_PLAYERS) --games $(RUN_GAMES) \
		--strategies $(RUN_STRATEGIES) --seed $(RUN_SEED) --events --overwrite --out runs/$(RUN_NAME)
ifneq ($(strip $(RUN_CHECK_STRATEGIES)),)
	$(BIN)/neom simulate --players $(RUN_PLAYERS) --games $(RUN_CHECK_GAMES) \
		--strategies $(RUN_CHECK_STRATEGIES) --seed $(RUN_CHECK_SEED) --events --overwrite \
		--out runs/$(RUN_NAME)-check
endif
	$(BIN)/neom report runs/$(RUN_NAME) $(RUN_CHECK) --probe $(RUN_PROBE) --out reports/$(RUN_NAME)

# Tangram City's main job: its default field (planner, greedy, greedy, random; 4 players, seats
# rotated, with events) and its check field, the strong field (per player count its verified
# tuned planner set, else the default planner: docs/tangram.md) on the same deals, then the
# report with every finding marked against the other field (neom report --check). Small by
# default so that it finishes in some minutes on 2 cores (the planner seats set the pace: the
# strong field is about 4 times slower than the default one); TANGRAM_GAMES=20000 for intervals
# about a third as wide, TANGRAM_CHECK_STRATEGIES= skips the check field.
TANGRAM_NAME ?= tangram
TANGRAM_PLAYERS ?= 4
TANGRAM_GAMES ?= 2000
TANGRAM_STRATEGIES ?= planner,greedy,greedy,random
TANGRAM_SEED ?= 1
TANGRAM_CHECK_STRATEGIES ?= strong
TANGRAM_CHECK_GAMES ?= $(TANGRAM_GAMES)
TANGRAM_CHECK := $(if $(strip $(TANGRAM_CHECK_STRATEGIES)),--check runs/$(TANGRAM_NAME)-check)

run-tangram: install
	$(BIN)/neom simulate --game tangram --players $(TANGRAM_PLAYERS) --games $(TANGRAM_GAMES) \
		--strategies $(TANGRAM_STRATEGIES) --seed $(TANGRAM_SEED) --events --overwrite \
		--out runs/$(TANGRAM_NAME)
ifneq ($(strip $(TANGRAM_CHECK_STRATEGIES)),)
	$(BIN)/neom simulate --game tangram --players $(TANGRAM_PLAYERS) \
		--games $(TANGRAM_CHECK_GAMES) --strategies $(TANGRAM_CHECK_STRATEGIES) \
		--seed $(TANGRAM_SEED) --events --overwrite --out runs/$(TANGRAM_NAME)-check
endif
	$(BIN)/neom report runs/$(TANGRAM_NAME) $(TANGRAM_CHECK) --out reports/$(TANGRAM_NAME)

# The report of `make run` in headless Chromium: loads with no error, every image and internal
# link resolves, no table wider than the page; screenshots of its top, economy and robustness
# sections in reports/$(RUN_NAME)-browser/.
browser: $(STAMP)
	$(BIN)/python -m analysis.tools.browser_check reports/$(RUN_NAME) \
		--screenshots reports/$(RUN_NAME)-browser

# One pytest worker per core (pytest-xdist); a test file stays on one worker, so its
# module fixtures (simulated runs) are made once. Files are handed out in file-name order:
# xdist's default order (most tests first) leaves the files of a few long process-level tests
# (test_hostile_writers, test_jit) to the end, where one worker runs them while the other
# idles (about 5 s of wall: docs/performance-log.md).
# Bytecode is cached for the tests' processes even where the environment turns it off
# (PYTHONDONTWRITEBYTECODE, as on some CI machines): without it every worker and every Python a
# test starts compiles the project's modules from source, and pytest rewrites every test
# module's asserts again (its rewrite cache is bytecode too), about half of a worker's
# collection CPU (docs/performance-log.md). It is written where Python writes it by default
# (__pycache__ beside the sources, ignored by git, removed by make clean-cache): a
# PYTHONPYCACHEPREFIX elsewhere would make every fresh process ignore the bytecode pip wrote for
# numba, pandas and the rest and compile them again (about 7 s of CPU a process on a fresh clone).
TEST_ENV := PYTHONDONTWRITEBYTECODE=
TEST_WORKERS ?= auto
test: install
	$(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test-slow: install
	$(TEST_ENV) $(BIN)/python -m pytest -q -m slow

# Engine speed on one core (bench/results.json), each strategy's games/s on one core
# (bench/strategies.json), runner scaling and memory (bench/runner.json), then Tangram City's
# games/s per strategy and player count (bench/tangram.json).
bench: $(STAMP)
	$(BIN)/python -m sim.tools.bench
	$(BIN)/python -m strategies.tools.bench
	$(BIN)/python -m sim.tools.bench_runner
	$(BIN)/python -m sim.tangram.bench

# NEOM's random and greedy 4-player games per CPU-second (neom simulate on one core, Parquet
# included) against OpenSpiel's hearts by Python-driven random rollouts, alternated on one core
# (bench/openspiel.json; installs the optional pyspiel first)
bench-openspiel: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m sim.tools.bench_openspiel

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

# This project's entries of the compile cache (and the in-checkout folder of earlier versions).
clean-cache:
	if test -x $(BIN)/python; then $(BIN)/python -m sim.tools.build_cache --clean; fi
	rm -rf .numba_cache
	find $(PY_DIRS) -name __pycache__ -type d -prune -exec rm -rf {} +

clean: clean-cache
	rm -rf $(VENV)
