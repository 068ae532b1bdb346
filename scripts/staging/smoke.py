"""The staging smoke test: every API answers through the load balancer, both tiers serve, a
private request stays on the edge, the replicas share their rate limits through Redis,
Prometheus scrapes every service, and each replica's privacy ledger verifies and holds every
receipt a client was given."""

import json
import uuid
from concurrent.futures import ThreadPoolExecutor

from client import (
    GATEWAYS,
    LEDGER,
    LIMITED_KEY,
    MODEL,
    Reply,
    call,
    compose,
    containers,
    prometheus_query,
    prometheus_targets,
    wait_until,
)

MESSAGES = [{"role": "user", "content": "Name three colors."}]
CHAT = {"model": MODEL, "messages": MESSAGES, "max_tokens": 8, "temperature": 0}
# (method, path, body): every API the gateway serves, each answered 200 through the load balancer
APIS = [
    ("GET", "/", None),
    ("GET", "/status", None),
    ("GET", "/health/ready", None),
    ("GET", "/metrics", None),
    ("GET", "/openapi.json", None),
    ("GET", "/v1/models", None),
    ("GET", f"/v1/models/{MODEL}", None),
    ("GET", f"/tokenizer_info?model={MODEL}", None),
    ("POST", "/tokenize", {"model": MODEL, "prompt": "hello world"}),
    ("POST", "/detokenize", {"model": MODEL, "tokens": [28120, 905]}),
    ("POST", "/v1/chat/completions", CHAT),
    ("POST", "/v1/chat/completions", {**CHAT, "stream": True}),
    ("POST", "/v1/completions", {"model": MODEL, "prompt": "Colors:", "max_tokens": 8, "temperature": 0}),
    ("POST", "/v1/responses", {"model": MODEL, "input": "Name three colors.", "max_output_tokens": 8}),
    ("POST", "/v1/messages", {"model": MODEL, "messages": MESSAGES, "max_tokens": 8}),
    ("POST", "/v1/messages/count_tokens", {"model": MODEL, "messages": MESSAGES}),
    ("POST", "/v1/embeddings", {"model": MODEL, "input": "hello"}),
    (
        "POST",
        "/api/chat",
        {"model": MODEL, "messages": MESSAGES, "stream": False, "options": {"num_predict": 8}},
    ),
    (
        "POST",
        "/api/generate",
        {"model": MODEL, "prompt": "Colors:", "stream": False, "options": {"num_predict": 8}},
    ),
]
# Prometheus jobs and how many targets each must have up (cloud: as many as run); every target
# of these jobs must be up, and only the compose profiles' jobs may have targets down
SCRAPED_JOBS = {"gateway": len(GATEWAYS), "lb": 1, "edge": 1, "redis": 1, "prometheus": 1}
PROFILE_JOBS = {"vllm", "otel-collector"}  # deploy/prometheus.yml: scraped where their profile runs


def _ask(method: str, path: str, body: dict | None, headers: dict | None = None) -> Reply:
    """A 503 is sent again for up to a minute: a replica that just started may not have heard
    from every node yet, and a node its failures took out (on this busy machine, a slow one) is
    back after its cooldown."""
    headers = {"anthropic-version": "2023-06-01", **(headers or {})}

    def answered() -> Reply | None:
        reply = call(method, path, body, headers)
        return None if reply.status == 503 else reply

    return wait_until(answered, 60, f"{method} {path} to answer")


def check_every_api(receipts: set[str]) -> list[str]:
    lines = []
    for method, path, body in APIS:
        reply = _ask(method, path, body)
        assert reply.status == 200, (method, path, reply.status, reply.body[:300])
        if reply.headers.get("X-Hybridgw-Privacy-Receipt"):
            receipts.add(reply.headers["X-Hybridgw-Privacy-Receipt"])
        lines.append(f"{method} {path}: 200 via {reply.headers.get('X-Hybridgw-Replica')}")
    return lines


