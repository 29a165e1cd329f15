"""The one-shot loop's JSON calls back to back (`value_close.py`, close kind -2, issue 19): Llama 4 JSON's
`{"name": ...}{"name": ...}` / `...}; {...` calls, each call's close found from the trigger's first candidate, its
value decoded once (stored decoded when the close is right after it) and the next call's open tried right at the
close's end, in one loop turn. The messages are the general loop's and the streaming parser's, on Llama 4 and on
synthetic templates of the same shape (an `_AT` text, arrays, no transform), malformed ones included.
"""

from __future__ import annotations

import re

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import load_template, parse_response, value_close
from hf_response_templates.content import json_values
from hf_response_templates.library import list_templates
from hf_response_templates.plan import OneShotPlan
from hf_response_templates.trigger_scan import TriggerScan

L4 = "llama4-json"
ANCHOR = "<|header_start|>assistant<|header_end|>\n\n"


def _close_kinds(tpl) -> list[int]:
    return [act[1] for act in oneshot_plan(tpl)._fast[3].values() if act is not None]


def test_llama4_json_reads_its_calls_with_value_close():
    # (fails on the code before `value_close`: its close was a `TriggerScan` called per call, kind 2)
    assert _close_kinds(TEMPLATES[L4]) == [-2]
    for name in list_templates():
        if name != L4:
            assert -2 not in _close_kinds(TEMPLATES[name]), name


def test_calls_back_to_back_take_no_scan_call_and_no_second_decode(monkeypatch):
    # every open (the first at offset 0: `plan_shape._start`), close and value in the loop itself
    calls = []
    end = TriggerScan.end
    monkeypatch.setattr(TriggerScan, "end", lambda self, *a: calls.append(self) or end(self, *a))
    loads = []
    real = json_values._loads
    monkeypatch.setattr(json_values, "_loads", lambda text: loads.append(text) or real(text))
    text = (
        '{"name": "f", "parameters": {"a": 1}}{"name": "g", "parameters": {}}; {"name": "h", "arguments": '
        '{"q": "x}y"}}\n<|eot|>'
    )
    got = parse_response(text, L4, prefix=ANCHOR)
    assert [c["function"] for c in got["tool_calls"]] == [
        {"name": "f", "arguments": {"a": 1}},
        {"name": "g", "arguments": {}},
        {"name": "h", "arguments": {"q": "x}y"}},
    ]
    assert calls == [] and loads == []


_CALLS = [
    '{"name": "f", "parameters": {"a": 1}}',
    '{"name": "g", "arguments": {}}',
    '{"name": "h"}',
    '{"name": "s", "parameters": {"q": "x<|eom|>y"}}',
    '{"name": "t", "parameters": {"q": "}{"}}',
    '{"name": "u", "parameters": {"q": "} ; {\\"name\\": 1"}}',
    '{"name": "v", "parameters": {"q": "a}\\n{b"}}',
    '{"name": "w", "parameters": [{"x": {}}]}',
    '{"name":"z","parameters":{"k":"<|python_end|>"}}',
]
_PIECES = [
    *_CALLS,
    ";",
    " ",
    "\n",
    "; ",
    " ;\n",
    "<|python_start|>",
    "<|python_end|>",
    "<|eot|>",
    "<|eom|>",
    "}",
    "{",
    '{"name":',
    '"name"',
    ":",
    '"<|eot|>"',
    "[1, 2]",
    '"s"',
    "3",
    "null",
    "text",
    "x}",
    "\t",
]


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=10).map("".join), st.sampled_from(["", ANCHOR, ANCHOR + " "])
)
def test_llama4_json_agrees_with_the_general_loop_and_the_stream(text, prefix):
    assert_fast_loop_agrees(TEMPLATES[L4], text, prefix)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "parameters": {}}{"name": "g", "parameters": {}}\n<|eot|>',
        '{"name": "f", "parameters": {}} ;  {"name": "g", "parameters": {}}<|eom|>',
        '<|python_start|>{"name": "f", "parameters": {}}<|python_end|><|eot|>',
        '<|python_start|> {"name": "f", "parameters": {}}\n<|python_end|>\nthen text<|eot|>',
        '{"name": "f", "parameters": {"q": "<|eot|>"}}{"name": "g"}<|eot|>',  # (a close inside the value: the state machine)
        '{"name": "f", "parameters": {}}}{"name": "g"}<|eot|>',
        '{"name": "f", "parameters": {}}x{"name": "g"}<|eot|>',
        '{"name": "f", "parameters": {}}{"name": "g"}',
        '{"name": "f", "parameters": {}}{"name": ',
        '{"name": "f", "parameters": {}}' + " " * 600 + '{"name": "g"}<|eot|>',  # (over-long: the scan's)
        '{"name": "f", "parameters": {}}' + " " * 600 + "<|eot|>",
        '{"name": "f"}{"name": "g"}{"name": "h"}{"name": "i"}',
        'just text } {"name": 1}<|eot|>',
        '{"name": "f", "parameters": {}}<|eot|>{"name": "g"}',
        '{"name": "f", "parameters": 1e5}{"name": "g", "parameters": -Infinity}<|eot|>',
        '[1]{"name": "g"}<|eot|>',
    ],
)
def test_llama4_json_edge_cases(text):
    for prefix in ("", ANCHOR):
        plan = oneshot_plan(TEMPLATES[L4])
        assert plan._fast_run(text, prefix, None) == plan._general(text, prefix, None)
        if len(text) < 500:  # (a run of 511+ spaces after `}`: the stream's known limit, README)
            assert_fast_loop_agrees(TEMPLATES[L4], text, prefix)


