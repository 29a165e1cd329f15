"""Streaming on text full of `<`, `[`, `{` (issue 19): the cheap checks that keep such chunks off the regex
scan, each pinned by a test that fails without it, and streaming still equal to one-shot for any chunking.

* `Watch.lead_trigger`: a chunk with a delimiter's first character but none of the fixed texts delimiters
  start with (nor a beginning of one at its end) is released by `feed()` without a scan; a beginning of one
  at its end is held without a scan when every delimiter consumes its fixed text first (`Watch.lead_texts`),
  and held text (`<`) joins the next chunk the same way.
* `_search_by_leads`: a regex with fixed leading texts is tried only where one of them is; a beginning of a
  bare lead at the end of the window is a partial match without any regex call.
* `Delimiter.guard` / `Watch.behind`: llama4's `(?<=\\})\\s*;?\\s*(?=\\{...)` starts right after a `}`, so
  chunks without `}` or `<` are not scanned (its own first characters, `\\s`, `;`, `{`, are in most chunks).
* Lazy context (`ResponseParser._ctx_at`): lookbehind templates take `feed()`'s fast path, and a lookbehind
  still sees the text that fast path routed.
* `Markup.plain`: a markup chunk that needs no regex is not timed.
"""

from __future__ import annotations

import copy
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, get_template, load_template, parse_response
from hf_response_templates import content as content_mod
from hf_response_templates import delimiters as delim_mod
from hf_response_templates import parser as parser_mod
from hf_response_templates.delimiters import _search_by_leads, _search_regex
from hf_response_templates.regex_leads import _guard_chars


class _Count:
    """Counts calls of a function made by the thread that created it, while delegating every call to it. (Templates
    are compiled once and shared: another thread's calls would be counted too.)"""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0
        self.thread = threading.get_ident()

    def __call__(self, *args, **kwargs):
        if threading.get_ident() == self.thread:
            self.calls += 1
        return self.fn(*args, **kwargs)


@pytest.fixture
def scans(monkeypatch):
    counter = _Count(delim_mod.Watch.scan)
    monkeypatch.setattr(delim_mod.Watch, "scan", lambda self, *a, **k: counter(self, *a, **k))
    return counter


def _open(name: str, first: str = "Hello") -> ResponseParser:
    parser = ResponseParser(get_template(name), "")
    parser.feed(first)
    assert parser.current_field == "content"
    return parser


def _chunks(events):
    return "".join(e["text"] for e in events if e["type"] == "region_chunk")


# --------------------------------------------------------------------------- the second prefilter


@pytest.mark.parametrize("name, chunk", [("qwen3", " a < b"), ("mistral-small-3.2", " [1, 2]"),
                                         ("gemma4", " compute"), ("gigachat3", " first"), ("xlam-qwen", " <= 2")])
def test_a_chunk_with_a_first_character_but_no_lead_is_not_scanned(scans, name, chunk):
    parser = _open(name)
    scans.calls = 0
    events = parser.feed(chunk)
    assert scans.calls == 0
    assert _chunks(events) == chunk  # released at once, not held


@pytest.mark.parametrize("name, held, then", [("qwen3", " <", " b"), ("mistral-small-3.2", " [", "1,"),
                                              ("gigachat3", " f", "(x)"), ("gemma3-pythonic", " <", "= 2")])
def test_held_text_joins_the_next_chunk_without_a_scan(scans, name, held, then):
    parser = _open(name)
    assert parser._watch.lead_texts is not None  # every delimiter consumes its fixed text first
    scans.calls = 0
    first = parser.feed(held)
    assert _chunks(first) == held[:-1]  # the last character begins a delimiter: held, without a scan
    events = parser.feed(then)
    assert scans.calls == 0
    assert _chunks(events) == held[-1] + then
    assert parser.finalize()[0]["content"] == "Hello" + held + then


def test_a_beginning_of_a_lookbehind_guarded_lead_is_left_to_the_scan(scans):
    """Gemma 4's `(?<=<channel\\|>\\s{0,2})call:` is not bare: a `c` ending a chunk may be no partial match."""
    parser = _open("gemma4")
    assert parser._watch.lead_texts is None
    parser._fast = None  # (the watch itself, not the steady state's view without `call:`: `guard_steady.py`)
    scans.calls = 0
    assert _chunks(parser.feed(" c")) == " c"  # the regex says no partial match here: nothing held
    assert scans.calls == 1
    # the steady state away from `<channel|>` routes it without a scan; right after `<channel|>`, it is scanned
    scans.calls = 0
    assert _chunks(parser.feed(" c")) == " c"
    assert scans.calls == 0
    parser.feed(" <channel|>")
    scans.calls = 0
    assert _chunks(parser.feed(" c")) == " "  # (a partial match of `call:` there: held)
    assert scans.calls == 1


