"""`JsonDialectPartial.follow`: the partial reader of the `json` parser's dialect (bare keys, custom string
delimiters: Gemma 4's ``{location:<|"|>Paris<|"|>,days:3}``) writes an open object's members out as json.dumps
writes them.

While it follows a call's arguments, `DeltaStream` sends what `feed` returns and keeps what `hold` says cannot
matter yet; whole members (bare keys, numbers, literals, flat lists) are read with one regex call and the
content parser's own full parse, a custom-delimited string streams, anything else (quoted keys, nested
objects, lists of lists, duplicates, the object's end) goes to the general reader, and following resumes after
it. Every test compares with the content parser's full parse (`parse_response`) and json.dumps, so a fast path
that wrote one character differently, dropped a held piece or kept a member it should have handed on fails.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import SETTINGS, check_deltas, check_text, chunkings, stream_text

from hf_response_templates import get_template
from hf_response_templates.content import get_content_parser
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import JsonDialectPartial, partial_parser

GEMMA = "<|turn>user\nHi<turn|>\n<|turn>model\n"
OPEN, CLOSE = '<|"|>', '<|"|>'
ARGS = {"unquoted_keys": True, "string_delims": ((OPEN, CLOSE),)}

keys = st.from_regex(r"\w{1,5}", fullmatch=True)
# string values holding what the dialect's syntax is made of: quotes, braces, commas, colons, pieces of the
# delimiter, backslashes, newlines (never the whole delimiter, which would end the string)
strings = st.text(
    st.characters(codec="utf-16", exclude_categories=("Cs",)) | st.sampled_from('"\\\n\t,:{}[]<|>" '),
    max_size=12,
).filter(lambda s: OPEN not in s and not s.endswith("<|") and not s.endswith("<"))
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | strings
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
flat = scalars | st.lists(scalars, max_size=4)
SPACES = ["", " ", "  ", "\n", " \n\t"]


def dialect(value: Any, sp: tuple[str, str, str] = ("", "", "")) -> str:
    """`value` written in the dialect; `sp`: the spaces after commas, before and after colons."""
    after_comma, before_colon, after_colon = sp
    if isinstance(value, dict):
        members = (f"{k}{before_colon}:{after_colon}{dialect(v, sp)}" for k, v in value.items())
        return "{" + ("," + after_comma).join(members) + "}"
    if isinstance(value, list):
        return "[" + ("," + after_comma).join(dialect(v, sp) for v in value) + "]"
    if isinstance(value, str):
        return OPEN + value + CLOSE
    return json.dumps(value)


def _cuts(data: st.DataObject, text: str) -> list[str]:
    if data.draw(st.booleans()):
        return list(text)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=25))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]


def _follow(
    pieces: list[str], use_hold: bool = True
) -> tuple[JsonDialectPartial, str, list[tuple[str, int]]]:
    """Feed the pieces of an arguments object, following it from its start; the text written out, and (text
    written so far, members written whole) each time following stopped."""
    p = partial_parser("json", ARGS)
    assert type(p) is JsonDialectPartial
    written: list[str] = []
    stops: list[tuple[str, int]] = []
    for piece in pieces:
        following = p.following
        if following is not None and use_hold and p.hold(piece):
            continue
        res = p.feed(piece)
        if following is not None:
            assert res is not None and res is not False
            written.append(piece if res is True else res)
            if p.following is None:
                stops.append(("".join(written), p.followed))
        if p.following is None and not stops and len(p.stack) == 1 and not p.stack[0].keys:
            p.follow(p.stack[0])  # (False while the first key is cut: then nothing is followed)
    return p, "".join(written), stops


def _check(args: dict, body: str, pieces: list[str], use_hold: bool = True) -> tuple[str, list]:
    assert "".join(pieces) == body
    assert get_content_parser("json").parse(body, ARGS) == args  # (the oracle reads it as written)
    p, written, stops = _follow(pieces, use_hold)
    assert not p.broken and p.done, body
    assert p.value == args
    canonical = json.dumps(args, ensure_ascii=False)
    if stops:  # it stopped: what it wrote is exactly the members it says it wrote whole
        text, n = stops[0]
        assert text == json.dumps(dict(list(args.items())[:n]), ensure_ascii=False)[1:-1], (body, pieces)
    elif not p.stack or p.stack[0].keys:  # (never followed: the first piece cut the first key)
        assert written == ""
    assert canonical[1:].startswith(written), (body, written)
    return written, stops


@settings(max_examples=300, deadline=None)
@given(
    args=st.dictionaries(keys, values, max_size=6),
    sp=st.tuples(*[st.sampled_from(SPACES)] * 3),
    use_hold=st.booleans(),
    data=st.data(),
)
def test_any_arguments_written_in_the_dialect_any_chunking_write_out_json_dumps_members(
    args, sp, use_hold, data
) -> None:
    body = dialect(args, sp)
    _check(args, body, _cuts(data, body), use_hold)


@settings(max_examples=300, deadline=None)
@given(
    args=st.dictionaries(keys, flat, max_size=8), sp=st.tuples(*[st.sampled_from(SPACES)] * 3), data=st.data()
)
def test_scalars_strings_and_flat_lists_are_followed_to_the_closing_brace(args, sp, data) -> None:
    """Members whose values are numbers, literals, strings or flat lists of them, under bare keys, with any
    spaces between the tokens: followed to the object's end, and what is written is json.dumps's text. (A list
    holding a string with a `]` is read by the general reader: its first `]` does not end it.)"""
    body = dialect(args, sp)
    pieces = [body[0], *_cuts(data, body[1:])]
    written, stops = _check(args, body, pieces)
    items = list(args.items())
    n = next(
        (i for i, (_k, v) in enumerate(items) if isinstance(v, list) and any("]" in str(x) for x in v)),
        len(args),
    )
    expected = json.dumps(dict(items[:n]), ensure_ascii=False)[1:-1]
    assert stops == [(expected, n)]  # (it stopped at the closing brace, or at that list, nothing before)
    if n == len(args):
        assert written == expected


def _split_everywhere(args: dict, body: str) -> None:
    for cut in range(1, len(body)):
        for use_hold in (True, False):
            _check(
                args, body, [body[0], body[1:cut], body[cut:]] if cut > 1 else [body[0], body[1:]], use_hold
            )
    for k in (1, 2, 3):
        _check(args, body, [body[0]] + [body[i : i + k] for i in range(1, len(body), k)])


def test_gemma4_arguments_split_at_each_position() -> None:
    # as Gemma 4's chat template renders them (no spaces), and with spaces
    for args in [
        {"location": "Paris, France", "unit": "celsius", "detail_level": 0},
        {"list_value": ["foo", "bar"], "null_value": None, "number_value": 1, "bool_value": True},
        {"s": 'a "quoted" {brace}, [list]: <|x|> \\ <', "n": -2.5, "e": ""},
    ]:
        for sp in [("", "", ""), (" ", "", " "), ("\n", " ", "  ")]:
            _split_everywhere(args, dialect(args, sp))


def test_numbers_and_literals_split_at_each_position() -> None:
    for value in ["123456", "-7", "0", "3.14", "-0.5", "1e5", "-0", "1.50", "true", "false", "null", "NaN"]:
        body = "{a:" + value + ",b: " + value + "}"
        args = get_content_parser("json").parse(body, ARGS)
        if value == "NaN":  # (NaN != NaN: compare what json.dumps writes)
            p, written, _stops = _follow([body[0], body[1:5], body[5:]])
            assert written == '"a": NaN, "b": NaN' and p.done
            continue
        _split_everywhere(args, body)


def test_nested_objects_quoted_keys_and_lists_with_brackets_in_strings_go_to_the_general_reader() -> None:
    for body in [
        "{a:{b:[1,{c:2}]},d:[[1],[]],e:3}",
        '{a:[1,<|"|>x]<|"|>,2],b:[],c:{}}',
        '{"q":1,<|"|>k<|"|>:<|"|>v<|"|>,z:[true,null,-1]}',
        '{a:"standard \\"string\\"",b:<|"|>x<|"|>}',
        '{a:["x]",1,"y"],b:[1e5,-0,"<"],c:2}',  # (standard strings in lists: the C scanner, then the reader)
    ]:
        _split_everywhere(get_content_parser("json").parse(body, ARGS), body)


def test_hold_keeps_only_text_that_cannot_complete_a_member() -> None:
    p = partial_parser("json", ARGS)
    p.feed("{")
    assert p.follow(p.stack[0])
    assert p.hold("ke") and p.hold("y: 12") and p.hold("34 ")  # a key, its colon, a number being written
    assert not p.hold(", s")  # the number's end
    assert p.feed(", s") == '"key": 1234'
    assert p.hold(":") and p.hold(" <|") and p.hold('"|')  # (the `,` before it came) a string delimiter cut
    assert not p.hold(">ab")  # its last character: the string opens
    assert p.feed(">ab") == ', "s": "ab'
    assert (
        p.string_sink() is not None and p.sink_stop == "<"
    )  # (more text without `<` may go straight into its pieces; every closing delimiter starts with `<`)
    assert p.hold("cd") is False  # (in a string nothing is held: it streams)
    assert p.feed('c"d') == 'c\\"d'  # more of the open string: its JSON-escaped text
    assert p.feed("e<|") == "e" and p.sink is None  # (the start of the closing delimiter waits)
    assert p.feed('x<|"|>') == '<|x"' and p.sink is None
    assert p.hold(" ") and p.hold("\n")  # between members: their `,` has not come
    assert not p.hold(", l: [1, ")
    assert p.feed(", l: [1, ") == ""
    assert p.hold("2, 3") and not p.hold("]")  # a list waits for its `]`
    assert p.feed("]}") == ', "l": [1, 2, 3]'
    assert p.following is None and p.followed == 3
    assert p.value == {"key": 1234, "s": 'abc"de<|x', "l": [1, 2, 3]}


def test_a_duplicate_key_or_bad_syntax_breaks_the_reader_and_writes_nothing_more() -> None:
    for rest in [",a:2}", ",b:01}", ",b:[1,,2]}", ",b:1 2}", ",b:<x}", ",b:@}", ",:1}", ",b:1]"]:
        p = partial_parser("json", ARGS)
        p.feed("{")
        assert p.follow(p.stack[0])
        assert p.feed("a:1") == ""
        res = p.feed(rest)
        if not p.broken:  # (a duplicate: the general reader raises at the value)
            res += p.feed(" ")
        assert res in ("", '"a": 1') and p.broken and p.following is None, rest
        if rest != ",a:2}":  # (the full parse keeps a duplicate's last value; the partial reader stops there)
            with pytest.raises(ValueError):
                get_content_parser("json").parse("{a:1" + rest, ARGS)


# --------------------------------------------------------------------------- DeltaStream, following


def _call(args_text: str) -> str:
    return f"<|tool_call>call:f{args_text}<tool_call|><turn|>"


@settings(max_examples=150, **SETTINGS)
@given(
    args=st.dictionaries(keys, values, max_size=6),
    sp=st.tuples(*[st.sampled_from(SPACES)] * 3),
    data=st.data(),
)
def test_deltas_of_any_dialect_arguments_without_tools_equal_parse_response(args, sp, data) -> None:
    """Gemma 4, no tool schemas (the arguments object is followed): any arguments, nested objects and lists
    included, any spaces, any chunking: the deltas reassemble into parse_response's message, and the
    arguments are json.dumps's text (following resumes after what the general reader read)."""
    text = _call(dialect(args, sp))
    acc = check_text(get_template("gemma4"), GEMMA, text, data.draw(chunkings(text)), tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)


