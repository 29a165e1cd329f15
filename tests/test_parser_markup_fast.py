"""`feed()`'s steady state in a region with markup (`remove_pattern`), issue 19: Gemma 4's content after a tool call
watches `<` and `c` (its `call:` open) and strips `<channel|>`; its chunks were all scanned or checked one by one
(`_fast_state` had no tuple for two characters with markup), ~105 more Python opcodes per chunk than the steady
state. Now the tuple holds both characters when the markup's first one is among them, and its trigger is
`Markup.joint_trigger` (the watch's fixed texts and the markup's, one search), so `a case` or ` a<b` is routed
without a scan nor `_markup_chunk`. Pinned by call counts (these fail on the code before: no tuple, a
`_markup_chunk` or `_fast_state` per chunk), and streaming still equal to one-shot for any chunking.
"""

from __future__ import annotations

import copy
import json
import pickle
import re

import pytest
from engine_helpers import call_snapshot, count_parser_calls
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled

from hf_response_templates import ResponseParser, get_template, load_template, parse_response

GEMMA = "<|turn>model\n"


@pytest.fixture
def calls(monkeypatch):
    return count_parser_calls(monkeypatch, ("_scan", "_run", "_markup_chunk", "_fast_state", "_settle"))


def test_gemma4_content_chunks_take_the_steady_state_with_two_characters_and_markup(calls):
    tpl = load_template(get_template("gemma4"))
    parser = ResponseParser(tpl, GEMMA)
    parser.feed("<|tool_call>call:f{a:1}<tool_call|>")
    parser.feed("Sure")  # (the content region opens, and builds its markup cleaner)
    assert tpl.late_idle_watch.fast_chars == "<c" and tpl.by_name["content"].markup.first_char == "<"
    fast = parser._fast
    # (its own steady state away from `<channel|>`: `<` alone, the guarded `call:` left out, `guard_steady.py`)
    assert fast is not None and fast[:2] == ("<", "<") and fast[4] is parser._mk and fast[7] is not None
    before = call_snapshot(calls)
    events = []
    pieces = [" and", " case", " a<b", " check", " {k", ":", " x", "}", " <b>", " ok"]
    for piece in pieces:
        events += parser.feed(piece)
    assert call_snapshot(calls) == before  # no scan, no markup chunk, no new tuple, nothing settled
    assert events == [{"type": "region_chunk", "field": "content", "text": p, "dirty": False} for p in pieces]
    # markup, a beginning of it or of a delimiter leaves the steady state (looked at as before), then it comes back
    more = [" <channel|>y", " z", " c", "all", " <", "chan", "nel|>", " w", "<", "b", " q"]
    for piece in more:
        events += parser.feed(piece)
    assert call_snapshot(calls) != before
    after = call_snapshot(calls)
    events += parser.feed(" end")
    assert call_snapshot(calls) == after
    message, final = parser.finalize()
    text = "<|tool_call>call:f{a:1}<tool_call|>Sure" + "".join(pieces + more) + " end"
    assert message == parse_response(text, tpl, prefix=GEMMA)
    assert "<channel|>" not in "".join(e.get("text", "") for e in events)


def test_a_markup_region_with_one_character_routes_a_chunk_without_fixed_texts_by_the_joint_trigger(calls):
    tpl = load_template(get_template("cohere-command-r7b"))
    parser = ResponseParser(tpl, "<|START_RESPONSE|>")
    parser.feed("Paris")
    parser.feed(" and")
    fast = parser._fast
    assert fast is not None and fast[:2] == ("<", "<") and fast[7] is not None
    before = call_snapshot(calls)
    events = parser.feed(" a<b") + parser.feed(" c")  # (a `<`, neither `<co>` nor a delimiter: no markup chunk)
    assert call_snapshot(calls) == before
    assert [e["text"] for e in events] == [" a<b", " c"]
    parser.feed(" <co>x</co: 0:[1]> y")  # (markup: looked at as before)
    assert call_snapshot(calls) != before
    assert parser.finalize()[0] == parse_response("Paris and a<b c <co>x</co: 0:[1]> y", tpl,
                                                  prefix="<|START_RESPONSE|>")