def test_the_lead_trigger_finds_leads_and_their_beginnings_at_the_end():
    trigger = delim_mod._lead_trigger(("<|im_end|>", "[TOOL_CALLS]"))
    assert trigger("a <|im_end|> b").start() == 2
    assert trigger("a [TOOL").start() == 2  # a beginning of one, at the end
    assert trigger("a <|im b") is None  # a beginning of one, not at the end
    assert trigger("a [1, 2]") is None
    assert delim_mod._lead_trigger(()) is None


# --------------------------------------------------------------------------- regexes tried at their leads


class _CountingPattern:
    """A regex pattern whose calls are counted (the `regex` module's pattern methods cannot be patched)."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.calls = 0

    def __getattr__(self, name):
        attr = getattr(self.pattern, name)
        if name in ("search", "match", "fullmatch"):
            def counted(*a, **k):
                self.calls += 1
                return attr(*a, **k)
            return counted
        return attr


def _counted(d):
    c = copy.copy(d)
    object.__setattr__(c, "pattern", _CountingPattern(d.pattern))
    return c


def _mistral_open():
    return next(d for d in load_template(get_template("mistral-small-3.2")).idle_watch.regexes)


@pytest.mark.parametrize("window", ["prose [1, 2] and more [", "a [TOOL", "x [T", "nothing here"])
def test_a_bare_lead_beginning_at_the_end_is_partial_without_a_regex_call(window):
    d = _counted(_mistral_open())
    assert d.bare_leads
    found = _search_by_leads(d, window, 0, -1, None)
    assert d.pattern.calls == 0
    assert (found[0] if found else None) == (window.rfind("[") if window.endswith(("[", "[TOOL", "[T")) else None)


def test_the_regex_runs_only_where_a_lead_is():
    d = _counted(_mistral_open())
    window = "a [1] b [2] c [TOOL_CALLS]f{\"x\": 1}</s>"
    found = _search_by_leads(d, window, 0, -1, None)
    assert found is not None and window[found[0]:found[1]] == "[TOOL_CALLS]f" and not found[3]
    assert found[2] == {"name": "f"}
    assert d.pattern.calls <= 2  # the match at the lead, and the probe past the window's edge


def _generic(d):
    """`d` without `lead_search`: `_search_regex` takes the partial-matching search over the window."""
    c = copy.copy(d)
    object.__setattr__(c, "lead_search", None)
    return c


_LEAD_REGEXES = [
    (name, d)
    for name in ("mistral-small-3.2", "gemma4", "gigachat3", "qwen3", "qwen3-coder", "smollm3")
    for watch in (load_template(get_template(name)).idle_watch, *load_template(get_template(name)).close_watches)
    if watch is not None
    for d in watch.regexes
    if d.lead_search is not None
]


def _window_text(d):
    pieces = list(d.partial_leads) + ["<", "[", "c", "f", " ", "\n", "{", "}", "x", "call:", "get", "<|", "</",
                                      "function call", '{"name": "f"}', "<channel|>", "<|role_sep|>", "(", ")"]
    return st.lists(st.sampled_from(pieces), max_size=10).map("".join)


@pytest.mark.parametrize("name, d", _LEAD_REGEXES, ids=[f"{n}-{d.field}-{d.key}" for n, d in _LEAD_REGEXES])
@given(data=st.data())
def test_searching_at_the_leads_answers_as_the_partial_matching_search(name, d, data):
    window = data.draw(_window_text(d))
    pos = data.draw(st.integers(0, len(window)))
    assert _held(_search_regex(d, window, pos, False, -1, None), window) == _held(
        _search_regex(_generic(d), window, pos, False, -1, None), window)


def _held(found, window):
    """A pending match that starts at the end of the window holds nothing: the same as no match."""
    return None if found is not None and found[3] and found[0] == len(window) else found


# --------------------------------------------------------------------------- lookbehind guards (llama4)


def test_guard_chars():
    assert _guard_chars(r'^\s*(?=\{)|(?<=\})\s*;?\s*(?=\{\s*"name"\s*:)') == (frozenset(), frozenset("}"))
    assert _guard_chars(r"(?<=\)\s*\])|(?=<end_of_turn>)") == (frozenset("<"), frozenset("]"))
    assert _guard_chars(r"(?<=x)(?=\{)") == (frozenset("{"), frozenset())  # as small: the match's own
    spaces_x = _guard_chars(r"\s*x")[0]
    assert " " in spaces_x and "x" in spaces_x
    assert _guard_chars(r"(?<=a|)\s*x") == (spaces_x, frozenset())  # the lookbehind may match nothing
    assert _guard_chars(r"(?<=a)\s*x") == (frozenset(), frozenset("a"))
    assert _guard_chars(r"(?<=a)x*") == (frozenset(), frozenset("a"))  # even its empty match is after an `a`
    assert _guard_chars(r"x*") is None  # may match the empty string anywhere


def test_llama4_prose_chunks_are_not_scanned(scans):
    tpl = load_template(get_template("llama4-json"))
    assert tpl.late_idle_watch.behind == frozenset("}")
    parser = _open("llama4-json")
    scans.calls = 0
    for chunk in [" let", "'s", " compute", " x", " =", " 42", ";", "\n", "  ", "{k:"]:
        parser.feed(chunk)
    assert scans.calls == 0


def test_llama4_the_chunk_after_a_brace_is_scanned(scans):
    parser = _open("llama4-json")
    parser.feed(" v}")
    assert parser._rescan
    scans.calls = 0
    parser.feed(" ")  # may begin `} {"name": ...`: scanned and held
    assert scans.calls == 1
    parser.feed('{"name": "f", "parameters": {}}')
    message, _ = parser.finalize()
    assert message["content"] == "Hello v}"
    assert message["tool_calls"][0]["function"]["name"] == "f"


LLAMA4_PIECES = ["Hello", " v}", "}", " ", ";", "\n", "{k: 1}", '{"name": "f", "parameters": {"a": 1}}', "<|eot|>",
                 " a<b", "<", "|", "eot", "|>", '{"name"', ": ", '"g", "parameters": {}}']


def _streamed_equals_one_shot(tpl, text, data):
    """Feed `text` cut at drawn places; the message must be the one-shot one."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    parser = ResponseParser(tpl, "")
    at = 0
    for c in [*cuts, len(text)]:
        parser.feed(text[at:c])
        at = c
    assert parser.finalize()[0] == parse_response(text, tpl, prefix="", strict=False)


