VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lint bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

# The main job: the built-in scenario, device plugin against DRA, with the HTML report.
demo: $(STAMP)
	$(VENV)/bin/dralab simulate --out dralab-report
	@echo "open dralab-report/index.html"

test: $(TEST_STAMP)
	$(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_cel.py
	$(PY) benchmarks/bench_allocator.py
	$(PY) benchmarks/bench_scheduler.py
	$(PY) benchmarks/bench_simulate.py
	$(PY) benchmarks/bench_replay.py
	$(PY) benchmarks/bench_fleet.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
