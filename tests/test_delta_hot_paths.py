"""The flat paths of `DeltaStream.feed` (issue 18, item 1): `ResponseParser.feed_region` (a chunk of the open
region taken without building its ``region_chunk`` event), a text region's chunk taken without dispatch, a string argument and a followed
arguments object. Any chunking: the deltas accumulate to `parse_response`'s message."""

from __future__ import annotations

import json
import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st
from test_openai_deltas import CHATML, SETTINGS, check_text, chunkings

from hf_response_templates import ResponseParser, get_template
from hf_response_templates.openai import DeltaStream
from hf_response_templates.partial import JsonPartial

# text full of what a text region's flat path must get right: trailing whitespace held back (a piece that is
# only whitespace, whitespace between two pieces), a delimiter's first character that is not a delimiter, and
# characters that need JSON escaping or are not printable
TEXT = st.lists(
    st.sampled_from(["a", "é", " ", "\n", "\t", "<", "<|", "|", ">", "</", '"', "\\", "\x01", "🌧"]), max_size=30
).map("".join)
TEMPLATES = ["smollm3", "hermes3", "qwen3"]


def _events_of_feed_region(template, pieces: list[str]) -> list[dict]:
    """The events of a parser fed with `feed_region` first, then `feed` when it declines (a piece it takes
    stands for the region_chunk of it)."""
    p = ResponseParser(template, CHATML)
    events: list[dict] = []
    for piece in pieces:
        if p.feed_region(piece):
            field = p.current_field
            assert field is not None
            events.append({"type": "region_chunk", "field": field, "text": piece,
                           "dirty": not p.template.by_name[field].streamable})
        else:
            events += p.feed(piece)
    return events + p.finalize()[1]


@settings(max_examples=150, **SETTINGS)
@given(name=st.sampled_from(TEMPLATES), reasoning=TEXT, content=TEXT, data=st.data())
def test_feed_region_takes_exactly_what_feed_makes_one_chunk_of(name: str, reasoning: str, content: str, data) -> None:
    """For any text and chunking, `feed_region` takes a piece only when `feed` would have returned one
    region_chunk of it (of the open region), and declining it changes nothing: the same stream of events."""
    template = get_template(name)
    text = f"<think>\n{reasoning}\n</think>\n{content}<|im_end|>"
    pieces = data.draw(chunkings(text))
    p = ResponseParser(template, CHATML)
    want = [ev for piece in pieces for ev in p.feed(piece)] + p.finalize()[1]
    assert _events_of_feed_region(template, pieces) == want


def test_feed_region_takes_text_only_inside_an_open_region() -> None:
    p = ResponseParser(get_template("smollm3"), CHATML)
    assert p.feed_region("<think>") is False  # (no region open)
    assert p.feed("<think>") == [{"type": "region_open", "field": "reasoning_content"}]
    assert p.feed_region("\nhm") is True  # open, and no delimiter can start in it
    assert p.feed_region(" x < y") is True  # `<`, but not the beginning of `</think>` (the fixed text)
    assert p.feed_region(" <") is False  # it may begin `</think>`: `feed` holds it
    assert p.feed_region("") is False
    assert [ev["text"] for ev in p.feed(" <")] == [" "]  # (the `<` held)
    assert p.feed_region("/think>") is False  # (the held `<`)
    assert p.feed("/think>")[-1] == {"type": "region_close", "field": "reasoning_content", "value": "hm x < y"}
    message, _ = p.finalize()
    assert message["reasoning_content"] == "hm x < y"


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


