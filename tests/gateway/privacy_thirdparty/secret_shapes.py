"""Credentials in the shapes detect-secrets looks for: strings drawn (rstr, seeded) from each
regex-based plugin's own `denylist` and from its keyword plugin's assignment regexes, kept only
when that plugin itself flags the line (its whitespace runs collapsed to one space, printable,
at most 200 characters). The wheel ships no test cases, so its regexes are the third-party
material. The entropy plugins (Base64, Hex) have no shape to draw from and are left out.

The lines are stored in secret_shapes.jsonl: rstr draws a negated class (`[^:]`) from a set, whose
order is the process's string hashing, so only a fixed PYTHONHASHSEED repeats them. Regenerate with

    PYTHONHASHSEED=0 python -m tests.gateway.privacy_thirdparty.secret_shapes

The carrier is ours, and neutral: the line alone, or after one question (CARRIERS)."""

import json
import random
import re
from pathlib import Path

from tests.gateway.privacy_thirdparty.case import Case

STORED = Path(__file__).with_name("secret_shapes.jsonl")

SEED, PER_PATTERN, TRIES = 61, 3, 40
CARRIERS = ("{}", "Why does this line fail?\n{}")
MAX_CHARS = 200


def patterns() -> list[tuple[str, object, re.Pattern]]:
    """(secret type, its plugin, a regex it flags), plugins by secret type, regexes in order."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    found = []
    for secret_type, plugin_class in sorted(get_mapping_from_secret_type_to_class().items()):
        plugin = plugin_class()
        if isinstance(plugin, RegexBasedDetector):
            found += [(secret_type, plugin, regex) for regex in plugin_class.denylist]
        elif isinstance(plugin, keyword.KeywordDetector):
            regexes = [value for name, value in sorted(vars(keyword).items()) if name.endswith("_REGEX")]
            found += [(secret_type, plugin, r) for r in regexes if isinstance(r, re.Pattern)]
    return found


def draws(plugin, regex: re.Pattern, rng: random.Random) -> list[str]:
    """Up to PER_PATTERN distinct lines from the regex that the plugin flags."""
    import rstr

    generator, kept = rstr.Rstr(rng), []
    for _ in range(TRIES):
        line = re.sub(r"\s+", " ", generator.xeger(regex)).strip()
        usable = line.isprintable() and len(line) <= MAX_CHARS and line not in kept
        if usable and plugin.analyze_line(filename="settings.py", line=line):
            kept.append(line)
            if len(kept) == PER_PATTERN:
                break
    return kept


def generate() -> list[dict]:
    rng, lines = random.Random(SEED), []
    for secret_type, plugin, regex in patterns():
        for line in draws(plugin, regex, rng):
            lines.append({"secret_type": secret_type, "plugin": type(plugin).__name__, "line": line})
    return lines


def secret_cases() -> list[Case]:
    cases = []
    for i, text in enumerate(STORED.read_text(encoding="utf-8").splitlines()):
        sample = json.loads(text)
        kind = "ip_address" if "IP" in sample["secret_type"].split() else "secret"
        carried = CARRIERS[i % len(CARRIERS)].format(sample["line"])
        cases.append(Case(kind, "en", carried, True, f"detect-secrets {sample['plugin']} regex + rstr"))
    return cases


if __name__ == "__main__":
    samples = [json.dumps(sample, ensure_ascii=False) for sample in generate()]
    STORED.write_text("\n".join(samples) + "\n", encoding="utf-8")
    print(f"wrote {len(samples)} lines to {STORED}")
