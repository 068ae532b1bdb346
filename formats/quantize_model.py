"""`hybridgw quantize IN OUT --type T`: requantize a GGUF model, tensor by tensor.

Like llama-quantize: 2-D `*.weight` tensors take the type the mix gives them
(formats/quant_mixes.py: llama.cpp's per-tensor choices and fallbacks; tensors already of it
are copied byte for byte); norms, biases and any tensor whose rows hold no whole block keep
their type. Metadata is copied with its exact types; `general.file_type` is the mix's.
"""

from pathlib import Path

from formats import quants
from formats.errors import QuantizationError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader, Tensor
from formats.gguf_writer import GGUFWriter, copy_fields
from formats.progress import byte_progress
from formats.quant_mixes import QuantMix, quant_mix, tensor_type


def target_type(tensor: Tensor, mix: QuantMix, num_layers: int, has_output: bool) -> GGMLType:
    """The tensor's type in the quantized file: the mix's choice for 2-D weights that fit its
    blocks; norms, biases and other tensors keep theirs."""
    if (
        len(tensor.shape) < 2
        or not tensor.name.endswith(".weight")
        or tensor.ggml_type not in quants.DEQUANTIZABLE_TYPES
    ):
        return tensor.ggml_type
    chosen = tensor_type(mix, tensor.name, tensor.shape, num_layers, has_output)
    return tensor.ggml_type if chosen == GGMLType.F16 and mix.default != GGMLType.F16 else chosen


def quantize_model(in_path: Path, out_path: Path, target: str | GGMLType, progress: bool = True) -> None:
    mix = quant_mix(target)
    if Path(out_path).resolve() == Path(in_path).resolve():
        raise QuantizationError("output must be a different file than the input")
    reader = GGUFReader(in_path)
    writer = GGUFWriter(alignment=reader.alignment)
    copy_fields(writer, reader.fields.values(), skip=("general.file_type", "general.quantization_version"))
    writer.add_uint32("general.file_type", mix.file_type)
    writer.add_uint32("general.quantization_version", 2)
    has_output = "output.weight" in reader.tensors
    num_layers = int(reader.get(f"{reader.get('general.architecture')}.block_count", 0) or 0)
    for tensor in reader.tensors.values():
        tensor_type = target_type(tensor, mix, num_layers, has_output)
        if tensor_type != tensor.ggml_type:
            writer.add_tensor(tensor.name, _requantized(tensor, tensor_type), tensor_type, tensor.shape)
        else:
            writer.add_tensor(tensor.name, tensor.data, tensor.ggml_type, tensor.shape)
    total = sum(t.nbytes for t in reader.tensors.values())
    bar = byte_progress(total, f"quantizing to {mix.name}", progress)
    with bar:
        writer.write(out_path, on_tensor=lambda name, _: bar.update(reader.tensors[name].nbytes))


def _requantized(tensor: Tensor, target: GGMLType):
    return lambda: quants.quantize(quants.dequantize(tensor.data, tensor.ggml_type), target)
