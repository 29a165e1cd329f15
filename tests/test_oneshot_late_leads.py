"""The one-shot loop's late idle scan after `plan_shape._start`'s `TriggerScan` (kind 5), where the regex that has
an alternative anchored at offset 0 is found past it by its other alternatives' fixed texts
(`lead_scan.fixed_scan(late=True)`, `Delimiter.late_leads`: Hunyuan's `^\\s*助手：|<answer>` by `<answer>`): a
`LeadSearch` read inline (kind 9) instead of the `TriggerScan`. The messages are the general loop's and the
streaming parser's, on Hunyuan pieces (the marker at offset 0, after whitespace, later, too long) and a made-up
template."""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates.lead_scan import LeadSearch
from hf_response_templates.trigger_scan import TriggerScan

#: A made-up template of the same shape: an open with an anchored alternative (`^\s*M:`) beside a fixed one.
_MADE = {
    "start_anchor": "<s>",
    "fields": {
        "marker": {"open_pattern": "^\\s*M:|<ans>", "close_pattern": "(?=[\\s\\S])"},
        "r": {"open": "<r>", "close": ["</r><ans>", "</r>"]},
        "content": {"close": ["</ans>", "<e>"]},
    },
}
_HUNYUAN = [
    "助手：",
    " ",
    "\n",
    "<think>",
    "</think>",
    "\n<answer>\n",
    "<answer>",
    "</answer>",
    "<|eos|>",
    "<tool_calls>",
    '[{"name": "f", "arguments": {}}]',
    "</tool_calls>",
    "x",
    "助手",
    "：",
    " " * 600,
    "<",
]
_MADE_PIECES = ["M:", "M", ":", " ", "\n", "<ans>", "</ans>", "<r>", "</r>", "<e>", "x", " " * 600, "<"]


def test_hunyuan_reads_its_late_idle_watch_inline():
    plan = oneshot_plan(TEMPLATES["hunyuan-a13b"])
    late = plan._fast[10]
    assert plan._fast[0] == 5 and late[0] == 9 and late[1].__class__ is LeadSearch
    assert oneshot_plan(_MADE)._fast[10][0] == 9
    # (Llama 4 JSON's anchored open has a lookbehind alternative of no fixed text: its `TriggerScan` stays)
    assert oneshot_plan(TEMPLATES["llama4-json"])._fast[10][1].__class__ is TriggerScan


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_HUNYUAN), max_size=10))
def test_hunyuan_pieces_agree(parts):
    assert_fast_loop_agrees(TEMPLATES["hunyuan-a13b"], "".join(parts), "<|extra_0|>")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_MADE_PIECES), max_size=10))
def test_made_up_pieces_agree(parts):
    assert_fast_loop_agrees(_MADE, "".join(parts), "<s>")
