"""`JsonPartial.follow`: the partial JSON reader writes an open object's members out as json.dumps writes them.

While it follows the arguments object of a tool call, `DeltaStream` sends what `feed` returns and keeps text
that `hold` says cannot matter yet; the whole members (scalars, flat lists), keys and strings are read with
C-level string operations, anything else (spaces, floats json.dumps writes differently, nested objects,
escaped keys, duplicates) by the general reader. Every test here compares with json.dumps / json.loads, so
a fast path that wrote one character differently, dropped a held piece or kept a member it should have
left to the general reader fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, check_text, chunkings, reassemble, stream_text

from hf_response_templates import get_template
from hf_response_templates.partial import JsonPartial

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(
        st.characters(codec="utf-16", exclude_categories=("Cs",)) | st.sampled_from('"\\\n\t/,:}]["'),
        max_size=10,
    )
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(
    st.text(st.sampled_from('ab",:}\\ é\n'), max_size=4) | st.just("k"), values, max_size=6
)
# how the model writes its JSON: as json.dumps does (the fast path), or otherwise (the general reader)
DUMPS = [
    lambda v: json.dumps(v, ensure_ascii=False),
    lambda v: json.dumps(v, ensure_ascii=True),
    lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":")),
    lambda v: json.dumps(v, ensure_ascii=False, indent=1),
]


def _cuts(data: st.DataObject, text: str) -> list[str]:
    if data.draw(st.booleans()):
        return list(text)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=20))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]


def _follow(pieces: list[str], use_hold: bool = True) -> tuple[JsonPartial, str, list[tuple[str, int]]]:
    """Feed `{"name": "f", "arguments": {...}}` pieces, following the arguments object from its start; the text
    written out, and (text written so far, members written whole) each time following stopped."""
    p = JsonPartial()
    written: list[str] = []
    stops: list[tuple[str, int]] = []
    for piece in pieces:
        following = p.following
        if following is not None and use_hold and p.hold(piece):
            continue
        res = p.feed(piece)
        if following is not None:
            written.append(piece if res is True else res or "")
            if p.following is None:
                stops.append(("".join(written), p.followed))
        if p.following is None and not stops and len(p.stack) == 2 and not p.stack[1].keys:
            p.follow(p.stack[1])
    return p, "".join(written), stops


def _members_text(args: dict, n: int) -> str:
    """The first `n` members of `args` as json.dumps writes them, without the braces."""
    return json.dumps(dict(list(args.items())[:n]), ensure_ascii=False)[1:-1]


def _check(args: dict, body_args: str, pieces: list[str], use_hold: bool = True) -> tuple[str, list]:
    body = '{"name": "f", "arguments": ' + body_args + "}"
    assert "".join(pieces) == body
    p, written, stops = _follow(pieces, use_hold)
    p.feed(" ")
    assert not p.broken and p.done, body
    assert p.value == {"name": "f", "arguments": args}
    canonical = json.dumps(args, ensure_ascii=False)
    if stops:  # it stopped: what it wrote is exactly the members it says it wrote whole
        text, n = stops[0]
        assert text == _members_text(args, n), (body, pieces)
    else:  # (the arguments object never started in a piece of its own: nothing followed)
        assert written == ""
    assert canonical[1:].startswith(written), (body, written)
    return written, stops


@settings(max_examples=400, deadline=None)
@given(args=arguments, dumps=st.sampled_from(DUMPS), use_hold=st.booleans(), data=st.data())
def test_any_arguments_any_writing_any_chunking_write_out_json_dumps_members(
    args, dumps, use_hold, data
) -> None:
    body_args = dumps(args)
    pieces = _cuts(data, '{"name": "f", "arguments": ' + body_args + "}")
    _check(args, body_args, pieces, use_hold)


@settings(max_examples=200, deadline=None)
@given(
    args=st.dictionaries(
        st.text(
            st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters='"\\'),
            max_size=5,
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
        | st.lists(st.integers() | st.text(max_size=3) | st.booleans() | st.none(), max_size=5),
        max_size=8,
    ),
    data=st.data(),
)
def test_arguments_written_as_json_dumps_does_are_followed_to_their_end(args, data) -> None:
    """Members whose values are integers, literals, strings and flat lists of them, keys without escapes, as
    json.dumps writes them: followed to the closing brace, and the text written is json.dumps's."""
    body_args = json.dumps(args, ensure_ascii=False)
    pieces = ['{"name": "f", "arguments": {', *_cuts(data, body_args[1:] + "}")]
    written, stops = _check(args, body_args, pieces)
    assert stops == [(body_args[1:-1], len(args))]  # (it stopped at the closing brace, nothing before)
    assert written == body_args[1:-1]


