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

# Until the gateway lands: fetch the demo model, show it, and run its chat template and tokenizer.
run: setup-edge demo-model
	@$(HYBRIDGW) model inspect "$$($(HYBRIDGW) model path)" | head -n 30
	@$(HYBRIDGW) tokenize --chat --model "$$($(HYBRIDGW) model path)" "$(PROMPT)"

lint: setup-test
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .

test: setup-test demo-model lint
	@$(PY) -m pytest -q
