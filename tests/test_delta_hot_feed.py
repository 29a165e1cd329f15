"""`delta_hot.hot_feed` (the ``feed`` of a stream with its own parser while a tool region sinks or follows), the
followed members read in one regex match (lists, a string open at the end of the text), `JsonPartial.end_string`,
and the close's check of the parsed arguments by `marshal` (issue 18, item 1). The old paths are the oracle: for
any arguments and any chunking, every piece gives the deltas it gave before, and the close the same text."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, chunkings

import hf_response_templates.delta_tools as delta_tools
import hf_response_templates.deltas as deltas_module
import hf_response_templates.partial.json_reader as json_reader
from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.delta_state import _dumps, _same_json, _scrub
from hf_response_templates.openai import DeltaStream

# the whole-member pattern before lists and open strings were read by it (the step-by-step path reads those)
_OLD_MEMBER = r'"([^"\\\x00-\x1f]*)": (?:(0|-?[1-9][0-9]*)(?=[,}])|(true|false|null)(?=[,}])|"([^"\\\x00-\x1f]*)")'


class _OldMatch:
    """A match of the old pattern, with the groups the new one added (None)."""

    def __init__(self, m: re.Match) -> None:
        self._m = m

    def groups(self) -> tuple:
        return (*self._m.groups(), None, None)

    def end(self) -> int:
        return self._m.end()

    def start(self, g: int) -> int:
        return self._m.start(g)


class _OldPattern:
    def __init__(self, pattern: str) -> None:
        self._re = re.compile(pattern)

    def match(self, s: str, i: int = 0) -> _OldMatch | None:
        m = self._re.match(s, i)
        return None if m is None else _OldMatch(m)


@contextlib.contextmanager
def old_paths() -> Iterator[None]:
    """The old paths, within the block: no `hot_feed`, the old whole-member pattern."""
    undo = [
        (deltas_module, "hot_feed", deltas_module.hot_feed),
        (deltas_module, "json_hot_feed", deltas_module.json_hot_feed),  # (`deltas` calls it by its own name)
        (json_reader, "_FIRST_MEMBER", json_reader._FIRST_MEMBER),
        (json_reader, "_NEXT_MEMBER", json_reader._NEXT_MEMBER),
    ]
    deltas_module.hot_feed = lambda ds, r: None
    deltas_module.json_hot_feed = lambda ds, r: None
    json_reader._FIRST_MEMBER = _OldPattern(_OLD_MEMBER)
    json_reader._NEXT_MEMBER = _OldPattern(", " + _OLD_MEMBER)
    try:
        yield
    finally:
        for mod, name, value in undo:
            setattr(mod, name, value)


def _deltas_per_piece(template, pieces: list[str], parser: bool = False) -> tuple[list[list[dict]], DeltaStream]:
    ds = DeltaStream(ResponseParser(template, CHATML), id_seed=0) if parser else DeltaStream(
        template, prefix=CHATML, id_seed=0
    )
    out = [ds.feed(piece) for piece in pieces]
    out.append(ds.finish())
    assert ds.warnings == []
    return out, ds


STRINGS = st.lists(
    st.sampled_from(["a", "é", " ", "x < y", '"', "\\", "\n", "\x01", "\x7f", "\u2028", "🌧", "\ud800", "k", "1", "]", "}", ","]),
    max_size=8,
).map("".join)
SCALARS = st.one_of(
    STRINGS,
    st.integers(-(10**6), 10**6),
    st.sampled_from([True, False, None, 0.5, -0.0, 1e100, 3.0]),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=4),
    st.lists(st.lists(st.integers(0, 9), max_size=2), max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), SCALARS, max_size=2),
)
KEYS = st.sampled_from(["k", "a b", "é", 'q"', "n\\", "1", "x"])


def _body(members: list[tuple[str, object]], spaced: bool) -> str:
    sep, colon = (", ", ": ") if spaced else (",", ":")
    return "{" + sep.join(json.dumps(k, ensure_ascii=False) + colon + json.dumps(v, ensure_ascii=False) for k, v in members) + "}"


@settings(max_examples=200, **SETTINGS)
@given(
    members=st.lists(st.tuples(KEYS, VALUES), max_size=7),
    spaced=st.booleans(),
    data=st.data(),
)
def test_every_piece_gives_the_deltas_of_the_old_paths(members, spaced, data) -> None:
    """Hermes 3 arguments of every kind (plain and escaped strings, lone surrogates, lists of scalars, nested
    values, duplicate keys, json.dumps' spacing or none): per piece, the stream gives what the old paths gave (no
    `hot_feed`, the old member pattern) and what a stream on the caller's parser (no lag) gives; its message is
    `parse_response`'s."""
    template = get_template("hermes3")
    text = f'<tool_call>\n{{"name": "f", "arguments": {_body(members, spaced)}}}\n</tool_call><|im_end|>'
    pieces = data.draw(chunkings(text))
    new, ds = _deltas_per_piece(template, pieces)
    with old_paths():
        old, _ = _deltas_per_piece(template, pieces)
    assert new == old
    assert _deltas_per_piece(template, pieces, parser=True)[0] == new
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)


