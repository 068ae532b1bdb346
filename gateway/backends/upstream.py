"""An OpenAI-compatible server (vLLM, llama-server, SGLang, another hybridgw, a hosted API) as a
node.

The gateway does for it what it does for its own nodes (template, tokenization, privacy, stop
strings, detokenization). On `api = "completions"` it sends the prompt as token ids to its
`/v1/completions`, streamed, asking for the generated token ids back (vLLM's `return_token_ids`;
a server that gives text only has it re-encoded with the model's tokenizer); on `api = "chat"`
it sends the client's messages to `/v1/chat/completions` (gateway/backends/upstream_chat.py).
`kind` says where it is: an "edge" upstream may take private requests, a "cloud" one never does
(the router decides), and its capabilities what requests it takes (gateway/core/capabilities.py).
Its load is what this gateway has in flight there (`max_concurrency` running, as many again
waiting in its own queue, then it takes no more) plus, with `metrics_url`, what its own metrics
say; its speed what the gateway observes (smoothed prefill and decode rates feed the router's
predictions); its health its `/health` (down after PROBE_FAILURES failed probes in a row: one
lost probe is no evidence).

Connections: kept alive in a pool that drops one idle for `keepalive_s` (below the keep-alive of
the servers it fronts: llama-server's and uvicorn's 5 s), and checked as they are taken from it
(aiohttp reuses one only while its socket is open). A connection the server closed while it sat
idle can still be taken before its close is read (a busy event loop); the request breaks before a
byte of the answer came back, and was never read there: it is sent again, at once, on a fresh
connection (`_open`), and again with backoff while fresh ones break too, within the first-token
deadline, before anything else (a retry, a node failure) hears of it.
"""

import asyncio
import os
import time

import aiohttp

from formats.tokenizer import GGUFTokenizer
from gateway.backends.base import BackendError, ChunkSink, start_polling
from gateway.backends.client_request import ClientRequest
from gateway.backends.upstream_chat import chat_body, read_chat
from gateway.backends.upstream_load import UpstreamMetrics
from gateway.backends.upstream_stream import UpstreamStream
from gateway.config.gateway_config import UpstreamEntry
from gateway.core.capabilities import STRUCTURED_OUTPUT, upstream_capabilities
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from shared.proto import inference_pb2 as pb

PROBE_FAILURES = 3  # /health probes failed in a row (0.5 s apart) before the node counts as down
# a connection that broke before the answer's first byte (a pooled one the server had closed)
BROKEN_BEFORE_ANSWER = (
    aiohttp.ServerDisconnectedError,
    aiohttp.ClientConnectionResetError,
    aiohttp.ClientOSError,
)
MAX_RECONNECT_BACKOFF_S = 0.5
SMOOTHING = 0.3  # weight of the newest observation in the rates
INITIAL_PREFILL_TOKENS_PER_S, INITIAL_DECODE_TOKENS_PER_S = 2000.0, 50.0  # until observed


