"""Issue 61 point 5 (b): the on-prem edge model as a judge for the privacy detector's uncertain
band, measured. The text never leaves the process: the edge engine's own model (edge/model.py)
reads a yes/no question about it, and the judge says "private" when the logit of "Yes" beats
"No" at the answer's first token.

The uncertain band: the rule-based detector calls the text clean, yet `strict` mode would keep it
on-prem (a person reference or an identifier-shaped token is there): the only texts a judge would
be asked about. Every dev case of the band is judged and a seeded sample of the third-party band
(`--sample`); recall added and over-blocking added are scaled from the sample to the band.

    PYTHONPATH=. python benchmarks/privacy_judge.py \
        --model ~/.cache/hybridgw/models/SmolLM2-135M-Instruct.Q4_1.gguf
"""

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.privacy_learned_data import Scored, cached_corpus

MAX_TEXT_CHARS = 1200  # about 400 tokens: the prompt stays within one 512-token prefill chunk
QUESTION = (
    "Does the text contain personal data of a private person (a name with details about them, "
    "contact details, an identity or account number, health, legal or financial details) or a "
    "password or secret key? Answer Yes or No.\n\n"
    "Text: What is the capital of France?\nAnswer: No\n\n"
    "Text: My husband Tom Baker was diagnosed with diabetes last week.\nAnswer: Yes\n\n"
    "Text: Summarize the history of the Roman empire.\nAnswer: No\n\n"
    "Text: DB_PASSWORD=hunter2-Xq9 for the prod server\nAnswer: Yes\n\n"
    "Text: {text}\nAnswer:"
)


class Judge:
    def __init__(self, model_path: str, threads: int):
        from edge.kv_cache import KVCache
        from edge.model import LlamaModel
        from edge.weights import ModelWeights
        from formats.chat_template import chat_template_for
        from formats.gguf_reader import GGUFReader
        from formats.model_config import ModelConfig
        from formats.tokenizer.gguf_tokenizer import GGUFTokenizer

        reader = GGUFReader(model_path)
        config = ModelConfig.from_reader(reader)
        self.tokenizer = GGUFTokenizer.from_metadata(reader.metadata)
        has_template = isinstance(reader.metadata.get("tokenizer.chat_template"), str)
        self.template = chat_template_for(reader.metadata) if has_template else None
        self.model = LlamaModel(config, ModelWeights.from_reader(reader, config), threads)
        self.model.load_prefill_kernels()  # else a prompt runs on the per-row kernels (10x slower)
        self.cache = KVCache(config, 1, 1024)
        self.yes = self._first_tokens(("Yes", " Yes"))
        self.no = self._first_tokens(("No", " No"))

    def _first_tokens(self, words: tuple[str, ...]) -> list[int]:
        return sorted({self.tokenizer.encode(word, add_special=False)[0] for word in words})

    def prompt_ids(self, text: str) -> list[int]:
        question = QUESTION.format(text=text[:MAX_TEXT_CHARS])
        if self.template is None:
            return self.tokenizer.encode(question)
        rendered = self.template.render([{"role": "user", "content": question}])
        return self.tokenizer.encode(rendered, add_special=False, parse_special=True)

    def score(self, text: str) -> float:
        """logit(Yes) - logit(No) at the answer's first token: > 0 is "private"."""
        ids = np.asarray(self.prompt_ids(text), dtype=np.int32)
        positions = np.arange(len(ids), dtype=np.int32)
        slots = np.zeros(len(ids), dtype=np.int32)
        logits = self.model.forward(ids, slots, positions, np.array([len(ids) - 1]), self.cache)[0]
        return float(logits[self.yes].max() - logits[self.no].max())


def band_sample(rows: list[Scored], per_part: dict[str, int], seed: int) -> list[Scored]:
    picked = []
    for part, most in per_part.items():
        band = [r for r in rows if r.part == part and r.band]
        picked += band if len(band) <= most else random.Random(seed).sample(band, most)
    return picked


def _scaled(band: list[Scored], sample: list[tuple[Scored, float]], private: bool) -> float:
    """The band's cases of one label the judge would call private, estimated from the sample."""
    judged = [score for row, score in sample if row.case.is_private == private]
    in_band = sum(row.case.is_private == private for row in band)
    return in_band * sum(score > 0 for score in judged) / max(1, len(judged))


def summarize(rows: list[Scored], judged: list[tuple[Scored, float]]) -> dict:
    """Per part: recall and over-blocking of rules alone and rules + judge (sample scaled to the band)."""
    out = {}
    for part in ("third-party", "dev"):
        every = [r for r in rows if r.part == part]
        band = [r for r in every if r.band]
        sample = [(r, s) for r, s in judged if r.part == part]
        positives = sum(r.case.is_private for r in every)
        negatives = len(every) - positives
        caught = sum(r.rules and r.case.is_private for r in every)
        blocked = sum(r.rules and not r.case.is_private for r in every)
        added_tp = _scaled(band, sample, private=True)
        added_fp = _scaled(band, sample, private=False)
        public_scores = [s for r, s in sample if not r.case.is_private]
        strictest = max(public_scores, default=float("-inf"))  # above it: no public case blocked
        out[part] = {
            "caught_at_no_added_over_blocking": sum(s > strictest and r.case.is_private for r, s in sample),
            "band": len(band),
            "judged": len(sample),
            "judged_private": sum(r.case.is_private for r, _ in sample),
            "said_yes_private": sum(s > 0 and r.case.is_private for r, s in sample),
            "said_yes_public": sum(s > 0 and not r.case.is_private for r, s in sample),
            "recall_rules": caught / positives,
            "recall_with_judge": (caught + added_tp) / positives,
            "over_blocked_rules": blocked / negatives,
            "over_blocked_with_judge": (blocked + added_fp) / negatives,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sample", type=int, default=150, help="third-party band cases judged")
    parser.add_argument("--dev", type=int, default=1000, help="dev band cases judged (at most)")
    parser.add_argument("--corpus-cache", type=Path, default=Path("/tmp/privacy_learned/corpus.jsonl"))
    parser.add_argument("--seed", type=int, default=61)
    parser.add_argument("--scores", type=Path, help="write each judged case's score here (JSON lines)")
    args = parser.parse_args()
    rows = cached_corpus(args.corpus_cache)
    started = time.perf_counter()
    judge = Judge(args.model, args.threads)
    load_s = time.perf_counter() - started
    judge.score("warm-up")
    judged, seconds, tokens = [], [], []
    for row in band_sample(rows, {"dev": args.dev, "third-party": args.sample}, args.seed):
        t0 = time.perf_counter()
        judged.append((row, judge.score(row.case.text)))
        seconds.append(time.perf_counter() - t0)
        tokens.append(len(judge.prompt_ids(row.case.text)))
    result = {
        "model": Path(args.model).name,
        "load_s": round(load_s, 1),
        "latency_ms_p50": round(1000 * statistics.median(seconds), 1),
        "latency_ms_p90": round(1000 * sorted(seconds)[int(0.9 * len(seconds))], 1),
        "prompt_tokens_p50": statistics.median(tokens),
        "parts": summarize(rows, judged),
    }
    print(json.dumps(result, indent=1))
    if args.scores:
        lines = [
            json.dumps({"part": r.part, "private": r.case.is_private, "kind": r.case.kind, "score": s})
            for r, s in judged
        ]
        args.scores.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
