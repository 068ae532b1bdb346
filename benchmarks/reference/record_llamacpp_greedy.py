"""Record llama.cpp's greedy continuations of the demo model (run with llama-cpp-python installed).

python benchmarks/reference/record_llamacpp_greedy.py MODEL.gguf > tests/edge/llamacpp_greedy.json
"""

import json
import sys

import llama_cpp

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n",
    "<|im_start|>user\nWhat is the tallest mountain in the world?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "Once upon a time, in a small village,",
]
NUM_TOKENS = 32


def _top_logits(path: str, prompt_ids: list[int], generated: list[int]) -> list[list[list[float]]]:
    """llama.cpp's 5 best (id, logit) at each generated position, teacher-forced."""
    model = llama_cpp.Llama(
        model_path=path, n_ctx=512, n_threads=2, n_batch=512, logits_all=True, verbose=False
    )
    model.eval(prompt_ids + generated)
    rows = []
    for position in range(len(prompt_ids) - 1, len(prompt_ids) + len(generated) - 1):
        scores = model.scores[position]
        best = scores.argsort()[::-1][:5]
        rows.append([[int(i), round(float(scores[i]), 4)] for i in best])
    return rows


def main() -> None:
    model = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=512, n_threads=2, n_batch=512, verbose=False)
    cases = []
    for prompt in PROMPTS:
        prompt_ids = model.tokenize(prompt.encode(), add_bos=False, special=True)
        model.reset()
        generated = []
        for token in model.generate(prompt_ids, top_k=1, temp=0.0, repeat_penalty=1.0, reset=True):
            generated.append(int(token))
            if len(generated) == NUM_TOKENS or token == model.token_eos():
                break
        cases.append(
            {
                "prompt": prompt,
                "prompt_ids": prompt_ids,
                "greedy_ids": generated,
                "top_logits": _top_logits(sys.argv[1], prompt_ids, generated),
            }
        )
    lines = [json.dumps(case, ensure_ascii=False) for case in cases]
    print(f'{{"llama_cpp_python": "{llama_cpp.__version__}", "cases": [\n' + ",\n".join(lines) + "\n]}")


if __name__ == "__main__":
    main()
