"""The evaluation data of the learned-stage experiments (issue 61 point 5), shared by
benchmarks/privacy_learned.py and benchmarks/privacy_judge.py.

Two parts, each case with the rule-based detector's decision beside it (`classify` in `auto` mode)
and whether `strict` would keep it (the uncertain band: the rules say clean, yet a person
reference or an identifier-shaped token is there):

- third-party: tests/gateway/privacy_thirdparty/ (python-stdnum, phonenumbers, Faker,
  presidio-evaluator, detect-secrets), grouped by that source for held-out evaluation;
- dev: tests/gateway/privacy_outside/dev.jsonl only. The holdout file beside it is spent and is
  never read here (nor copied, nor scored).
"""

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gateway.privacy import PrivacyMode, classify
from gateway.privacy.strict import strict_findings
from tests.gateway.privacy_thirdparty import thirdparty_cases
from tests.gateway.privacy_thirdparty.case import Case
from tests.gateway.privacy_thirdparty.outside import FOLDER, outside_cases

DEV = FOLDER / "dev.jsonl"
FAMILIES = ("python-stdnum", "phonenumbers", "faker", "presidio-evaluator", "detect-secrets")


@dataclass(frozen=True, slots=True)
class Scored:
    part: str  # "third-party" or "dev"
    family: str  # the third-party source ("python-stdnum", ...) or "outside"
    case: Case
    rules: bool  # the rule-based detector calls it private
    band: bool  # the rules call it clean and strict mode would not (the uncertain band)


def dev_cases() -> list[Case]:
    """dev.jsonl alone, read through the corpus's own reader from a folder that holds only it."""
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(DEV, Path(folder) / "dev.jsonl")
        return outside_cases(Path(folder))


def scored_corpus() -> list[Scored]:
    rows = []
    for part, cases in (("third-party", thirdparty_cases()), ("dev", dev_cases())):
        for case in cases:
            rules = classify([case.text], PrivacyMode.AUTO, None).is_private
            band = not rules and bool(strict_findings(case.text))
            family = case.source.split()[0]
            rows.append(Scored(part, family, case, rules, band))
    return rows


def save(rows: list[Scored], path: Path) -> None:
    lines = [
        json.dumps(
            {
                "part": r.part,
                "family": r.family,
                "kind": r.case.kind,
                "lang": r.case.language,
                "text": r.case.text,
                "private": r.case.is_private,
                "source": r.case.source,
                "rules": r.rules,
                "band": r.band,
            },
            ensure_ascii=False,
        )
        for r in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load(path: Path) -> list[Scored]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        case = Case(d["kind"], d["lang"], d["text"], d["private"], d["source"])
        rows.append(Scored(d["part"], d["family"], case, d["rules"], d["band"]))
    return rows


def cached_corpus(path: Path) -> list[Scored]:
    """The scored corpus, computed once (~1 minute) and kept at `path` for the other steps."""
    if path.exists():
        return load(path)
    rows = scored_corpus()
    path.parent.mkdir(parents=True, exist_ok=True)
    save(rows, path)
    return rows
