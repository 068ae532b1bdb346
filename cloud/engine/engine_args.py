"""vLLM's engine arguments as its users write them: `dtype` by name or as a torch dtype, the KV
cache as a share of free memory (`gpu_memory_utilization`), `enforce_eager`, `seed`; anything
else that LLMEngine does not take is an error naming it."""

import inspect
from pathlib import Path

import torch

DTYPES = {
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "half": torch.float16,
    "fp16": torch.float16,
    "float32": torch.float32,
    "float": torch.float32,
    "fp32": torch.float32,
}
MEMINFO = Path("/proc/meminfo")
CPUINFO = Path("/proc/cpuinfo")
BF16_FLAGS = {"avx512_bf16", "amx_bf16"}


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    """ "auto": bfloat16 on a GPU and on a CPU with bfloat16 dot-product instructions (AVX-512
    BF16 or AMX: 1.5x float32's throughput on the benchmark's workload), else float32 (without
    them bfloat16 is emulated and slower). The weights are dequantized from GGUF's blocks either
    way."""
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPES.values():
            raise ValueError(f"dtype {dtype} is not supported: one of bfloat16, float16, float32")
        return dtype
    if not isinstance(dtype, str):
        raise ValueError(f"dtype must be a string or a torch dtype, not {type(dtype).__name__}")
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" or cpu_has_bfloat16() else torch.float32
    if dtype.lower() not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not supported: auto, {', '.join(sorted(set(DTYPES)))}")
    return DTYPES[dtype.lower()]


def cpu_has_bfloat16(cpuinfo: Path = CPUINFO) -> bool:
    """Whether this CPU computes bfloat16 dot products natively (Linux's CPU flags)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    lines = (line for line in text.splitlines() if line.startswith("flags") and ":" in line)
    flags = next(lines, ":").split(":", 1)[1].split()
    return bool(BF16_FLAGS & set(flags))


def free_memory_bytes(device: torch.device) -> int:
    """Free memory where the KV cache goes: the GPU's, or the machine's available RAM."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    for line in MEMINFO.read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("cannot read the available memory from /proc/meminfo")


def kv_cache_gib_for(gpu_memory_utilization: float, device: torch.device) -> float:
    """vLLM's `gpu_memory_utilization` as a KV-cache size: that share of the free memory (after
    the weights are loaded)."""
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError("gpu_memory_utilization must be in (0, 1]")
    return gpu_memory_utilization * free_memory_bytes(device) / (1 << 30)


def check_engine_args(engine_class: type, engine_args: dict) -> None:
    """A clear error for an argument the engine does not take (vLLM's names listed)."""
    known = set(inspect.signature(engine_class.__init__).parameters) - {"self", "model"}
    unknown = sorted(set(engine_args) - known)
    if unknown:
        raise ValueError(
            f"LLM() got unknown argument(s) {', '.join(unknown)}; it takes: "
            f"{', '.join(sorted(known | {'seed', 'enforce_eager'}))}"
        )
