"""LiteLLM's proxy as a path of benchmarks/gateway_overhead.py: the anchor its numbers are read
beside, in front of the same echo node, on the same core as the gateway, in the same run.

LiteLLM speaks OpenAI HTTP to its upstream and the echo node speaks the Session RPC, so it sits in
front of a second null proxy that emits OpenAI chat chunks (benchmarks/null_proxy.py, `openai`)
on the node's core: its own work is what it adds beyond that hop, as the gateway's is beyond the
null proxy's. It is installed apart from the project (its dependencies pin versions of ours):

    python -m venv ~/.cache/hybridgw/litellm-proxy
    ~/.cache/hybridgw/litellm-proxy/bin/pip install 'litellm[proxy]==1.106.12'

(1.107.0 was a compromised release: pinned below it.) No key, one worker, no database, the model
cost map read from the package (it fetches nothing at start).
"""

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HOME = Path(os.environ.get("HYBRIDGW_HOME", Path.home() / ".cache" / "hybridgw"))
LITELLM = HOME / "litellm-proxy" / "bin" / "litellm"
ROOT = Path(__file__).resolve().parents[1]


def installed() -> bool:
    return LITELLM.exists()


def start_upstream(port: int, node_address: str, tokens: int, pin: list[str]) -> subprocess.Popen:
    """The null proxy in OpenAI's chunk format: what LiteLLM's `openai/` provider reads."""
    script = str(ROOT / "benchmarks" / "null_proxy.py")
    command = [*pin, sys.executable, script, str(port), node_address, str(tokens), "openai"]
    return subprocess.Popen(command, cwd=ROOT)


def start(port: int, upstream_port: int, pin: list[str]) -> subprocess.Popen:
    """`litellm --config` serving the model `bench` from the upstream, once it answers."""
    config = Path(tempfile.mkdtemp(prefix="overhead-litellm-")) / "config.yaml"
    config.write_text(
        "model_list:\n  - model_name: bench\n    litellm_params:\n      model: openai/bench\n"
        f"      api_base: http://127.0.0.1:{upstream_port}/v1\n      api_key: none\n"
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
    )
    environ = {
        **os.environ,
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",  # as the gateway here: no key
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR",
    }
    environ.pop("PYTHONPATH", None)  # its own venv, not the project's packages
    command = [*pin, str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--num_workers", "1"]
    log = open(config.with_name("litellm.log"), "w")  # noqa: SIM115 - lives with the process
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environ)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"LiteLLM's proxy exited: see {log.name}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/liveliness", timeout=2):
                return process
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"LiteLLM's proxy did not start: see {log.name}")
