"""Record llama.cpp's token ids on small vocabularies, one per pre-tokenizer and one SentencePiece.

    python benchmarks/reference/record_llamacpp_tiny_vocabs.py > tests/formats/llamacpp_tiny_vocab_ids.json

Each vocabulary is trained here (tokenizers' BPE trainer, sentencepiece's BPE trainer) and stored
in the output together with the ids llama.cpp (and, for SentencePiece, sentencepiece itself)
produces, so the tests need neither trainer determinism nor llama.cpp.
"""

import io
import json
import sys
import tempfile
from pathlib import Path

import llama_cpp
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

sys.path.insert(0, ".")
from formats.gguf_values import GGUFValueType
from formats.gguf_writer import GGUFWriter
from tests.formats.tokenizer_corpus import CORPUS

PRE_TYPES = ["gpt-2", "llama-bpe", "qwen2", "smollm", "starcoder", "deepseek-llm", "deepseek-coder"]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TRAINING_TEXT = CORPUS * 3 + ["The cat sat on the mat. " * 5, "import numpy as np\nx = np.zeros((3, 4))\n"]


def byte_level_vocab() -> dict:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer)
    spec = json.loads(tokenizer.to_str())["model"]
    id_to_token = {i: t for t, i in spec["vocab"].items()}
    tokens = [id_to_token[i] for i in range(len(id_to_token))]
    return {
        "model": "gpt2",
        "tokens": tokens,
        "token_type": [3 if t in SPECIALS else 1 for t in tokens],
        "merges": [m if isinstance(m, str) else " ".join(m) for m in spec["merges"]],
        "bos_token_id": tokens.index("<|im_start|>"),
        "eos_token_id": tokens.index("<|im_end|>"),
    }


def sentencepiece_vocab() -> tuple[dict, spm.SentencePieceProcessor]:
    stream = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAINING_TEXT),
        model_writer=stream,
        vocab_size=500,
        model_type="bpe",
        byte_fallback=True,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        split_digits=True,
        character_coverage=0.98,
        user_defined_symbols=["<|im_start|>", "<|im_end|>"],
        allow_whitespace_only_pieces=True,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(stream.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=stream.getvalue())
    vocab = {
        "model": "llama",
        "tokens": [p.piece for p in proto.pieces],
        "scores": [p.score for p in proto.pieces],
        "token_type": [int(p.type) for p in proto.pieces],
        "bos_token_id": processor.bos_id(),
        "eos_token_id": processor.eos_id(),
        "unknown_token_id": processor.unk_id(),
    }
    return vocab, processor


def write_gguf(path: Path, vocab: dict, pre: str | None) -> None:
    writer = GGUFWriter()
    writer.add_string("general.architecture", "llama")
    for key, value in (
        ("context_length", 256),
        ("embedding_length", 64),
        ("block_count", 1),
        ("feed_forward_length", 128),
        ("attention.head_count", 4),
        ("vocab_size", len(vocab["tokens"])),
    ):
        writer.add_uint32(f"llama.{key}", value)
    writer.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    writer.add_string("tokenizer.ggml.model", vocab["model"])
    if pre is not None:
        writer.add_string("tokenizer.ggml.pre", pre)
    writer.add_array("tokenizer.ggml.tokens", vocab["tokens"], GGUFValueType.STRING)
    writer.add_array("tokenizer.ggml.token_type", vocab["token_type"], GGUFValueType.INT32)
    if "merges" in vocab:
        writer.add_array("tokenizer.ggml.merges", vocab["merges"], GGUFValueType.STRING)
    if "scores" in vocab:
        writer.add_array("tokenizer.ggml.scores", vocab["scores"], GGUFValueType.FLOAT32)
    for name in ("bos", "eos", "unknown"):
        if f"{name}_token_id" in vocab:
            writer.add_uint32(f"tokenizer.ggml.{name}_token_id", vocab[f"{name}_token_id"])
    writer.write(path)


def llama_cpp_ids(path: Path) -> list[dict]:
    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    return [
        {
            "text": text,
            "parse_special": special,
            "ids": model.tokenize(text.encode(), add_bos=False, special=special),
        }
        for text in CORPUS
        for special in (True, False)
    ]


def main() -> None:
    out = {"llama_cpp_python": llama_cpp.__version__, "vocabularies": []}
    with tempfile.TemporaryDirectory() as scratch:
        bpe = byte_level_vocab()
        for pre in PRE_TYPES:
            path = Path(scratch) / f"{pre}.gguf"
            write_gguf(path, bpe, pre)
            out["vocabularies"].append({"pre": pre, "vocab": bpe, "cases": llama_cpp_ids(path)})
        sp_vocab, processor = sentencepiece_vocab()
        path = Path(scratch) / "spm.gguf"
        write_gguf(path, sp_vocab, None)
        cases = llama_cpp_ids(path)
        for case in cases:
            case["sentencepiece_ids"] = processor.encode(case["text"])
        out["vocabularies"].append({"pre": None, "vocab": sp_vocab, "cases": cases})
    json.dump(out, sys.stdout, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