@settings(max_examples=100, **SETTINGS)
@given(args=st.dictionaries(keys, values, min_size=1, max_size=5), cut=st.floats(0, 1), data=st.data())
def test_dialect_arguments_cut_anywhere_reassemble_into_the_parsed_message(args, cut, data) -> None:
    """Malformed endings: the arguments cut at any place, then the call's close (a malformed call) or the end
    of the stream (``finish("length")``): never raises, and the deltas reassemble into the parser's message."""
    body = dialect(args)
    body = body[: int(len(body) * cut)]
    template = get_template("gemma4")
    for text, finish in (
        (f"<|tool_call>call:f{body}<tool_call|><turn|>", None),
        (f"<|tool_call>call:f{body}", "length"),
    ):
        ds, deltas = stream_text(template, GEMMA, data.draw(chunkings(text)), tools=None, finish=finish)
        check_deltas(deltas, ds.message, template, inconsistent_ok=True)


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_fuzzed_dialect_tokens_without_tools_never_raise_and_reassemble(data) -> None:
    """Shuffled tokens of the dialect in a call's arguments (duplicates, stray commas, nesting, cut
    delimiters), streamed without tool schemas: the adapter never raises; the deltas reassemble."""
    tokens = [
        "a",
        "b",
        ":",
        ": ",
        ",",
        ", ",
        "1",
        "-2.5",
        "[",
        "]",
        "{",
        "}",
        OPEN,
        "<|",
        '"',
        "x",
        " ",
        "true",
    ]
    text = _call("{" + "".join(data.draw(st.lists(st.sampled_from(tokens), max_size=30))))
    template = get_template("gemma4")
    ds, deltas = stream_text(template, GEMMA, data.draw(chunkings(text)), tools=None)
    check_deltas(deltas, ds.message, template, inconsistent_ok=True)


