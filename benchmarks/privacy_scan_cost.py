"""The scan's own CPU time (issue 61, point 7; process time, which a loaded machine inflates less
than wall time): `find_personal_data` on a 64 KB multilingual prompt without personal data, the
same with a card, a phone and a named patient at its end, and a 183-character chat. Median of
--runs calls each, after one warm-up call (the name index and the vocabularies load once per
process). Absolute milliseconds of this host: compare two versions by running this script for
each, alternately, on one machine.

    .venv/bin/python benchmarks/privacy_scan_cost.py [--runs 15]
"""

import argparse
import json
import platform
import statistics
import time

from benchmarks.privacy_scan import text_of
from gateway.privacy import find_personal_data

CHAT = (
    "Can you help me rewrite this paragraph so it sounds friendlier? We are moving the team offsite "
    "to next Thursday and everyone should bring a laptop and their ideas for the roadmap, thanks!"
)
TEXTS = {"64 KB": text_of(64 * 1024, False), "64 KB personal": text_of(64 * 1024, True), "chat": CHAT}


def median_ms(text: str, runs: int) -> float:
    find_personal_data(text)
    times = []
    for _ in range(runs):
        started = time.process_time()
        find_personal_data(text)
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    host = (
        f"{platform.node()} {platform.processor() or platform.machine()} python {platform.python_version()}"
    )
    rows = {
        label: round(median_ms(text, args.runs if len(text) > 1000 else 20 * args.runs), 3)
        for label, text in TEXTS.items()
    }
    print(json.dumps({"host": host, "chars": {k: len(v) for k, v in TEXTS.items()}, "median_ms": rows}))


if __name__ == "__main__":
    main()
