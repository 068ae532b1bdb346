"""Texts whose token ids must match llama.cpp's exactly."""

CORPUS = [
    "Hello world",
    "Hello, world! How's it going? I'm fine, you're great, we'll see, they've gone, he'd go.",
    "The quick brown fox jumps over the lazy dog.",
    "def fibonacci(n: int) -> int:\n    if n < 2:\n        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    'for (int i = 0; i < 10; ++i) { printf("%d\\n", i); }',
    "   leading spaces",
    "trailing spaces   ",
    "multiple    spaces\tand\ttabs\n\n\nand newlines\r\nwindows",
    " ",
    "\n",
    "",
    "1234567890 3.14159 -42 1e10 0x1F",
    "日本語のテキストです。中文文本。한국어 텍스트.",
    "Emoji: 🎉🚀👍🏽 👨‍👩‍👧 ❤️",
    "Ünïcödé àccents: café, naïve, résumé, Straße, ÆØÅ",
    "Ελληνικά και русский текст",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>text after special<|im_end|>",
    "Mixed CAPS and lower: HTTPServer, getHTTPResponse, snake_case_name",
    "URLs: https://example.com/path?query=1&x=y#frag and emails: a.b@example.org",
    "Punctuation!!! ??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((())) [[]] {{}}",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE",
    "\u00a0non-breaking\u2003em space\u200bzero width",
]