def test_gemma4_arguments_stream_member_by_member_while_followed() -> None:
    """Fed one character at a time: a string value streams as it is written, a number is sent once the next
    member starts, and the arguments object is followed from its start to its end."""
    args = {"location": "Paris, France", "days": 12, "tags": ["a", "b"], "ok": True}
    text = _call(dialect(args))
    template = get_template("gemma4")
    ds, deltas = stream_text(template, GEMMA, list(text), tools=None)
    frags = [e["function"]["arguments"] for d in deltas for e in d.get("tool_calls", []) if "function" in e]
    assert "".join(frags) == json.dumps(args)
    assert frags[1:4] == ['"location": "', "P", "a"]  # (the string streams a character at a time)
    sent, at = "", {}
    ds = type(ds)(template, prefix=GEMMA, id_seed=0)
    for i, ch in enumerate(text):
        for d in ds.feed(ch):
            for e in d.get("tool_calls", []):
                sent += e.get("function", {}).get("arguments", "")
        at.setdefault(sent, i)
        if sent.startswith("{") and i < text.index("}<tool_call|>"):
            assert ds._open.follow is not None, (i, sent)  # (followed all along, up to the object's end)
    assert at['{"location": "Paris, France", "days": 12'] == text.index(",tags")


def test_gemma4_arguments_with_tools_use_the_general_reader_and_agree() -> None:
    # with a parameter schema (typing may change a member) the general reader streams them, as before
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"days": {"type": "integer"}, "location": {"type": "string"}},
                },
            },
        }
    ]
    text = _call(dialect({"location": "Paris", "days": "12"}))
    for pieces in (list(text), [text]):
        acc = check_text(get_template("gemma4"), GEMMA, text, pieces, tools=tools)
        assert json.loads(acc["tool_calls"][0]["function"]["arguments"]) == {"location": "Paris", "days": 12}


