"""What the privacy classifier costs per request: find_personal_data (gated recognizers) against
every recognizer's pattern run over the whole text (the reference: what it did before the gates),
in the same process, on prose of 0.2-8 KB without personal data and on the same prose with a
card number, a phone number and an email in it.

    .venv/bin/python benchmarks/privacy_scan.py
"""

import time

from gateway.privacy.recognizers import find_personal_data, find_personal_data_ungated

PROSE = (
    "The quarterly report shows that our team shipped 3 major features in 2025, improving latency by 40% "
    "and reducing costs. Please summarize the key points for the board meeting next week, and list risks. "
)
PERSONAL = " Reach me at jane.doe@example.com or +44 20 7946 0958; card 4111 1111 1111 1111."


def per_call_us(function, text: str) -> float:
    for _ in range(20):
        function(text)
    runs, started = 0, time.perf_counter()
    while time.perf_counter() - started < 0.5:
        function(text)
        runs += 1
    return (time.perf_counter() - started) / runs * 1e6


def main() -> None:
    print(f"{'text':>28} {'gated':>10} {'every pattern':>14} {'speed-up':>9}")
    for repeats in (1, 10, 40):
        for label, text in (
            ("prose", PROSE * repeats),
            ("prose + personal data", PROSE * repeats + PERSONAL),
        ):
            assert find_personal_data(text) == find_personal_data_ungated(text)
            gated, reference = (
                per_call_us(find_personal_data, text),
                per_call_us(find_personal_data_ungated, text),
            )
            name = f"{label}, {len(text) / 1000:.1f} KB"
            print(f"{name:>28} {gated:>8.0f}us {reference:>12.0f}us {reference / gated:>8.1f}x")


if __name__ == "__main__":
    main()
