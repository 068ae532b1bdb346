"""`hybridgw up`: one command runs gateway, edge node and cloud engine on the demo model."""

import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import typing

import openai
import pytest
import requests

from tests.fixtures.cli import run_hybridgw
from tests.fixtures.edge_node import free_port
from tests.fixtures.process_logs import logged_port


class Up:
    """`hybridgw up` as a user runs it, in its own process tree."""

    started: typing.ClassVar[list["Up"]] = []  # killed after each test, whatever its outcome

    def __init__(self, *args: str):
        Up.started.append(self)
        if "--privacy-ledger" not in args:  # its own ledger: one writer per ledger file
            self.ledger_folder = tempfile.TemporaryDirectory(prefix="hybridgw-ledger-")
            args = (*args, "--privacy-ledger", f"{self.ledger_folder.name}/privacy-ledger.jsonl")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hybridgw", "up", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        threading.Thread(target=lambda: self.out.extend(self.process.stdout), daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.process.stderr), daemon=True).start()

    def wait_listening(self) -> str:
        """The gateway's URL, once it listens (it binds port 0 and logs the port it got)."""
        deadline = time.monotonic() + 300
        while (port := logged_port(self.err, service="gateway")) is None:
            assert self.process.poll() is None, "".join(self.err[-20:])
            assert time.monotonic() < deadline, "hybridgw up did not listen"
            time.sleep(0.2)
        return f"http://127.0.0.1:{port}"

    def wait_ready(self, url: str) -> None:
        deadline = time.monotonic() + 300
        while True:
            assert self.process.poll() is None, "".join(self.err[-20:])
            assert time.monotonic() < deadline, "hybridgw up did not become ready"
            try:
                if requests.get(f"{url}/health/ready", timeout=1).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=60)


@pytest.fixture(autouse=True)
def no_up_outlives_its_test():
    yield
    while Up.started:
        process = Up.started.pop().process
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # up stops its nodes
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _chat(client: openai.OpenAI, headers: dict[str, str]) -> str:
    raw = client.chat.completions.with_raw_response.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "Say hi"}],
        max_tokens=4,
        temperature=0,
        extra_headers=headers,
    )
    assert raw.parse().choices[0].message.content  # the demo model greets back, greedily
    return raw.headers["X-Hybridgw-Target"]


@pytest.mark.integration
@pytest.mark.demo_model
def test_up_serves_both_targets_and_stops_cleanly(demo_model_path):
    up = Up("--port", "0")
    url = up.wait_listening()
    up.wait_ready(url)
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)
    assert _chat(client, {"X-Hybridgw-Privacy": "private"}) == "edge"
    # the cloud engine loads after the edge is up (the gateway serves on the edge meanwhile)
    assert _cloud_health(url) in {"starting", "healthy"}
    deadline = time.monotonic() + 300
    while _cloud_health(url) != "healthy":
        assert time.monotonic() < deadline and up.process.poll() is None, "the cloud engine never joined"
        time.sleep(0.2)
    assert any("cloud engine is ready" in line for line in up.err)
    _chat(client, {"X-Hybridgw-Latency-Target-Ms": "1"})
    assert any("smollm2-135m" in line for line in up.out) and any("curl" in line for line in up.out)
    assert up.stop() == 0


def _cloud_health(url: str) -> str:
    nodes = requests.get(f"{url}/status", timeout=5).json()["nodes"]
    (health,) = [node["health"] for node in nodes if node["id"] == "cloud-local"]
    return health


