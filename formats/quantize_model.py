"""`hybridgw quantize IN OUT --type T`: requantize a GGUF model, tensor by tensor.

Like llama-quantize: 2-D `*.weight` tensors are converted to the target type (already-target
tensors are copied byte for byte); norms, biases and any tensor whose rows do not hold whole
blocks keep their type. Metadata is copied with its exact types; `general.file_type` is updated.
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
    for tensor in reader.tensors.values():
        if should_requantize(tensor, target):
            writer.add_tensor(tensor.name, _requantized(tensor, target), target, tensor.shape)
        else:
            writer.add_tensor(tensor.name, tensor.data, tensor.ggml_type, tensor.shape)
    total = sum(t.nbytes for t in reader.tensors.values())
    bar = byte_progress(total, f"quantizing to {target.name}", progress)
    with bar:
        writer.write(out_path, on_tensor=lambda name, _: bar.update(reader.tensors[name].nbytes))


def _requantized(tensor: Tensor, target: GGMLType):
    return lambda: quants.quantize(quants.dequantize(tensor.data, tensor.ggml_type), target)
