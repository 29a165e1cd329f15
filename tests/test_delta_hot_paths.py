"""The flat paths of `DeltaStream.feed` (issue 18, item 1): `ResponseParser.feed_chunk` (the chunk text instead
of a ``region_chunk`` event), a text region's chunk taken without dispatch, a string argument and a followed
arguments object. Any chunking: the deltas accumulate to `parse_response`'s message."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, check_text, chunkings

from hf_response_templates import ResponseParser, get_template

# text full of what a text region's flat path must get right: trailing whitespace held back (a piece that is
# only whitespace, whitespace between two pieces), a delimiter's first character that is not a delimiter, and
# characters that need JSON escaping or are not printable
TEXT = st.lists(
    st.sampled_from(["a", "é", " ", "\n", "\t", "<", "<|", "|", ">", "</", '"', "\\", "\x01", "🌧"]), max_size=30
).map("".join)
TEMPLATES = ["smollm3", "hermes3", "qwen3"]


def _events_of_feed_chunk(template, pieces: list[str]) -> list[dict]:
    """`feed_chunk`'s results as events (a string is the region_chunk it stands for)."""
    p = ResponseParser(template, CHATML)
    events: list[dict] = []
    for piece in pieces:
        got = p.feed_chunk(piece)
        if type(got) is str:
            assert got == piece
            field = p.current_field
            assert field is not None
            events.append({"type": "region_chunk", "field": field, "text": got,
                           "dirty": not p.template.by_name[field].streamable})
        else:
            events += got
    return events + p.finalize()[1]


@settings(max_examples=150, **SETTINGS)
@given(name=st.sampled_from(TEMPLATES), reasoning=TEXT, content=TEXT, data=st.data())
def test_feed_chunk_stands_for_exactly_the_events_of_feed(name: str, reasoning: str, content: str, data) -> None:
    """For any text and chunking, `feed_chunk` returns a piece itself only when `feed` would have returned one
    region_chunk of it (of the open region), and `feed`'s events otherwise: the same stream of events."""
    template = get_template(name)
    text = f"<think>\n{reasoning}\n</think>\n{content}<|im_end|>"
    pieces = data.draw(chunkings(text))
    p = ResponseParser(template, CHATML)
    want = [ev for piece in pieces for ev in p.feed(piece)] + p.finalize()[1]
    assert _events_of_feed_chunk(template, pieces) == want


def test_feed_chunk_returns_the_text_only_inside_an_open_region() -> None:
    template = get_template("smollm3")
    p = ResponseParser(template, CHATML)
    assert p.feed_chunk("<think>") == [{"type": "region_open", "field": "reasoning_content"}]  # (events)
    assert p.feed_chunk("\nhm") == "\nhm"  # open, and no delimiter can start in it: the text itself
    assert p.feed_chunk(" more") == " more"  # open, and no delimiter can start in it
    got = p.feed_chunk(" x <")  # `<` may start `</think>`: the general path
    assert type(got) is list
    assert p.feed_chunk("/think>") != "/think>"
    message, _ = p.finalize()
    assert message["reasoning_content"] == "hm more x"


@settings(max_examples=200, **SETTINGS)
@given(name=st.sampled_from(TEMPLATES), reasoning=TEXT, content=TEXT, data=st.data())
def test_text_regions_any_text_any_chunking_equal_parse_response(name: str, reasoning: str, content: str, data):
    """A text region's flat path (trailing whitespace held back until more text or the close)."""
    text = f"<think>\n{reasoning}\n</think>\n{content}<|im_end|>"
    check_text(get_template(name), CHATML, text, data.draw(chunkings(text)), tools=None)


@settings(max_examples=150, **SETTINGS)
@given(value=TEXT, before=TEXT, data=st.data())
def test_a_string_argument_any_chunking_equals_parse_response(value: str, before: str, data) -> None:
    """A string argument on its flat path (text with `"`, `\\`, control characters or `<` leaves it), between
    content and a second, followed member."""
    args = json.dumps({"text": value, "n": 1}, ensure_ascii=data.draw(st.booleans()))
    text = f'{before}<tool_call>\n{{"name": "write", "arguments": {args}}}\n</tool_call><|im_end|>'
    acc = check_text(get_template("hermes3"), CHATML, text, data.draw(chunkings(text)), tools=None)
    assert json.loads(acc["tool_calls"][0]["function"]["arguments"]) == {"text": value, "n": 1}