class UpstreamBackend:
    def __init__(self, entry: UpstreamEntry, tokenizers: dict[str, GGUFTokenizer], reconnect_s: float = 5.0):
        """`reconnect_s`: how long a request whose connections break before any answer is sent
        again (the routing's first-token deadline)."""
        self.entry = entry
        self.reconnect_s = reconnect_s
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
            capabilities=upstream_capabilities(entry.api, frozenset(entry.capabilities)),
        )
        key = os.environ.get(entry.api_key_env) if entry.api_key_env else None
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.metrics = UpstreamMetrics()
        self.session: aiohttp.ClientSession | None = None  # kept-alive connections
        self.fresh: aiohttp.ClientSession | None = None  # a new connection per request
        self.num_reconnects = 0  # requests sent again on a fresh connection (`_open`)
        self.num_failed_probes = 0  # in a row
        self._poller = None

    async def start(self) -> None:
        keepalive_s = self.entry.keepalive_s
        if keepalive_s:
            pooled = aiohttp.TCPConnector(limit=0, keepalive_timeout=keepalive_s)
        else:  # 0: a connection per request
            pooled = aiohttp.TCPConnector(limit=0, force_close=True)
        self.session = aiohttp.ClientSession(connector=pooled)
        self.fresh = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True))
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()
        for session in (self.session, self.fresh):
            if session:
                await session.close()

    async def poll_once(self) -> None:
        started = time.perf_counter()
        timeout = aiohttp.ClientTimeout(total=2)
        try:
            async with self.session.get(f"{self.base}/health", timeout=timeout) as reply:
                is_up = reply.status == 200
            if self.entry.metrics_url and is_up:
                async with self.session.get(self.entry.metrics_url, timeout=timeout) as reply:
                    if reply.status == 200:
                        self._report(await reply.text())
        except (aiohttp.ClientError, TimeoutError):
            is_up = False
        self.num_failed_probes = 0 if is_up else self.num_failed_probes + 1
        if is_up or self.num_failed_probes >= PROBE_FAILURES:
            self.state.healthy = is_up
        if is_up:
            self.state.rtt_s = time.perf_counter() - started

    def _report(self, text: str) -> None:
        """Its requests (running + waiting) and KV-cache use from its metrics: what other clients
        have there counts as the node's load too (gateway/routing/node_load.py); the rates its metrics
        show join the ones this gateway observes."""
        reading = self.metrics.read(text)
        if reading is None:
            return
        self.state.load.report(reading.requests, 0)
        self.state.kv_usage = reading.kv_usage
        if reading.prefill_tokens_per_s:
            self._learn_rate("prefill_tokens_per_s", reading.prefill_tokens_per_s)
        if reading.decode_tokens_per_s:
            self._learn_rate("decode_tokens_per_s", reading.decode_tokens_per_s)

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        client: ClientRequest | None = None,
    ) -> None:
        chat = self.entry.api == "chat"
        body = self._chat_body(request, client) if chat else self._completion_body(request, client)
        headers = {**self.headers, **(trace_headers or {})}
        stream = UpstreamStream(sink, self.tokenizers.get(request.model), self.entry.node_id)
        url = f"{self.url}/{'chat/completions' if chat else 'completions'}"
        try:
            async with await self._open(url, body, headers, timeout_s) as reply:
                if reply.status != 200:
                    raise _refusal(self.entry.node_id, reply.status, await reply.text())
                read = read_chat(reply, stream, client) if chat else stream.read(reply, _completion_choice)
                if not await read:
                    return
                await reply.content.read()  # to the body's end: the connection goes back to the pool
        except (aiohttp.ClientError, TimeoutError) as error:
            raise BackendError(
                f"upstream {self.entry.node_id}: {type(error).__name__}: {error}", 502
            ) from None
        observed = stream.end()
        if observed is not None:
            self._observe(*observed)

    async def _open(self, url: str, body: dict, headers: dict, timeout_s: float) -> aiohttp.ClientResponse:
        """The answer's head. A connection that breaks before any byte of it came back is
        replaced by a fresh one at once (the request never reached the engine: the server had
        closed that pooled connection idle), then with backoff while fresh ones break too, for
        `reconnect_s`; one that cannot connect at all is the node's failure."""
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        session, backoff_s = self.session, 0.0
        give_up_at = time.monotonic() + self.reconnect_s
        while True:
            try:
                return await session.post(url, json=body, headers=headers, timeout=timeout)
            except aiohttp.ClientConnectorError:
                raise
            except BROKEN_BEFORE_ANSWER:
                if time.monotonic() + backoff_s > give_up_at:
                    raise
            self.num_reconnects += 1
            await asyncio.sleep(backoff_s)
            session, backoff_s = self.fresh, min(MAX_RECONNECT_BACKOFF_S, max(0.01, 2 * backoff_s))

    def _completion_body(self, request: pb.GenerateRequest, client: ClientRequest | None) -> dict:
        """The OpenAI (+ vLLM extras) completion request for the node request; BackendError for
        what it cannot be asked to do (the router sends it none: gateway/core/capabilities.py)."""
        s = request.sampling
        passes_format = STRUCTURED_OUTPUT in self.state.capabilities and client is not None
        passes_format = passes_format and client.structured_outputs is not None
        if (s.structured_output and not passes_format) or s.HasField("prompt_logprobs"):
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
        if s.structured_output:  # vLLM's form: its /v1/completions reads no response_format schema
            body["structured_outputs"] = client.structured_outputs
        return body | sampling_extras(s)

    def _chat_body(self, request: pb.GenerateRequest, client: ClientRequest | None) -> dict:
        model = self.entry.models.get(request.model, request.model)
        return chat_body(request, client, self.state.capabilities, model) | sampling_extras(request.sampling)

    def _observe(self, prompt_tokens: int, ttft_s: float, tokens: int, decode_s: float) -> None:
        """The rates this request showed, smoothed into the node's (what the router predicts from)."""
        if ttft_s > 0 and prompt_tokens:
            self._learn_rate("prefill_tokens_per_s", prompt_tokens / ttft_s)
        if decode_s > 0 and tokens > 1:
            self._learn_rate("decode_tokens_per_s", (tokens - 1) / decode_s)

    def _learn_rate(self, name: str, observed: float) -> None:
        """The node's rate moves toward what was observed (smoothed)."""
        current = getattr(self.state, name)
        setattr(self.state, name, current + SMOOTHING * (observed - current))


def sampling_extras(s: pb.SamplingParams) -> dict:
    """vLLM's (and llama-server's) sampling parameters beyond OpenAI's, only those set."""
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
    return {k: v for k, v in extras.items() if v is not None}


def _completion_choice(stream: UpstreamStream, choice: dict) -> None:
    """A /v1/completions delta: its token ids (vLLM's return_token_ids) or its text."""
    ids = choice.get("token_ids")
    vocab = stream.tokenizer.vocab_size if stream.tokenizer is not None else 0
    if isinstance(ids, list) and all(isinstance(i, int) and 0 <= i < vocab for i in ids):
        stream.put_ids(ids)
    elif ids is not None:
        raise BackendError(f"upstream {stream.node_id} sent token ids outside the vocabulary", 502, False)
    else:
        stream.put_text(choice.get("text"))
    stream.take_finish(choice.get("finish_reason"))


def _refusal(node_id: str, status: int, text: str) -> BackendError:
    """An error answer: a server error or overload another node may take; a 4xx is final."""
    retryable = status >= 500 or status == 429
    return BackendError(
        f"upstream {node_id} answered {status}: {text[:300]}", status if not retryable else 502, retryable
    )
