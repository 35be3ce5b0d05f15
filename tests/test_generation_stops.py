"""Stop strings are searched only where the text grew (engine/server/generation.py); that must find exactly what
searching the whole text after every token finds, with the tiny model's real tokenizer."""
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.server.generation import Generation


def whole_text_search(tokenizer, ids, stop):
    """The oracle: after each token, every stop string searched in the whole text."""
    for k in range(1, len(ids) + 1):
        text = tokenizer.decode(ids[:k])
        found = [i for i in (text.find(s) for s in stop) if i >= 0]
        if found:
            return text[:min(found)], "stop"
    return tokenizer.decode(ids), None


@settings(max_examples=300, deadline=None)
@given(text=st.text("abé ", max_size=40), stop=st.lists(st.text("abé ", min_size=1, max_size=5), max_size=4))
def test_the_windowed_stop_search_finds_what_a_whole_text_search_finds(tiny, text, stop):
    tokenizer = tiny.tokenizer
    ids = tokenizer.encode(text)
    gen = Generation(tokenizer, stop)
    sent = ""
    for i, t in enumerate(ids):
        sent += gen.add([t], i == len(ids) - 1)
        if gen.finish_reason:
            break
    expected_text, expected_reason = whole_text_search(tokenizer, ids, stop)
    assert (gen.text, gen.finish_reason) == (expected_text, expected_reason)
    if expected_reason is None:
        assert sent == expected_text  # streamed pieces add up to the text


def streamed(tokenizer, ids) -> str:
    """The text an API stream sends for `ids`, piece by piece, joined."""
    gen = Generation(tokenizer, [])
    return "".join(gen.add([t], i == len(ids) - 1) for i, t in enumerate(ids))


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.integers(0, 258), max_size=60))
def test_the_pieces_streamed_add_up_to_the_whole_decoded_text(tiny, ids):
    """Any bytes, broken UTF-8 included: decoding only what is new gives what decoding everything gives."""
    assert streamed(tiny.tokenizer, ids) == tiny.tokenizer.decode(ids)