def _synthetic(transform: bool, extra: dict | None = None) -> dict:
    """Calls as JSON arrays `[...]` back to back (`,` or nothing between), closed before the next, at `\\s*<e>`,
    at `!!` (an `_AT` text: no run before it) or at `~*<t>` (a run that may be longer than a delimiter may be);
    after `!` and at offset 0 an open where the content's close `<e>` is (which wins there: it is longer)."""
    calls = {
        "open_pattern": r"^\s*(?=\[)|(?<=\])\s*(?:,\s*)?(?=\[)|(?<=!)(?=<e>)|^(?=<e>\[)",
        "close_pattern": r"(?<=\])(?=\s*(?:,\s*)?\[)|\s*<e>|!!|~*<t>",
        "repeats": True,
        "content": "json",
    }
    if transform:
        calls["transform"] = {"args": "{content}"}
    calls.update(extra or {})
    return {"start_anchor": "<s>", "fields": {"calls": calls, "content": {"close": "<e>"}}}


def test_the_synthetic_templates_take_it_and_those_it_does_not_apply_to():
    assert _close_kinds(_synthetic(True)) == [-2] and _close_kinds(_synthetic(False)) == [-2]
    for extra in (
        {"content_args": {"empty": []}},  # (not plain JSON)
        {"open_pattern": r"^\s*(?=\[)|(?<=\])\s*(?P<sep>,)?\s*(?=\[)"},  # (an open with captures)
        {"close_pattern": r"(?<=\])(?=\s*(?:,\s*)?\[)|\s*<e>|(?P<bang>!!)"},  # (a close with captures)
        {"content": "text"},
    ):
        assert -2 not in _close_kinds(_synthetic(True, extra)), extra


_SYN = [
    "[1, 2]",
    '["a", {"b": "]["}]',
    "[]",
    '["!!"]',
    '["<e>"]',
    ",",
    " ",
    "\n",
    ", ",
    "<e>",
    "!!",
    "]",
    "[",
    "x",
    "{}",
    '"s"',
    "[1",
    " <e>",
    "~~<t>",
    "<t>",
    "~",
    "!!<e>[1]",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_SYN), max_size=10).map("".join), st.sampled_from(["", "<s>"]), st.booleans())
def test_the_synthetic_templates_agree_with_the_general_loop_and_the_stream(text, prefix, transform):
    assert_fast_loop_agrees(_synthetic(transform), text, prefix)


@pytest.mark.parametrize(
    "text",
    [
        "[1]!!<e>[2]",  # (the content's close at the close's end, where an open matches too: the longer wins)
        "[1]"
        + "~" * 600
        + "<t>[2]",  # (a close longer than a delimiter may be: one starting further in the run)
        "[1]" + "~" * 600 + "<t>",
        "[1]" + "~" * 400 + "<t>[2]<e>",
    ],
)
def test_the_synthetic_edge_cases(text):
    for transform in (False, True):
        plan = oneshot_plan(_synthetic(transform))
        for prefix in ("", "<s>"):
            assert plan._fast_run(text, prefix, None) == plan._general(text, prefix, None)
            if len(text) < 500:
                assert_fast_loop_agrees(_synthetic(transform), text, prefix)


