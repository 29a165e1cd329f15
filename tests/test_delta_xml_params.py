"""xml-inline parameters (Qwen3-Coder's ``<parameter=...>`` tags) read tag by tag (`partial.XmlTagsPartial`,
issue 18 item 1): any chunking of generated calls, with escapes, entities, nested and cut tags, missing closing
tags and malformed endings, accumulates to `parse_response`'s message, and a value streams as it is written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _chat_render import TOOLS
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, N_RAW, SETTINGS, check_text, chunkings, stream_text

from hf_response_templates import get_template, parse_response
from hf_response_templates.content import get_content_parser
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import XmlInlinePartial, XmlTagsPartial, partial_parser

#: Pieces of parameter values: what may end a value or a tag (``<``, ``\n``, cut closing tags, the next tag,
#: the call's own close), what JSON must escape, entities (kept as written), nested markup, non-printable text.
VALUE_PIECES = [
    "Paris", "a b", " ", "\n", "\n\n", "<", ">", "=", "x < y", "&lt;", "&amp;", "&#60;", '"', "\\", "\\n", "é",
    "🌧️", "\t", "\u2028", "\x7f", "\u00a0", "<b>", "</b>", "<br/>", "</param", "</parameter", "<parameter",
    "<parameter=", "</parameter>", "</function", "</tool_call", "<|im_end", "{", "}", "[1, 2]", "42", "true",
]  # fmt: skip
KEYS = ["city", "days", "query", "q", "p1", "x_y", "metric"]

value_text = st.lists(st.sampled_from(VALUE_PIECES), max_size=6).map("".join)


@st.composite
def parameter(draw: st.DrawFn) -> tuple[str, str]:
    """(key, tag text); sometimes a key that is no key (``<parameter=a b>`` is no tag)."""
    key = draw(st.sampled_from(KEYS + ["a b", "", "ci<ty"]) if draw(st.integers(0, 9)) == 0 else st.sampled_from(KEYS))
    lead = draw(st.sampled_from(["\n", "", "\n\n"]))
    end = draw(st.sampled_from(["\n</parameter>\n", "\n</parameter>", "</parameter>", "\n", "", " </parameter>\n"]))
    return key, f"<parameter={key}>{lead}{draw(value_text)}{end}"


@st.composite
def qwen_call(draw: st.DrawFn) -> str:
    """A Qwen3-Coder generation: text, calls of generated parameters, and sometimes a malformed ending (a
    call or a tag cut by the end of the generation, a call without its closes)."""
    calls = []
    # (keys differ, across calls too: Qwen3.5 reads a second <tool_call> in the first one's region when the
    # first lacks its </tool_call>; a repeated key's later value replaces one already streamed, which the
    # stream flags `inconsistent`, as it always did)
    params = draw(st.lists(parameter(), max_size=6, unique_by=lambda kt: kt[0]))
    tags = 0
    for c in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(["get_weather", "search", "f"]))
        body = "".join(t for _, t in params[c::2])
        tags += len(params[c::2])
        close = draw(st.sampled_from(["</function>\n</tool_call>", "</function>\n</tool_call>\n", "</function>"]))
        calls.append(f"<tool_call>\n<function={name}>\n{body}{close}")
    text = draw(st.sampled_from(["", "Let me check.\n\n"])) + "\n".join(calls)
    # (a value may hold "<parameter=" itself: a tag whose key is what follows it, e.g. `</parameter` in
    # ``<parameter=</parameter>``; two of them may give the same key, a repeated key as above: at most one)
    assume(text.count("<parameter=") <= tags + 1)
    ending = draw(st.sampled_from(["<|im_end|>", "", "cut"]))
    if ending == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    return text + ("<|im_end|>" if ending == "<|im_end|>" else "")


@pytest.mark.parametrize("name", ["qwen3-coder", "qwen3.5"])
def test_the_tag_reader_streams_qwen_parameters(name: str) -> None:
    args = get_content_parser("xml-inline").compile_args(
        get_template(name)["fields"]["tool_calls"]["content_args"], "tool_calls"
    )
    p = partial_parser("xml-inline", args)
    assert isinstance(p, XmlTagsPartial) and p.sink_stop == "<"


@settings(max_examples=N_RAW * 4, **SETTINGS)
@given(text=qwen_call(), typed=st.booleans(), data=st.data())
def test_generated_qwen_calls_accumulate_to_the_parsed_message_under_any_chunking(
    text: str, typed: bool, data: st.DataObject
) -> None:
    """Streamed values, typed parameters (``days``: integer, ``metric``: boolean; not streamed), escapes,
    entities, cut and nested tags, missing ``</parameter>``: the deltas rebuild `parse_response`'s message, and
    no call is flagged (other than `length`)."""
    for name in ("qwen3-coder", "qwen3.5"):
        check_text(get_template(name), CHATML, text, data.draw(chunkings(text)), tools=TOOLS if typed else None)


def _arguments_seen(deltas: list[dict]) -> list[str]:
    """The arguments of call 0 as the client has them after each delta."""
    seen, args = [], ""
    for d in deltas:
        for e in d.get("tool_calls", []):
            if e["index"] == 0 and "function" in e:
                args += e["function"].get("arguments", "")
        seen.append(args)
    return seen


def test_a_value_streams_piece_by_piece_before_its_tag_closes() -> None:
    value = "a long answer, with x < y and\nlines " * 20
    text = f"<tool_call>\n<function=write>\n<parameter=text>\n{value}\n</parameter>\n</function>\n</tool_call><|im_end|>"
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    ds, deltas = stream_text(get_template("qwen3-coder"), CHATML, pieces, tools=None)
    want = json.dumps({"text": value}, ensure_ascii=False)
    seen = _arguments_seen(deltas)
    assert seen[-1] == want and ds.message["tool_calls"][0]["function"]["arguments"] == {"text": value}
    # the value arrives in many fragments, each a prefix of the final arguments (nothing taken back)
    growing = [s for s in seen if s.startswith('{"text": "') and len(s) < len(want)]
    assert len(growing) > len(value) // 6
    assert all(want.startswith(s) for s in seen)


def test_a_piece_inside_a_value_is_not_read_again() -> None:
    """Pieces holding none of the characters a value's end starts with (``<``, ``\\n``) are appended (by the
    stream itself once the value sinks there): the reader's general path runs only for the others."""
    value = "plain words only " * 300
    text = f"<tool_call>\n<function=write>\n<parameter=text>\n{value}\n</parameter>\n</function>\n</tool_call><|im_end|>"
    reads = 0
    real = XmlTagsPartial._read

    def counting(self: XmlTagsPartial, s: str) -> None:
        nonlocal reads
        reads += 1
        real(self, s)

    XmlTagsPartial._read = counting  # type: ignore[method-assign]
    try:
        pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
        ds, deltas = stream_text(get_template("qwen3-coder"), CHATML, pieces, tools=None)
    finally:
        XmlTagsPartial._read = real  # type: ignore[method-assign]
    assert ds.message["tool_calls"][0]["function"]["arguments"] == {"text": value}
    assert len(pieces) > 1200 and reads < 12, reads


