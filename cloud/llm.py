"""The offline API vLLM users know: `LLM(model=PATH).generate(prompts, sampling_params)`."""

from collections.abc import Sequence

from cloud.llm_engine import LLMEngine, RequestOutput
from shared.sampling import SamplingParams


class LLM:
    def __init__(self, model: str, **engine_args):
        self.engine = LLMEngine(model, **engine_args)
        self.tokenizer = _load_tokenizer(model, self.engine.metadata)

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
        ids = []
        for index, (prompt, request_params) in enumerate(zip(batch, params_list, strict=True)):
            token_ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
            ids.append(self.engine.add_request(token_ids, request_params, request_id=f"generate-{index}"))
        finished: dict[str, RequestOutput] = {}
        while self.engine.has_unfinished_requests():
            for output in self.engine.step():
                if output.finished:
                    output.text = self.tokenizer.decode(output.token_ids, skip_special=True)
                    finished[output.request_id] = output
        results = []
        for request_id, request_params in zip(ids, params_list, strict=True):
            result = finished[request_id]
            result.outputs = [result] + [finished[f"{request_id}#{i}"] for i in range(1, request_params.n)]
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
