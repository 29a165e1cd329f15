"""`trigger_scan.TriggerScan._here`'s literals: the longest one at a position, by one `re` match of them all
(`lit_at`, longest first), gives `Watch.scan_end`'s answer where literals begin one another (`<a>`, `<a>b`,
`<a><b>`, `<a><b>c`) beside a regex with no fixed leading text (`\\s*<end>`: the watch is a `TriggerScan`), and
the one-shot plan gives the general loop's and the streaming parser's messages. (No shipped `TriggerScan` has
literals that begin one another: Hunyuan A13B's and Llama 4 JSON's are read here too.)
"""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template
from hf_response_templates.delimiters import DelimiterTimeout
from hf_response_templates.lead_scan import lead_scan
from hf_response_templates.library import get_template
from hf_response_templates.trigger_scan import TriggerScan

_NESTED = {
    "version": 1,
    "start_anchor": "<s>",
    "fields": {
        "a": {"open": "<a>", "close": "</a>", "content": "text"},
        "b": {"open": ["<a><b>", "<a>b"], "close": "</b>", "content": "text"},
        "c": {"open": "<a><b>c", "close": "</c>", "content": "text"},
        "content": {"close_pattern": "\\s*<end>", "content": "text"},
    },
}
_FRAGS = [
    "<a>",
    "<a><b>",
    "<a>b",
    "<a><b>c",
    "</a>",
    "</b>",
    "</c>",
    "<end>",
    " <end>",
    "<",
    "<a",
    "<a><",
    "b",
    "c",
    " ",
    "\n",
    "x",
    "<s>",
]


def _idle_scan(template: dict) -> tuple:
    watch = load_template(template).idle_watch
    scan = lead_scan(watch)
    assert isinstance(scan, TriggerScan)
    return watch, scan


def test_the_nested_literals_make_a_trigger_scan_whose_literal_match_is_longest_first():
    watch, scan = _idle_scan(_NESTED)
    assert set(scan.lit_texts) == {"<a>", "<a><b>", "<a>b", "<a><b>c"}
    assert [len(d.source) for d in watch.regexes] == [len("\\s*<end>")]
    m = scan.lit_at("x<a><b>cy", 1)
    assert m is not None and m.group() == "<a><b>c" and scan.lit_of[m.group()].field == "c"
    assert scan._here("x<a><b>y", 1, -1, frozenset(), 1.0) == (1, 7, scan.lit_of["<a><b>"], None)
    assert (
        scan._here("x<a>y", 1, -1, frozenset(), 1.0, False) is None
    )  # (the caller knows no literal is there)
    # a watch with no literal: a pattern that matches nothing (not the empty alternation, which matches everywhere)
    _, bare = _idle_scan({**_NESTED, "fields": {"content": _NESTED["fields"]["content"]}})
    assert bare.lit_texts == () and bare.lit_at("<a>", 0) is None


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(["nested", "hunyuan-a13b", "llama4-json"]),
    st.lists(
        st.sampled_from(
            _FRAGS
            + [
                "<think>",
                "<tool_calls>",
                "</answer>",
                "<|eos|>",
                "<answer>",
                "助手：",
                "<|eot|>",
                "<|eom|>",
                '{"name": "f"}',
                "}",
            ]
        ),
        max_size=14,
    ).map("".join),
    st.lists(st.integers(0, 6), min_size=1, max_size=6),
)
def test_end_equals_scan_end(which, text, steps):
    watch, scan = _idle_scan(_NESTED if which == "nested" else get_template(which))
    finds = scan.fresh(text, 0)
    memo: dict = {}
    pos = 0
    for advance in steps:
        pos = min(len(text), pos + advance)
        try:
            want = watch.scan_end(text, pos, -1, frozenset(), frozenset(), 1.0, memo)
        except DelimiterTimeout:
            want = "timeout"
        try:
            got = scan.end(text, pos, -1, frozenset(), 1.0, finds)
        except DelimiterTimeout:
            got = "timeout"
        assert got == want, (which, text, pos)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FRAGS), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s>x"]))
def test_the_plan_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(load_template(_NESTED), text, prefix)