# ------------------------------------------------------------------ the reader alone, every tag shape

#: (template, parameter format: key, value -> text): every shipped xml-inline template the tag reader reads
SHAPES = {
    "qwen3-coder": lambda k, v: f"<parameter={k}>\n{v}\n</parameter>\n",
    "qwen3.5": lambda k, v: f"<parameter={k}>\n{v}\n</parameter>\n",
    "seed-oss": lambda k, v: f"<parameter={k}>{v}</parameter>",
    "minimax-m2": lambda k, v: f'<parameter name="{k}">{v}</parameter>\n',
    "glm-4.6": lambda k, v: f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n",
    "kimi-k3": lambda k, v: f'<|open|>argument key="{k}"<|sep|>{v}<|close|>argument<|sep|>',
    "deepseek-v3.2": lambda k, v: f'<｜DSML｜parameter name="{k}" string="true">{v}</｜DSML｜parameter>\n',
}


def _args(name: str) -> Any:
    return get_content_parser("xml-inline").compile_args(
        get_template(name)["fields"]["tool_calls"]["content_args"], "tool_calls"
    )


@settings(max_examples=N_RAW * 4, **SETTINGS)
@given(
    name=st.sampled_from(sorted(SHAPES)),
    params=st.lists(st.tuples(st.sampled_from(KEYS), value_text), max_size=4),
    junk=st.sampled_from(["", "\n", "<parameter=", "<arg_key>x", "<|open|>arg", "oops"]),
    data=st.data(),
)
def test_the_tag_reader_agrees_with_the_content_parser_under_any_chunking(
    name: str, params: list, junk: str, data: st.DataObject
) -> None:
    """Fed in any pieces, the members the reader holds are the parse of the whole body (once that can no longer
    change them), an open value is a prefix of its parsed value, and `version` moved with each member."""
    args = _args(name)
    body = "".join(SHAPES[name](k, v) for k, v in params) + junk
    final = get_content_parser("xml-inline").parse(body, args)
    p = partial_parser("xml-inline", args)
    assert isinstance(p, XmlTagsPartial)
    keys = [k for k, _ in params]
    for piece in data.draw(chunkings(body)):
        p.feed(piece)
        assert not p.broken
        for key, value in p.value.items():
            if keys.count(key) == 1:  # (a repeated key: the later value replaces the earlier at its end)
                assert final[key] == value, key
        frame = p.stack[0]
        open_value = p.open_string(frame)
        if open_value is not None:
            assert frame.open_key not in p.value
            if keys.count(frame.open_key) == 1:
                assert final[frame.open_key].startswith("".join(open_value))
            assert p.snapshot()[frame.open_key] == "".join(open_value)
    if not junk.strip():  # every value ended: nothing is open
        assert p.value == {k: v for k, v in final.items()} and list(p.value) == list(final)


