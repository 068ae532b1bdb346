"""A model's chat template as Ollama's /api/show gives it: Go's text/template over Ollama's
variables (.System, .Messages, .Tools, .Prompt, .Suffix, .Response), which clients read (Continue
looks for `.Suffix` to know a model fills in the middle). Written for the markup families it
knows (ChatML, Llama 3); any other model's template is given as its own Jinja source. The
gateway never renders these: prompts are made from the model's own template."""

# one turn of each role, then the assistant's turn opened; tool calls in Hermes blocks
CHATML = (
    "{{- if .System }}<|im_start|>system\n{{ .System }}"
    "{{- if .Tools }}\n<tools>\n{{- range .Tools }}\n{{ . }}\n{{- end }}\n</tools>{{- end }}"
    "<|im_end|>\n{{ end }}"
    "{{- range .Messages }}"
    '{{- if eq .Role "tool" }}<|im_start|>user\n<tool_response>\n{{ .Content }}\n</tool_response><|im_end|>\n'
    "{{- else }}<|im_start|>{{ .Role }}\n{{ .Content }}"
    '{{- range .ToolCalls }}\n<tool_call>\n{"name": "{{ .Function.Name }}", '
    '"arguments": {{ .Function.Arguments }}}\n</tool_call>{{- end }}<|im_end|>\n{{ end }}'
    "{{- end }}<|im_start|>assistant\n"
)
LLAMA3 = (
    "{{- if .System }}<|start_header_id|>system<|end_header_id|>\n\n{{ .System }}<|eot_id|>{{ end }}"
    "{{- range .Messages }}<|start_header_id|>"
    '{{ if eq .Role "tool" }}ipython{{ else }}{{ .Role }}{{ end }}<|end_header_id|>\n\n'
    "{{ .Content }}"
    '{{- range .ToolCalls }}{"name": "{{ .Function.Name }}", '
    '"parameters": {{ .Function.Arguments }}}{{ end }}'
    "<|eot_id|>{{ end }}<|start_header_id|>assistant<|end_header_id|>\n\n"
)
FAMILIES = (("<|im_start|>", CHATML), ("<|start_header_id|>", LLAMA3))


def go_template(jinja_source: str, fim: tuple[str, str, str] | None) -> str:
    """The Go form of a Jinja chat template; `fim`: the model's fill-in-the-middle tokens, used
    when a request has a suffix."""
    chat = next((go for marker, go in FAMILIES if marker in jinja_source), None)
    if chat is None:
        return jinja_source
    if fim is None:
        return chat
    prefix, suffix, middle = fim
    infill = f"{prefix}{{{{ .Prompt }}}}{suffix}{{{{ .Suffix }}}}{middle}"
    return f"{{{{- if .Suffix }}}}{infill}{{{{- else }}}}{chat}{{{{- end }}}}"