def _split_everywhere(args: dict, body_args: str) -> None:
    body = '{"name": "f", "arguments": ' + body_args + "}"
    start = len('{"name": "f", "arguments": {')
    for cut in range(start, len(body)):
        for use_hold in (True, False):
            _check(args, body_args, [body[:start], body[start:cut], body[cut:]], use_hold)
        for k in (1, 2, 3):  # and cut into short pieces from there
            _check(args, body_args, [body[:start]] + [body[i : i + k] for i in range(start, len(body), k)])


def test_strings_split_at_each_position_inside_escapes_and_surrogate_pairs() -> None:
    for raw in ['"a\\nb\\"c\\\\d\\/e\\u00e9f\\u0001g"', '"x\\ud83d\\ude00y"', '"\\ud83d"', '"\\u2028\\t"']:
        args = {"s": json.loads(raw), "n": 1}
        _split_everywhere(args, '{"s": ' + raw + ', "n": 1}')


def test_numbers_and_literals_split_at_each_position() -> None:
    for value in ["123456", "-7", "0", "3.14", "-0.5", "1e5", "-0", "1.50", "true", "false", "null"]:
        body_args = '{"a": ' + value + ', "b": ' + value + "}"
        _split_everywhere(json.loads(body_args), body_args)


def test_nested_objects_arrays_and_whitespace_runs_are_left_to_the_general_reader() -> None:
    for body_args in [
        '{"a": {"b": [1, {"c": 2}]}, "d": [[1], []], "e": 3}',
        '{"a": [1, "x]", 2], "b": [], "c": {}}',
        '{"a":   1,\n  "b" : "x",\t"c":[1 , 2]}',
        '{"k\\u00e9y": 1, "k\\"": "v", "z": [true, null, -1]}',
    ]:
        _split_everywhere(json.loads(body_args), body_args)


def test_hold_keeps_only_text_that_cannot_complete_a_member() -> None:
    p = JsonPartial()
    p.feed('{"name": "f", "arguments": {')
    assert p.follow(p.stack[1])
    assert p.hold('"ke') and p.hold('y": 12') and p.hold("34")  # a key and a number being written
    assert p.feed(', "') == '"key": 1234'  # the third quote: the number has ended
    assert not p.hold('s": "ab') and p.following is not None  # the third quote opens a string value
    assert p.feed('s": "ab') == ', "s": "ab'
    assert p.feed("cd") is True  # more of the open string: the text itself
    assert p.feed('e", "l": [1, ') == 'e"'
    assert p.hold("2, 3") and not p.hold("]")
    assert p.feed("]}") == ', "l": [1, 2, 3]'
    assert p.following is None and p.followed == 3
    assert p.value == {"name": "f", "arguments": {"key": 1234, "s": "abcde", "l": [1, 2, 3]}}


def test_a_duplicate_key_or_bad_syntax_breaks_the_reader_and_writes_nothing_more() -> None:
    for rest in [', "a": 2}', ', "b": 01}', ', "b": [1,, 2]}', ', "b": 1 2}', ', "b": "\\x"}']:
        p = JsonPartial()
        p.feed('{"name": "f", "arguments": {')
        assert p.follow(p.stack[1])
        assert p.feed('"a": 1') == ""  # (a number ends with the next character)
        # as without following: nothing of a text that breaks the body is written
        assert p.feed(rest) == "" and p.broken and p.following is None, rest


# --------------------------------------------------------------------------- DeltaStream, following


@settings(max_examples=150, **SETTINGS)
@given(args=arguments, dumps=st.sampled_from(DUMPS), data=st.data())
def test_deltas_of_any_arguments_without_tools_equal_parse_response(args: dict, dumps: Any, data) -> None:
    """Without tool schemas `DeltaStream` follows the arguments object: any arguments, written any way, in any
    chunking, its deltas reassemble into parse_response's message (and its arguments are json.dumps's)."""
    template = get_template("hermes3")
    body = json.dumps({"name": "f", "arguments": 0})[:-2] + " " + dumps(args) + "}"
    text = f"<tool_call>\n{body}\n</tool_call><|im_end|>"
    acc = check_text(template, CHATML, text, data.draw(chunkings(text)), tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)


