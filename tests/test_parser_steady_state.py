"""`feed()`'s steady-state path (issue 19): in a long open region, a chunk without any of the one or two
characters the watch's delimiters (and the region's markup) start with is routed from one tuple kept on the
parser (`ResponseParser._fast_state`), before any other check. Pinned by operation counts (no scan, no
`_markup_chunk`, no recomputation of that tuple per chunk), and streaming still equal to one-shot for any
chunking, also through a copy of the parser mid-stream and with `feed_region` (`DeltaStream`'s path) mixed in.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled
from test_delimiters_leads import _Count

from hf_response_templates import ResponseParser, get_template, load_template, parse_response
from hf_response_templates import parser as parser_mod


@pytest.fixture
def calls(monkeypatch):
    counters = {}
    for name in ("_scan", "_run", "_markup_chunk", "_fast_state"):
        counter = counters[name] = _Count(getattr(parser_mod.ResponseParser, name))
        monkeypatch.setattr(parser_mod.ResponseParser, name, (lambda c: lambda self, *a: c(self, *a))(counter))
    return counters


def _snapshot(counters):
    return {name: c.calls for name, c in counters.items()}


@pytest.mark.parametrize(
    "name, prefix, opening, chars",
    [
        ("xlam-llama", "", "Sure", "<"),
        ("kimi-k3", "<|open|>think<|sep|>", "Hm", "<"),
        ("llama4-json", "", "Sure", "<}"),  # (a lookbehind guard's `}` is the second character)
        ("phi-4-mini", "", "Sure", "<f"),
        ("apriel-1.5", "", "Sure", "<["),
        ("cohere-command-r7b", "<|START_RESPONSE|>", "Paris", "<"),  # a region with markup (citations)
    ],
)
def test_steady_chunks_take_no_scan_and_no_recomputation(calls, name, prefix, opening, chars):
    tpl = load_template(get_template(name))
    watch = tpl.late_idle_watch
    parser = ResponseParser(tpl, prefix)
    parser.feed(opening)
    parser.feed(" and")  # (a region with markup builds its cleaner at its first chunk)
    assert parser._watch.fast_chars == chars or (watch is not None and watch.fast_chars == chars)
    before = _snapshot(calls)
    events = []
    for piece in [" is", " nice", " today", ".", "\n", " 42", " ok"]:
        events += parser.feed(piece)
    assert _snapshot(calls) == before
    assert parser._fast is not None and parser._fast[:2] == (chars[0], chars[-1])
    field = parser.current_field
    assert [e["type"] for e in events] == ["region_chunk"] * 7
    assert "".join(e["text"] for e in events) == " is nice today.\n 42 ok"
    assert {e["field"] for e in events} == {field}
    # a chunk with one of the characters leaves the steady path (scanned or checked as before), then comes back
    parser.feed(f" {chars[-1]}x")
    parser.feed(" y")
    parser.feed(" y")
    after = _snapshot(calls)
    parser.feed(" z")
    assert _snapshot(calls) == after
    message = parser.finalize()[0]
    expected = parse_response(f"{opening} and is nice today.\n 42 ok {chars[-1]}x y y z", tpl, prefix=prefix)
    assert message == expected


@pytest.mark.parametrize(
    "name, prefix",
    [("xlam-llama", ""), ("kimi-k3", "<|open|>think<|sep|>"), ("qwen3", "<think>\n"),
     ("cohere-command-r7b", "<|START_RESPONSE|>")],
)
def test_a_lone_held_character_and_the_chunk_after_it_take_no_search(monkeypatch, calls, name, prefix):
    counter = _Count(parser_mod.ResponseParser._held_end)
    monkeypatch.setattr(parser_mod.ResponseParser, "_held_end", lambda self, *a: counter(self, *a))
    tpl = load_template(get_template(name))
    parser = ResponseParser(tpl, prefix)
    parser.feed("Sure")
    parser.feed(" and")
    field = parser.current_field
    fast = parser._fast
    assert fast is not None and fast[5] == "<"
    before = _snapshot(calls)
    events = []
    for piece in [" a", "<", "b", " c", " <", "=", " d", "x<", " 1"]:
        events += parser.feed(piece)
        assert (parser._fast is None) == (piece[-1] == "<")  # held, then the steady state is back
    assert _snapshot(calls) == before and counter.calls == 0
    assert [e["text"] for e in events] == [" a", "<b", " c", " ", "<=", " d", "x", "< 1"]
    assert {e["field"] for e in events} == {field}
    # a chunk that continues the held character into a delimiter, or has one of its own, is looked at as before
    go_on = fast[6][0] + "x"  # (`|` of `<|im_end|>`, `/` of `</think>`)
    parser.feed(" <")
    parser.feed(go_on)
    assert _snapshot(calls) != before or counter.calls > 0
    message = parser.finalize()[0]
    assert message == parse_response(f"Sure and a<b c <= dx< 1 <{go_on}", tpl, prefix=prefix)


@pytest.mark.parametrize(
    "name, piece",
    [("phi-4-mini", " for"), ("phi-4-mini", " a<b"), ("xlam-llama", " a<b"), ("llama4-json", " a<b"),
     ("apriel-1.5", " [1]")],
)
def test_a_chunk_with_a_prefilter_character_but_no_fixed_text_takes_no_scan(calls, name, piece):
    tpl = load_template(get_template(name))
    parser = ResponseParser(tpl, "")
    parser.feed("Sure")
    parser.feed(" and")
    fast = parser._fast
    assert fast is not None and fast[7] is not None and (fast[0] in piece or fast[1] in piece)
    before = _snapshot(calls)
    events = parser.feed(piece) + parser.feed(" x")
    assert _snapshot(calls) == before  # (no `_fast_state` either: the steady state goes on)
    assert [e["text"] for e in events] == [piece, " x"]
    assert parser.finalize()[0] == parse_response(f"Sure and{piece} x", tpl, prefix="")


def test_a_lookbehind_guard_character_no_match_can_follow_is_routed_without_a_scan(calls):
    tpl = load_template(get_template("llama4-json"))
    assert tpl.late_idle_watch.guard_only == frozenset("}")
    parser = ResponseParser(tpl, "")
    parser.feed("Sure")
    parser.feed(" and")
    before = _snapshot(calls)
    events = []
    for piece in [" {a}", " b", "} c}", " d", "}"]:  # (`}` then ` d`: the chunk after a `}` is looked at)
        events += parser.feed(piece)
    assert calls["_scan"].calls == before["_scan"] and calls["_run"].calls == before["_run"]
    assert "".join(e["text"] for e in events) == " {a} b} c} d}"
    assert parser._rescan and parser._fast is None  # the text ends with a `}`: a call may begin right after it
    # a match may begin right after a `}`: scanned, the call is found
    call = ' {"name": "f", "parameters": {"x": 1}}'
    for piece in [call[:3], call[3:]]:
        parser.feed(piece)
    assert calls["_scan"].calls > before["_scan"]
    message = parser.finalize()[0]
    assert message == parse_response(" ".join(["Sure and {a} b} c} d}" + call]), tpl, prefix="")
    assert message["tool_calls"][0]["function"]["name"] == "f"
    # `}` then `;` in one chunk: scanned (a call may follow the `;`)
    parser = ResponseParser(tpl, "")
    parser.feed("Sure")
    parser.feed(" and")
    scans = calls["_scan"].calls
    parser.feed("}; ")
    assert calls["_scan"].calls == scans + 1


def test_feed_after_finalize_raises_even_from_the_steady_state():
    parser = ResponseParser(get_template("xlam-llama"), "")
    parser.feed("Sure")
    parser.feed(" thing")
    assert parser._fast is not None
    parser.finalize()
    assert parser._fast is None
    with pytest.raises(RuntimeError, match="already finalized"):
        parser.feed(" more")
    held = ResponseParser(get_template("xlam-llama"), "")
    held.feed("Sure")
    held.feed(" thing <")  # a lone character held by the steady state
    assert held.finalize()[0]["content"] == "Sure thing <"
    with pytest.raises(RuntimeError, match="already finalized"):
        held.feed("b")


def test_no_steady_state_while_text_is_held_or_a_guard_character_ends_the_text():
    parser = ResponseParser(get_template("llama4-json"), "")
    parser.feed("Sure")
    parser.feed(" a")
    assert parser._fast is not None
    parser.feed(" <|e")  # a beginning of `<|eot|>`: held
    assert parser._fast is None
    parser.feed("x")  # not a delimiter after all
    parser.feed(" }")  # a lookbehind guard's character ends the text: the next chunk is looked at
    assert parser._fast is None
    parser.feed(" b")
    assert parser._fast is not None
    assert parser.finalize()[0]["content"] == "Sure a <|ex } b"


def _content_closes(*closes):
    return load_template({"version": 1, "start_anchor": "<|a|>", "fields": {"content": {"close": list(closes), "content": "text"}}})


def test_two_character_prefilters_only():
    assert _content_closes("</a>").late_idle_watch.fast_chars == "<"
    assert _content_closes("</a>", "[B]").late_idle_watch.fast_chars == "<["
    assert _content_closes("</a>", "[B]", "{c}").late_idle_watch.fast_chars is None  # three: the `re` search stays
    assert load_template(get_template("gpt-oss")).late_idle_watch.fast_chars is None  # `\s*to=`: a space may start it
    parser = ResponseParser(_content_closes("</a>", "[B]", "{c}"), "")
    parser.feed("Sure")
    parser.feed(" a")
    assert parser._fast is None
    assert parser.feed(" b") == [{"type": "region_chunk", "field": "content", "text": " b", "dirty": False}]


STEADY = ["xlam-llama", "kimi-k3", "llama4-json", "phi-4-mini", "apriel-1.5", "cohere-command-r7b", "qwen3",
          "gpt-oss", "deepseek-v3.2"]
PREFIXES = {"kimi-k3": "<|open|>think<|sep|>", "cohere-command-r7b": "<|START_RESPONSE|>", "qwen3": "<think>\n"}
PIECES = st.sampled_from([" a", "b", " ", "\n", "<", "<|", "}", "{", "[", "]", "f", "functools", " [", "<co>", "</co>",
                          "<|eot|>", "<|eot_id|>", "<|close|>think<|sep|>", "<|END_RESPONSE|>", "</think>",
                          "<tool_call>", "</tool_call>", "[END FINAL RESPONSE]", "<|end|>", '{"name": "f", "arguments": {}}',
                          '{"name": "f", "parameters": {}}', "<|END_THINKING|>", "<|START_THINKING|>", ";", '"'])


def _feed(parser, chunk, use_region):
    if use_region and parser.feed_region(chunk):
        return [{"type": "region_chunk", "field": parser.current_field, "text": chunk}]
    return parser.feed(chunk)


def _events(events):
    return [{k: v for k, v in e.items() if k != "dirty"} for e in merge_chunks(events)]


@settings(max_examples=scaled(200), deadline=None)
@given(data=st.data())
def test_steady_streaming_equals_one_shot_for_any_chunking_copy_and_feed_region(data):
    name = data.draw(st.sampled_from(STEADY))
    prefix = PREFIXES.get(name, "")
    text = "".join(data.draw(st.lists(PIECES, max_size=20)))
    tpl = get_template(name)
    expected = parse_response(text, tpl, prefix=prefix, strict=False)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=max(0, min(len(text), 14)))))
    bounds = [0, *cuts, len(text)]
    copy_at = data.draw(st.integers(0, len(bounds) - 1))
    use_region = data.draw(st.booleans())
    parser = ResponseParser(tpl, prefix)
    events = list(parser.initial_events)
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        if i == copy_at:  # a copy (pickle) of the parser goes on as the parser would
            parser = pickle.loads(pickle.dumps(parser)) if i % 2 else copy.deepcopy(parser)
        if b > a:
            events += _feed(parser, text[a:b], use_region)
    message, final = parser.finalize()
    assert json.dumps(message, sort_keys=True, default=str) == json.dumps(expected, sort_keys=True, default=str)
    whole = ResponseParser(tpl, prefix)
    reference = list(whole.initial_events) + whole.feed(text) + whole.finalize()[1] if text else None
    if reference is not None:
        assert _events(events + final) == _events(reference)