def _gemma4_closing_with(close_pattern: str) -> dict:
    template = copy.deepcopy(get_template("gemma4"))
    template["fields"]["tool_calls"]["close_pattern"] = close_pattern
    return template


@settings(max_examples=100, **SETTINGS)
@given(
    args=st.dictionaries(keys, st.text(st.sampled_from('ab<|">\\ '), max_size=10), max_size=4),
    data=st.data(),
)
def test_pieces_ending_with_the_start_of_the_closing_delimiter_are_not_sent_as_string_text(
    args, data
) -> None:
    """A string value streams straight into its pieces (`JsonDialectPartial.sink`) only while the text holds
    no first character of the closing delimiter: with a close delimiter the parser does not hold `<` back
    for (Gemma 4's own `<tool_call|>` happens to), a piece ending in `<` or `<|` must wait for what follows."""
    args = {k: v for k, v in args.items() if OPEN not in v + CLOSE[:-1]}
    template = _gemma4_closing_with(r"\$\$")
    text = f"<|tool_call>call:f{dialect(args)}$$<turn|>"
    pieces = data.draw(chunkings(text))
    acc = check_text(template, GEMMA, text, pieces, tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)
    for cut in ("<", "<|"):  # a piece ending there, in every string value
        body = dialect({"s": "a" + cut + "b", "t": cut + "x" + cut})
        text = f"<|tool_call>call:f{body}$$<turn|>"
        pieces = [p for p in text.replace(cut, cut + "\0").split("\0") if p]
        check_text(template, GEMMA, text, pieces, tools=None)


