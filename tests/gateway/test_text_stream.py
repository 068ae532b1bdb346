"""TextStream: token ids -> text at the gateway, stop strings applied there, never a partial stop
string sent (checked on the demo model's byte-level vocabulary)."""

import pytest

from formats.tokenizer import GGUFTokenizer
from gateway.output.text_stream import TextStream

TEXT = "The quick brown fox jumps over the lazy dog. Ünïcödé: 日本語 and emoji 🙂 end."


@pytest.fixture(scope="module")
def tokenizer(demo_model_path) -> GGUFTokenizer:
    return GGUFTokenizer.from_file(demo_model_path)


def _run(stream: TextStream, ids: list[int]) -> list[str]:
    """Every push's output and then finish's; stops pushing once the stream has stopped."""
    out = []
    for token_id in ids:
        out.append(stream.push(token_id))
        if stream.stopped:
            break
    out.append(stream.finish())
    return out


def test_without_stop_strings_the_pieces_are_the_decoded_text(tokenizer):
    ids = tokenizer.encode(TEXT, add_special=False)
    assert "".join(_run(TextStream(tokenizer, []), ids)) == tokenizer.decode(ids, skip_special=True)


@pytest.mark.parametrize("stop", ["lazy dog", "x", "🙂", "dog. Ü", "fox jumps"])
def test_the_text_ends_before_the_first_stop_string_and_none_of_it_is_sent(tokenizer, stop):
    ids = tokenizer.encode(TEXT, add_special=False)
    full = tokenizer.decode(ids, skip_special=True)
    stream = TextStream(tokenizer, [stop, "never there"])
    pieces = _run(stream, ids)
    sent = "".join(pieces)
    if stop in full:
        assert stream.stopped and sent == full[: full.index(stop)]
    else:
        assert not stream.stopped and sent == full
    for end in range(len(pieces)):  # every prefix sent is a prefix of the final text
        assert sent.startswith("".join(pieces[:end]))


def test_a_stop_string_split_across_tokens_is_held_back_until_it_is_decided(tokenizer):
    ids = tokenizer.encode("abc lazy dog", add_special=False)
    stream = TextStream(tokenizer, ["lazy dogs"])  # its beginning appears, the whole never does
    pieces = _run(stream, ids)
    assert not stream.stopped
    assert "".join(pieces[:-1]) == "abc "  # " lazy dog" may still become "lazy dogs": held back
    assert "".join(pieces) == "abc lazy dog"  # released at the end of the stream
