"""One labelled prompt of the privacy corpus, and what it came from."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Case:
    """A prompt and its label. `private`: it carries personal data (or a credential) and must
    stay on-prem; `source` names the third-party origin (package, module or file, and item)."""

    kind: str
    language: str
    text: str
    is_private: bool
    source: str
