"""A sunk string argument (`_Region.sink`) keeps its pieces in one list: the partial parser's pieces of the string,
with `call.parts` brought up to date later (`_Call.run`, `delta_state._fold` / `_unsink`); the pieces are joined
in amortized linear time (`delta_state._join_pieces`); a followed string stays sunk across an escape; a tool
region's feed (`delta_hot.hot_feed`) hands over at the region's close; call ids are drawn in one call
(`delta_state._random_id`). Issue 18, item 1 (DeltaStream cost per piece)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, chunkings

from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.delta_hot import _LAG_AT
from hf_response_templates.delta_state import _COMPACT_AT, _ID_CHARS, _join_pieces, _random_id
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import json_reader

TEXTS = st.lists(
    st.sampled_from(["a", "é", " ", "x < y", '"', "\\", "\n", "\x01", "\u2028", "🌧", "\ud800", "word ", "<", "}"]),
    max_size=30,
).map("".join)


def _check_sent_per_piece(ds: DeltaStream, pieces: list[str]) -> list[list[dict]]:
    """Feed `pieces`; after each, every call's `sent` is what its argument fragments so far add up to."""
    sent: dict[int, str] = {}
    out = []
    for piece in pieces:
        deltas = ds.feed(piece)
        out.append(deltas)
        for d in deltas:
            for tc in d.get("tool_calls", ()):
                sent[tc["index"]] = sent.get(tc["index"], "") + tc.get("function", {}).get("arguments", "")
        for call in ds._calls:
            assert call.sent == sent.get(call.index, ""), (piece, call.index)
    out.append(ds.finish())
    assert ds.warnings == []
    return out


@settings(max_examples=150, **SETTINGS)
@given(values=st.lists(TEXTS, min_size=1, max_size=3), other=st.booleans(), data=st.data())
def test_what_was_sent_is_the_fragments_sent_after_every_piece(values, other, data) -> None:
    """String arguments with and without escapes, sunk or not, followed (Hermes 3, no schema) or read by the
    general path (a schema types them): after every piece, `call.sent` (which folds a sunk run into `parts`) is
    the fragments sent so far; the deltas are those of a stream on the caller's parser (no lag, no region feed);
    the close finds them consistent with the parsed message."""
    args = {f"k{i}": v for i, v in enumerate(values)}
    if other:
        args["n"] = 1
    text = f'<tool_call>\n{{"name": "f", "arguments": {json.dumps(args, ensure_ascii=False)}}}\n</tool_call><|im_end|>'
    pieces = data.draw(chunkings(text))
    template = get_template("hermes3")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "k0": {"type": "string"}}}}}]
    for kw in ({}, {"tools": tools}):
        ds = DeltaStream(template, prefix=CHATML, id_seed=0, **kw)
        got = _check_sent_per_piece(ds, pieces)
        on_parser = DeltaStream(ResponseParser(template, CHATML, **kw), id_seed=0)
        assert _check_sent_per_piece(on_parser, pieces) == got
        assert not any("error" in tc for d in got[-1] for tc in d.get("tool_calls", ()))
        assert ds.message == parse_response(text, template, prefix=CHATML, strict=False, **kw)


