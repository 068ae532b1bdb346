# The two quickstart commands: `make run` and `make test`.
.PHONY: run test test-unit lint setup-all setup-edge setup-test system-tools demo-model warm-kernels

PY := .venv/bin/python
HYBRIDGW := .venv/bin/hybridgw
PORT ?= 8080

setup-all:
	@scripts/setup.sh all

setup-edge:
	@scripts/setup.sh edge

setup-test:
	@scripts/setup.sh test

# chromium and the docker compose plugin, which the tests drive (installed only when missing)
system-tools: setup-test
	@scripts/setup_system_tools.sh

demo-model:
	@$(HYBRIDGW) model pull smollm2-135m

# the demo model's edge kernels compiled for this CPU, with progress (a first start's two minutes
# happen here, once; later they load from the cache in about a second)
warm-kernels: setup-all demo-model
	@$(HYBRIDGW) model warm smollm2-135m

# The whole platform on its embedded default (no Redis, no Docker): gateway + edge node + cloud engine.
run: setup-all demo-model warm-kernels
	@$(HYBRIDGW) up --port $(PORT)

lint: setup-test
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

# the demo model's kernels compiled before the suite, with progress and a bound of their own
# for every weight type, as the suite compiles them (tests/conftest.py; its warm_demo_kernels then
# only loads them)
test: setup-test system-tools demo-model lint
	@HYBRIDGW_KERNEL_TYPES=all timeout 1800 $(HYBRIDGW) model warm smollm2-135m
	@$(PY) -m pytest -q

# The fast tier: no node processes, Redis, Docker or browser (tests marked `integration` are left out,
# and a unit test that starts one fails: tests/conftest.py), nor the few marked `slow`.
test-unit: setup-test
	@HYBRIDGW_TEST_TIER=unit $(PY) -m pytest -q -m "not integration and not slow" --durations=15
