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
    r"\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
    r"\s+$",
    r"[一-龥ࠀ-一가-퟿]+",
    r"\p{N}+",
]
DEEPSEEK_CODER = [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"]
STARCODER = [r"\p{N}", GPT2]

PRE_TOKENIZER_REGEXES: dict[str, list[str]] = {
    "default": [GPT2],
    "gpt2": [GPT2],
    "mpt": [GPT2],
    "olmo": [GPT2],
    "jais": [GPT2],
    "llama3": [LLAMA3],
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
IGNORE_MERGES = frozenset({"llama3", "llama-bpe", "dbrx", "smaug-bpe"})