def test_a_sunk_string_is_not_copied_into_parts_per_piece() -> None:
    """Fails on the old code (every piece appended to `parts` too): while the string sinks, `parts` does not grow;
    `sent` brings it up to date, once."""
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    ds.feed('<tool_call>\n{"name": "f", "arguments": {"a": "x')
    ds.feed("y")
    ds.feed("z")
    call = ds._calls[0]
    assert ds._open.sink is call
    n = len(call.parts)
    for piece in ("one ", "two ", "three "):
        assert ds.feed(piece) == [{"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}]
    assert len(call.parts) == n and call.run >= 0
    assert call.sent == '{"a": "xyzone two three '
    assert ds.feed('"}}\n</tool_call>')[-1:] == [{"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}]
    ds.feed("<|im_end|>")
    ds.finish()
    assert ds.message["tool_calls"][0]["function"]["arguments"] == {"a": "xyzone two three "}


def test_a_followed_string_sinks_again_after_an_escape() -> None:
    """Fails on the old code (the piece with the escape left the sink, the next piece took the general path to
    come back to it): after a piece that the stream does not append itself, the string is sunk again at once."""
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    ds.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1, "b": "x')
    ds.feed("y")
    ds.feed("z")
    r = ds._open
    assert r.sink is not None and r.follow is not None and ds.feed is r.hot
    assert ds.feed("p\\nq") == [{"tool_calls": [{"index": 0, "function": {"arguments": "p\\nq"}}]}]
    assert r.sink is not None
    assert ds.feed("é") == [{"tool_calls": [{"index": 0, "function": {"arguments": "é"}}]}]


def test_the_region_feed_hands_over_at_the_close() -> None:
    """Fails on the old code (the region's feed stayed until the next piece): once the piece that closes the tool
    region was fed, ``feed`` is the stream's own again."""
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    ds.feed('<tool_call>\n{"name": "f", "arguments": {"a": "x')
    ds.feed("y")
    ds.feed("z")
    assert ds.feed is ds._open.hot
    ds.feed('"}}\n</tool_call>')
    assert ds._open is None and ds.feed == ds._feed


def test_a_long_sunk_string_keeps_few_pieces() -> None:
    """1-character pieces of one string argument: the string's pieces and the sent ones stay bounded (the sink
    joins them every `_COMPACT_AT` pieces, checked every `_LAG_AT`), the deltas are the pieces, the message is
    whole."""
    ds = DeltaStream(get_template("hermes3"), prefix=CHATML, id_seed=0)
    ds.feed('<tool_call>\n{"name": "f", "arguments": {"text": "')
    ds.feed("a")
    ds.feed("b")
    call = ds._calls[0]
    longest = 0
    rng = random.Random(3)
    body = "".join(rng.choice("ab c") for _ in range(5 * _COMPACT_AT))
    for ch in body:
        assert ds.feed(ch) == [{"tool_calls": [{"index": 0, "function": {"arguments": ch}}]}]
        longest = max(longest, len(call.str_chunks))
    assert longest <= _COMPACT_AT + _LAG_AT + 8 and len(call.parts) < 16
    ds.feed('"}}\n</tool_call><|im_end|>')
    ds.finish()
    assert ds.message["tool_calls"][0]["function"]["arguments"] == {"text": "ab" + body}


def test_join_pieces_copies_each_character_a_bounded_number_of_times() -> None:
    """Fails on a whole join every `_COMPACT_AT` pieces (the text copied again each time: quadratic): pieces
    appended one by one and joined whenever `_COMPACT_AT` are held are copied a few times each, the list stays
    short, and it holds the text."""
    pieces: list[str] = []
    copied = total = 0
    for i in range(60 * _COMPACT_AT):
        piece = "xyz"[i % 3] * (1 + i % 4)
        pieces.append(piece)
        total += len(piece)
        if len(pieces) >= _COMPACT_AT:
            before = {id(p) for p in pieces}
            _join_pieces(pieces)
            copied += sum(len(p) for p in pieces if id(p) not in before)
            assert len(pieces) < 64
    assert copied <= 4 * total
    assert "".join(pieces) == "".join("xyz"[i % 3] * (1 + i % 4) for i in range(60 * _COMPACT_AT))


def test_random_ids_are_choices_drawn_as_before() -> None:
    """The same 24 characters as ``choice`` draws, one at a time, and the generator left where it leaves it."""
    for seed in range(400):
        a, b = random.Random(seed), random.Random(seed)
        for _ in range(3):
            assert _random_id(b) == "".join(a.choice(_ID_CHARS) for _ in range(24))
        assert a.random() == b.random()
    drawn = _random_id(random.SystemRandom())
    assert len(drawn) == 24 and set(drawn) <= set(_ID_CHARS)


class _NoMatch:
    """A pattern that never matches: `_follow_members` then takes its step-by-step path."""

    @staticmethod
    def match(s: str, i: int = 0) -> None:
        return None


MEMBER_VALUES = st.one_of(
    st.integers(-(10**4), 10**4), st.sampled_from([True, None, 1.5, [1, 2], [], "", "a b", 'q"', "\\", {"x": 1}]), TEXTS
)


@settings(max_examples=200, **SETTINGS)
@given(
    members=st.lists(st.tuples(st.sampled_from(["k", "a b", 'q"', "n\\", "é", "k2"]), MEMBER_VALUES), max_size=6),
    data=st.data(),
)
def test_a_member_cut_before_its_value_is_held_as_the_step_by_step_path_holds_it(members, data) -> None:
    """`_CUT_MEMBER` (the next member cut before its value, held in one match) against the step-by-step path of
    `_follow_members`: for any members in any pieces, a followed reader returns the same text per piece and is
    left in the same state (held text, what it waits for, the quotes still to come, value, version)."""
    body = "{" + ", ".join(json.dumps(k) + ": " + json.dumps(v, ensure_ascii=False) for k, v in members) + "}"
    pieces = data.draw(chunkings(body))
    readers = []
    for cut in (json_reader._CUT_MEMBER, _NoMatch):
        saved = json_reader._CUT_MEMBER
        json_reader._CUT_MEMBER = cut
        try:
            p = json_reader.JsonPartial()
            p.feed("{")
            assert p.follow(p.stack[-1]) is True
            seen = []
            for piece in pieces[1:] if pieces[0] == "{" else [pieces[0][1:], *pieces[1:]]:
                held = p.hold(piece)
                seen.append((held, None if held else p.feed(piece), p.wait, p.quotes, "".join(p.pending),
                             p.version, p.broken, p.following is None, p.snapshot()))
            readers.append(seen)
        finally:
            json_reader._CUT_MEMBER = saved
    assert readers[0] == readers[1]
