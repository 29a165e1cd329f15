"""`feed()`'s steady state where its trigger finds something in a chunk (issue 19, `steady_found.found_in_steady`):
the rest of `feed()` would run the same trigger again and decide from it, so the steady state decides itself. A sure
beginning of a delimiter that ends the chunk (GigaChat's ` f` of `function call`, ` <` with two prefilter characters,
DeepSeek's `<｜` of `<｜DSML｜`) is held and what is before it routed, and a chunk after it that does not continue it
is routed with it from `_held_fast` (the trigger of the two joined when the watch has no lone character); a Llama 4
`}` no call can follow is routed; anything else is scanned, without `feed()`'s slow path first. Pinned by call
counts (these fail on the code before: `_held_end` and `_fast_state` per such chunk), and by streaming equal to
one-shot and to the whole text fed at once for any chunking.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from engine_helpers import call_snapshot, count_parser_calls
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled

from hf_response_templates import ResponseParser, get_template, load_template, parse_response

GIGA = "assistant<|role_sep|>\n"


@pytest.fixture
def calls(monkeypatch):
    return count_parser_calls(monkeypatch, ("_scan", "_run", "_fast_state", "_held_end", "_guards_only"))


def test_a_beginning_ending_a_chunk_with_two_prefilter_characters_is_held_and_joined_by_the_steady_state(calls):
    tpl = load_template(get_template("gigachat3"))
    parser = ResponseParser(tpl, GIGA)
    parser.feed("Sure")
    parser.feed(" and")
    fast = parser._fast
    assert fast is not None and fast[:2] == ("<", "f") and fast[5] is None and fast[6] is None
    before = call_snapshot(calls)
    events = []
    for piece, held in [(" f", "f"), ("(", ""), (" x", ""), (" <", "<"), (" b", ""), ("<", "<"), ("b", ""),
                        (" for", ""), (" f", "f"), ("irst", "")]:
        events += parser.feed(piece)
        assert parser._buf == held and (parser._fast is None) == bool(held)
    assert call_snapshot(calls) == before  # no scan, no `_held_end`, no new tuple
    assert [e["text"] for e in events] == [" ", "f(", " x", " ", "< b", "<b", " for", " ", "first"]
    # a chunk that continues the held text into a delimiter goes the whole way
    events += parser.feed(" <|message_sep|>")
    assert calls["_scan"].calls > before["_scan"]
    message = parser.finalize()[0]
    assert message == parse_response("Sure and f( x < b<b for first <|message_sep|>", tpl, prefix=GIGA)


def test_a_longer_beginning_is_held_by_the_steady_state_and_the_next_chunk_looked_at_as_before(calls):
    tpl = load_template(get_template("deepseek-v4"))
    prefix = "<｜Assistant｜></think>"
    parser = ResponseParser(tpl, prefix)
    parser.feed("Sure")
    parser.feed(" and")
    fast = parser._fast
    assert fast is not None and fast[5] == "<"  # (a lone character: its `hold_next` is only for it)
    before = call_snapshot(calls)
    assert parser.feed(" x<｜") == [{"type": "region_chunk", "field": "content", "text": " x", "dirty": False}]
    assert parser._buf == "<｜" and parser._held_fast is None and parser._fast is None
    assert call_snapshot(calls) == before
    parser.feed("DSML｜invoke name=\"f\">")
    parser.feed("\n<｜DSML｜parameter name=\"a\" string=\"true\">1</｜DSML｜parameter>\n</｜DSML｜invoke>")
    message = parser.finalize()[0]
    text = " x<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">1</｜DSML｜parameter>\n</｜DSML｜invoke>"
    assert message == parse_response("Sure and" + text, tpl, prefix=prefix)
    assert message["tool_calls"][0]["function"]["name"] == "f"


def test_steady_text_before_a_held_beginning_is_kept_in_its_region():
    # `<|tools_` (Apertus) is held whole, the steady chunks before it are in `_acc`: they go to the content region
    tpl = load_template(get_template("apertus"))
    parser = ResponseParser(tpl, "")
    events = []
    for piece in ["Sure", " and", " x", "<|tools_", "prefix|>", '[{"f": {"a": 1}}]', "<|tools_suffix|>"]:
        events += parser.feed(piece)
    message, final = parser.finalize()
    text = 'Sure and x<|tools_prefix|>[{"f": {"a": 1}}]<|tools_suffix|>'
    assert message == parse_response(text, tpl, prefix="")
    assert message["content"] == "Sure and x"
    whole = ResponseParser(tpl, "")
    assert _events(events + final) == _events(whole.feed(text) + whole.finalize()[1])


def test_a_whole_delimiter_in_a_steady_chunk_is_scanned_without_feeds_slow_path(calls):
    tpl = load_template(get_template("nemotron-nano-v2"))
    parser = ResponseParser(tpl, "<SPECIAL_11>Assistant\n<think>\n")
    parser.feed("Hm")
    parser.feed(" so")
    assert parser._fast is not None
    before = call_snapshot(calls)
    events = parser.feed(" ok</think>")
    assert calls["_scan"].calls == before["_scan"] + 1 and calls["_held_end"].calls == before["_held_end"]
    assert [e["type"] for e in events] == ["region_chunk", "region_close"]
    assert parser.finalize()[0] == parse_response("Hm so ok</think>", tpl, prefix="<SPECIAL_11>Assistant\n<think>\n")


def test_a_guard_character_no_match_can_follow_is_routed_by_the_steady_state(calls):
    tpl = load_template(get_template("llama4-json"))
    parser = ResponseParser(tpl, "")
    parser.feed("Sure")
    parser.feed(" and")
    assert parser._fast is not None
    before = call_snapshot(calls)
    events = []
    for piece in [" {a} b", " c", " x}", " d"]:
        events += parser.feed(piece)
    assert calls["_scan"].calls == before["_scan"] and calls["_run"].calls == before["_run"]
    assert calls["_held_end"].calls == before["_held_end"] and calls["_guards_only"].calls == before["_guards_only"] + 2
    assert "".join(e["text"] for e in events) == " {a} b c x} d"
    assert parser.finalize()[0] == parse_response("Sure and {a} b c x} d", tpl, prefix="")


NAMES = {"gigachat3": GIGA, "deepseek-v4": "<｜Assistant｜>", "nemotron-nano-v2": "<SPECIAL_11>Assistant\n",
         "llama4-json": "", "phi-4-mini": "", "apriel-1.5": "", "qwen3.5": "<|im_start|>assistant\n<think>\n",
         "apertus": "", "mistral-small-3.2": "", "minimax-m2": "<think>\n"}
PIECES = st.sampled_from([" a", "b", " ", "\n", "<", " <", "<|", "|", "f", " f", "function", " call", "function call",
                          "<|role_sep|>", "<|message_sep|>", "</s>", "<｜", "</｜", "DSML", "｜", "<｜DSML｜invoke",
                          ' name="f">', "</｜DSML｜invoke>", "<｜end▁of▁sentence｜>", "</think>", "<think>", "<TOOL",
                          "<TOOLCALL>", "</TOOLCALL>", "<SPECIAL_12>", '[{"name": "f", "arguments": {}}]', "}", "{",
                          '{"name": "f", "parameters": {}}', ";", "[", "]", "[TOOL_CALLS]", "<tool_call>",
                          "</tool_call>", "<function=f>", "</function>", "<|im_end|>", "<|eot|>", "<|tools_prefix|>",
                          "<minimax:tool_call>", '<invoke name="f">', "</invoke>", "functools", "x"])


def _events(events):
    return [{k: v for k, v in e.items() if k != "dirty"} for e in merge_chunks(events)]


@settings(max_examples=scaled(400), deadline=None)
@given(data=st.data())
def test_streaming_equals_one_shot_and_one_chunk_for_any_chunking_and_copy(data):
    name = data.draw(st.sampled_from(sorted(NAMES)))
    prefix = NAMES[name]
    pieces = data.draw(st.lists(PIECES, max_size=24))
    text = "".join(pieces)
    tpl = get_template(name)
    expected = parse_response(text, tpl, prefix=prefix, strict=False)
    if data.draw(st.booleans()):  # cut at piece boundaries (a delimiter or a beginning of one as a whole chunk)
        ends = [sum(map(len, pieces[: k + 1])) for k in range(len(pieces))]
        cuts = sorted(set(data.draw(st.lists(st.sampled_from(ends), max_size=24)) if ends else []))
    else:
        cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=max(0, min(len(text), 20)))))
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
    if text:
        whole = ResponseParser(tpl, prefix)
        reference = list(whole.initial_events) + whole.feed(text) + whole.finalize()[1]
        assert _events(events + final) == _events(reference)
