"""A second architecture for benchmarks/cold_start.py without a model hub: a checkpoint with Gemma 3
270M's shape (18 layers of 640, 4 query heads and 1 KV head of 256, a 2048-wide GELU MLP, five
sliding layers of 512 to one global, post-norms, head norms, tied embeddings), random weights,
the demo model's tokenizer (exported as Hugging Face files), written by transformers, converted
by `hybridgw convert` and quantized to Q4_K_M by `hybridgw quantize`. What a first start compiles
depends on the architecture's paths and the file's weight types, not on trained weights.

    .venv/bin/python benchmarks/gemma3_shaped.py OUT_DIR   # prints the .gguf path
"""

import subprocess
import sys
from pathlib import Path

HYBRIDGW = [sys.executable, "-m", "hybridgw"]
GEMMA3_270M = {
    "hidden_size": 640,
    "intermediate_size": 2048,
    "num_hidden_layers": 18,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "sliding_window": 512,
    "query_pre_attn_scalar": 256,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": True,
    "rope_parameters": {
        "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    },
}


def gemma3_shaped_file(directory: Path) -> Path:
    """The Q4_K_M file (built once per directory)."""
    out = directory / "gemma3-270m-shaped-Q4_K_M.gguf"
    if out.exists():
        return out
    import torch
    import transformers

    from formats.model_pull import DEFAULT_MODEL, model_path

    checkpoint = directory / "gemma3-270m-shaped"
    subprocess.run(
        [*HYBRIDGW, "model", "export-tokenizer", str(model_path(DEFAULT_MODEL)), "--out", str(checkpoint)],
        check=True,
        capture_output=True,
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint)
    config = transformers.Gemma3TextConfig(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id or 0,
        **GEMMA3_270M,
    )
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.normal_(0, 0.1)  # Gemma's norms start at zero (their weight is 1 + w)
    model.save_pretrained(checkpoint, safe_serialization=True)
    f16 = directory / "gemma3-270m-shaped-F16.gguf"
    subprocess.run([*HYBRIDGW, "convert", str(checkpoint), str(f16)], check=True, capture_output=True)
    quantize = [*HYBRIDGW, "quantize", str(f16), str(out), "--type", "q4_k_m"]
    subprocess.run(quantize, check=True, capture_output=True)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    print(gemma3_shaped_file(target))