def test_the_first_open_is_tried_at_offset_0_in_the_loop(monkeypatch):
    # (`plan_shape._start`'s kind 5 for a `TriggerScan` whose late watch has the same delimiters; fails on the code
    # before: the idle scan at offset 0 was `TriggerScan.end`, its `_here` there)
    for tpl in (TEMPLATES[L4], _synthetic(True)):
        ik, (d, _, _, texts, scan) = oneshot_plan(tpl)._fast[:2]
        assert ik == 5 and scan.__class__ is TriggerScan and texts == scan.lit_texts
    calls = []
    end = TriggerScan.end
    monkeypatch.setattr(TriggerScan, "end", lambda self, *a: calls.append(self) or end(self, *a))
    got = parse_response(
        '{"name": "f", "parameters": {}}{"name": "g", "arguments": {}}<|eot|>', L4, prefix=ANCHOR
    )
    assert [c["function"]["name"] for c in got["tool_calls"]] == ["f", "g"] and calls == []
    assert parse_response("Hi } there<|eot|>", L4, prefix=ANCHOR) == {
        "role": "assistant",
        "content": "Hi } there",
    }
    assert len(calls) == 1  # (no match at offset 0: the late watch's scan from there)


@pytest.mark.parametrize("text", ["<e>[1]", "[1]<e>", " [1]", "x[1]", "<e>", "", "!<e>[1]"])
def test_offset_0_of_the_synthetic_template(text):
    for prefix in ("", "<s>", "<s>!"):
        assert_fast_loop_agrees(_synthetic(False), text, prefix)


_HY = [
    "助手：",
    " ",
    "\n",
    "<answer>",
    "</answer>",
    "<think>",
    "</think>",
    "<tool_calls>",
    "</tool_calls>",
    "<|eos|>",
    "x",
    '[{"name": "f", "arguments": {}}]',
    "助手",
    "：",
]


@settings(max_examples=800, deadline=None)
@given(
    st.lists(st.sampled_from(_HY), max_size=10).map("".join),
    st.sampled_from(["", "<|extra_0|>", "<|extra_0|>\n"]),
)
def test_hunyuan_reads_offset_0_in_the_loop_too(text, prefix):
    # (its `^\s*助手：|<answer>` open, tried at offset 0 first: kind 5; where nothing matches there, the late scan
    # reads from there: past offset 0 only `<answer>` can match, a fixed-text search inline, kind 9,
    # `tests/test_oneshot_late_leads.py`)
    tpl = TEMPLATES["hunyuan-a13b"]
    plan = oneshot_plan(tpl)
    assert plan._fast[0] == 5 and plan._fast[10][0] == 9
    assert_fast_loop_agrees(tpl, text, prefix)


_KEYS = st.sampled_from(["name", "parameters", "arguments", "content", "x"])
_LEAVES = st.one_of(st.none(), st.integers(-2, 2), st.text(max_size=3), st.booleans())
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=8,
)


_CALL_FIELD = load_template(TEMPLATES[L4]).by_name["tool_calls"]


def _outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # (the same error, worded the same)
        return type(e), str(e)


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=4), _VALUES),
    st.sampled_from([None, {}, {"content": 1}, {"x": 2}, {"name": "n"}]),
)
def test_a_decoded_call_reads_its_keys_as_the_transform(value, captures):
    # (`template._compile_field`'s `decoded` for `transform._level`'s `values2` shape, Llama 4 JSON's calls: the same
    # value or error as the transform's own functions)
    f = _CALL_FIELD
    assert f.reshape.decoded.__qualname__.endswith("decoded")
    assert _outcome(lambda: f.reshape.decoded("", (value, captures))) == _outcome(
        lambda: f.reshape(value, captures)
    )