def test_a_head_cut_by_the_end_of_the_text_is_matched_once_it_can_complete() -> None:
    """A tag head arriving one character at a time is matched when its last fixed character (``>``) or the one
    after it arrives, not on every piece: a long key costs a join, not a match per character."""
    p = partial_parser("xml-inline", _args("qwen3-coder"))
    matches = 0
    head = p._head

    class Counting:
        def match(self, *a: Any, **k: Any) -> Any:
            nonlocal matches
            matches += 1
            return head.match(*a, **k)

    p._head = Counting()
    p._head_fast = None  # (every match through the counted pattern)
    key = "k" * 500
    for ch in f"<parameter={key}>\nv\n</parameter>\n":
        p.feed(ch)
    assert p.value == {key: "v"} and matches <= 4, matches


def test_a_key_the_content_parser_rejects_makes_no_member() -> None:
    """``<parameter=a b>`` is no tag (``\\s`` is not in a key): the reader skips it, as the parser does."""
    args = _args("qwen3-coder")
    body = "<parameter=a b>\nx\n</parameter>\n<parameter=c>\ny\n</parameter>\n"
    p = partial_parser("xml-inline", args)
    for ch in body:
        p.feed(ch)
    assert p.value == get_content_parser("xml-inline").parse(body, args) == {"c": "y"}


def test_value_parsers_are_applied_to_each_parameter_when_it_ends() -> None:
    """DeepSeek V3.2's ``string="false"`` parameters are read as JSON by the content parser, from the tag's text."""
    args = _args("deepseek-v3.2")
    body = (
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
    )
    p = partial_parser("xml-inline", args)
    seen = []
    for ch in body:
        p.feed(ch)
        seen.append(dict(p.value))
    assert p.value == {"days": 3, "city": "Paris"} == get_content_parser("xml-inline").parse(body, args)
    assert {"days": 3} in seen


def test_merge_duplicates_and_patterns_without_a_shape_keep_the_searching_reader() -> None:
    args = dict(_args("qwen3-coder"))
    args["merge_duplicates"] = True
    assert isinstance(partial_parser("xml-inline", args), XmlInlinePartial)
    fg = get_content_parser("xml-inline").compile_args(
        get_template("functiongemma")["fields"]["tool_calls"]["content_args"], "tool_calls"
    )
    assert fg["_shape"] is None and isinstance(partial_parser("xml-inline", fg), XmlInlinePartial)


