# neom-sim: one command for the main job (make run), one for the tests (make test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: install run test test-slow bench lint clean-cache clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/neom catalog show

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python -m sim.bench

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean-cache:
	rm -rf .numba_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

clean: clean-cache
	rm -rf $(VENV)