def test_no_two_character_tuple_when_the_markup_starts_with_a_third_character():
    tpl = load_template({"version": 1, "start_anchor": "<|a|>", "fields": {"content": {
        "close": ["</a>", "[B]"], "content": "text", "content_args": {"remove_pattern": "\\{x\\}"}}}})
    parser = ResponseParser(tpl, "<|a|>")
    parser.feed("Sure")
    parser.feed(" a")
    assert tpl.late_idle_watch.fast_chars == "<[" and parser._fast is None
    assert parser.feed(" b{x}c") == [{"type": "region_chunk", "field": "content", "text": " bc", "dirty": False}]
    assert parser.finalize()[0]["content"] == "Sure a bc"


TRIGGER_PIECES = st.text(alphabet="<|c_al:ton>hrew {}x", max_size=16)


@settings(max_examples=scaled(300), deadline=None)
@given(text=TRIGGER_PIECES)
def test_joint_trigger_finds_nothing_exactly_where_both_triggers_find_nothing(text):
    for name, field in (("gemma4", "content"), ("gemma4", "reasoning_content"), ("cohere-command-r7b", "content")):
        tpl = load_template(get_template(name))
        markup = tpl.by_name[field].markup
        for watch in (tpl.late_idle_watch, *tpl.late_close_watches):
            if watch is None or watch.feed_trigger is None:
                continue
            joint = markup.joint_trigger(watch.feed_trigger)
            assert joint is markup.joint_trigger(watch.feed_trigger)  # (built once)
            assert (joint(text) is None) == (watch.feed_trigger(text) is None and markup.trigger(text) is None)


def test_joint_trigger_needs_both():
    markup = load_template(get_template("gemma4")).by_name["content"].markup
    assert markup.joint_trigger(None) is None
    assert markup.joint_trigger(re.compile("x").search) is not None


PIECES = st.sampled_from([" a", "b", " ", "\n", "<", "c", " c", "all", "call", ":", "call:f", "{a:1}", "{", "}",
                          "<channel|>", "<chan", "nel|>", "<|channel>", "thought", "<|tool_call>", "call:g{b:2}",
                          "<tool_call|>", "<turn|>", "<|tool_response>", " case", " a<b", "<|\"|>", "x"])


def _events(events):
    return [{k: v for k, v in e.items() if k != "dirty"} for e in merge_chunks(events)]


@settings(max_examples=scaled(300), deadline=None)
@given(data=st.data())
def test_gemma4_streaming_equals_one_shot_and_one_chunk_for_any_chunking_and_copy(data):
    name, prefix = data.draw(st.sampled_from([("gemma4", GEMMA), ("cohere-command-r7b", "<|START_RESPONSE|>")]))
    text = "".join(data.draw(st.lists(PIECES, max_size=24)))
    tpl = get_template(name)
    expected = parse_response(text, tpl, prefix=prefix, strict=False)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=max(0, min(len(text), 16)))))
    bounds = [0, *cuts, len(text)]
    copy_at = data.draw(st.integers(0, len(bounds) - 1))
    parser = ResponseParser(tpl, prefix)
    events = list(parser.initial_events)
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        if i == copy_at:  # a copy (pickle) of the parser goes on as the parser would
            parser = pickle.loads(pickle.dumps(parser)) if i % 2 else copy.deepcopy(parser)
        if b > a:
            events += parser.feed(text[a:b])
    message, final = parser.finalize()
    assert json.dumps(message, sort_keys=True, default=str) == json.dumps(expected, sort_keys=True, default=str)
    whole = ResponseParser(tpl, prefix)
    if text:
        reference = list(whole.initial_events) + whole.feed(text) + whole.finalize()[1]
        assert _events(events + final) == _events(reference)
