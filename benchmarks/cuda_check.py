"""The cloud engine on a GPU: greedy parity with transformers, then the throughput benchmark.

    .venv/bin/python benchmarks/cuda_check.py [--model FILE | --shape-of DIR] [--vllm-python PY]
        [--rounds 2] [--num-requests 16] [--parity-only]

The one prepared script for a lent GPU machine (issue 21, point 6); it runs on the CPU as well,
which is how it is checked where no GPU is. Part 1: seeded token prompts through `cloud.LLM` and
through transformers' `generate`, both greedy on the same device, float32 (TF32 off on CUDA): the
generated ids must be equal, request by request; bfloat16 is reported as the share of requests
whose ids are equal (different kernels round differently). Part 2: benchmarks/cloud_throughput.py
on the same device and dtypes, with vLLM's build when `--vllm-python` names one. Exits non-zero
when the float32 parity fails.

A device machine that reaches no registry and takes no file as large as the demo model gets
`--shape-of DIR`: a folder with the demo model's config.json and tokenizer files (`hybridgw
convert MODEL.gguf DIR --to safetensors`, less the weights); the script writes a model of that
architecture with seeded random weights through transformers and converts it to a float32 GGUF.
Same shapes, so the same work per token; the parity is checked on those weights.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import cloud_throughput

PARITY_REQUESTS = 8
PARITY_TOKENS = 32


def parity(model: str, dtype: str) -> list[bool]:
    """Per request: whether our greedy ids equal transformers' on this machine's device."""
    import torch
    import transformers

    from cloud import LLM, SamplingParams
    from cloud.engine.llm_engine import default_device

    device = default_device()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    path = Path(model)
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=getattr(torch, dtype)
    )
    reference = reference.to(device).eval()
    prompts = [p for p, _ in cloud_throughput.workload(PARITY_REQUESTS, reference.config.vocab_size, False)]
    llm = LLM(model, dtype=dtype, kv_cache_gib=1.0)
    params = SamplingParams(temperature=0, max_tokens=PARITY_TOKENS, ignore_eos=True)
    ours = [output.token_ids for output in llm.generate(prompts, params)]
    same = []
    with torch.inference_mode():
        for prompt, got in zip(prompts, ours, strict=True):
            ids = torch.tensor([prompt], device=device)
            expected = reference.generate(
                input_ids=ids, max_new_tokens=PARITY_TOKENS, min_new_tokens=PARITY_TOKENS, do_sample=False
            )[0, len(prompt) :].tolist()
            same.append(list(got) == expected)
    return same


def random_model_of_shape(shape_dir: str, out_dir: Path) -> str:
    """A float32 GGUF of the architecture in `shape_dir` (config.json, tokenizer files), with
    random weights (seed 0) written by transformers: the demo model's work per token."""
    import shutil

    import torch
    import transformers

    from formats.convert_hf import convert_hf_to_gguf

    torch.manual_seed(0)
    config = transformers.AutoConfig.from_pretrained(shape_dir)
    model = transformers.AutoModelForCausalLM.from_config(config)
    model.save_pretrained(out_dir, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(Path(shape_dir) / name, out_dir / name)
    gguf_path = out_dir / "model.f32.gguf"
    convert_hf_to_gguf(out_dir, gguf_path, "f32", progress=False)
    return str(gguf_path)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--shape-of", help="a config.json and tokenizer folder: random weights of that shape")
    parser.add_argument("--vllm-python")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--num-requests", type=int, default=16, help="of the throughput workload")
    parser.add_argument("--parity-only", action="store_true", help="skip the throughput part")
    args = parser.parse_args()
    if args.shape_of:
        out_dir = Path(tempfile.mkdtemp(prefix="shape-"))
        model = random_model_of_shape(args.shape_of, out_dir)
    else:
        model = args.model or cloud_throughput.default_model()
    import torch

    print(f"device: {torch.cuda.get_device_name() if torch.cuda.is_available() else 'CPU'}")
    exact = parity(model, "float32")
    print(f"float32 greedy parity with transformers: {sum(exact)}/{len(exact)} requests identical")
    close = parity(model, "bfloat16")
    print(f"bfloat16 greedy parity with transformers: {sum(close)}/{len(close)} requests identical")
    command = [sys.executable, cloud_throughput.__file__, "--model", model, "--rounds", str(args.rounds)]
    command += ["--num-requests", str(args.num_requests)]
    command += ["--dtypes", "bfloat16,float32"] + (
        ["--vllm-python", args.vllm_python] if args.vllm_python else []
    )
    if not args.parity_only:
        subprocess.run(command, check=True)
    if not all(exact):
        raise SystemExit("float32 greedy tokens differ from transformers'")


if __name__ == "__main__":
    main()