@settings(max_examples=60, **SETTINGS)
@given(n=st.integers(1, 40), data=st.data())
def test_many_members_in_token_sized_pieces_as_the_old_paths(n, data) -> None:
    """The benchmark's shape (strings, integers, lists of integers, many of them), cut in 1-7 character pieces."""
    rng = data.draw(st.randoms(use_true_random=False))
    members = [(f"k{i}", ["word " * rng.randint(0, 5), rng.randint(0, 10**6), [1, 2, 3]][i % 3]) for i in range(n)]
    text = f'<tool_call>\n{{"name": "f", "arguments": {_body(members, True)}}}\n</tool_call><|im_end|>'
    pieces, i = [], 0
    while i < len(text):
        k = rng.randint(1, 7)
        pieces.append(text[i : i + k])
        i += k
    template = get_template("hermes3")
    new, _ = _deltas_per_piece(template, pieces)
    with old_paths():
        old, _ = _deltas_per_piece(template, pieces)
    assert new == old


def test_the_stream_feeds_through_hot_feed_while_following() -> None:
    """Fails on the old code (no `hot_feed`): while the arguments are followed, ``feed`` is the region's."""
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    ds.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1, ')
    ds.feed('"b": "x')
    ds.feed("y")  # (`_feed` meets the sinking string: the region's feed is installed for the next pieces)
    assert ds._open is not None and ds.feed is ds._open.hot
    assert ds.feed("z") == [{"tool_calls": [{"index": 0, "function": {"arguments": "z"}}]}]
    ds.feed('", "c": [1, 2]}}\n</tool_call>')
    ds.feed("<|im_end|>")
    ds.finish()
    with pytest.raises(RuntimeError):
        ds.feed("more")  # (finished: the region's feed hands it to `_feed`, which raises)


