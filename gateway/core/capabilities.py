"""What a request needs of the node that serves it, and what each kind of node can do.

Our own nodes (edge, cloud) do everything the API offers except images: the gateway writes tools
into the prompt and reads calls back, and the node enforces grammars and scores prompts. An
upstream (gateway/backends/upstream.py) does what its API and its declared `capabilities` allow:
on `api = "completions"` it takes token-id prompts (tools written by the gateway, as for ours);
on `api = "chat"` it takes the client's messages as they are, with tools, `response_format` and
images passed on when it declares "tools", "structured_output" or "vision". The router sends a
request only to a node whose capabilities hold all its needs.
"""

from gateway.core.generation_request import GenerationRequest, offers_tools

VISION = "vision"  # image_url content parts
TOOLS = "tools"  # tools offered to the model
FORCED_TOOLS = "forced_tools"  # tool_choice "required" or a named function
STRUCTURED_OUTPUT = "structured_output"  # response_format, structured_outputs, guided_*
LOGPROBS = "logprobs"
PROMPT_LOGPROBS = "prompt_logprobs"  # echo with logprobs
COMPLETIONS = "completions"  # a prompt, not messages
CONTINUATION = "continuation"  # a stream another node began, continued from its tokens
EMBEDDINGS = "embeddings"  # pooled hidden states (/v1/embeddings, Ollama's /api/embed): edge nodes

OWN_NODE = frozenset(
    {TOOLS, FORCED_TOOLS, STRUCTURED_OUTPUT, LOGPROBS, PROMPT_LOGPROBS, COMPLETIONS, CONTINUATION}
)
EDGE_NODE = OWN_NODE | {EMBEDDINGS}
DECLARABLE = (VISION, TOOLS, STRUCTURED_OUTPUT)  # what an upstream's `capabilities` may name

DESCRIPTIONS = {
    VISION: "image input",
    TOOLS: "tools",
    FORCED_TOOLS: "a forced tool choice",
    STRUCTURED_OUTPUT: "structured output",
    LOGPROBS: "logprobs",
    PROMPT_LOGPROBS: "prompt logprobs",
    COMPLETIONS: "text completions",
    CONTINUATION: "continuing a stream",
    EMBEDDINGS: "embeddings",
}


def upstream_capabilities(api: str, declared: frozenset[str]) -> frozenset[str]:
    if api == "completions":  # token ids in, token ids out: the gateway does the tools
        return frozenset({TOOLS, COMPLETIONS, CONTINUATION} | (declared & {STRUCTURED_OUTPUT}))
    capabilities = set(declared & {VISION, STRUCTURED_OUTPUT})
    if TOOLS in declared:
        capabilities |= {TOOLS, FORCED_TOOLS}
    return frozenset(capabilities)


def request_needs(request: GenerationRequest) -> dict[str, str]:
    """Each need of the request and the parameter that brings it (what a 400 names)."""
    needs = {}
    if request.image_parts:
        needs[VISION] = request.image_parts[0]
    if offers_tools(request):
        needs[TOOLS] = "tools"
        if request.tool_choice in ("required", "function"):
            needs[FORCED_TOOLS] = "tool_choice"
    if request.structured_outputs is not None:
        needs[STRUCTURED_OUTPUT] = request.structured_outputs[1]
    if request.logprobs:
        needs[LOGPROBS] = "logprobs"
        if request.echo:
            needs[PROMPT_LOGPROBS] = "echo"
    if request.messages is None:
        needs[COMPLETIONS] = "prompt"
    return needs
