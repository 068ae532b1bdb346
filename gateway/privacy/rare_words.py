"""Whether a capitalized word is rare as an ordinary word (wordfreq, a maintained word-frequency
list of 40+ languages): a name-shaped word that no language uses much ("Balashova",
"Kristensen") against "Customer", "Support", "Paris". For the few places where a name is
expected but no list knows it (after a name field)."""

import functools

RARE_ZIPF = 3.0  # below this in every language asked: about once in ten million words or less
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")


@functools.lru_cache(maxsize=4096)
def rare_word(word: str) -> bool:
    from wordfreq import zipf_frequency

    return all(zipf_frequency(word, language) < RARE_ZIPF for language in LANGUAGES)
