"""The batched sampler's draw: decided among each row's best tokens vs the full sort, one run.

    .venv/bin/python benchmarks/sampler_draw.py [--rounds 5]

Rows of the demo model's vocabulary (49,152) as each engine hands them over — 8 numpy rows (the
edge's slots), 16 torch rows (the cloud's batch) — of the demo model's own logits at successive
positions of an English paragraph (through transformers), and as a worst case a flat row (normal
noise: the nucleus spans thousands of tokens, so rows fall back to the full sort), under the
sampling settings chat clients send. Each case alternates the two draws
round by round, on the same logits and uniforms; medians of the per-call times and their ratio.
"""

import argparse
import statistics
import time

import numpy as np
import torch
from array_api_compat import array_namespace

from shared.batch_draw import draw, draw_sorted
from shared.sampling import SamplingParams

VOCAB = 49152
SETTINGS = {
    "temperature 1": SamplingParams(temperature=1.0),
    "temperature 0.7, top_p 0.9": SamplingParams(temperature=0.7, top_p=0.9),
    "top_k 40, top_p 0.95, min_p 0.05": SamplingParams(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05),
}


def seconds(function, *args, calls: int = 5) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        function(*args)
    return (time.perf_counter() - started) / calls


PARAGRAPH = (
    "The city council met on Tuesday evening to discuss the new budget. Several residents spoke "
    "about the library, which has been closed for repairs since the spring, and asked when it would "
    "open again. The mayor said that the work was nearly finished and that the building should be "
    "ready before the school year begins."
)


def model_logits() -> torch.Tensor:
    """(positions, vocab) float64: the demo model's next-token logits along the paragraph."""
    import transformers

    from formats.model_pull import DEFAULT_MODEL, pull
    from formats.tokenizer.gguf_tokenizer import GGUFTokenizer

    path = pull(DEFAULT_MODEL)
    ids = GGUFTokenizer.from_file(path).encode(PARAGRAPH)
    model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name).eval()
    with torch.inference_mode():
        return model(torch.tensor([ids])).logits[0].double()


def case(backend: str, logits: torch.Tensor, params: SamplingParams, rounds: int) -> tuple[float, float]:
    rows = len(logits)
    logits = logits.numpy() if backend == "numpy" else logits
    xp, uniforms = array_namespace(logits), np.random.default_rng(0).random(rows).tolist()
    fast, full = [], []
    for _ in range(rounds):
        fast.append(seconds(draw, xp, logits, [params] * rows, uniforms))
        full.append(seconds(draw_sorted, xp, logits, [params] * rows, uniforms))
    return statistics.median(fast), statistics.median(full)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trained = model_logits()
    generator = torch.Generator().manual_seed(0)
    flat = torch.randn(len(trained), VOCAB, generator=generator, dtype=torch.float64)
    header = f"{'candidates ms':>13} {'full sort ms':>12} {'speedup':>8}"
    print(f"{'rows':14} {'logits':7} {'settings':34} {header}")
    for backend, rows in (("numpy", 8), ("torch", 16)):
        for kind, logits in (("model", trained), ("flat", flat)):
            for label, params in SETTINGS.items():
                fast, full = case(backend, logits[-rows:], params, args.rounds)
                times = f"{fast * 1e3:13.2f} {full * 1e3:12.2f} {full / fast:7.1f}x"
                print(f"{rows:2} {backend:11} {kind:7} {label:34} {times}")


if __name__ == "__main__":
    main()
