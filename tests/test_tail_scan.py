"""The one-shot two-state loop's closes of a run of a few characters then a fixed tail (`tail_scan.py`, issue 19):
FunctionGemma's `\\}\\s*<end_function_call>`, InternLM2's `\\s*\\}\\s*<\\|action_end\\|>` and DeepSeek-R1's
`\\s*```\\s*<｜tool▁call▁end｜>(?:...)` are read in `OneShotPlan._fast_run` by a `str.find` of the tail, the run
stripped back and one regex search (close kind 10), the watch's own scanner only where that finds nothing. The messages are the general loop's (which reads
those closes by `LeadScan` / `TriggerScan`) and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response
from hf_response_templates.tail_scan import _spaces, tail_shape

_plan = oneshot_plan


def _close_kinds(plan):
    return {d.field: act[1] for d, act in plan._fast[3].items() if act is not None}


@pytest.mark.parametrize("name", ["functiongemma", "internlm2", "deepseek-r1"])
def test_these_tool_call_closes_are_read_by_their_tail(name):
    # (fails on the code before `tail_scan`: a `LeadScan` and `TriggerScan`s, kind 2)
    assert _close_kinds(_plan(TEMPLATES[name]))["tool_calls"] == 10


@pytest.mark.parametrize("source, expected", [
    (r"\}\s*<end_function_call>", ("}" + _spaces(), "<end_function_call>", True)),
    (r"\s*\}\s*<\|action_end\|>", ("}" + _spaces(), "<|action_end|>", True)),
    (r"[ab]+?x?</c>", ("abx", "</c>", True)),
    (r"[a-c]{2,3}\n<z>", ("abc", "\n<z>", True)),
    (r"\s*```\s*<e>(?:<f>|(?=\s*<g>|\Z))", ("`" + _spaces(), "<e>", False)),
    (r"x*<e>(?=a)", ("x", "<e>", False)),
])
def test_tail_shape_reads_a_run_then_a_fixed_tail(source, expected):
    chars, tail, bounded = tail_shape(source)
    assert (sorted(chars), tail, bounded) == (sorted(expected[0]), expected[1], expected[2])


@pytest.mark.parametrize("source", [
    r"\s*</c>|</d>",  # an alternation
    r"(?=a)\s*</c>",  # a lookahead before the tail
    r"\s*(</c>)",  # no fixed tail before a group
    r"(?=\s*</c>)",  # a lookahead
    r"\s* x",  # the tail starts with a run character
    r"[^a]*</c>",  # a negated class
    r"\d*</c>",  # a class that is not small
    r"(?:ab)*</c>",  # a group of two items
    r"</c>\s*",  # no fixed tail
    r"^\s*</c>",  # an anchor
    r"\s*</c>(?i)",  # case-insensitive
])
def test_tail_shape_refuses_other_regexes(source):
    assert tail_shape(source) is None


def test_the_whitespace_run_holds_every_space_of_both_engines():
    import re

    import regex

    chars = "".join(map(chr, range(0x110000)))
    assert set(re.findall(r"\s", chars)) | set(regex.findall(r"\s", chars)) == set(_spaces())


_TAIL = {"start_anchor": "<s>", "fields": {
    "f": {"open": "<f>", "close_pattern": r"\}\s*<e>", "repeats": True},
    "g": {"open": "<g>", "close_pattern": r"\s*\}\s*</g>", "content": "json", "repeats": True},
    "h": {"open": "<h>", "close_pattern": r"[ab]+?x?</h>", "repeats": True},
    "k": {"open": "<k>", "close_pattern": r"\s*`+\s*</k>(?:<z>|\s+<y>|(?=\s*<k>|\s*\Z|\s*[^<\s]))", "repeats": True},
    "content": {"close": "<z>"},
}}
_PIECES = ["<f>", "<g>", "<h>", "<k>", "`", "```", "</k>", "<y>", "}", "}}", "<e>", "</g>", "</h>", "<z>", " ", "\n", "\x1c", "\u3000", "a", "b",
           "x", "ab", '{"a": 1}', "{", "<", "q", " " * 520]


def test_the_synthetic_template_has_tail_closes():
    assert _close_kinds(_plan(_TAIL)) == {"f": 10, "g": 10, "h": 10, "k": 10}


@pytest.mark.parametrize("text, expected", [
    ("<f>x} \n<e>y<z>", {"f": ["x"], "content": "y"}),
    ("<f>x}}<e>", {"f": ["x}"]}),
    ("<f>x<e>}<e><z>", {"f": ["x<e>"]}),  # (the first tail has no match before it: the scanner finds the next)
    ('<g>{"a": {"b": 1}} }\n</g><g>[1]}</g>', {"g": [{"a": {"b": 1}}, [1]]}),
    ("<h>qbax</h><h>x</h><h>b</h>", {"h": ["q", "x</h><h>"]}),
    ("<k>a\n```\n</k>\n<y>b<k>c`</k><k>d`</k><z>", {"k": ["a", "c", "d"], "content": "b"}),
    ("<k>a`</k><q`</k>x", {"k": ["a`</k><q"], "content": "x"}),  # (the first tail's suffix fails: the scanner's)
    # (the longest match starts 512 characters before its end, in the run)
    ("<k>a" + "`" * 600 + "</k>`</k>", {"k": ["a" + "`" * 92], "content": "`</k>"}),
    ("<f>x" + " " * 600 + "}" + " " * 600 + "<e>}<e>", {"f": ["x" + " " * 600 + "}" + " " * 600 + "<e>"]}),
])
def test_tail_closes_read_each_shape(text, expected):
    assert _plan(_TAIL)._fast_run(text, "", None) == expected
    assert parse_response(text, _TAIL, prefix="") == expected


def test_a_run_of_one_character_is_taken_without_the_search_where_it_matches_with_the_tail():
    # `tail_scan._ones`: the run characters `c` where `c + tail` is a match (bounded regexes only); the loop takes
    # a run of one of them alone without the search (fails on the code before `_ones`: no eighth item)
    ones = {d.field: act[3][7] for d, act in _plan(_TAIL)._fast[3].items() if act is not None}
    assert ones == {"f": "}", "g": "}", "h": "ab", "k": ""}  # (`x</h>` is no match: `[ab]+?` takes one at least)
    for name in ("functiongemma", "internlm2"):
        assert {a[3][7] for a in _plan(TEMPLATES[name])._fast[3].values() if a is not None and a[1] == 10} == {"}"}


@pytest.mark.parametrize("text", [
    "<h>qx</h>", "<h>x</h>", "<h>qa</h>", "<h>a</h>", "<h>ax</h>", "<h>xa</h>", "<h></h>", "<h>q</h>x<z>",
    "<f>}<e>", "<f>x}<e>", "<f>x <e>", "<f>x}}<e>", "<f>x } <e>", "<f><e>}<e>", "<g>[1]}</g>", "<g>1 }</g>",
    "<g>}</g>", "<g>\x1c}</g>", '<g>{"a": 1}</g>}</g>',
])
def test_runs_of_one_character_equal_the_general_loop_and_the_state_machine(text):
    assert_fast_loop_agrees(_TAIL, text, "")


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s><f>"]))
def test_tail_closes_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_TAIL, text, prefix)


_GEMMA = ["<start_function_call>", "call:f{", "call:get_weather{", "k:<escape>v<escape>", ",", "}", "}}",
          "<end_function_call>", "<end_of_turn>", " ", "\n", "x", "{"]
_R1 = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n", '{"a": 1}', "\n", "```",
       "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>", " ", "x", "<", "<think>", "</think>"]
_INTERN = ['<|action_start|><|plugin|>\n{"name": "f", "arguments": ', '{"a": 1}', "{", "}", "}}", " ", "\n",
           "<|action_end|>", "<|im_end|>", "x", "[1]"]


@settings(max_examples=600, deadline=None)
@given(st.sampled_from([("functiongemma", _GEMMA), ("internlm2", _INTERN), ("deepseek-r1", _R1)]).flatmap(
    lambda p: st.tuples(st.just(p[0]), st.lists(st.sampled_from(p[1]), max_size=14).map("".join))))
def test_the_templates_with_tail_closes_equal_the_general_loop_and_the_state_machine(case):
    name, text = case
    assert_fast_loop_agrees(TEMPLATES[name], text, "")
