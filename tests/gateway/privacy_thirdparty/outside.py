"""The outside corpus: prompts written by someone who never read the detector, as JSON lines
(`id`, `lang`, `kind`, `private`, `text`) in tests/gateway/privacy_outside/*.jsonl, every file
there read in name order. Until the files are copied in, there are none."""

import json
from pathlib import Path

from tests.gateway.privacy_thirdparty.case import Case

FOLDER = Path(__file__).parent.parent / "privacy_outside"


def outside_cases(folder: Path = FOLDER) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            assert isinstance(row["private"], bool), f"{path.name}:{number}: private must be true or false"
            source = f"outside {path.name} {row.get('id', number)}"
            cases.append(Case(row["kind"], row["lang"], row["text"], row["private"], source))
    return cases
