"""Training data and training of the small learned privacy classifier (issue 61 point 5 (c)):
third-party material only, every example tagged with the source family it came from so that a
family can be held out whole.

- the corpus's third-party cases (tests/gateway/privacy_thirdparty/), by family;
- more of the same generators with other seeds: Faker in every locale, presidio-evaluator's
  sentence generator, detect-secrets' plugin regexes (family = the generator's);
- public text: sequences of wordfreq's most frequent words in the 13 languages (family
  "wordfreq"), never held out.
"""

import functools
import random

import numpy as np
import torch

from benchmarks.privacy_learned_features import BUCKETS, features
from tests.gateway.privacy_thirdparty import faker_locales, presidio_generated, secret_shapes
from tests.gateway.privacy_thirdparty.case import Case

LANGUAGES = ("en", "zh", "de", "fr", "es", "ja", "ko", "pt", "it", "nl", "ru", "hi", "ar")
EXTRA_SEEDS = (1061, 2061)
DIM = 16


def extra_cases() -> list[tuple[str, Case]]:
    """(family, case) from the generators run again with other seeds."""
    out = []
    for seed in EXTRA_SEEDS:
        faker_locales.SEED = presidio_generated.SEED = secret_shapes.SEED = seed
        try:
            out += [("faker", c) for c in faker_locales.faker_cases()]
            for sample in presidio_generated.generate():
                labelled = presidio_generated.label(sample)
                if labelled is not None:
                    out.append(
                        ("presidio-evaluator", Case(labelled[0], "en", sample["text"], labelled[1], ""))
                    )
            carriers = secret_shapes.CARRIERS
            for i, sample in enumerate(secret_shapes.generate()):
                text = carriers[i % len(carriers)].format(sample["line"])
                out.append(("detect-secrets", Case("secret", "en", text, True, "")))
        finally:
            faker_locales.SEED = presidio_generated.SEED = secret_shapes.SEED = 61
    return out


def wordfreq_cases(per_language: int = 150, seed: int = 61) -> list[tuple[str, Case]]:
    """Public: 6-24 of a language's 3,000 most frequent words in a row."""
    from wordfreq import top_n_list

    rng, out = random.Random(seed), []
    for language in LANGUAGES:
        words = top_n_list(language, 3000)
        joiner = "" if language in ("zh", "ja") else " "
        for _ in range(per_language):
            text = joiner.join(rng.choice(words) for _ in range(rng.randint(6, 24)))
            out.append(("wordfreq", Case("sentence", language, text, False, "wordfreq")))
    return out


@functools.cache  # each fold trains and scores the same texts: their ids once
def text_ids(text: str) -> torch.Tensor:
    return torch.from_numpy(features(text))


class BagModel(torch.nn.Module):
    """Mean of the ids' embeddings, one hidden layer, the probability of "private"."""

    def __init__(self, buckets: int = BUCKETS, dim: int = DIM):
        super().__init__()
        self.embedding = torch.nn.Embedding(buckets, dim)
        self.hidden = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, 1)

    def head(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(pooled))).squeeze(-1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # one text: (n,) -> () probability
        return torch.sigmoid(self.head(self.embedding(ids).mean(0, keepdim=True)))[0]


def train(texts: list[str], labels: list[bool], epochs: int = 4, seed: int = 61) -> BagModel:
    torch.manual_seed(seed)
    model = BagModel()
    bag = torch.nn.EmbeddingBag.from_pretrained(
        model.embedding.weight, freeze=False, mode="mean", sparse=True
    )
    model.embedding.weight = bag.weight  # one tensor: trained through the bag, exported as Embedding
    ids = [text_ids(t) for t in texts]
    y = torch.tensor(labels, dtype=torch.float32)
    positive = float(y.mean())
    weights = torch.where(y > 0, 0.5 / positive, 0.5 / (1 - positive))
    dense = [*model.hidden.parameters(), *model.out.parameters()]
    optimizers = (torch.optim.SparseAdam([bag.weight], lr=0.02), torch.optim.Adam(dense, lr=0.02))
    order = np.random.default_rng(seed)
    for _ in range(epochs):
        for batch in np.array_split(order.permutation(len(ids)), max(1, len(ids) // 128)):
            flat = torch.cat([ids[i] for i in batch])
            offsets = torch.tensor(np.cumsum([0] + [len(ids[i]) for i in batch[:-1]]))
            logits = model.head(bag(flat, offsets))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, y[batch], weight=weights[batch]
            )
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
    return model


def predict(model: BagModel, texts: list[str]) -> np.ndarray:
    with torch.no_grad():
        return np.array([float(model(text_ids(t))) for t in texts])


def export(model: BagModel, path) -> None:
    """To ONNX (opset 17): input `ids` (n,) int64, output `private` () float32."""
    model.eval()
    torch.onnx.export(
        model,
        (torch.zeros(3, dtype=torch.int64),),
        str(path),
        dynamo=False,
        input_names=["ids"],
        output_names=["private"],
        dynamic_axes={"ids": {0: "n"}},
        opset_version=17,
    )
