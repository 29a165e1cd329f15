"""`delta_hot.hot_text` (the ``feed`` of a stream with its own parser while a text region streams with its
trailing whitespace held back) and the amortized joining of a text region's sent pieces (issue 18, item 1).
The old path (`DeltaStream._feed`, `_take` and `_text_piece` per piece) is the oracle: for any text and any
chunking, every piece gives the deltas it gave before, and the message is `parse_response`'s."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, chunkings

import hf_response_templates.deltas as deltas_module
from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.delta_hot import _LAG_AT
from hf_response_templates.delta_state import _COMPACT_AT
from hf_response_templates.openai import DeltaStream


@contextlib.contextmanager
def old_path() -> Iterator[None]:
    """No `hot_text` within the block: text pieces take `_feed`, `_take` and `_text_piece`."""
    saved = deltas_module.hot_text
    deltas_module.hot_text = lambda ds, r, key: None
    try:
        yield
    finally:
        deltas_module.hot_text = saved


def _per_piece(template, pieces: list[str], parser: bool = False) -> tuple[list[list[dict]], DeltaStream]:
    ds = DeltaStream(ResponseParser(template, CHATML), id_seed=0) if parser else DeltaStream(
        template, prefix=CHATML, id_seed=0
    )
    out = [ds.feed(piece) for piece in pieces]
    out.append(ds.finish())
    assert ds.warnings == []
    return out, ds


# prose with what ends a piece or a region early: trailing whitespace (held back), "<" (the lag's character),
# a delimiter's lead without the delimiter, pieces of the real delimiters, control characters, accents
_WORDS = st.sampled_from(
    ["word", " ", "  ", "\n", "\t", "x < y", "<", "</", "</thi", "<|im", "é", "déjà", "\x00", "\r\n", "42", "a\u2028b"]
)


@settings(**SETTINGS, max_examples=150)
@given(st.data())
def test_text_pieces_give_the_old_deltas(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["smollm3", "qwen3", "hermes3"]))
    reasoning = "".join(data.draw(st.lists(_WORDS, max_size=30)))
    content = "".join(data.draw(st.lists(_WORDS, max_size=30)))
    text = (f"<think>\n{reasoning}\n</think>\n" if name != "hermes3" else "") + content
    if data.draw(st.booleans()):
        text += "<|im_end|>"
    pieces = data.draw(chunkings(text))
    template = get_template(name)
    new, ds = _per_piece(template, pieces)
    with old_path():
        old, _ = _per_piece(template, pieces)
    assert new == old
    assert _per_piece(template, pieces, parser=True)[0] == old  # (a caller's parser: the general path)
    assert ds.message == parse_response(text, template, prefix=CHATML)


def test_a_text_region_streams_through_its_own_feed() -> None:
    """Once a content region's text started, each piece is one call (fails on the old code: no `hot_text`)."""
    template = get_template("smollm3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    text = "<think>\nsome thoughts here\n</think>\nthe answer, at length: " + "ab c " * 2000
    installed = {"reasoning_content": False, "content": False}
    for i in range(0, len(text), 3):
        ds.feed(text[i : i + 3])
        r = ds._open
        if r is not None and r.hot is not None and ds.feed is r.hot:
            installed[r.key] = True
            # the region's sent pieces are joined (amortized): never many more than `_COMPACT_AT`
            assert len(r.sent) < _COMPACT_AT + _LAG_AT + 1
    assert installed == {"reasoning_content": True, "content": True}
    ds.feed("<|im_end|>")
    ds.finish()
    assert ds.feed == ds._feed and ds.warnings == []
    assert ds.message == parse_response(text + "<|im_end|>", template, prefix=CHATML)


def test_a_coalescing_stream_and_one_on_the_callers_parser_take_the_general_path() -> None:
    template = get_template("smollm3")
    text = "<think>\nsome thoughts here\n</think>\nthe answer <|im_end|>"
    for ds in (
        DeltaStream(template, prefix=CHATML, id_seed=0, coalesce_chars=5),
        DeltaStream(ResponseParser(template, CHATML), id_seed=0),
    ):
        feed = ds.feed
        for i in range(0, len(text), 3):
            ds.feed(text[i : i + 3])
            assert ds._open is None or ds._open.hot is None
        assert ds.feed == feed


def test_a_closed_region_lets_go_of_its_feed() -> None:
    """A region's feed holds the region (a reference cycle): its close breaks it, so that the closed region,
    its text and its partial parser are freed without the cyclic collector (fails on the old code for a tool
    region: its `hot` stayed set)."""
    template = get_template("smollm3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    text = '<think>\nsome thoughts here\n</think>\n<tool_call>\n{"name": "f", "arguments": {"a": "xyz uvw"}}\n</tool_call>'
    regions = []
    for i in range(0, len(text), 3):
        ds.feed(text[i : i + 3])
        r = ds._open
        if r is not None and r.hot is not None and ds.feed is r.hot and r not in regions:
            regions.append(r)
    assert [r.kind for r in regions] == ["text", "tool"]
    ds.feed("<|im_end|>")
    ds.finish()
    assert all(r.hot is None for r in regions) and ds.feed == ds._feed
