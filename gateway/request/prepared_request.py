"""A request ready to route: its served model, the parsed body, the token ids of each prompt
(chat template applied; a completion may have several prompts, each given as text or as token
ids: gateway/request/prompt_tokens.py), the number of tokens to generate, and its context: who
sent it and what it asks of routing (the privacy inputs, the latency targets and the tenant, set
from its headers and key by gateway/request/context_headers.py)."""

from dataclasses import dataclass, field

from gateway.core.capabilities import request_needs
from gateway.core.generation_request import GenerationRequest
from gateway.core.served_model import ServedModel
from gateway.privacy import PrivacyMode
from gateway.routing.route_types import LatencyTargets

ANONYMOUS_TENANT = ""  # requests without an API key


@dataclass(frozen=True, slots=True)
class RequestContext:
    privacy_mode: PrivacyMode
    privacy_header: str | None = None  # X-Hybridgw-Privacy
    targets: LatencyTargets = field(default_factory=LatencyTargets)
    tenant: str = ANONYMOUS_TENANT  # whose requests share prefix caches (gateway/dispatch/prefix_cache.py)


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    request_id: str
    model: ServedModel
    body: GenerationRequest
    prompts: tuple[list[int], ...]  # one per prompt; a chat has one
    max_tokens: int  # what the node generates (1 for an echo with max_tokens 0)
    context: RequestContext
    forwarded: dict[str, str] | None = None  # the caller's trace headers when no spans are recorded
    structured_output: str = ""  # the compiled grammar the output must match ("" for none)

    @property
    def prompt_ids(self) -> list[int]:
        """The first prompt (what routing and prefix matching look at)."""
        return self.prompts[0]

    @property
    def needs(self) -> dict[str, str]:
        """What its node must be able to do, and the parameter asking for each."""
        return request_needs(self.body)

    @property
    def num_choices(self) -> int:
        return len(self.prompts) * self.body.n

    def choice_prompt(self, index: int) -> list[int]:
        """Choices are numbered prompt by prompt: index = prompt * n + sample."""
        return self.prompts[index // self.body.n]

    @property
    def num_prompt_tokens(self) -> int:
        return sum(len(p) for p in self.prompts)

    def prompt_text(self, prompt: int) -> str:
        given = self.body.prompts[prompt]
        return given if isinstance(given, str) else self.model.tokenizer.decode(given)
