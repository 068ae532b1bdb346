"""Seeded workloads: the same seed gives the same requests, byte for byte, on every machine.

Text is drawn from a fixed list of common English words (about 1.3 tokens per word with the
demo model's tokenizer), so prompt lengths are controlled without shipping a dataset. A request
may carry an arrival time (seconds after the start: a burst is many at 0); the runner's --rate or
--concurrency replace those times when given."""

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

COMMON_WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one "
    "had by word but not what all were we when your can said there use an each which she do how "
    "their if will up other about out many then them these so some her would make like him into time "
    "has look two more write go see number no way could people my than first water been call who oil "
    "its now find long down day did get come made may part over new sound take only little work know "
    "place year live me back give most very after thing our just name good sentence man think say "
    "great where help through much before line right too mean old any same tell boy follow came want "
    "show also around form three small set put end does another well large must big even such "
    "because turn here why ask went men read need land different home us move try kind hand picture "
    "again change off play spell air away animal house point page letter"
)
WORDS = tuple(COMMON_WORDS.split())


class WorkloadError(ValueError):
    """A workload name or file that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class BenchRequest:
    messages: list[dict]
    max_tokens: int
    arrival_s: float = 0.0
    is_private: bool = False  # carries personal data: hybridgw must keep it on-prem
    kind: str = "chat"
    headers: dict[str, str] = field(default_factory=dict)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def _card_number(rng: random.Random) -> str:
    """A 16-digit number with a valid Luhn check digit (what the privacy detector looks for)."""
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for index, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if index % 2 == 0 else digit
        total += doubled - 9 if doubled > 9 else doubled
    digits.append((10 - total % 10) % 10)
    text = "".join(map(str, digits))
    return " ".join(text[i : i + 4] for i in range(0, 16, 4))


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def burst_chat(rng: random.Random, num_requests: int) -> list[BenchRequest]:
    """The 32-concurrent-chat case: ~100 user words each, 128 output tokens, all at once."""
    return [BenchRequest(_user(_words(rng, 100)), 128) for _ in range(num_requests)]


def mixed(rng: random.Random, num_requests: int) -> list[BenchRequest]:
    """Short chats, long documents and private chats (a card number), in bursts of 8 every 2 s."""
    requests = []
    for index in range(num_requests):
        arrival = (index // 8) * 2.0
        draw = rng.random()
        if draw < 0.2:
            text = f"My card is {_card_number(rng)}. {_words(rng, rng.randint(30, 60))}"
            requests.append(BenchRequest(_user(text), 64, arrival, True, "private"))
        elif draw < 0.4:
            document = _words(rng, rng.randint(600, 900))
            text = f"Summarize this document:\n{document}"
            requests.append(BenchRequest(_user(text), 128, arrival, kind="document"))
        else:
            requests.append(BenchRequest(_user(_words(rng, rng.randint(30, 60))), 64, arrival))
    return requests


def shared_prefix(rng: random.Random, num_requests: int) -> list[BenchRequest]:
    """Four long system prompts (~800 words each), each shared by a quarter of the requests, and
    a short question; one request every 0.25 s."""
    prefixes = [_words(rng, 800) for _ in range(4)]
    requests = []
    for index in range(num_requests):
        messages = [
            {"role": "system", "content": prefixes[rng.randrange(4)]},
            {"role": "user", "content": _words(rng, 20)},
        ]
        requests.append(BenchRequest(messages, 32, index * 0.25, kind="shared-prefix"))
    return requests


def long_context(rng: random.Random, num_requests: int) -> list[BenchRequest]:
    """Documents of 1,500-3,000 words and a question, one every second."""
    requests = []
    for index in range(num_requests):
        text = f"{_words(rng, rng.randint(1500, 3000))}\nWhat is this text about?"
        requests.append(BenchRequest(_user(text), 64, float(index), kind="long-context"))
    return requests


WORKLOADS = {
    "burst-chat": (burst_chat, 32),
    "mixed": (mixed, 64),
    "shared-prefix": (shared_prefix, 64),
    "long-context": (long_context, 16),
}


def load_workload(name_or_file: str, seed: int, num_requests: int | None) -> list[BenchRequest]:
    """A named workload (WORKLOADS) or a JSON-lines file of requests, each
    {"messages": [...], "max_tokens": N, optional "arrival_s", "private", "headers"}."""
    if name_or_file in WORKLOADS:
        make, default_count = WORKLOADS[name_or_file]
        return make(random.Random(seed), num_requests or default_count)
    path = Path(name_or_file)
    if not path.is_file():
        raise WorkloadError(f"unknown workload {name_or_file!r}: one of {', '.join(WORKLOADS)} or a file")
    requests = [_from_line(line, number) for number, line in _lines(path)]
    if not requests:
        raise WorkloadError(f"{path}: no requests")
    return requests[:num_requests] if num_requests else requests


def _lines(path: Path):
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if line.strip():
                yield number, line


def _from_line(line: str, number: int) -> BenchRequest:
    try:
        entry = json.loads(line)
        messages, max_tokens = entry["messages"], int(entry["max_tokens"])
        if not isinstance(messages, list) or not messages or max_tokens < 1:
            raise ValueError("messages must be a non-empty list and max_tokens positive")
        return BenchRequest(
            messages,
            max_tokens,
            float(entry.get("arrival_s", 0.0)),
            bool(entry.get("private", False)),
            str(entry.get("kind", "chat")),
            {str(k): str(v) for k, v in entry.get("headers", {}).items()},
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise WorkloadError(f"line {number}: {error}") from None