@given(data=st.data())
def test_llama4_streamed_equals_one_shot(data):
    text = "".join(data.draw(st.lists(st.sampled_from(LLAMA4_PIECES), max_size=8)))
    _streamed_equals_one_shot(load_template(get_template("llama4-json")), text, data)


# --------------------------------------------------------------------------- lazy lookbehind context

LOOKBEHIND = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "content": {"content": "text"},
        "marked": {"open_pattern": r"(?<=abc)X", "close": "</m>", "content": "text"},
    },
}


def test_lookbehind_templates_take_feeds_fast_path(monkeypatch):
    counter = _Count(parser_mod.ResponseParser._run)
    monkeypatch.setattr(parser_mod.ResponseParser, "_run", lambda self, *a: counter(self, *a))
    parser = ResponseParser(LOOKBEHIND, "")
    parser.feed("hello")
    counter.calls = 0
    for chunk in ["ab", "c", " more", "ab", "c"]:
        parser.feed(chunk)
    assert counter.calls == 0


def test_a_lookbehind_sees_text_feeds_fast_path_routed():
    parser = ResponseParser(LOOKBEHIND, "")
    for chunk in ["hello", " a", "b", "c", "X", "inside", "</m>", "tail"]:
        parser.feed(chunk)
    message, _ = parser.finalize()
    assert message == parse_response("hello abcXinside</m>tail", LOOKBEHIND, prefix="")
    assert message["marked"] == "inside"


@given(text=st.lists(st.sampled_from(["a", "b", "c", "X", "</m>", " ", "<", "abc"]), max_size=16).map("".join),
       data=st.data())
def test_lookbehind_streamed_equals_one_shot(text, data):
    _streamed_equals_one_shot(LOOKBEHIND, text, data)


def test_context_is_synced_from_a_compacted_body():
    """More than `_COMPACT_EVERY` fast-path chunks (the body is joined meanwhile), then a lookbehind."""
    parser = ResponseParser(LOOKBEHIND, "")
    chunks = ["hello"] + ["yz"] * (parser_mod._COMPACT_EVERY + 5) + ["ab", "c", "X", "in", "</m>"]
    for chunk in chunks:
        parser.feed(chunk)
    assert parser.finalize()[0]["marked"] == "in"


# --------------------------------------------------------------------------- markup


def test_markup_chunks_that_need_no_regex_are_not_timed(monkeypatch):
    counter = _Count(content_mod.MarkupStream.feed)
    monkeypatch.setattr(content_mod.MarkupStream, "feed", lambda self, *a: counter(self, *a))
    parser = ResponseParser(get_template("gemma4"), "")
    parser.feed("<|channel>thought\nHm")
    counter.calls = 0
    chunks = [" let", " a", " <", " b", " <|ch", "annel> c", " x"]
    for chunk in chunks:
        parser.feed(chunk)
    # " <|ch" may begin the markup `<|channel>`, and "annel> c" follows held markup; " <" (held by the
    # reasoning close's check, then joined with " b") has no markup lead either
    assert counter.calls == 2
    message, _ = parser.finalize()
    text = "<|channel>thought\nHm" + "".join(chunks)
    assert message == parse_response(text, get_template("gemma4"), prefix="", strict=False)
    assert message["reasoning_content"] == "Hm let a < b  c x"
