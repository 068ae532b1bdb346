"""The offline API vLLM users know: `LLM(model=PATH).generate(prompts, sampling_params)`.

The only place whole outputs exist: the engine's step deltas are gathered here, per request."""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cloud.engine.engine_args import check_engine_args
from cloud.engine.llm_engine import LLMEngine
from shared.engine import EngineRequest, FinishReason, StepOutput
from shared.sampling import SamplingParams


@dataclass(slots=True)
class RequestOutput:
    request_id: str
    prompt_token_ids: list[int]
    token_ids: list[int] = field(default_factory=list)  # generated
    finished: bool = False
    finish_reason: FinishReason | None = None
    text: str = ""
    num_cached_tokens: int = 0
    logprobs: list = field(default_factory=list)  # the SampledToken of each generated token
    outputs: list["RequestOutput"] = field(default_factory=list)  # the n samples

    def append(self, delta: StepOutput) -> None:
        self.token_ids.append(delta.token.token_id)
        self.logprobs.append(delta.token)
        self.num_cached_tokens = delta.num_cached_tokens
        if delta.finish_reason is not None:
            self.finished, self.finish_reason = True, delta.finish_reason


class LLM:
    """`LLM(model, dtype="bfloat16", max_model_len=..., gpu_memory_utilization=..., seed=...)` as
    in vLLM (cloud/engine/engine_args.py); `enforce_eager` is accepted and always holds (this engine
    captures no graphs). With `seed`, a request without its own seed gets one derived from it,
    so a run repeats exactly."""

    def __init__(self, model: str, *, seed: int | None = None, enforce_eager: bool = False, **engine_args):
        check_engine_args(LLMEngine, engine_args)
        if seed is not None and not isinstance(seed, int):
            raise ValueError("seed must be an integer")
        self.engine = LLMEngine(model, **engine_args)
        self.tokenizer = _load_tokenizer(model, self.engine.metadata)
        self.seed, self.enforce_eager = seed, True
        self._num_requests = 0  # requests generated so far (the derived seeds count on)

    def generate(
        self,
        prompts: str | Sequence[str] | Sequence[int] | Sequence[Sequence[int]],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
    ) -> list[RequestOutput]:
        """One output per prompt, in the order given; prompts are strings or token-id lists."""
        batch = _as_batch(prompts)
        params = sampling_params or SamplingParams()
        params_list = list(params) if isinstance(params, Sequence) else [params] * len(batch)
        if len(params_list) != len(batch):
            raise ValueError("give one SamplingParams, or one per prompt")
        outputs: dict[str, RequestOutput] = {}
        for index, (prompt, request_params) in enumerate(zip(batch, params_list, strict=True)):
            if self.seed is not None and request_params.seed is None:
                request_params = replace(request_params, seed=self.seed + self._num_requests)
            self._num_requests += 1
            token_ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
            request_id = f"generate-{index}"
            self.engine.add(EngineRequest(request_id, tuple(token_ids), request_params))
            for sample in range(request_params.n):
                sample_id = request_id if sample == 0 else f"{request_id}#{sample}"
                outputs[sample_id] = RequestOutput(sample_id, token_ids)
        while self.engine.has_work():
            for delta in self.engine.step().outputs:
                outputs[delta.request_id].append(delta)
        for output in outputs.values():
            output.text = self.tokenizer.decode(output.token_ids, skip_special=True)
        results = []
        for index, request_params in enumerate(params_list):
            result = outputs[f"generate-{index}"]
            result.outputs = [result] + [outputs[f"generate-{index}#{i}"] for i in range(1, request_params.n)]
            results.append(result)
        return results


def _as_batch(prompts) -> list:
    if isinstance(prompts, str):
        return [prompts]
    prompts = list(prompts)
    if prompts and all(isinstance(p, int) for p in prompts):
        return [prompts]
    return prompts


def _load_tokenizer(model: str, metadata):
    from pathlib import Path

    from formats.tokenizer import GGUFTokenizer

    if metadata is not None:
        return GGUFTokenizer.from_metadata(metadata)
    return CheckpointTokenizer(Path(model) / "tokenizer.json")


class CheckpointTokenizer:
    """tokenizer.json of a checkpoint directory, with the encode/decode of GGUFTokenizer."""

    def __init__(self, path):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path))

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False).ids

    def decode(self, token_ids: list[int], skip_special: bool = False) -> str:
        return self._tokenizer.decode(token_ids, skip_special_tokens=skip_special)
