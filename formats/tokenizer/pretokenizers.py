"""Pre-tokenizer regexes for byte-level BPE vocabularies, keyed by `tokenizer.ggml.pre`.

llama.cpp applies a list of regexes in turn: each splits every piece left by the previous one,
keeping both the matches and the text between them. A `Split(..., behavior="isolated")` per regex
in a `tokenizers` Sequence does exactly that.
"""

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
DEEPSEEK_LLM = [
    r"[\r\n]",
    # cased letters, as code points (immune to NFC edits)
    (
        "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-"
        "\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
        "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-"
        "\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18"
        "-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4"
        "\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2"
        "-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-"
        "\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-"
        "\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-"
        "\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-"
        "\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-"
        "\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
    ),
    r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
    r"\s+$",
    r"[一-龥ࠀ-一가-퟿]+",
    r"\p{N}+",
]
DEEPSEEK_CODER = [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"]
STARCODER = [r"\p{N}", GPT2]

PRE_TOKENIZER_REGEXES: dict[str, list[str]] = {
    "default": [GPT2],
    "gpt-2": [GPT2],
    "gpt2": [GPT2],
    "mpt": [GPT2],
    "olmo": [GPT2],
    "jais": [GPT2],
    "llama3": [LLAMA3],
    "llama-v3": [LLAMA3],
    "llama-bpe": [LLAMA3],
    "dbrx": [LLAMA3],
    "smaug-bpe": [LLAMA3],
    "qwen2": [QWEN2],
    "stablelm2": [QWEN2],
    "deepseek-llm": DEEPSEEK_LLM,
    "deepseek-coder": DEEPSEEK_CODER,
    "starcoder": STARCODER,
    "smollm": STARCODER,
    "refact": STARCODER,
    "command-r": STARCODER,
    "codeshell": STARCODER,
}

# llama.cpp looks a whole pre-token up in the vocabulary before merging for these vocabularies.
IGNORE_MERGES = frozenset({"llama3", "llama-v3", "llama-bpe", "dbrx", "smaug-bpe"})
