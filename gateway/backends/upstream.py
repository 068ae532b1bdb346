"""An OpenAI-compatible server (vLLM, llama-server, SGLang, another hybridgw) as a node.

The gateway does for it what it does for its own nodes (template, tokenization, privacy,
stop strings, detokenization) and sends the prompt as token ids to its `/v1/completions`,
streamed, asking for the generated token ids back (vLLM's `return_token_ids`; a server that
gives text only has it re-encoded with the model's tokenizer). `kind` says where it is: an
"edge" upstream may take private requests, a "cloud" one never does (the router decides).
Its load is what this gateway has in flight there (`max_concurrency` running, as many again
waiting in its own queue, then it takes no more), its speed what
the gateway observes (smoothed prefill and decode rates feed the router's predictions), its
health its `/health`. What it cannot do is refused before anything is sent, so the dispatcher
tries another node: a grammar (structured output, forced tools) and prompt logprobs.
"""

import json
import os
import time

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from formats.tokenizer import GGUFTokenizer
from gateway.backends.base import BackendError, ChunkSink, start_polling
from gateway.config import UpstreamEntry
from gateway.router import NodeKind, NodeState
from shared.proto import inference_pb2 as pb

FINISH = {"stop": pb.FINISH_REASON_STOP, "length": pb.FINISH_REASON_LENGTH}
SMOOTHING = 0.3  # weight of the newest observation in the rates
INITIAL_PREFILL_TOKENS_PER_S, INITIAL_DECODE_TOKENS_PER_S = 2000.0, 50.0  # until observed


class UpstreamBackend:
    def __init__(self, entry: UpstreamEntry, tokenizers: dict[str, GGUFTokenizer]):
        self.entry = entry
        self.url = entry.url.rstrip("/")
        self.base = self.url.removesuffix("/v1")
        self.tokenizers = tokenizers
        kind = NodeKind.EDGE if entry.kind == "edge" else NodeKind.CLOUD
        self.state = NodeState(
            entry.node_id,
            kind,
            frozenset(entry.models),
            healthy=False,
            max_running=entry.max_concurrency,
            queue_bound=entry.max_concurrency,  # as many again wait there, then it is full
            prefill_tokens_per_s=INITIAL_PREFILL_TOKENS_PER_S,
            decode_tokens_per_s=INITIAL_DECODE_TOKENS_PER_S,
        )
        key = os.environ.get(entry.api_key_env) if entry.api_key_env else None
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.session: aiohttp.ClientSession | None = None
        self._poller = None

    async def start(self) -> None:
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()
        if self.session:
            await self.session.close()

    async def poll_once(self) -> None:
        started = time.perf_counter()
        timeout = aiohttp.ClientTimeout(total=2)
        try:
            async with self.session.get(f"{self.base}/health", timeout=timeout) as reply:
                self.state.healthy = reply.status == 200
            if self.entry.metrics_url and self.state.healthy:
                async with self.session.get(self.entry.metrics_url, timeout=timeout) as reply:
                    if reply.status == 200:
                        self._report(await reply.text())
        except (aiohttp.ClientError, TimeoutError):
            self.state.healthy = False
            return
        self.state.rtt_s = time.perf_counter() - started

    def _report(self, text: str) -> None:
        """Its requests (running + waiting) and KV-cache use from its metrics: what other clients
        have there counts as the node's load too (gateway/node_load.py)."""
        load = upstream_load(text)
        if load is not None:
            requests, kv_usage = load
            self.state.load.report(requests, 0)
            self.state.kv_usage = kv_usage

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
    ) -> None:
        body = self._body(request)
        headers = {**self.headers, **(trace_headers or {})}
        started = time.perf_counter()
        try:
            async with self.session.post(
                f"{self.url}/completions",
                json=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout_s),
            ) as reply:
                if reply.status != 200:
                    raise _refusal(self.entry.node_id, reply.status, await reply.text())
                await _read_stream(reply, sink, self.tokenizers.get(request.model), started, self._observe)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise BackendError(
                f"upstream {self.entry.node_id}: {type(error).__name__}: {error}", 502
            ) from None

    def _body(self, request: pb.GenerateRequest) -> dict:
        """The OpenAI (+ vLLM extras) completion request for the node request; BackendError for
        what an upstream cannot be asked to do."""
        s = request.sampling
        if s.structured_output or s.HasField("prompt_logprobs"):
            raise BackendError(
                f"upstream {self.entry.node_id} cannot enforce a grammar or score a prompt", 502
            )
        body = {
            "model": self.entry.models.get(request.model, request.model),
            "prompt": [*request.prompt_token_ids, *request.resume_token_ids],
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
            "top_p": s.top_p or 1.0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "return_token_ids": True,
        }
        extras = {
            "top_k": s.top_k or None,
            "min_p": s.min_p or None,
            "repetition_penalty": s.repetition_penalty if s.repetition_penalty not in (0, 1) else None,
            "presence_penalty": s.presence_penalty or None,
            "frequency_penalty": s.frequency_penalty or None,
            "seed": s.seed if s.HasField("seed") else None,
            "stop_token_ids": list(s.stop_token_ids) or None,
            "ignore_eos": s.ignore_eos or None,
            "min_tokens": s.min_tokens or None,
            "logit_bias": {str(k): v for k, v in s.logit_bias.items()} or None,
        }
        return body | {k: v for k, v in extras.items() if v is not None}

    def _observe(self, prompt_tokens: int, ttft_s: float, tokens: int, decode_s: float) -> None:
        """The rates this request showed, smoothed into the node's (what the router predicts from)."""
        state = self.state
        if ttft_s > 0 and prompt_tokens:
            state.prefill_tokens_per_s += SMOOTHING * (prompt_tokens / ttft_s - state.prefill_tokens_per_s)
        if decode_s > 0 and tokens > 1:
            state.decode_tokens_per_s += SMOOTHING * ((tokens - 1) / decode_s - state.decode_tokens_per_s)


