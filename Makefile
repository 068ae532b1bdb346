# The two quickstart commands: `make run` and `make test`.
.PHONY: run test test-unit lint setup-all setup-edge setup-test system-tools demo-model warm-kernels \
	staging staging-test staging-down

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

# The docker-compose staging on this machine (docker-compose.yml): images built on a local Debian
# base where no registry is reachable (scripts/base_image.sh), two gateway replicas behind haproxy,
# Redis with its ACL users, an edge node, two cloud workers, Prometheus. Needs a Docker engine.
# staging-test: a smoke test and injected faults against it (stdlib only: any python3 runs it).
# staging-down: removes its containers, networks and volumes (the images and caches stay).
STAGING_PY := $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

staging:
	@scripts/staging_up.sh

staging-test:
	@$(STAGING_PY) scripts/staging $(STAGING_TEST_ARGS)

staging-down:
	@docker compose --profile observability --profile vllm down --volumes --remove-orphans --timeout 20
