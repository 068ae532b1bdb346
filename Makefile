# The two quickstart commands: `make run` and `make test`.
.PHONY: run test lint setup-edge setup-test demo-model

PY := .venv/bin/python
HYBRIDGW := .venv/bin/hybridgw
PROMPT ?= What is the capital of France?

setup-edge:
	@scripts/setup.sh edge

setup-test:
	@scripts/setup.sh test

demo-model:
	@$(HYBRIDGW) model pull smollm2-135m

# Until the gateway lands: fetch the demo model and answer PROMPT with it on the edge engine.
run: setup-edge demo-model
	@$(HYBRIDGW) run --chat --verbose --model "$$($(HYBRIDGW) model path)" -n 128 --temperature 0.3 --seed 0 \
		-p "$(PROMPT)"

lint: setup-test
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

test: setup-test demo-model lint
	@$(PY) -m pytest -q