def test_streamed_qwen_message_equals_parse_response_for_a_real_output() -> None:
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco, \"CA\" & <b>\\n</b>\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>"
    )
    expected = parse_response(text, get_template("qwen3-coder"), prefix=CHATML, tools=TOOLS, strict=False)
    for step in (1, 2, 3, 5, 8, len(text)):
        check_text(get_template("qwen3-coder"), CHATML, text, [text[i : i + step] for i in range(0, len(text), step)])
    assert expected["tool_calls"][0]["function"]["arguments"] == {"city": 'San Francisco, "CA" & <b>\\n</b>', "days": 3}


def test_a_repeated_key_stops_following_and_the_next_parameter_streams_again() -> None:
    """Without tool schemas the reader writes the arguments out itself (`XmlTagsPartial.follow`). A key seen
    before cannot be written (its later value replaces the first in the parsed message): the stream flags the call
    `inconsistent` at the close, as it always did, and the parameters after it still stream before the close."""
    text = (
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\n2\n</parameter>\n"
        "<parameter=a>\n3\n</parameter>\n<parameter=c>\nlater text\n</parameter>\n</function>\n</tool_call><|im_end|>"
    )
    template = get_template("qwen3-coder")
    close = text.index("</function>")
    ds = DeltaStream(template, prefix=CHATML, id_seed=0)
    deltas = [d for ch in text[:close] for d in ds.feed(ch)]
    before_close = _arguments_seen(deltas)[-1]
    assert before_close.startswith('{"a": "1", "b": "2", "c": "later tex'), before_close
    deltas += [d for ch in text[close:] for d in ds.feed(ch)] + ds.finish()
    assert ds.warnings == []
    assert ds.message == parse_response(text, template, prefix=CHATML, strict=False)
    assert ds.message["tool_calls"][0]["function"]["arguments"] == {"a": "3", "b": "2", "c": "later text"}
    errors = [e["error"] for d in deltas for e in d.get("tool_calls", []) if "error" in e]
    assert [e["type"] for e in errors] == ["inconsistent"] and errors[0]["in_message"]


def test_following_writes_each_piece_of_a_value_as_its_fragment() -> None:
    """While the reader follows, a piece of a value is its own fragment (escaped when JSON needs it), and a
    member's end and the next one's start are one fragment each."""
    text = '<tool_call>\n<function=f>\n<parameter=a>\nx "q" \\ y\n</parameter>\n<parameter=b>\nz\n</parameter>\n</function>'
    ds = DeltaStream(get_template("qwen3-coder"), prefix=CHATML, id_seed=0)
    fragments = []
    for piece in [text[: text.index("x")], "x ", '"q" ', "\\ ", "y", "\n</parameter>\n<parameter=b>\n", "z", "\n"]:
        for d in ds.feed(piece):
            fragments += [e["function"]["arguments"] for e in d.get("tool_calls", []) if e["function"]["arguments"]]
    assert ds._open.partial.following is not None
    assert "".join(fragments[:-6]) == '{"a": "'
    assert fragments[-6:] == ["x ", '\\"q\\" ', "\\\\ ", "y", '", "b": "', "z"], fragments


def test_while_following_text_before_the_next_tag_is_held_without_being_read() -> None:
    """Between two tags (and in a head cut before its ``>``) the reader waits for the one character that can
    move it: other text is kept (`hold`, or the stream's inlined test of `wait`) and read with the next piece."""
    args = _args("qwen3-coder")
    p = partial_parser("xml-inline", args)
    assert p.follow(p.stack[0]) is True
    out = [p.feed("<parameter=a>\nx\n</parameter>\n")]
    # (between two tags: nothing moves it before a head's `>`; the text held is read with the next `feed`)
    assert p.wait == frozenset(">") and p.hold("  \n ") and p.hold("<param") and not p.hold(">")
    out.append(p.feed("eter=b"))
    assert p.wait == frozenset(">") and p.hold("cd") and not p.hold(">")
    out += [p.feed(">\ny"), p.feed("\n</parameter>")]
    assert "".join(out) == '"a": "x", "bcd": "y"' and p.value == {"a": "x", "bcd": "y"}
    body = "<parameter=a>\nx\n</parameter>\n  \n <parameter=bcd>\ny\n</parameter>"
    assert p.value == get_content_parser("xml-inline").parse(body, args)