def test_after_the_region_the_stream_feeds_through_feed_again() -> None:
    """Content after a tool call: once its region closed, the region's feed hands over for good."""
    template = get_template("qwen3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    text = '<tool_call>\n{"name": "f", "arguments": {"a": "xyz", "b": 1}}\n</tool_call>\nand then some text'
    hot = None
    for i in range(0, len(text), 3):
        ds.feed(text[i : i + 3])
        if ds._open is not None and ds._open.kind == "tool" and ds._open.hot is not None and ds.feed is ds._open.hot:
            hot = ds.feed
    # (the content after it streams through that region's own feed, `delta_hot.hot_text`, or `_feed`)
    assert hot is not None and ds.feed != hot
    assert ds.feed == ds._feed or ds._open is not None and ds._open.kind == "text" and ds.feed is ds._open.hot
    ds.feed("<|im_end|>")
    assert ds.finish()[-1:] or ds.message is not None


def test_a_coalescing_stream_and_one_on_the_callers_parser_keep_their_feed() -> None:
    template = get_template("hermes3")
    text = '<tool_call>\n{"name": "f", "arguments": {"a": "xyz"}}\n</tool_call><|im_end|>'
    for ds in (
        DeltaStream(template, prefix=CHATML, id_seed=0, coalesce_chars=5),
        DeltaStream(ResponseParser(template, CHATML), id_seed=0),
    ):
        feed = ds.feed
        for i in range(0, len(text), 3):
            ds.feed(text[i : i + 3])
            assert ds._open is None or ds._open.hot is None
        assert ds.feed == feed


def test_members_read_by_the_whole_member_pattern() -> None:
    """Lists of scalars and a string open at the end are read in one match, as the step-by-step path reads
    them (fails on the old pattern: no match)."""
    m = json_reader._NEXT_MEMBER.match(', "a": [1, "x y", true, null, -3], "b')
    assert m is not None and m.groups()[4] == '[1, "x y", true, null, -3]'
    m = json_reader._NEXT_MEMBER.match(', "a": "open stri')
    assert m is not None and m.groups()[5] == "open stri" and m.end() == 17
    for text in (', "a": [1.5]', ', "a": [01]', ', "a": [-0]', ', "a": [1,2]', ', "a": ["\\n"]', ', "a": [[1]]', ', "a": "x\\n'):
        m = json_reader._NEXT_MEMBER.match(text)
        assert m is None or m.groups()[4] is None and m.groups()[5] is None, text


def test_end_string_is_feed() -> None:
    """`JsonPartial.end_string` leaves the reader as `feed` does and returns what it returns."""
    for rest in ('"', '", "b": 2', '", "b": [1, 2]}', '", "b', '"}', '", "b": "c', '",, x'):
        a, b = json_reader.JsonPartial(), json_reader.JsonPartial()
        for p in (a, b):
            p.feed('{"a": "st')
            assert p.follow(p.stack[-1]) is True
            p.feed("ri")
        text = "ng" + rest
        want = a.feed(text)
        got = b.end_string(text, 2)
        assert got == want
        assert (b.value, b.broken, b.version, b._mode, b.following is None, b.wait, b.pending) == (
            a.value, a.broken, a.version, a._mode, a.following is None, a.wait, a.pending
        )


def test_same_json_is_true_only_for_values_json_dumps_writes_alike() -> None:
    equal = [({"a": 1, "b": [1, "x", None, True]}, {"a": 1, "b": [1, "x", None, True]}), (-0.0, -0.0), ("é\ud800", "é\ud800")]
    for a, b in equal:
        assert _same_json(a, b) and json.dumps(a) == json.dumps(b)
    differ = [
        (1, 1.0), (1, True), (0.0, -0.0), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([1], [1.0]),
        ({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}}), (float("nan"), float("nan")), ((1,), [1]),
    ]
    for a, b in differ:
        assert a != b or not _same_json(a, b)
        assert not _same_json(a, b) or json.dumps(a) == json.dumps(b)
    assert not _same_json({"a": 1}, {"a": 1, "b": 2})

    class Text(str):
        pass

    assert not _same_json(Text("a"), "a") and not _same_json(object(), object())
    assert math.isnan(float("nan"))


@settings(max_examples=200, **SETTINGS)
@given(members=st.lists(st.tuples(KEYS, VALUES), max_size=6), data=st.data())
def test_the_close_sends_the_text_the_old_check_sent(members, data) -> None:
    """Whenever the close takes the held arguments (the parsed value marshals as the one they were written
    from), they are json.dumps of the parsed value, scrubbed, as the old close computed them."""
    seen: list[bool] = []
    args_text = delta_tools.ToolCallDeltas._args_text

    def checked(call, value):  # noqa: ANN001, ANN202
        got = args_text(call, value)
        assert got == _scrub(_dumps(value))
        seen.append(call is not None and got is call.held)
        return got

    delta_tools.ToolCallDeltas._args_text = staticmethod(checked)  # type: ignore[method-assign]
    try:
        template = get_template("hermes3")
        text = f'<tool_call>\n{{"name": "f", "arguments": {_body(members, True)}}}\n</tool_call><|im_end|>'
        _deltas_per_piece(template, data.draw(chunkings(text)))
    finally:
        delta_tools.ToolCallDeltas._args_text = staticmethod(args_text)  # type: ignore[method-assign]
    assert seen  # (a close took place)
