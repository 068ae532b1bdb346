"""Faults injected while 32 clients stream chat completions through the load balancer: a cloud
worker killed, Redis restarted, a gateway replica killed (its clients retry through the load
balancer), the cloud workers scaled to 3 and back to 1. Every attempt must end complete or with
an error event and `[DONE]` (a cut connection only where its replica was killed), no stream may
carry more tokens than it asked for (no token sent twice), every client must finish its request
in the end, and every receipt a client got must be in a replica's ledger that verifies.
Prints what was injected and what the clients saw meanwhile."""

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from client import Stream, compose, containers, docker, stream_chat
from smoke import ledger_receipts

NUM_CLIENTS = 32
MAX_TOKENS = 48
MAX_ATTEMPTS = 6  # failed attempts of one request (busy answers aside) before its client gives up
REQUEST_DEADLINE_S = 240.0
PROMPT = [{"role": "user", "content": "Count from one to one hundred in words, separated by commas."}]
GAP_S = 8.0  # between two faults


@dataclass
class Attempt:
    started: float
    ended: float
    seen: Stream


@dataclass
class ClientLog:
    """One client's requests, each tried until it completes (a failed attempt is sent again)."""

    attempts: list[Attempt] = field(default_factory=list)
    num_completed: int = 0
    num_abandoned: int = 0


def _client(log: ClientLog, stop: threading.Event) -> None:
    while not stop.is_set() or (log.num_completed == 0 and log.num_abandoned == 0):
        num_failures = 0
        deadline = time.monotonic() + REQUEST_DEADLINE_S
        while num_failures < MAX_ATTEMPTS and time.monotonic() < deadline:
            started = time.monotonic()
            seen = stream_chat(PROMPT, MAX_TOKENS)
            log.attempts.append(Attempt(started, time.monotonic(), seen))
            if seen.finish_reason in ("length", "stop") and seen.error is None and seen.is_done:
                log.num_completed += 1
                break
            if seen.status in (429, 503) and seen.retry_after_s is not None:
                time.sleep(min(seen.retry_after_s, 5.0))  # busy: back off as told, not a failure
                continue
            num_failures += 1
            time.sleep(1.0)  # then again, through the load balancer
        else:
            log.num_abandoned += 1


def _inject(events: list[tuple[float, str]], kills: list[tuple[float, str]]) -> None:
    def fault(what: str, *command: str) -> None:
        events.append((time.monotonic(), what))
        print(f"  injecting: {what}", flush=True)
        if command[0] == "compose":
            compose(*command[1:])
        else:
            docker(*command)

    time.sleep(GAP_S / 2)
    cloud = containers("cloud")[0]
    fault(f"docker kill {cloud}", "kill", cloud)
    time.sleep(GAP_S)
    fault("docker compose restart redis", "compose", "restart", "--timeout", "5", "redis")
    time.sleep(GAP_S)
    [gateway] = containers("gateway-1")
    kills.append((time.monotonic(), "gateway-1"))
    fault(f"docker kill {gateway}", "kill", gateway)
    time.sleep(GAP_S)
    fault(f"docker start {gateway}", "start", gateway)
    time.sleep(GAP_S / 2)
    scale = ("compose", "up", "--detach", "--no-build", "--no-deps", "--timeout", "30", "--scale")
    fault("docker compose up --scale cloud=3", *scale, "cloud=3", "cloud")
    time.sleep(GAP_S)
    fault("docker compose up --scale cloud=1", *scale, "cloud=1", "cloud")
    time.sleep(GAP_S / 2)


def _problems(attempt: Attempt, kills: list[tuple[float, str]]) -> list[str]:
    seen = attempt.seen
    problems = []
    # a stream is cut only where its replica was killed while it ran
    killed_replicas = {name for at, name in kills if attempt.started <= at <= attempt.ended + 1.0}
    if len(seen.deltas) > MAX_TOKENS:
        problems.append(f"{len(seen.deltas)} tokens for max_tokens {MAX_TOKENS} (a token sent twice)")
    if seen.status == 200 and not seen.is_done and seen.replica not in killed_replicas:
        problems.append(f"stream from {seen.replica} ended without [DONE]: {seen.error}")
    if seen.is_done and seen.error is None and seen.finish_reason is None:
        problems.append("[DONE] without a finish reason or an error event")
    return problems


def _outcome(seen: Stream) -> str:
    if seen.status == 200 and seen.is_done and seen.error is None:
        return "complete"
    if seen.status == 200 and seen.is_done:
        return "error event + [DONE]"
    if seen.status == 200:
        return "cut mid-stream"
    return f"HTTP {seen.status}" if seen.status else "no connection"


def _table(events: list[tuple[float, str]], logs: list[ClientLog], started: float) -> None:
    windows = [(started, "(before the first fault)"), *events]
    rows = []
    for index, (at, what) in enumerate(windows):
        until = windows[index + 1][0] if index + 1 < len(windows) else float("inf")
        ended = [a for log in logs for a in log.attempts if at <= a.ended < until]
        outcomes = Counter(_outcome(a.seen) for a in ended)
        targets = Counter(a.seen.target for a in ended if a.seen.target)
        errors = sorted({a.seen.error[:90] for a in ended if a.seen.error and a.seen.status != 429})
        rows.append((f"{at - started:5.1f}", what, len(ended), dict(outcomes), dict(targets), errors[:3]))
    print(
        f"\n  {'t (s)':>6}  {'injected':42}  {'ended':>5}  what the clients saw (and where they were served)"
    )
    for at, what, num_ended, outcomes, targets, errors in rows:
        seen = ", ".join(f"{count} {name}" for name, count in sorted(outcomes.items()))
        print(f"  {at:>6}  {what:42}  {num_ended:>5}  {seen}  {targets}")
        for error in errors:
            print(f"  {'':6}  {'':42}  {'':5}    e.g. {error}")


def run(receipts: set[str]) -> None:
    print(f"faults while {NUM_CLIENTS} clients stream")
    logs = [ClientLog() for _ in range(NUM_CLIENTS)]
    stop = threading.Event()
    threads = [threading.Thread(target=_client, args=(log, stop)) for log in logs]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    events: list[tuple[float, str]] = []
    kills: list[tuple[float, str]] = []
    try:
        _inject(events, kills)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=600)
    _table(events, logs, started)
    attempts = [a for log in logs for a in log.attempts]
    problems = [p for a in attempts for p in _problems(a, kills)]
    assert not problems, problems[:10]
    assert all(log.num_abandoned == 0 for log in logs), f"a client gave up after {MAX_ATTEMPTS} attempts"
    receipts |= {a.seen.receipt for a in attempts if a.seen.receipt}
    print("  restoring the staging (cloud=2, every service healthy) ...", flush=True)
    compose("up", "--detach", "--no-build", "--wait", "--wait-timeout", "300")
    missing = receipts - ledger_receipts()
    assert not missing, f"receipts given to clients but not in a ledger: {sorted(missing)[:5]}"
    num_completed = sum(log.num_completed for log in logs)
    print(f"  {len(attempts)} attempts, {num_completed} requests completed, none lost from the ledgers")
