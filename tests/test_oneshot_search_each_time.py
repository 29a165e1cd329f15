"""The one-shot loop's `LeadSearch` idle scan (kind 9, `plan_shape._alone`) searches from the loop's position at
every scan, without the `[at, j]` finds list `LeadSearch.end` keeps: every find the loop takes is passed before its
next scan, except after a zero-width open whose close is zero-width too (then the search from the same position
finds the same text, as the kept find would). These compare the loop with the general one and the streaming
parser where that happens (a zero-width open `(?=<z>)...` with a zero-width close `(?=<)`), and on Kimi K3's
delimiters (its idle watch is one, read at every turn). And Kimi K2's, whose `<|tool_calls_section_begin|>` begins
a longer text (an empty section, the content's close): where that is found, several delimiters start, and the loop
hands the find to `LeadSearch.end` (its table has `(None, _SEVERAL)` there: `plan_shape._only`).
"""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates.plan_shape import _SEVERAL

#: Every idle delimiter starts with `<` (a `LeadSearch`); `z` opens with zero width where `<z>` is not followed
#: by `q` (a regex tried at its text, no width known) and closes with zero width before the next `<`.
_ZERO = {"start_anchor": "<s>", "fields": {
    "z": {"open_pattern": r"(?=<z>)(?:<z>q)?", "close_pattern": r"(?=<)", "repeats": True},
    "u": {"open": "<u>", "close": "</u>"},
    "content": {"close": "<e>"},
}}
_PIECES = ["<z>", "<z>q", "q", "<u>", "</u>", "<e>", "<", "x", " ", "<zz>"]


def test_the_synthetic_template_reads_its_idle_watch_by_the_inlined_search():
    assert oneshot_plan(_ZERO)._fast[0] == 9


def test_a_zero_width_open_and_close_at_one_find():
    plan = oneshot_plan(_ZERO)
    for text in ("a<z>b<e>", "<z><z>q<u>u</u><e>", "<z>qb<z><e>", "<z>"):
        got = plan._fast_run(text, "", None)
        assert got == plan._general(text, "", None), text
    assert_fast_loop_agrees(_ZERO, "a<z>b<e>", "")


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), st.sampled_from(["", "<s>", "<s><z>q"]))
def test_the_idle_search_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_ZERO, text, prefix)


_KIMI_K3 = ["<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>response<|sep|>", "<|close|>response<|sep|>",
            "<|open|>tools<|sep|>", "<|close|>tools<|sep|>", '<|open|>call tool="f"<|sep|>', '<|open|>call tool="',
            '<|open|>argument key="a"<|sep|>1<|close|>argument<|sep|>', "<|close|>call<|sep|>",
            "<|close|>message<|sep|>", "<|end_of_msg|>", "<|open|>", "<", "x", " ", "\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_KIMI_K3), max_size=12).map("".join))
def test_kimi_k3_equals_the_general_loop_and_the_state_machine(text):
    assert oneshot_plan(TEMPLATES["kimi-k3"])._fast[0] == 9
    assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, '<|open|>message role="assistant"<|sep|>')


_KIMI_K2 = ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
            "functions.f:0", "<|tool_call_argument_begin|>", '{"a": 1}', "<|tool_call_end|>", "<|im_end|>",
            "<|tool_calls_section_begin|><|tool_calls_section_end|>", "<|", "x", " ", "\n"]


def test_kimi_k2_idle_watch_is_read_by_the_inlined_search_with_its_nested_texts_left_to_end():
    plan = oneshot_plan(TEMPLATES["kimi-k2"])
    kind, scan, table = plan._fast[:3]
    several = [t[0] is None and t[1] is _SEVERAL for t in table]
    assert kind == 9 and any(several) and None in scan.only
    assert [t is None for t in scan.only] == several


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_KIMI_K2), max_size=12).map("".join))
def test_kimi_k2_equals_the_general_loop_and_the_state_machine(text):
    assert_fast_loop_agrees(TEMPLATES["kimi-k2"], text, "<|im_assistant|>assistant<|im_middle|>")
