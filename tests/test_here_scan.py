"""`here_scan.HereScan`: the one-shot plan's scan of gpt-oss's idle watch (its regexes tried at the position first)
gives exactly `Watch.scan_end`'s answer, and the plan reads that watch through it.

Every idle watch that has a `HereScan` (any shipped template's, gpt-oss's at least) is asked, on texts made of its
delimiters' pieces and the characters around them, from non-decreasing positions, with and without a
zero-width match that fired at the position.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template, parse_response
from hf_response_templates.delimiters import DelimiterTimeout
from hf_response_templates.here_scan import HereScan, here_scan
from hf_response_templates.library import get_template, list_templates
from hf_response_templates.plan import plan_for

#: A made-up template whose idle regexes match equally long at one position (`<x>y`: `a` and `b`; the lower rank
#: wins), may start at any space, and may match longer than `MAX_DELIMITER_LENGTH` (`c`, no delimiter then).
TIES = {"version": 1, "start_anchor": "<s>", "fields": {
    "b": {"open_pattern": "\\s*<x>(?:y)?", "close": "</x>", "content": "text"},
    "a": {"open_pattern": "\\s*<x>y?z?", "close": "</x>", "content": "text"},
    "c": {"open_pattern": "\\s*<w>[^<]*<v>", "close": "</x>", "content": "text"}}}


def _watches() -> list:
    out = []
    for name, tpl in [*((n, get_template(n)) for n in list_templates()), ("ties", TIES)]:
        tpl = load_template(tpl)
        scan = here_scan(tpl.idle_watch)
        if scan is not None:
            out.append((name, tpl.idle_watch, scan))
    return out


WATCHES = _watches()
_FRAGS = ["<|start|>assistant", "<|channel|>", "final", "analysis", "commentary", "<|message|>", "<|constrain|>",
          "json", " to=", "to=", "functions.", "get_weather", " ", "\n", "\t", "<|end|>", "<|call|>", "<|return|>",
          "<|channel|>final<|message|>", "<|channel|>analysis<|message|>", " to=functions.f<|channel|>commentary",
          "<|channel|>commentary to=functions.f ", "<|channel|>commentary json", "{}", "Hi", "<", "<|", "x" * 40,
          "a" * 300, "<x>", "y", "z", "<w>", "<v>", "</x>"]


def test_gpt_oss_idle_watch_has_a_here_scan_and_the_plan_reads_it():
    assert {"gpt-oss", "ties"} <= {name for name, _, _ in WATCHES}
    tpl = load_template(get_template("gpt-oss"))
    plan = plan_for(tpl)
    kind, scan = plan._fast[0], plan._fast[1]  # (the loop reads the `HereScan` itself: `test_oneshot_here_inline.py`)
    assert kind == 4 and isinstance(scan, HereScan) and scan.watch is tpl.idle_watch


def test_the_fast_path_is_taken_on_harmony_headers():
    """A header right at the position is answered without `Watch.scan_end` (the fallback is not called)."""
    tpl = load_template(get_template("gpt-oss"))
    calls = []
    scan = HereScan(tpl.idle_watch)
    scan.fallback = lambda *a: calls.append(a) or -7
    text = "<|channel|>analysis<|message|>Hm<|end|><|start|>assistant to=functions.f<|channel|>commentary json" \
           "<|message|>{}<|call|>"
    got = scan.scan_end(text, 0, -1, frozenset(), frozenset(), 1.0, {})
    assert (got[0], got[1], got[2].field) == (0, 30, "thinking")
    i = text.index("<|start|>")
    got = scan.scan_end(text, i, -1, frozenset(), frozenset(), 1.0, {})
    assert (got[0], got[2].field, got[3]) == (i, "tool_calls", {"name": "f"})
    assert scan.scan_end(text, len(text), -1, frozenset(), frozenset(), 1.0, {}) == len(text)
    assert not calls
    assert scan.scan_end(text, 3, -1, frozenset(), frozenset(), 1.0, {}) == -7  # nothing at 3: `scan_end`'s
    assert len(calls) == 1
    # (a header longer than `MAX_DELIMITER_LENGTH`, as an example of a match there that is no delimiter)
    long = "<|channel|>commentary to=functions.f " + "a" * 600 + "<|message|>{}<|call|><|channel|>final<|message|>"
    assert scan.scan_end(long, 0, -1, frozenset(), frozenset(), 1.0, {}) == -7


@pytest.mark.parametrize("text, want", [
    (" <x>y", (0, 5, "a")),  # `a` and `b` both match 5 characters: the lower rank
    (" <x>yz", (0, 6, "a")),
    ("<w>" + "q" * 600 + "<v><x>", (606, 609, "a")),  # `c`'s match is too long: no delimiter there
    ("<w>q<v>", (0, 7, "c")),
])
def test_ties_and_long_matches(text, want):
    tpl = load_template(TIES)
    scan = here_scan(tpl.idle_watch)
    got = scan.scan_end(text, 0, -1, frozenset(), frozenset(), 1.0, {})
    assert got == tpl.idle_watch.scan_end(text, 0, -1, frozenset(), frozenset(), 1.0, {})
    assert (got[0], got[1], got[2].field) == want


@st.composite
def _script(draw):
    name, watch, scan = draw(st.sampled_from(WATCHES))
    text = "".join(draw(st.lists(st.sampled_from(_FRAGS), max_size=14)))
    steps = draw(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3), st.integers(0, 255)), min_size=1,
                          max_size=6))
    return name, watch, scan, text, steps


@settings(max_examples=1500, deadline=None)
@given(_script())
def test_here_scan_equals_scan_end(script):
    name, watch, scan, text, steps = script
    n = len(text)
    memo: dict = {}
    memo2: dict = {}
    pos, zw, fired = 0, -1, frozenset()
    for advance, event, pick in steps:
        pos = min(n, pos + advance)
        if event == 0:  # a zero-width match fired here
            zw = pos
            fired = frozenset(d for k, d in enumerate(watch.regexes) if pick >> k & 1)
            memo.clear()
            memo2.clear()
        elif event == 1 and zw != pos:
            zw, fired = -1, frozenset()
            memo.clear()
            memo2.clear()
        try:
            want = watch.scan_end(text, pos, zw, fired, frozenset(), 1.0, memo)
        except DelimiterTimeout:
            want = "timeout"
        try:
            got = scan.scan_end(text, pos, zw, fired, frozenset(), 1.0, memo2)
        except DelimiterTimeout:
            got = "timeout"
        assert got == want, (name, text, pos, zw)


@pytest.mark.parametrize("text", [
    "<|channel|>final<|message|>Hi<|return|>",
    "<|channel|>analysis<|message|>Hm<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>",
    " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
    "<|channel|>analysis<|message|>Hm<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json"
    "<|message|>{}<|call|>",
    "plain text first<|channel|>final<|message|>Hi<|return|>",
])
def test_the_plan_equals_the_state_machine(text):
    from hf_response_templates.parser import ResponseParser

    tpl = load_template(get_template("gpt-oss"))
    prefix = "<|start|>user<|message|>Hi<|end|><|start|>assistant"
    parser = ResponseParser(tpl, prefix)
    parser.feed(text)
    streamed, _ = parser.finalize()
    got = plan_for(tpl).run(text, prefix, None)
    if parser.errors:  # (text outside every region): the state machine's
        assert got is None
    else:
        assert got is not None and got == streamed
        assert parse_response(text, tpl, prefix=prefix) == streamed