def test_custom_string_delimiters_with_quoted_keys_are_never_followed() -> None:
    """Without ``unquoted_keys`` the keys are JSON strings, which the dialect's member reader does not read:
    `follow` says never (None), and the general reader streams the arguments, as before."""
    p = partial_parser("json", {"string_delims": ((OPEN, CLOSE),)})
    p.feed("{")
    assert p.follow(p.stack[0]) is None
    template = copy.deepcopy(get_template("gemma4"))
    template["fields"]["tool_calls"]["content_args"].pop("unquoted_keys")
    text = _call('{"location":<|"|>Paris<|"|>,"days":3,"t":[<|"|>a<|"|>]}')
    for pieces in (list(text), [text]):
        acc = check_text(template, GEMMA, text, pieces, tools=None)
        assert acc["tool_calls"][0]["function"]["arguments"] == '{"location": "Paris", "days": 3, "t": ["a"]}'


# pieces of a string value that the parser holds back (a start of `<tool_call|>`, `<turn|>`, `<|tool_response>`)
held_starts = st.sampled_from(["<", "<|", "<t", "<tool", "<tu", "<|tool_re", "<|t"])


@settings(max_examples=100, **SETTINGS)
@given(
    args=st.dictionaries(keys, flat, min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 10**6), max_size=12),
    start=held_starts,
)
def test_pieces_the_parser_routes_after_a_held_start_are_held_or_sunk_as_any_other(args, cuts, start) -> None:
    """A piece ending with what may start the call's end (held by the parser, which routes it with the next
    piece: `DeltaStream._feed`'s followed path then holds or sinks that text as any other): cut right after each
    `<` of the text, and anywhere else, the deltas reassemble into parse_response's message and json.dumps's
    arguments."""
    args = {k: (v + start + "x" if isinstance(v, str) else v) for k, v in args.items()}
    text = _call(dialect(args, (" ", "", " ")))
    at = sorted({i + 1 for i, c in enumerate(text) if c == "<"} | {c % len(text) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in zip(at[:-1], at[1:], strict=True) if b > a]
    acc = check_text(get_template("gemma4"), GEMMA, text, chunks, tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)


def test_a_piece_routed_after_a_held_start_that_completes_nothing_is_held(monkeypatch) -> None:  # noqa: ANN001
    """`<|` ends a piece (the parser holds it: `<|tool_response>` may start), the next piece ``"|`` cannot open
    the string value yet: it is kept, not read (the partial reader's `feed` is not called for it)."""
    template = get_template("gemma4")
    calls: list[str] = []
    feed = JsonDialectPartial.feed
    # (before the region opens: its feed, `delta_hot.hot_feed`, binds the reader's `feed` there)
    monkeypatch.setattr(JsonDialectPartial, "feed", lambda self, text: calls.append(text) or feed(self, text))
    ds = DeltaStream(template, prefix=GEMMA, id_seed=0)
    pieces = ["<|tool_call>call:f{", "a: 1, b: ", "<|", '"|', ">x", "y<|", '"|>}', "<tool_call|><turn|>"]
    for piece in pieces[:3]:
        ds.feed(piece)
    p = ds._open.partial
    assert ds._open.follow is not None and p.wait is not None
    calls.clear()
    ds.feed(pieces[3])
    assert calls == []  # (held: it completes nothing)
    for piece in pieces[4:]:
        ds.feed(piece)
    assert calls[0] == ">x"  # (the rest of the opening delimiter: the value opens, with what was held)
    ds.finish()
    args = ds.message["tool_calls"][0]["function"]["arguments"]
    assert args == {"a": 1, "b": "xy"}


# --------------------------------------------------------------------------- the reader's shortcuts

# values the member regexes read whole (integers, literals, integer lists as json.dumps writes them), and their
# neighbours that they must leave to the token / list readers (`-0`, `1.0`, `[1,2]`, `[ 1]`, `[-0]`, `truex`...)
edge_values = st.sampled_from(
    ["0", "-0", "7", "-12", "1.0", "1e3", "true", "false", "null", "[]", "[1, 2, 3]", "[-4]", "[0, -0]",
     "[1,2]", "[ 1]", "[1 ]", "[1, 2.5]", "[true]", '[<|"|>x<|"|>]', "[10, 0]", '"a[b, c"', '["x,", 1]']
)  # fmt: skip


@settings(max_examples=150, **SETTINGS)
@given(
    values=st.lists(edge_values, min_size=1, max_size=6),
    sp=st.tuples(*[st.sampled_from(SPACES)] * 3),
    data=st.data(),
)
def test_values_read_whole_or_not_any_spacing_any_chunking_equal_parse_response(values, sp, data) -> None:
    """Integers, literals and integer lists next to what only looks like them, with any spaces between the
    tokens, cut anywhere: the deltas reassemble into parse_response's message and json.dumps's arguments."""
    after_comma, before_colon, after_colon = sp
    members = (f"k{i}{before_colon}:{after_colon}{v}" for i, v in enumerate(values))
    body = "{" + ("," + after_comma).join(members) + "}"
    args = get_content_parser("json").parse(body, ARGS)
    _check(args, body, [body[0], *_cuts(data, body[1:])])
    text = _call(body)
    acc = check_text(get_template("gemma4"), GEMMA, text, data.draw(chunkings(text)), tools=None)
    assert acc["tool_calls"][0]["function"]["arguments"] == json.dumps(args, ensure_ascii=False)


def test_edge_values_split_at_each_position() -> None:
    for body in ["{a:-0,b:[0, -0],c:[1,2],d:true}", "{a:[1, 2],b:1.0,c:[ 1],d:null }", "{a:0,b:[]}"]:
        _split_everywhere(get_content_parser("json").parse(body, ARGS), body)


def _counting(monkeypatch, cls: type, name: str) -> list[str]:  # noqa: ANN001
    calls: list[str] = []
    method = getattr(cls, name)
    monkeypatch.setattr(cls, name, lambda self, text, *rest: calls.append(text) or method(self, text, *rest))
    return calls


def test_the_members_between_strings_are_read_without_the_general_follow_feed(monkeypatch) -> None:  # noqa: ANN001
    """Between two members, and at a string's close, `feed` reads the members itself (`_follow_feed` is not
    called); a `,` after a member that completes nothing is kept without reading it, and so is a `,` inside a
    list value that opened in the text kept; text in the string that holds a `<` but neither the closing
    delimiter nor a start of it at its end is the string's at once."""
    from hf_response_templates.partial.json_reader import JsonPartial

    p = partial_parser("json", ARGS)
    p.feed("{")
    assert p.follow(p.stack[0])
    general = _counting(monkeypatch, JsonPartial, "_follow_feed")
    members = _counting(monkeypatch, JsonDialectPartial, "_follow_members")
    pieces = ["a: 1", ", b: [1, 2]", ", l: [", "1,", " 2", "], s: <|", '"|>x', " < yes", " <", '|"|>', ", c"]
    written = [None if p.hold(t) else p.feed(t) for t in pieces]
    assert written == [None, '"a": 1, "b": [1, 2]', "", "", None, ', "l": [1, 2]', ', "s": "x', " < yes", " ",
                       '"', ""]  # fmt: skip
    # (a piece that may end with a cut closing delimiter, ` <`, is kept by `feed` itself too: no general path)
    assert general == []
    # (`, l: [` and `1,` kept, not read; ` < yes`: the open string's at once; `, c`: kept; what follows the
    # closing delimiter, nothing or the next member's start, and a string value opening after the text kept,
    # `, s: <|"|>x`, are read without `_follow_members`)
    assert members == ["a: 1, b: [1, 2]", ", l: [1, 2], s: <|"]
    assert p.pending == [", c"] and p.wait is not None
    assert p.feed(": 3}") == ', "c": 3' and p.following is None
    assert p.value == {"a": 1, "b": [1, 2], "l": [1, 2], "s": "x < yes ", "c": 3}
