"""Record llama.cpp's token ids for the tokenizer corpus (run with llama-cpp-python installed).

    python benchmarks/reference/record_llamacpp_tokens.py MODEL.gguf > tests/formats/llamacpp_token_ids.json

The output is checked in; tests compare our tokenizer against it without needing llama.cpp.
"""

import json
import sys

import llama_cpp

sys.path.insert(0, ".")
from tests.formats.tokenizer_corpus import CORPUS


def main() -> None:
    model = llama_cpp.Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
    cases = []
    for text in CORPUS:
        for parse_special in (True, False):
            ids = model.tokenize(text.encode("utf-8"), add_bos=False, special=parse_special)
            cases.append({"text": text, "parse_special": parse_special, "ids": ids})
    lines = [json.dumps(case, ensure_ascii=False) for case in cases]
    print(f'{{"llama_cpp_python": "{llama_cpp.__version__}", "cases": [\n' + ",\n".join(lines) + "\n]}")


if __name__ == "__main__":
    main()