# the gauges servers export for their requests: vLLM, llama-server, hybridgw (running, waiting)
REQUEST_GAUGES = {
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "llamacpp:requests_processing",
    "llamacpp:requests_deferred",
    "hybridgw_requests_in_flight",
}
KV_GAUGES = {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "llamacpp:kv_cache_usage_ratio"}


def upstream_load(text: str) -> tuple[int, float] | None:
    """(requests there, KV-cache use 0..1) from a Prometheus text exposition; None when it has
    none of the known gauges (or is not one)."""
    requests, kv_usage, found = 0.0, 0.0, False
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name in REQUEST_GAUGES:
                    requests, found = requests + sample.value, True
                elif sample.name in KV_GAUGES:
                    kv_usage = max(kv_usage, sample.value)
    except (ValueError, TypeError, IndexError):  # not Prometheus text
        return None
    return (int(requests), min(1.0, kv_usage)) if found else None


def _refusal(node_id: str, status: int, text: str) -> BackendError:
    """An error answer: a server error or overload another node may take; a 4xx is final."""
    retryable = status >= 500 or status == 429
    return BackendError(
        f"upstream {node_id} answered {status}: {text[:300]}", status if not retryable else 502, retryable
    )


async def _read_stream(reply, sink: ChunkSink, tokenizer, started: float, observe) -> None:
    """SSE `data:` lines to chunks: each choice delta's token ids (or its text re-encoded); the
    finish waits for the usage chunk (or [DONE]) so the last chunk carries both."""
    index, finish, first_at = 0, None, None
    usage = pb.Usage()
    async for line in reply.content:
        if sink.finished:
            return  # a stop string: leaving closes the connection, which aborts it there
        if not line.startswith(b"data: "):
            continue
        data = line[6:].strip()
        if data == b"[DONE]":
            break
        event = json.loads(data)
        if "error" in event:
            raise BackendError(f"upstream error: {event['error']}", 502, retryable=False)
        if event.get("usage"):
            usage.prompt_tokens = event["usage"].get("prompt_tokens", 0)
            usage.cached_tokens = (event["usage"].get("prompt_tokens_details") or {}).get(
                "cached_tokens"
            ) or 0
        for choice in event.get("choices") or ():
            ids = choice.get("token_ids")
            if ids is None:
                ids = tokenizer.encode(choice.get("text") or "", add_special=False) if tokenizer else []
            if ids:
                first_at = first_at or time.perf_counter()
                chunk = pb.GenerateChunk(index=index, tokens=[pb.GeneratedToken(token_id=i) for i in ids])
                sink.put(chunk)
                index += len(ids)
            finish = FINISH.get(choice.get("finish_reason"), finish)
    if finish is None:
        raise BackendError("the upstream ended the stream without a finish reason", 502, retryable=False)
    last = pb.GenerateChunk(index=index, finish_reason=finish, usage=usage)
    last.usage.completion_tokens = index
    sink.put(last)
    if first_at is not None:
        observe(usage.prompt_tokens, first_at - started, index, time.perf_counter() - first_at)
