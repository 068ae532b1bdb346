"""A staging client on the standard library alone (any python3 runs `make staging-test`): plain
requests, streamed chat completions read event by event, `docker compose` and Prometheus."""

import http.client
import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

PORT = int(os.environ.get("HYBRIDGW_PORT", "8080"))
BASE_URL = f"http://127.0.0.1:{PORT}"
PROMETHEUS_URL = f"http://127.0.0.1:{int(os.environ.get('PROMETHEUS_PORT', '9090'))}"
API_KEY = os.environ.get("STAGING_API_KEY", "sk-staging-change-me")
LIMITED_KEY = "sk-staging-limited"  # deploy/gateway.toml: 5 requests a minute per end user
MODEL = "smollm2-135m"
LEDGER = "/var/lib/hybridgw/ledger/privacy-ledger.jsonl"
GATEWAYS = ("gateway-1", "gateway-2")


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage  # case-insensitive (haproxy sends names in lower case)
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)


def call(method: str, path: str, body: dict | None = None, headers: dict | None = None, key=API_KEY) -> Reply:
    """One request through the load balancer; an HTTP error is a Reply too."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE_URL + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return Reply(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, error.headers, error.read())


@dataclass
class Stream:
    """What a client saw of one streamed chat completion (one attempt)."""

    status: int = 0
    deltas: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None  # an error event, a non-200 answer, or the connection's failure
    is_done: bool = False  # the `data: [DONE]` line came
    receipt: str | None = None
    target: str | None = None
    replica: str | None = None
    retry_after_s: float | None = None  # a busy answer's Retry-After (429, 503)


def stream_chat(messages: list[dict], max_tokens: int, headers: dict | None = None) -> Stream:
    body = {"model": MODEL, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True}
    seen = Stream()
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=300)
    try:
        all_headers = {
            "Authorization": f"Bearer {API_KEY}",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        connection.request("POST", "/v1/chat/completions", json.dumps(body), all_headers)
        response = connection.getresponse()
        seen.status = response.status
        seen.receipt = response.getheader("X-Hybridgw-Privacy-Receipt")
        seen.target = response.getheader("X-Hybridgw-Target")
        seen.replica = response.getheader("X-Hybridgw-Replica")
        if response.getheader("Retry-After"):
            seen.retry_after_s = float(response.getheader("Retry-After"))
        if response.status != 200:
            seen.error = f"HTTP {response.status}: {response.read()[:200]!r}"
            return seen
        _read_events(response, seen)
    except (OSError, http.client.HTTPException) as error:
        seen.error = seen.error or f"connection: {type(error).__name__}: {error}"
    finally:
        connection.close()
    return seen


def _read_events(response: http.client.HTTPResponse, seen: Stream) -> None:
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            seen.is_done = True
            return
        event = json.loads(payload)
        if "error" in event:
            seen.error = json.dumps(event["error"])[:200]
            continue
        for choice in event.get("choices", []):
            if choice.get("delta", {}).get("content"):
                seen.deltas.append(choice["delta"]["content"])
            seen.finish_reason = choice.get("finish_reason") or seen.finish_reason


def compose(*args: str, check: bool = True) -> str:
    result = subprocess.run(
        ["docker", "compose", *args], capture_output=True, text=True, timeout=600, check=False
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"docker compose {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def containers(service: str) -> list[str]:
    """The running containers of a compose service, by name."""
    return sorted(compose("ps", "--format", "{{.Name}}", service).split())


def docker(*args: str) -> None:
    subprocess.run(["docker", *args], capture_output=True, check=True, timeout=120)


def prometheus_targets() -> list[dict]:
    with urllib.request.urlopen(f"{PROMETHEUS_URL}/api/v1/targets?state=active", timeout=10) as response:
        return json.loads(response.read())["data"]["activeTargets"]


def prometheus_query(expression: str) -> list[dict]:
    """An instant query's samples."""
    query = urllib.parse.urlencode({"query": expression})
    with urllib.request.urlopen(f"{PROMETHEUS_URL}/api/v1/query?{query}", timeout=10) as response:
        return json.loads(response.read())["data"]["result"]


def wait_until(predicate, timeout_s: float, what: str, interval_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(interval_s)
