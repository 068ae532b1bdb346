"""`hybridgw quantize IN OUT --type T`: requantize a GGUF model, tensor by tensor.

Like llama-quantize: 2-D `*.weight` tensors are converted to the target type (already-target
tensors are copied byte for byte), the output projection to 8 bits (`tensor_target`); norms,
biases and any tensor whose rows do not hold whole blocks keep their type. Metadata is copied
with its exact types; `general.file_type` is updated.
"""

from pathlib import Path

from formats import quants
from formats.errors import QuantizationError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_reader import GGUFReader, Tensor
from formats.gguf_writer import GGUFWriter, copy_fields
from formats.progress import byte_progress

# llama_ftype values for general.file_type
FILE_TYPES = {
    GGMLType.F32: 0,
    GGMLType.F16: 1,
    GGMLType.Q4_0: 2,
    GGMLType.Q4_1: 3,
    GGMLType.Q8_0: 7,
    GGMLType.Q5_0: 8,
    GGMLType.Q5_1: 9,
    GGMLType.BF16: 32,
}


# The output projection keeps more bits, as llama.cpp's quantizer does (Q6_K where its rows hold
# whole super-blocks, Q8_0 otherwise; we write Q8_0 in both cases until we quantize to Q6_K).
OUTPUT_TENSOR_TYPE = GGMLType.Q8_0
_LOW_BIT_TARGETS = frozenset((GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1))


def tensor_target(name: str, target: GGMLType, has_output: bool) -> GGMLType:
    """The type a tensor gets when a model is quantized to `target`: the output projection (or
    the token embedding a model with tied embeddings uses as one) gets OUTPUT_TENSOR_TYPE."""
    is_output = name == "output.weight" or (not has_output and name == "token_embd.weight")
    return OUTPUT_TENSOR_TYPE if is_output and target in _LOW_BIT_TARGETS else target


def should_requantize(tensor: Tensor, target: GGMLType) -> bool:
    return (
        len(tensor.shape) >= 2
        and tensor.name.endswith(".weight")
        and tensor.shape[-1] % BLOCK_GEOMETRY[target].block_size == 0
        and tensor.ggml_type in quants.DEQUANTIZABLE_TYPES
        and tensor.ggml_type != target
    )


def quantize_model(in_path: Path, out_path: Path, target: GGMLType, progress: bool = True) -> None:
    if target not in FILE_TYPES:
        raise QuantizationError(f"cannot quantize a model to {target.name}")
    if Path(out_path).resolve() == Path(in_path).resolve():
        raise QuantizationError("output must be a different file than the input")
    reader = GGUFReader(in_path)
    writer = GGUFWriter(alignment=reader.alignment)
    copy_fields(writer, reader.fields.values(), skip=("general.file_type", "general.quantization_version"))
    writer.add_uint32("general.file_type", FILE_TYPES[target])
    writer.add_uint32("general.quantization_version", 2)
    has_output = "output.weight" in reader.tensors
    for tensor in reader.tensors.values():
        tensor_type = tensor_target(tensor.name, target, has_output)
        if should_requantize(tensor, tensor_type):
            writer.add_tensor(tensor.name, _requantized(tensor, tensor_type), tensor_type, tensor.shape)
        else:
            writer.add_tensor(tensor.name, tensor.data, tensor.ggml_type, tensor.shape)
    total = sum(t.nbytes for t in reader.tensors.values())
    bar = byte_progress(total, f"quantizing to {target.name}", progress)
    with bar:
        writer.write(out_path, on_tensor=lambda name, _: bar.update(reader.tensors[name].nbytes))


def _requantized(tensor: Tensor, target: GGMLType):
    return lambda: quants.quantize(quants.dequantize(tensor.data, tensor.ggml_type), target)
