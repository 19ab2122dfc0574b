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

# Until the simulator lands, the demo validates the bundled fleet and allocates example claims,
# also against the built-in default fleet.
demo: $(STAMP)
	$(VENV)/bin/dralab validate -f examples/fleet/
	mkdir -p build && $(VENV)/bin/dralab fleet --default > build/default-fleet.yaml
	$(VENV)/bin/dralab validate -f build/default-fleet.yaml
	$(VENV)/bin/dralab allocate -f build/default-fleet.yaml -f examples/claims/two-h100.yaml --node h100-node-01
	$(VENV)/bin/dralab allocate -f examples/fleet/ -f examples/claims/mig-mixed.yaml --node a100-mig-node-01
	-$(VENV)/bin/dralab allocate -f examples/fleet/ -f examples/claims/two-gpus-one-pcie-root.yaml --node h100-node-01

test: $(TEST_STAMP)
	$(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_cel.py
	$(PY) benchmarks/bench_allocator.py
	$(PY) benchmarks/bench_fleet.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
