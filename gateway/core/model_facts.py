"""What a served model's file says about it, for APIs that describe models (Ollama's /api/tags,
/api/show, /api/ps): its size, digest, architecture, parameter count and main weight type, read
from the GGUF header once at load (the weights are never read)."""

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from formats.gguf_reader import GGUFReader

DIGEST_BYTES = 1 << 20  # the digest covers the header and first tensors: a file's identity, cheaply


@dataclass(frozen=True, slots=True)
class ModelFacts:
    path: str
    size_bytes: int
    digest: str  # sha256 of the file's first MiB and its size (not the whole file: a 10 GB read)
    architecture: str
    parameters: int
    quantization: str  # the weight type most of its parameters have (Q4_K, Q8_0, F16, ...)

    @staticmethod
    def read(reader: GGUFReader, path: str | Path) -> "ModelFacts":
        size = Path(path).stat().st_size
        with open(path, "rb") as file:
            digest = hashlib.sha256(file.read(DIGEST_BYTES) + str(size).encode()).hexdigest()
        by_type: Counter[str] = Counter()
        for tensor in reader.tensors.values():
            by_type[tensor.ggml_type.name] += tensor.num_elements
        return ModelFacts(
            str(path),
            size,
            digest,
            str(reader.get("general.architecture", "unknown")),
            sum(by_type.values()),
            by_type.most_common(1)[0][0] if by_type else "unknown",
        )

    @property
    def parameter_size(self) -> str:
        """Ollama's way: 135M, 7.2B."""
        if self.parameters >= 1e9:
            return f"{self.parameters / 1e9:.1f}B"
        return f"{round(self.parameters / 1e6)}M"
