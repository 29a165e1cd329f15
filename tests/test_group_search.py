"""`group_search.GroupSearch`: the one-shot plan's idle scan of fixed texts most of which share their first character
(MiniMax M2's `<think>` / `<minimax:tool_call>` / `<invoke name="` / `</minimax:tool_call>` and `[e~[`): its search
finds the first text from a position, as a find of every text would; its `end` is `Watch.scan_end`'s answer; and
the plan, which reads it as a `LeadSearch` (kind 9), gives the general loop's and the streaming parser's messages.
"""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import load_template
from hf_response_templates.delimiters import DelimiterTimeout
from hf_response_templates.group_search import GroupSearch, group_search
from hf_response_templates.lead_scan import LeadScan, lead_scan
from hf_response_templates.library import get_template

_TEXTS = ("<a>", "[c]", "<bb>", "{d}", "<|e|>")


def test_minimax_idle_watch_is_a_group_search_read_by_the_loop():
    plan = oneshot_plan(TEMPLATES["minimax-m2"])
    assert plan._fast[0] == 9 and plan._fast[1].__class__ is GroupSearch
    assert set(plan._fast[1].texts) == {"<think>", "<invoke name=\"", "<minimax:tool_call>", "</minimax:tool_call>",
                                         "[e~["}
    # (not for fewer than four texts: Mistral's stay `LeadScan`s, kind 8; nor for texts of one first character)
    assert oneshot_plan(TEMPLATES["ministral-3"])._fast[0] == 8
    assert group_search(LeadScan(("<a>", "[c]", "<b>"), tuple(((None, 3),) for _ in range(3)))) is None
    assert group_search(LeadScan(("<a>", "[c]", "[b]", "<d>"), tuple(((None, 3),) for _ in range(4)))) is None


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from([*_TEXTS, "<", "[", "{", "<b", "x", " ", "<|"]), max_size=14).map("".join),
       st.integers(0, 40), st.sampled_from([_TEXTS, _TEXTS[:3]]))
def test_search_finds_the_first_text(text, pos, texts):
    # (two other texts: `_search`'s loop; one: `_search_one`)
    scan = GroupSearch(texts, tuple(((None, len(t)),) for t in texts))
    assert scan.search == (scan._search_one if len(texts) == 3 else scan._search)
    pos = min(pos, len(text))
    finds = [(text.find(t, pos), t) for t in texts if text.find(t, pos) >= 0]
    m = scan.search(text, pos)
    if not finds:
        assert m is None
    else:
        assert m is not None and (m.start(), scan.texts[m.lastindex - 1]) == min(finds)


_MINIMAX = ["<think>", "</think>", "<minimax:tool_call>", '<invoke name="f">', '<invoke name="',
            '<parameter name="a">1</parameter>', "</invoke>", "</minimax:tool_call>", "[e~[", "<", "[", "x", " ", "\n"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_MINIMAX), max_size=14).map("".join),
       st.lists(st.tuples(st.integers(0, 12), st.booleans()), min_size=1, max_size=6))
def test_end_equals_scan_end(text, steps):
    watch = load_template(get_template("minimax-m2")).idle_watch
    scan = group_search(lead_scan(watch))
    assert scan is not None
    finds = scan.fresh(text, 0)
    memo: dict = {}
    pos = 0
    for advance, keep in steps:
        pos = min(len(text), pos + advance)
        try:
            want = watch.scan_end(text, pos, -1, frozenset(), frozenset(), 1.0, memo)
        except DelimiterTimeout:
            want = "timeout"
        got = scan.end(text, pos, -1, frozenset(), 1.0, finds if keep else scan.fresh(text, pos))
        assert got == want, (text, pos)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_MINIMAX), max_size=14).map("".join), st.sampled_from(["", "]~b]ai\n", "]~b]ai\n<think>\n"]))
def test_minimax_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TEMPLATES["minimax-m2"], text, prefix)
