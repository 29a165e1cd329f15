"""The one-shot two-state loop's closes of fixed texts whose match is known where the text is (`plan_shape._sure`,
issue 19): a close watch that is one zero-width lookahead of a fixed text (Kimi K3's `(?=<)`) is one
`str.find` in `OneShotPlan._fast_run` (kind 7), and one of a few such texts (Mistral's
`(?=\\[TOOL_CALLS\\])|</s>`) reads `LeadScan`'s finds list in the loop itself (kind 6), in a plain region and in
a JSON region read to its value's end, instead of calling `LeadScan.end`. The messages are the general loop's
and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response

_plan = oneshot_plan


def _close_kinds(plan):
    # each open's close scanner kind, and a value-end field's close scanner kind (`_fast_shape`'s `opens`)
    kinds = {}
    for d, act in plan._fast[3].items():
        if act is not None:
            kinds[d.field] = act[1] if act[1] != 5 else (5, act[2][0])
    return kinds


def test_kimi_k3_and_mistral_closes_are_read_in_the_loop():
    # (fails on the code before `_sure`: these closes were `LeadScan`s, kind 2)
    # (Kimi K3's: `_sure`'s kind 7, `(?=<)` as the text `<` of width 0, read on from a close by `section_scan`,
    # close kind -1, whose link carries that text and width)
    k3 = _close_kinds(_plan(TEMPLATES["kimi-k3"]))
    assert k3["tool_section"] == -1 and k3["tool_section_end"] == -1
    acts = _plan(TEMPLATES["kimi-k3"])._fast[3].items()
    assert {d.field: act[2].first[1:3] for d, act in acts if d.field.startswith("tool_section")} == {
        "tool_section": ("<", 0), "tool_section_end": ("<", 0)}
    assert _close_kinds(_plan(TEMPLATES["ministral-3"]))["tool_calls"] == 6
    assert _close_kinds(_plan(TEMPLATES["mistral-small-3.2"]))["tool_calls"] == (5, 6)


_SURE = {"start_anchor": "<s>", "fields": {
    "t": {"open": "<t>", "close_pattern": r"(?=\[X\])|</s>", "repeats": True},
    "k": {"open": "<k>", "close_pattern": r"(?=<)", "repeats": True},
    "v": {"open": "<v>", "close_pattern": r"(?=\[X\])|</s>", "content": "json", "repeats": True,
          "content_args": {"trailing": "stream"}},
    "w": {"open": "<w>", "close_pattern": r"(?=<)", "content": "json", "content_args": {"trailing": "stream"}},
    "z": {"open_pattern": r"(?=#)", "close_pattern": r"(?=#)|;", "repeats": True},
    "content": {"close": "<e>"},
}}
_PIECES = ["<t>", "<k>", "<v>", "<w>", "#", ";", "[X]", "</s>", "<e>", "<", "x", " ", '{"a": 1}', "[1]", "{"]


def test_the_synthetic_template_has_every_sure_close():
    assert _close_kinds(_plan(_SURE)) == {"t": 6, "k": 7, "v": (5, 6), "w": (5, 7), "z": 6}


@pytest.mark.parametrize("text, expected", [
    ("a<t>x[X]b<t>y</s>c<e>", {"t": ["x", "y"], "content": "a\n[X]b\nc"}),
    ("<k>x<k><k>y", {"k": ["x", "", "y"]}),
    ('<v>{"a": 1} [X]<v>[1]</s><w>[1]<e>', {"v": [{"a": 1}, [1]], "content": "[X]\n</s>", "w": [1]}),
    # (a zero-width open and a zero-width close at one `#`: each region is empty, the `#` is the content's)
    ("#a;#b#", {"z": ["", "", ""], "content": "#a;\n#b\n#"}),
])
def test_sure_closes_read_each_shape(text, expected):
    assert _plan(_SURE)._fast_run(text, "", None) == expected
    assert parse_response(text, _SURE, prefix="") == expected


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s><k>"]))
def test_sure_closes_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_SURE, text, prefix)
