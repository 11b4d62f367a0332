# Two entry points: `make test` and `make report`. Both create .venv on first use and
# (re)install the project only when pyproject.toml changed since the last install.
PYTHON ?= python3
# Worker processes for the report's Monte-Carlo sweeps (CI machines have 2 cores); results do not depend on it.
WORKERS ?= 2
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fedcheck-installed

.PHONY: test report install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow" --hypothesis-profile=ci -p no:cacheprovider

report: $(STAMP)
	$(BIN)/fedcheck report --profile thorough --workers $(WORKERS)

clean:
	rm -rf $(VENV) reports/out