def check_both_tiers(receipts: set[str]) -> str:
    """Concurrent requests with a target every node meets fill the edge's free slots (the edge
    first: it is the cheaper tier); the rest go to the cloud workers' free slots."""
    body = {**CHAT, "max_tokens": 32}
    headers = {"X-Hybridgw-Latency-Target-Ms": "30000"}
    targets: set[str] = set()
    for _ in range(4):
        with ThreadPoolExecutor(12) as pool:
            replies = list(pool.map(lambda _: call("POST", "/v1/chat/completions", body, headers), range(12)))
        for reply in replies:
            assert reply.status == 200, reply.body[:300]
            targets.add(reply.headers["X-Hybridgw-Target"])
            receipts.add(reply.headers["X-Hybridgw-Privacy-Receipt"])
        if {"edge", "cloud"} <= targets:
            return f"tiers used: {sorted(targets)}"
    raise AssertionError(f"both tiers should serve 12 concurrent requests; only {sorted(targets)} did")


def check_private_stays_on_edge(receipts: set[str]) -> str:
    private = _ask("POST", "/v1/chat/completions", CHAT, headers={"X-Hybridgw-Privacy": "private"})
    detected = {
        **CHAT,
        "messages": [{"role": "user", "content": "My IBAN is DE89 3704 0044 0532 0130 00, is it valid?"}],
    }
    found = _ask("POST", "/v1/chat/completions", detected)
    for reply in (private, found):
        assert reply.status == 200 and reply.headers["X-Hybridgw-Target"] == "edge", (
            reply.status,
            reply.headers,
        )
        receipts.add(reply.headers["X-Hybridgw-Privacy-Receipt"])
    return "private (header) and private (an IBAN found) both served on the edge"


def check_shared_rate_limit(receipts: set[str]) -> str:
    """5 a minute per end user, counted in Redis: 8 requests over both replicas get 5 answers."""
    body = {**CHAT, "max_tokens": 1, "user": f"staging-test-{uuid.uuid4().hex[:8]}"}
    replies = [call("POST", "/v1/chat/completions", body, key=LIMITED_KEY) for _ in range(8)]
    statuses = [reply.status for reply in replies]
    replicas = {reply.headers.get("X-Hybridgw-Replica") for reply in replies}
    receipts.update(r.headers["X-Hybridgw-Privacy-Receipt"] for r in replies if r.status == 200)
    assert statuses.count(200) == 5 and statuses.count(429) == 3, statuses
    assert replicas == set(GATEWAYS), f"both replicas should answer: {replicas}"
    return f"limited key over {sorted(replicas)}: {statuses.count(200)} x 200, {statuses.count(429)} x 429"


def check_prometheus_scrapes_every_service() -> str:
    expected = {**SCRAPED_JOBS, "cloud": len(containers("cloud"))}

    def all_up():
        up: dict[str, int] = {}
        for target in prometheus_targets():
            job = target["labels"]["job"]
            assert job in expected or job in PROFILE_JOBS, f"a target of an unknown job: {target}"
            if target["health"] != "up" and job in expected:
                return None
            up[job] = up.get(job, 0) + (target["health"] == "up")
        return up if all(up.get(job, 0) == n for job, n in expected.items()) else None

    up = wait_until(all_up, 90, f"Prometheus to scrape {expected}", interval_s=2)
    # the exporter answering is not enough: it must reach Redis as its ACL user
    redis_up = wait_until(lambda: prometheus_query("redis_up") or None, 30, "redis_up in Prometheus")
    assert [sample["value"][1] for sample in redis_up] == ["1"], redis_up
    targets = ", ".join(f"{job} {up[job]}" for job in sorted(expected))
    return f"Prometheus targets up: {targets}; redis_up 1 (the exporter reaches Redis)"


def ledger_receipts() -> set[str]:
    """Every replica's ledger verifies (`hybridgw audit verify`); the receipts they hold."""
    held: set[str] = set()
    for gateway in GATEWAYS:
        compose("exec", "-T", gateway, "hybridgw", "audit", "verify", "--ledger", LEDGER)
        for line in compose("exec", "-T", gateway, "cat", LEDGER).splitlines():
            held.add(json.loads(line)["receipt"])
    return held


def check_ledger(receipts: set[str]) -> str:
    missing = receipts - ledger_receipts()
    assert not missing, f"receipts given to clients but not in a ledger: {sorted(missing)[:5]}"
    return f"ledgers of {', '.join(GATEWAYS)} verify and hold all {len(receipts)} receipts clients got"


def run() -> set[str]:
    receipts: set[str] = set()
    for line in check_every_api(receipts):
        print("  " + line)
    for check in (check_both_tiers, check_private_stays_on_edge, check_shared_rate_limit):
        print("  " + check(receipts))
    print("  " + check_prometheus_scrapes_every_service())
    print("  " + check_ledger(receipts))
    return receipts