def test_arguments_stream_member_by_member_while_followed() -> None:
    """Fed one character at a time, each member is sent as soon as it is complete (a number when the next key
    starts, at the latest), a string value as it is written; the fragments are json.dumps's text."""
    template = get_template("hermes3")
    args = {"city": "Paris", "days": 12, "tags": ["a", "b"], "ok": True, "note": "x\ny"}
    body = json.dumps({"name": "f", "arguments": args}, ensure_ascii=False)
    text = f"<tool_call>\n{body}\n</tool_call><|im_end|>"
    ds, deltas = stream_text(template, CHATML, list(text), tools=None)
    frags = [e["function"]["arguments"] for d in deltas for e in d.get("tool_calls", []) if "function" in e]
    assert "".join(frags) == json.dumps(args, ensure_ascii=False)
    sent = ""
    ds2 = type(ds)(template, prefix=CHATML, id_seed=0)
    seen = []
    for i, ch in enumerate(text):
        for d in ds2.feed(ch):
            for e in d.get("tool_calls", []):
                sent += e.get("function", {}).get("arguments", "")
        seen.append((i, sent))
    at = {s: i for i, s in reversed(seen)}
    assert at['{"city": "Par'] < text.index("is")  # the string streams
    # the number, once the next key starts
    assert at['{"city": "Paris", "days": 12'] <= text.index('"tags"') + 1
    assert reassemble(deltas)["tool_calls"][0]["function"]["name"] == "f"


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_fuzzed_json_tokens_without_tools_never_raise_and_reassemble(data) -> None:
    """Shuffled JSON tokens in a call's arguments (duplicates, stray commas, nesting), streamed without tool
    schemas: the adapter never raises, and its deltas reassemble into the parser's message."""
    from test_openai_deltas import check_deltas

    tokens = ['"a"', '"b"', ": ", ",", ", ", "1", "2.5", "[", "]", "{", "}", '"x\\n"', "true", " ", '"', "\\"]
    args = "{" + "".join(data.draw(st.lists(st.sampled_from(tokens), max_size=30)))
    text = '<tool_call>\n{"name": "f", "arguments": ' + args + "}\n</tool_call><|im_end|>"
    template = get_template("hermes3")
    ds, deltas = stream_text(template, CHATML, data.draw(chunkings(text)), tools=None)
    check_deltas(deltas, ds.message, template, inconsistent_ok=True)


def test_an_escape_cut_in_a_string_value_opened_by_a_member_is_read_whole() -> None:
    """A string value opened in the piece that completes its key, then an escape cut across pieces: the stream
    must not append the pieces after the cut escape to the string as they are (the escape is read whole;
    found by the property above, ``{"k": "\\x1f"}`` one character at a time)."""
    template = get_template("hermes3")
    for args in ({"k": "\x1f"}, {"a": 1, "k": "x\u00e9\ny\\"}, {"k": "\U0001f600 \\u\t"}):
        body = json.dumps({"name": "f", "arguments": args}, ensure_ascii=False)
        text = f"<tool_call>\n{body}\n</tool_call><|im_end|>"
        for chunks in (list(text), [text[i : i + 2] for i in range(0, len(text), 2)]):
            acc = check_text(template, CHATML, text, chunks, tools=None)
            assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)


def test_string_sink_is_the_open_value_string_only_when_nothing_is_held_back() -> None:
    p = JsonPartial()
    p.feed('{"name": "f", "arguments": {')
    assert p.follow(p.stack[1])
    assert p.string_sink() is None  # (between members)
    assert p.feed('"k": "ab\\') == '"k": "ab'
    assert p.string_sink() is None  # a cut escape: text appended as it is would skip it
    assert p.feed("n") == "\\n"
    sink = p.string_sink()
    assert sink is not None and "".join(sink) == "ab\n"
    sink.append("cd")  # what DeltaStream does with a piece that needs no escaping
    assert p.feed('", "m": 1}') == '", "m": 1' and p.following is None  # (the object's end: the general reader)
    assert p.value["arguments"] == {"k": "ab\ncd", "m": 1}


@pytest.mark.parametrize("args", [{"": ["]"]}, {"a": ["x]", 1], "b": 2}, {"k": ["\\]", "]]"]}, {"k": [1, "[", "]"]}])
def test_a_list_cut_after_a_bracket_inside_one_of_its_strings_is_still_followed(args) -> None:
    # `["]` holds a `]`, but inside a string: the list is cut, not malformed, so the reader waits for more
    # instead of handing the rest of the object to the general reader (found by the property test above)
    body_args = json.dumps(args, ensure_ascii=False)
    rest = body_args[1:] + "}"
    for cut in range(1, len(rest)):
        written, stops = _check(args, body_args, ['{"name": "f", "arguments": {', rest[:cut], rest[cut:]])
        assert stops == [(body_args[1:-1], len(args))], cut
        assert written == body_args[1:-1]
