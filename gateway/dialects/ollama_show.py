"""What Ollama's /api/show says of a model, as tools read it: its capabilities (`completion`,
`tools` (every model: a template without tools gets them in its system turn), `thinking` and
`insert` where its template and vocabulary have them), `model_info` (the
GGUF keys Ollama gives: architecture, context and embedding length, parameter count),
`parameters` in Ollama's Modelfile form (`num_ctx`, which Continue reads for its window) and the
template in Ollama's Go form (gateway/dialects/ollama_go_template.py). Names: Ollama treats `x`
and `x:latest` as one model, so a served name without a tag is listed with `:latest` and either
spelling finds it."""

from gateway.core.served_model import ServedModel
from gateway.dialects.ollama_go_template import go_template
from gateway.prompt.fill_in_middle import fim_tokens
from gateway.prompt.thinking_switch import has_thinking_switch

LATEST = ":latest"
PARAMETER_WIDTH = 30  # Ollama's Modelfile listing: the name padded to 30, then the value


def listed_name(name: str) -> str:
    """A served model's name as Ollama lists it: tagged (`x` is `x:latest`)."""
    return name if ":" in name else name + LATEST


def served_name(name: str) -> str:
    """The served model an Ollama name means: `x:latest` is `x`."""
    return name.removesuffix(LATEST) if name.endswith(LATEST) else name


def capabilities(model: ServedModel) -> list[str]:
    found = ["completion", "tools"]  # a template without tools gets them in its system turn
    found += ["thinking"] * has_thinking_switch(model)
    found += ["insert"] * (fim_tokens(model) is not None)
    return found


def model_info(model: ServedModel) -> dict:
    facts = model.facts
    architecture = facts.architecture if facts else "unknown"
    info = {
        "general.architecture": architecture,
        "general.basename": model.name,
        "general.parameter_count": facts.parameters if facts else 0,
        f"{architecture}.context_length": model.context_length,
    }
    if facts and facts.embedding_length:
        info[f"{architecture}.embedding_length"] = facts.embedding_length
    return info


def parameters(model: ServedModel) -> str:
    return f"{'num_ctx':<{PARAMETER_WIDTH}} {model.context_length}"


def shown(model: ServedModel, details: dict, modified_at: str) -> dict:
    return {
        "modelfile": f"FROM {model.name}\nPARAMETER {parameters(model)}\n",
        "parameters": parameters(model),
        "template": go_template(model.chat_template.source, fim_tokens(model)),
        "details": details,
        "model_info": model_info(model),
        "capabilities": capabilities(model),
        "modified_at": modified_at,
    }