@pytest.mark.parametrize("tpl", [TEMPLATES[L4], _synthetic(True), _synthetic(False)])
def test_the_fired_sets_are_made_once_with_the_close_and_its_open(tpl):
    # (close kind -2's `fired` where a zero-width close moves `zw` (`{close}`), and after it the zero-width open
    # there (`{close, open}`): made by `value_close`, not per call; fails with either set wrong)
    plan = oneshot_plan(tpl)
    (fused,) = [act[3] for act in plan._fast[3].values() if act is not None and act[1] == -2]
    cd, od, by_cd, by_both = fused[2], fused[9], fused[12], fused[13]
    assert by_cd == frozenset({cd}) and by_both == frozenset({cd, od}) and cd != od


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f"}{"name": "g"}{"name": "h"}<|eot|>',  # (each `}{`: a zero-width close, then open, at one place)
        '{"name": "f"}{"name": "g"} ; {"name": "h"}{"name": "i"}\n<|eom|>',  # (an open of some width between)
        '{"name": "f"}{"name": "g"}}{"name": "h"}<|eot|>',  # (the loop's idle state after a zero-width close)
        'x}{"name": "f"}{"name": "g"}<|eot|>',  # (a zero-width open found by the idle state, then the loop)
        '{"name": "f"}{"name": "g", "parameters": {"q": "}{"}}{"name": "h"}<|eot|>',
    ],
)
def test_zero_width_closes_and_opens_back_to_back(text):
    for prefix in ("", ANCHOR):
        plan = oneshot_plan(TEMPLATES[L4])
        assert plan._fast_run(text, prefix, None) == plan._general(text, prefix, None)
        assert_fast_loop_agrees(TEMPLATES[L4], text, prefix)


def _fused(tpl) -> tuple:
    (fused,) = [act[3] for act in oneshot_plan(tpl)._fast[3].values() if act is not None and act[1] == -2]
    return fused


def test_the_close_trigger_is_searched_from_its_first_characters():
    # (`value_close._heads`: the trigger's search starts at the first of them, found by `str.find`; fails on the code
    # before, which had no such entry)
    assert _fused(TEMPLATES[L4])[14] == ("}", "<")
    assert _fused(_synthetic(True))[14] == _fused(_synthetic(False))[14] == ("]", "<", "!")


@pytest.mark.parametrize(
    "pattern, heads",
    [
        ("a|b", ("a", "b")),
        ("[ab]c|d()", ("a", "b", "d")),
        ("abc|abd", ("a",)),
        (r"\}(?:x|y)()|<\|e()|<\|f()", ("}", "<")),
        ("(?i)a|b", None),  # (case-insensitive: not read)
        ("[a-z]x|b", None),  # (a range)
        (r"\sx|b", None),  # (a category)
        ("x?|b", None),
        ("(a)|b", None),
        ("", None),
    ],
)
def test_the_heads_of_a_pattern(pattern, heads):
    assert value_close._heads(re.compile(pattern)) == heads


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES, *_SYN]), max_size=8).map("".join))
def test_no_trigger_match_starts_at_another_character(text):
    # (what the search from the first head character relies on, for each trigger that takes it)
    for tpl in (TEMPLATES[L4], _synthetic(True)):
        fused = _fused(tpl)
        match, heads = fused[0].__self__.match, fused[14]
        for i in range(len(text) + 1):
            assert match(text, i) is None or text[i] in heads


@pytest.mark.parametrize("tpl", [TEMPLATES[L4], _synthetic(True)])
def test_a_trigger_without_heads_is_searched_from_the_position(tpl, monkeypatch):
    # (`_heads` None: the plain search; the same messages as the general loop)
    monkeypatch.setattr(value_close, "_heads", lambda trigger: None)
    plan = OneShotPlan(load_template(tpl))
    assert [act[3][14] for act in plan._fast[3].values() if act is not None and act[1] == -2] == [None]
    texts = [
        '{"name": "f", "parameters": {"q": "}{"}}{"name": "g"} ; {"name": "h"}<|eot|>',
        '{"name": "f", "parameters": {"q": "<|eot|>"}}{"name": "g"}<|eot|>',
        '{"name": "f"}{"name": "g"}}{"name": "h"}<|eom|>',
        "[1]!!<e>[2]",
        '["a", {"b": "]["}], [2] <e>',
        "[1]~~<t>[2]",
    ]
    for text in texts:
        for prefix in ("", "<s>", ANCHOR):
            assert plan._fast_run(text, prefix, None) == plan._general(text, prefix, None)
