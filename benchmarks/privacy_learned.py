"""Issue 61 point 5 (c), measured: does a small classifier trained with torch on third-party data
only, exported to ONNX and run with onnxruntime, add recall to the rule-based privacy detector
at equal over-blocking? The stage would only ever add "private" (a request the rules call clean
and the model scores above its threshold), so what it adds is counted on the cases the rules
call clean.

- third-party part: leave one source family out (python-stdnum, phonenumbers, Faker,
  presidio-evaluator, detect-secrets): trained on the other four (their corpus cases, more of
  their generators with other seeds, wordfreq public text), scored on the held-out family's
  corpus cases; every case is scored once, by the model that never saw its family;
- outside dev (tests/gateway/privacy_outside/dev.jsonl; never trained on, never the holdout):
  scored by the model trained on every family.

The threshold is fixed before scoring: the 99th percentile of the model's scores on the public
cases of a validation fifth of its own training data. Reported beside it, as an upper bound
that peeks at the scored cases: what the model adds at a threshold just above the highest
score of any public case the rules call clean (no added over-blocking at all).

    PYTHONPATH=. python benchmarks/privacy_learned.py [--out /tmp/privacy_learned]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.privacy_learned_data import FAMILIES, Scored, cached_corpus
from benchmarks.privacy_learned_features import features
from benchmarks.privacy_learned_train import export, extra_cases, predict, train, wordfreq_cases
from tests.gateway.privacy_thirdparty.case import Case

SHORT_CHAT = "Hi! Can you help me write a polite e-mail to my landlord about the broken heating in my flat?"


def fit(training: list[tuple[str, object]], seed: int = 61):
    """A model on four fifths of `training` ((family, case) pairs) and its threshold from the rest."""
    rng = np.random.default_rng(seed)
    validation = rng.random(len(training)) < 0.2
    fit_rows = [c for (f, c), v in zip(training, validation, strict=True) if not v]
    model = train([c.text for c in fit_rows], [c.is_private for c in fit_rows])
    public = [
        c.text
        for (f, c), v in zip(training, validation, strict=True)
        if v and not c.is_private and f != "wordfreq"
    ]
    return model, float(np.quantile(predict(model, public), 0.99))


def added(rows: list[Scored], scores: np.ndarray, threshold: float) -> dict:
    """What the stage adds to the rules on `rows` at `threshold`, and at no added over-blocking."""
    clean = [(r, s) for r, s in zip(rows, scores, strict=True) if not r.rules]
    top_public = max((s for r, s in clean if not r.case.is_private), default=-1.0)
    return {
        "cases": len(rows),
        "private": sum(r.case.is_private for r in rows),
        "public": sum(not r.case.is_private for r in rows),
        "rules_caught": sum(r.rules and r.case.is_private for r in rows),
        "rules_blocked": sum(r.rules and not r.case.is_private for r in rows),
        "added_caught": sum(s > threshold and r.case.is_private for r, s in clean),
        "added_blocked": sum(s > threshold and not r.case.is_private for r, s in clean),
        "added_caught_at_no_added_blocking": sum(s > top_public and r.case.is_private for r, s in clean),
        "threshold": round(threshold, 4),
    }


def leave_one_family_out(rows: list[Scored], extra: list, public: list) -> dict:
    corpus = [(r.family, r.case) for r in rows if r.part == "third-party"]
    results = {}
    for family in FAMILIES:
        training = [(f, c) for f, c in corpus + extra if f != family] + public
        model, threshold = fit(training)
        held_out = [r for r in rows if r.part == "third-party" and r.family == family]
        results[family] = added(held_out, predict(model, [r.case.text for r in held_out]), threshold)
        print(family, results[family], flush=True)
    return results


def latency_ms(path: Path, text: str, rounds: int = 300) -> tuple[float, float]:
    """Median ms for one short chat on one core: (features + onnxruntime, onnxruntime alone)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    whole, model_only = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        ids = features(text)
        t1 = time.perf_counter()
        session.run(None, {"ids": ids})
        t2 = time.perf_counter()
        whole.append(t2 - t0)
        model_only.append(t2 - t1)
    return 1000 * statistics.median(whole), 1000 * statistics.median(model_only)


def cached_generated(path: Path) -> list:
    """extra_cases(), kept at `path` (the generators take minutes on a busy machine)."""
    if not path.exists():
        lines = [
            json.dumps([f, c.kind, c.language, c.text, c.is_private], ensure_ascii=False)
            for f, c in extra_cases()
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(f, Case(kind, language, text, private, f)) for f, kind, language, text, private in rows]


def summed(results: dict) -> dict:
    keys = ("cases", "private", "public", "rules_caught", "rules_blocked", "added_caught")
    keys += ("added_blocked", "added_caught_at_no_added_blocking")
    return {key: sum(r[key] for r in results.values()) for key in keys}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/privacy_learned"))
    args = parser.parse_args()
    rows = cached_corpus(args.out / "corpus.jsonl")
    extra, public = cached_generated(args.out / "generated.jsonl"), wordfreq_cases()
    print(f"{len(rows)} corpus cases, {len(extra)} more generated, {len(public)} wordfreq", flush=True)
    by_family = leave_one_family_out(rows, extra, public)
    everything = [(r.family, r.case) for r in rows if r.part == "third-party"] + extra + public
    model, threshold = fit(everything)
    dev = [r for r in rows if r.part == "dev"]
    dev_result = added(dev, predict(model, [r.case.text for r in dev]), threshold)
    path = args.out / "privacy_learned.onnx"
    export(model, path)
    whole_ms, model_ms = latency_ms(path, SHORT_CHAT)
    report = {
        "third_party_by_family": by_family,
        "third_party": summed(by_family),
        "dev": dev_result,
        "model_bytes": path.stat().st_size,
        "short_chat_ms": {"features_and_model": round(whole_ms, 3), "model": round(model_ms, 3)},
    }
    (args.out / "privacy_learned.json").write_text(json.dumps(report, indent=1, default=int))
    print(json.dumps(report, indent=1, default=int))


if __name__ == "__main__":
    main()