@pytest.mark.demo_model
def test_up_with_a_config_file_uses_its_keys_routing_and_redis(
    demo_model_path, redis_url, redis_keys, tmp_path
):
    from gateway.access.api_keys import hash_key

    config = tmp_path / "gateway.toml"
    config.write_text(
        f"""
[gateway]
port = 0

[routing]
latency_target_ms = 1

[cloud]
redis_url = "{redis_url}"
prefix = "{redis_keys.prefix}"

[[upstreams]]
id = "vllm-eyes"
url = "http://127.0.0.1:{free_port()}/v1"
kind = "cloud"
api = "chat"
capabilities = ["vision"]

[[keys]]
id = "vault"
sha256 = "{hash_key("sk-vault")}"
tenant = "bank"
privacy_mode = "always_private"

[[keys]]
id = "web"
sha256 = "{hash_key("sk-web")}"
tenant = "site"
privacy_mode = "public"
"""
    )
    up = Up("--config", str(config), "--edge-slots", "1")
    url = up.wait_listening()
    up.wait_ready(url)
    base = f"{url}/v1"
    vault = openai.OpenAI(base_url=base, api_key="sk-vault", max_retries=0)
    assert _chat(vault, {}) == "edge"
    # the edge's one slot busy with a long private request: a public request, whose 1 ms target
    # no node meets, goes where it is predicted to finish first, the idle cloud worker on Redis
    long_private = vault.chat.completions.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "Write a long story."}],
        max_tokens=400,
        stream=True,
    )
    next(iter(long_private))  # counted on the edge by this gateway since it was routed there
    web = openai.OpenAI(base_url=base, api_key="sk-web", max_retries=0)
    assert _chat(web, {}) == "cloud"
    long_private.close()
    workers = requests.get(f"{url}/status", timeout=5).json()["nodes"]
    assert {n["id"] for n in workers} >= {"edge-local"} and any(n["kind"] == "cloud" for n in workers)
    eyes = next(n for n in workers if n["id"] == "vllm-eyes")  # the upstream: known, not up
    assert (eyes["kind"], eyes["health"], eyes["capabilities"]) == ("cloud", "down", ["vision"])
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=base, api_key="sk-nobody", max_retries=0).models.list()
    assert any("Authorization: Bearer" in line for line in up.out)
    assert up.stop() == 0


@pytest.mark.integration
def test_up_refuses_a_bad_config_file_naming_the_field(tmp_path):
    config = tmp_path / "gateway.toml"
    config.write_text("[routing]\ncooldown_s = 'soon'\n")
    result = run_hybridgw("up", "--config", str(config), timeout=120)
    assert result.returncode == 1
    assert "routing.cooldown_s: expected" in result.stderr and "Traceback" not in result.stderr
    assert "starting the edge node" not in result.stderr


@pytest.mark.integration
def test_up_on_a_busy_port_says_so_before_starting_anything():

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_hybridgw("up", "--port", str(port), timeout=120)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr
    assert "starting the edge node" not in result.stderr


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.integration
@pytest.mark.demo_model
def test_the_nodes_die_with_up_even_when_it_is_killed(demo_model_path):
    from hybridgw.up_command import EDGE_ALONE_QUEUE_BOUND

    up = Up("--port", "0", "--no-cloud")
    url = up.wait_listening()
    status = requests.get(f"{url}/status", timeout=10).json()  # alone, the edge queues a burst
    assert [(node["id"], node["queue_bound"]) for node in status["nodes"]] == [
        ("edge-local", EDGE_ALONE_QUEUE_BOUND)
    ]
    nodes = _children(up.process.pid)
    assert nodes and all(_alive(node) for node in nodes)  # the edge node
    up.process.kill()  # SIGKILL: up cannot stop them itself
    up.process.wait(timeout=10)
    deadline = time.monotonic() + 60
    while any(_alive(node) for node in nodes):
        assert time.monotonic() < deadline, "a node outlived hybridgw up"
        time.sleep(0.1)


@pytest.mark.integration
@pytest.mark.demo_model
def test_guidellm_benchmarks_a_live_up_unchanged(demo_model_path, tmp_path):
    """guidellm as its users run it (validation on, streaming chat, vLLM's continuous usage
    stats, ignore_eos), with the demo model's tokenizer exported as Hugging Face files."""
    import json

    tokenizer_dir = tmp_path / "tokenizer"
    export = [sys.executable, "-m", "hybridgw", "model", "export-tokenizer", str(demo_model_path)]
    subprocess.run([*export, "--out", str(tokenizer_dir)], check=True, timeout=120)
    up = Up("--port", "0")
    url = up.wait_listening()
    up.wait_ready(url)
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "guidellm", "run", f"--backend=kind=openai_http,target={url}"]
    command += ["--profile=kind=synchronous", "--constraint=kind=max_requests,count=4"]
    command += ["--data=kind=synthetic_text,prompt_tokens=32,output_tokens=8"]
    command += [f"--tokenizer=kind=hf_auto,model={tokenizer_dir}", "--disable-console"]
    command += [f"--output=kind=json,path={report}"]
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert up.stop() == 0
    assert run.returncode == 0, run.stderr[-2000:]
    requests_ = json.loads(report.read_text())["benchmarks"][0]["requests"]
    assert requests_["errored"] == [] and requests_["incomplete"] == []
    assert len(requests_["successful"]) >= 3
    assert {r["output_tokens"] for r in requests_["successful"]} == {8}