def test_ids_are_drawn_as_random_choice_draws_them_and_only_when_needed() -> None:
    """The id generator is made on first use (seeding costs as much as a short stream), with the same ids for a
    seed as ``"".join(rng.choice(...) for _ in range(24))``: the completion id first, then the calls'."""
    chars = string.ascii_letters + string.digits
    rng = random.Random(7)
    want = ["".join(rng.choice(chars) for _ in range(24)) for _ in range(3)]
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call><tool_call>{"name": "g", "arguments": {}}</tool_call>'
    template = get_template("hermes3")
    ds = DeltaStream(template, prefix=CHATML, id_seed=7)
    ds.feed(text)
    ds.finish()
    assert ds.tool_call_ids == ["call_" + want[1], "call_" + want[2]]
    assert ds.completion_id == "chatcmpl-" + want[0]
    ds = DeltaStream(template, prefix=CHATML, id_seed=7, completion_id="mine")
    ds.feed(text)
    ds.finish()
    assert (ds.completion_id, ds.tool_call_ids) == ("mine", ["call_" + want[0], "call_" + want[1]])
    ds = DeltaStream(template, prefix=CHATML, id_seed=7)
    assert ds._made_rng is None  # (nothing drawn yet)
    ds.completion_id = "set later"
    ds.feed(text)
    assert ds.tool_call_ids == ["call_" + want[1], "call_" + want[2]]  # (its own id was drawn all the same)
    assert ds.chunk({})["id"] == "set later"
    assert DeltaStream(template, prefix=CHATML).completion_id != DeltaStream(template, prefix=CHATML).completion_id


def _follow_whole(members: str) -> tuple[JsonPartial, str]:
    """Feed the arguments object's members in one piece while following it (the one-match path of
    `_follow_members`): the reader and what it wrote."""
    p = JsonPartial()
    p.feed('{"name": "f", "arguments": {')
    assert p.follow(p.stack[1]) is True
    written = p.feed(members)
    return p, written


def test_members_read_in_one_match_are_what_the_general_reader_reads() -> None:
    members = '"a": 0, "b": -12, "c": true, "d": null, "e": "x é 🌧", "": false, "f": "", "g": 7'
    p, written = _follow_whole(members + ', "h')
    assert written == members and p.following is not None
    assert p.value["arguments"] == json.loads("{" + members + "}")
    assert p.stack[1].keys == list("abcde") + ["", "f", "g"]
    assert p.stack[1].version == 10  # (one change per member, two per string: it opened and ended)
    # what json.dumps would not write, or a duplicate, stops following at that member, read as usual
    for bad, ok in [('"a": 1, "b": 05}', False), ('"a": 1, "b": -0}', True), ('"a": 1, "b": 1.50}', True),
                    ('"a": 1, "b": truex}', False), ('"a": 1, "a": 2}', False),
                    ('"a": 1, "b":2}', True), ('"a": 1, "b\\u00e9": 2}', True)]:
        p, written = _follow_whole(bad)
        assert p.following is None and p.followed == 1 and p.broken is not ok, bad
        assert written == ('"a": 1' if ok else ""), bad  # (nothing of a piece that breaks the body is written)
        if ok:
            p.feed("}")
            assert p.done and p.value["arguments"] == json.loads("{" + bad), bad


def test_a_followed_fragment_with_a_lone_surrogate_is_scrubbed() -> None:
    """A fragment the followed arguments object writes may hold a lone surrogate (from a JSON escape): it is sent
    as U+FFFD, while printable non-ASCII text (é, 🌧) is sent as it is."""
    template = get_template("hermes3")
    pieces = ['<tool_call>\n{"name": "f", "arguments": {', '"a": 1, "q": "x\\ud800y é", "b', '": "🌧", "c": 2', "}}",
              "\n</tool_call>"]
    ds = DeltaStream(template, prefix=CHATML)
    sent = [d["tool_calls"][0]["function"].get("arguments", "") for p in pieces for d in ds.feed(p) if "tool_calls" in d]
    ds.finish()
    assert '"a": 1, "q": "x\ufffdy é"' in sent and ', "b": "🌧"' in sent  # (one fragment per member, whole)
    args = "".join(sent)
    args.encode("utf-8")  # (a lone surrogate would raise here)
    assert json.loads(args) == {"a": 1, "q": "x\ufffdy é", "b": "🌧", "c": 2}
