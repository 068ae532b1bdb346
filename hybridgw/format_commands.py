"""`hybridgw tokenize|quantize|convert`: the format layer from the command line."""

import argparse
import json
from pathlib import Path

from formats.chat_template import chat_template_for
from formats.gguf_reader import GGUFReader
from formats.quant_mixes import MIXES
from formats.tokenizer import GGUFTokenizer

QUANTIZE_TYPES = tuple(MIXES)  # llama.cpp's per-tensor mixes (formats/quant_mixes.py)
CONVERT_TYPES = tuple(MIXES)


def register(commands: argparse._SubParsersAction) -> None:
    tokenize = commands.add_parser("tokenize", help="token ids of a text, as the model's tokenizer sees it")
    tokenize.add_argument("--model", "-m", type=Path, required=True, help="GGUF file")
    tokenize.add_argument("--json", action="store_true", help="print only the ids, as JSON")
    tokenize.add_argument("--no-add-special", action="store_true", help="do not add BOS/EOS")
    tokenize.add_argument("--no-parse-special", action="store_true", help="treat <|...|> text as plain text")
    tokenize.add_argument("--chat", action="store_true", help="wrap TEXT as a user turn in the chat template")
    tokenize.add_argument("text")
    tokenize.set_defaults(handler=_tokenize)

    quantize = commands.add_parser("quantize", help="requantize a GGUF model")
    quantize.add_argument("input", type=Path)
    quantize.add_argument("output", type=Path)
    quantize.add_argument("--type", required=True, choices=QUANTIZE_TYPES)
    quantize.set_defaults(handler=_quantize)

    convert = commands.add_parser(
        "convert",
        help="Hugging Face checkpoint -> GGUF, or GGUF -> safetensors checkpoint (--to safetensors)",
    )
    convert.add_argument(
        "input", type=Path, help="checkpoint directory, or a .gguf file with --to safetensors"
    )
    convert.add_argument("output", type=Path)
    convert.add_argument("--type", default="f16", choices=CONVERT_TYPES, help="GGUF tensor type")
    convert.add_argument("--to", default="gguf", choices=("gguf", "safetensors"))
    convert.set_defaults(handler=_convert)


def _tokenize(args: argparse.Namespace) -> None:
    reader = GGUFReader(args.model)
    tokenizer = GGUFTokenizer.from_metadata(reader.metadata)
    text = args.text
    if args.chat:
        text = chat_template_for(reader.metadata).render([{"role": "user", "content": text}])
        if not args.json:
            print(text)
    ids = tokenizer.encode(text, add_special=not args.no_add_special, parse_special=not args.no_parse_special)
    if args.json:
        print(json.dumps(ids))
        return
    for token_id in ids:
        piece = tokenizer.piece(token_id)
        # A token holding part of a character has no text of its own: show its vocabulary entry.
        shown = (
            repr(piece)
            if "\ufffd" not in piece
            else f"{tokenizer.token_text(token_id)!r} (partial character)"
        )
        print(f"{token_id:>8} -> {shown}")


def _quantize(args: argparse.Namespace) -> None:
    from formats.quantize_model import quantize_model

    quantize_model(args.input, args.output, args.type)
    print(args.output)


def _convert(args: argparse.Namespace) -> None:
    if args.to == "safetensors":
        from formats.convert_gguf import gguf_to_safetensors

        gguf_to_safetensors(args.input, args.output)
    else:
        from formats.convert_hf import convert_hf_to_gguf

        convert_hf_to_gguf(args.input, args.output, args.type)
    print(args.output)
