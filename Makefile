# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	-$(BIN)/python -m tilecc.viz.assets  # the pages' layout engine (npm) into ~/.cache/tilecc; tests skip without it
	touch $@

run: $(VENV)/.installed
	$(BIN)/tilecc demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n auto

bench: $(VENV)/.installed-test
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
