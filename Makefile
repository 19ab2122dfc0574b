VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test fuzz lint bench clean

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

# The fuzz suite at full size: FUZZ_EXAMPLES mutated cases over every verb plus the whole
# hostile-file matrix, each bounded in time and memory; prints cases per verb, the exit-code
# histogram and the longest case, and lists every case that broke the contract.
FUZZ_EXAMPLES ?= 9500
fuzz: $(TEST_STAMP)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_MATRIX=full FUZZ_KEEP_GOING=1 FUZZ_STATS=1 \
		$(PY) -m pytest -q -p no:cacheprovider tests/fuzz

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
