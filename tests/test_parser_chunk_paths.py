"""`feed()`'s cheap paths for chunks that used to leave its fast path (issue 19), each pinned by a test that
fails without it, and streaming still equal to one-shot for any chunking on texts built to hit them.

* `Watch.hold_prefixes`: a beginning of a delimiter's fixed text at the end of a chunk is held without a scan
  when some way of matching consumes (or looks ahead at) that text with no other assertion first
  (`Delimiter.sure_leads`): Qwen3.5's reasoning close `</think>|(?=<tool_call>)|(?=<think>)`, Gemma 4's
  `<|tool_call>` alternative (not its lookbehind-guarded `call:`).
* `Delimiter.late_leads`: past offset 0, a delimiter's alternatives anchored there (`^`) count for nothing, so
  Hunyuan's `^\\s*助手：|<answer>` gets the lead prefilter (`<answer>`) in the late watch.
* `Watch.feed_trigger`: a watch with a lookbehind-guarded delimiter (Llama 4 JSON) has `feed()` look for the
  guard's character with the fixed texts, so a beginning of `<|eot|>` at a chunk's end is held without a scan;
  and the chunk after a `}` is scanned only if a guarded match can begin right there (`Watch.after_guard`).
* Held text is joined with the next chunk once; a beginning of a fixed text at the end of the joined text is
  held again without a scan.
* `Markup.first_char`: a chunk of a `remove_pattern` field without the markup's first character is streamed
  by `feed()` itself (no `_markup_chunk` call).
* `jsonscan.ValueEnd.calm`: a chunk of a JSON value that holds no bracket, backslash (nor, at the top level,
  quote) nor a character a close delimiter can start with is routed by `feed()` without the scanner's
  `scan` (the quotes in it only flip the in-string state).
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import merge_chunks, scaled
from test_delimiters_leads import _Count

from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates import parser as parser_mod
from hf_response_templates.jsonscan import HOLD, IN_LIST, IN_STRING, MORE, ValueEnd
from hf_response_templates.regex_leads import _late_leads, _sure_leads


@pytest.fixture
def scans(monkeypatch):
    counter = _Count(ResponseParser._scan)
    monkeypatch.setattr(ResponseParser, "_scan", lambda self, *a: counter(self, *a))
    return counter


def _chunks(events, field=None):
    return "".join(e["text"] for e in events if e["type"] == "region_chunk" and field in (None, e["field"]))


# --------------------------------------------------------------------------- sure leads, hold prefixes


@pytest.mark.parametrize(
    "source, leads",
    [
        (r"</think>|(?=<tool_call>)|(?=<think>)", {"</think>", "<tool_call>", "<think>"}),
        (r"<\|tool_call>(?:call)?:(?P<name>[^{<]+)(?=\{)|(?<=<channel\|>\s{0,2})call:(?P<name>[^{<\s]+)(?=\{)",
         {"<|tool_call>:", "<|tool_call>call:"}),  # not `call:`: a lookbehind comes first
        (r"(?<=<think>\s{0,4})(?=<think>)", set()),
        (r"(?!<x>)<y>", set()),  # a negative lookahead first: no sure text
        (r"\b<y>", set()),
        (r"<a>(?<=b<a>)c", {"<a>"}),  # the lookbehind comes after the whole text `<a>`
        (r"\s*<x>", set()),
        (r"(?i)<x>", set()),  # case-insensitive: unknown
    ],
)
def test_sure_leads(source, leads):
    assert _sure_leads(source) == leads


def _reasoning(name: str, first: str = "Hm") -> ResponseParser:
    parser = ResponseParser(get_template(name), "<think>\n")
    parser.feed(first)
    assert parser.current_field == "reasoning_content"
    return parser


@pytest.mark.parametrize("name", ["qwen3.5", "qwen3-thinking-2507", "kimi-k2-thinking", "minimax-m2", "seed-oss"])
def test_a_lookahead_close_beginning_at_the_end_is_held_without_a_scan(scans, name):
    parser = _reasoning(name, "<seed:think>Hm" if name == "seed-oss" else "Hm")
    watch = parser._watch
    assert watch.lead_trigger is not None
    assert "<" in watch.hold_prefixes
    scans.calls = 0
    assert _chunks(parser.feed(" a <")) == " a "  # `<` may begin the close or a `(?=<tool_call>)`: held
    assert parser._buf == "<"
    assert _chunks(parser.feed(" b")) == "< b"  # joined with the next chunk, released: no lead there
    assert scans.calls == 0
    message, _ = parser.finalize()
    assert message["reasoning_content"].endswith("Hm a < b")


def test_held_text_joined_with_a_chunk_still_beginning_a_lead_is_held_again_without_a_scan(scans):
    parser = _reasoning("qwen3.5")
    scans.calls = 0
    parser.feed(" <")
    assert _chunks(parser.feed("/thi")) == ""  # `</thi`: held again, nothing routed
    assert parser._buf == "</thi"
    assert scans.calls == 0
    events = parser.feed("nk>Done")  # completes `</think>`: now a scan
    assert scans.calls >= 1
    assert [e["type"] for e in events][:1] == ["region_close"]
    message, _ = parser.finalize()
    assert message["reasoning_content"] == "Hm" and message["content"] == "Done"


def test_a_beginning_of_a_lookbehind_guarded_lead_is_still_scanned_but_a_bare_one_is_held(scans):
    """Gemma 4's idle watch: `c` may begin `call:` only after `<channel|>` (a lookbehind: the scan decides);
    `<` begins `<|tool_call>`, which no assertion guards, or the content close: held."""
    parser = ResponseParser(get_template("gemma4"), "")
    parser.feed("Hello")
    assert parser.current_field == "content"
    assert "c" not in parser._watch.hold_prefixes and "<" in parser._watch.hold_prefixes
    parser._fast = None  # (the watch itself, not the steady state's view without `call:`: `guard_steady.py`)
    scans.calls = 0
    assert _chunks(parser.feed(" c")) == " c"
    assert scans.calls == 1
    assert _chunks(parser.feed(" a <")) == " a "
    assert scans.calls == 1


def test_an_alternative_anchored_at_offset_0_gives_no_leads_once_past_it(scans):
    """Hunyuan's `^\\s*助手：|<answer>`: past offset 0 only `<answer>` can match, so the late watch has the lead
    prefilter (`Delimiter.late_leads`), and a `<` in prose is no scan."""
    assert _late_leads(r"^\s*助手：|<answer>") == ("<answer>",)
    assert _late_leads(r"^\s*(?=\{)") == ()
    assert _late_leads(r"\A<x>|\s*<y>") is None  # `\s*`: no fixed text first
    parser = ResponseParser(get_template("hunyuan-a13b"), "")
    parser.feed("Hello")
    assert parser.current_field == "content" and parser._watch.lead_trigger is not None
    scans.calls = 0
    assert _chunks(parser.feed(" a <")) == " a "
    assert _chunks(parser.feed(" b")) == "< b"
    assert _chunks(parser.feed(" a<b")) == " a<b"
    assert scans.calls == 0
    assert parser.finalize()[0]["content"] == "Hello a < b a<b"


def test_a_lookbehind_guarded_watch_holds_a_literal_beginning_and_scans_the_guard(scans):
    """Llama 4 JSON's content watch: `(?<=\\})\\s*(?:;\\s*)?(?=\\{...)` has no fixed text but its guard `}`, so
    `feed()`'s own trigger (`Watch.feed_trigger`) looks for `}` too: a `<` ending a chunk is held without a scan,
    a `}` ending one is routed without a scan but the chunk after it is looked at (`_rescan`; a `}` that a match
    can follow in its own chunk is scanned: tests/test_parser_steady_state.py), and text a scan held (it may
    follow a `}`) is not judged by that trigger."""
    parser = ResponseParser(get_template("llama4-json"), "")
    parser.feed("Hello")
    watch = parser._watch
    assert watch.lead_trigger is None and watch.feed_trigger is not None
    scans.calls = 0
    assert _chunks(parser.feed(" a <")) == " a "
    assert _chunks(parser.feed(" b")) == "< b"
    assert scans.calls == 0
    parser.feed(" v}")
    assert scans.calls == 0 and parser._rescan  # the guard ends the chunk: a match may begin at the next one
    assert _chunks(parser.feed(" check")) == " check"  # no `\s*` then `;` or `{` after it: no scan
    assert scans.calls == 0 and not parser._rescan
    parser.feed(" v}")
    assert scans.calls == 0 and parser._rescan
    parser.feed(" ")  # may begin `\s*{"name": ...` after the `}` (`Watch.after_guard`): held by a scan
    assert scans.calls == 1
    assert parser._buf == " " and not parser._fheld
    parser.feed('{"name": "f", "parameters": {"x": 1')  # (no `}` nor `<` in it)
    parser.feed("}}")
    message, _ = parser.finalize()
    assert message["content"] == "Hello a < b v} check v}"
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": {"x": 1}}


# --------------------------------------------------------------------------- markup chunks


def test_a_markup_chunk_without_the_markup_first_character_skips_markup_chunk(monkeypatch):
    counter = _Count(parser_mod.ResponseParser._markup_chunk)
    monkeypatch.setattr(parser_mod.ResponseParser, "_markup_chunk", lambda self, *a: counter(self, *a))
    tpl = get_template("cohere-command-r7b")
    parser = ResponseParser(tpl, "<|START_RESPONSE|>")
    parser.feed("Paris")  # the first chunk builds the region's cleaner
    calls = counter.calls
    events = parser.feed(" is nice")
    assert counter.calls == calls
    assert events == [{"type": "region_chunk", "field": parser.current_field, "text": " is nice", "dirty": False}]
    parser.feed(" <co>")  # the markup's first character: the cleaner decides
    assert counter.calls == calls + 1


# --------------------------------------------------------------------------- any chunking, texts built to hit them

_HOLD_TEMPLATES = ["qwen3.5", "qwen3", "gemma4", "kimi-k2-thinking", "seed-oss", "hunyuan-a13b", "cohere-command-r7b",
                   "deepseek-r1", "glm-4.6", "kimi-k3", "mistral-small-3.2", "llama3", "granite-3.3", "llama4-json",
                   "gemma3-pythonic"]


def _prefixes(name: str) -> list[str]:
    from hf_response_templates import load_template

    tpl = load_template(get_template(name))
    out: set[str] = set()
    for watch in (tpl.late_idle_watch, *tpl.late_close_watches):
        if watch is not None:
            out |= watch.hold_prefixes
            for d in watch.delimiters:
                out |= set(d.literals or ()) | set(d.partial_leads or ()) | d.sure_leads
    return sorted(out)


PIECES = {name: _prefixes(name) for name in _HOLD_TEMPLATES}
PROSE = st.sampled_from(["a", " b", "<", " <", "c", "<c", "o>", "\n", '"', "{", "}", "[", "]", ",", ":", "\\", " 1",
                         '{"name": "f", "arguments": {"x": "a\\"}b"}}', '{"a": [1, {"b": "}"}]}', "Paris"])


JSON_PIECES = st.sampled_from(['{', '}', '[', ']', '"', '\\', '\\"', ':', ',', ' ', '\n', 'a', 'bc', '12', 'true',
                               '"k": ', '{"a": "x"}', '"}]', ';', 'x y'])


@settings(max_examples=scaled(150), deadline=None)
@given(data=st.data())
def test_streaming_equals_one_shot_for_any_chunking(data):
    name = data.draw(st.sampled_from(_HOLD_TEMPLATES))
    parts = data.draw(st.lists(st.one_of(st.sampled_from(PIECES[name]), PROSE, JSON_PIECES), max_size=16))
    text = "".join(parts)
    prefix = data.draw(st.sampled_from(["", "<think>\n"]))
    tpl = get_template(name)
    expected = parse_response(text, tpl, prefix=prefix, strict=False)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=max(0, min(len(text), 12)))))
    bounds = [0, *cuts, len(text)]
    got = _stream(tpl, prefix, text, bounds)
    assert json.dumps(got[0], sort_keys=True, default=str) == json.dumps(expected, sort_keys=True, default=str)
    # the events too, up to where the chunks are cut: nothing streamed is lost, repeated or moved
    assert merge_chunks(got[1]) == merge_chunks(_stream(tpl, prefix, text, [0, len(text)])[1])


def _stream(tpl, prefix, text, bounds):
    parser = ResponseParser(tpl, prefix)
    events = list(parser.initial_events)
    for a, b in zip(bounds, bounds[1:], strict=False):
        events += parser.feed(text[a:b])
    message, final = parser.finalize()
    return message, events + final


# --------------------------------------------------------------------------- JSON value ends (jsonscan)


def _end(chunks: list[str], separator, calm: bool):
    """Where a `ValueEnd` fed `chunks` says the value (or sequence) ends, as a stream offset (None: it does
    not), taking `calm_chunk` where it applies when `calm`, as the parser does."""
    v = ValueEnd(separator, also="<[" if calm else None)
    consumed, buf = 0, ""
    for c in chunks:
        if calm and not buf and v.calm_chunk(c):
            consumed += len(c)
            continue
        window = buf + c
        got = v.scan(window, 0, len(window), consumed, False)
        if got == MORE:
            consumed, buf = consumed + len(window), ""
        elif got == HOLD:
            consumed, buf = consumed + v.hold, window[v.hold:]
        else:
            return consumed + got
    got = v.scan(buf, 0, len(buf), consumed, True)
    return consumed + got if got >= 0 else None




@settings(max_examples=scaled(300), deadline=None)
@given(parts=st.lists(JSON_PIECES, max_size=24), separator=st.sampled_from([None, ";"]), data=st.data())
def test_value_end_with_calm_chunks_is_the_value_end_of_the_whole_text(parts, separator, data):
    text = "".join(parts)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=max(0, len(text) - 1))))
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    whole = _end([text], separator, calm=False)
    assert _end(chunks, separator, calm=False) == whole
    assert _end(chunks, separator, calm=True) == whole


def test_calm_finds_what_may_change_the_state():
    v = ValueEnd(None, also="<")
    assert v.calm is None  # before the value: every chunk is scanned
    assert v.scan('{"a', 0, 3, 0, False) == MORE  # in a string of an object
    assert v.calm('bc') is None and v.calm('b}') is not None and v.calm('b\\') is not None
    assert v.calm('b<') is not None  # where the close delimiter may start
    assert v.calm_chunk('b": "c')  # two quotes: still in a string
    assert v.state == IN_STRING
    assert v.calm_chunk('", ')  # one: out of it
    assert v.state == IN_LIST
    assert v.scan('}', 0, 1, 10, False) == 1  # the scan takes over from there: the object ends here
    top = ValueEnd(None, also="<")
    assert top.scan('"abc', 0, 4, 0, False) == MORE  # a top-level string: a quote ends the value
    assert top.calm('x') is None and top.calm('x"') is not None


def test_a_mistral_tool_body_streams_without_scanning_calm_chunks(monkeypatch):
    counter = _Count(ValueEnd.scan)
    monkeypatch.setattr(ValueEnd, "scan", lambda self, *a: counter(self, *a))
    tpl = get_template("mistral-small-3.2")
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "note": "a long text with words in it"} Done.</s>'
    chunks = ["[TOOL_CALLS]", "get", "_weather", "[ARGS]", '{"', "city", '":', ' "', "Paris", '",', ' "', "note",
              '":', ' "', "a", " long", " text", " with", " words", " in", " it", '"}', " Done", ".", "</s>"]
    assert "".join(chunks) == text
    message, events = _stream(tpl, "", text, [0, *itertools.accumulate(map(len, chunks))])
    assert message == parse_response(text, tpl, prefix="")
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "note": "a long text with words in it"}
    assert counter.calls <= 6  # the first `{"` and the last `"}` (and the scans around them), not every chunk
    # a calm chunk with one quote leaves the string: the `}` of the next string is no end of the value
    chunks = ["[TOOL_CALLS]", "f", "[ARGS]", '{"a', '": ', "{", '"b}', '": 1', "}}", " ok", "</s>"]
    text = "".join(chunks)
    message, events = _stream(tpl, "", text, [0, *itertools.accumulate(map(len, chunks))])
    assert message == parse_response(text, tpl, prefix="")
    assert message["tool_calls"][0]["function"]["arguments"] == {"a": {"b}": 1}}
