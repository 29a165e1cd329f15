"""The one-shot loop's cut of the prompt at a start anchor of fixed texts (`ResponseTemplate.anchor_texts`) where
one text begins another (`<｜Assistant｜>(?:</think>)?` of DeepSeek V3.1 / V4, GLM-4.7): `OneShotPlan._fast_run`
finds the last match by `str.rfind` of the texts that begin no other (`_anchor_heads`: one `str.rfind` where there
is one), and asks the anchor's regex for its match there only when a longer text is there too (`_anchor_longer`);
a prompt that ends with a text the anchor matches whole (`_anchor_ends`, both of DeepSeek's) is not cut. The
messages are `ResponseTemplate.cut_prefix`'s cut, the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template
from hf_response_templates.library import get_template

#: Anchors of fixed texts where one begins another, matched greedily, lazily, in either order, with a text of
#: its own beside them, or one text.
_ANCHORS = [r"<A>(?:</t>)?", r"<A>(?:</t>)??", r"<A>|<A></t>", r"<A></t>|<A>", r"<A>(?:</t>)?|<B>", r"<A>"]
_PIECES = ["<A>", "</t>", "<B>", "<A></t>", "x", " ", "<", "A>", "</t"]


def _template(anchor: str) -> dict:
    return {"start_anchor_pattern": anchor, "fields": {"r": {"open": "[r]", "close": "[/r]"}, "content": {}}}


def test_the_heads_longer_texts_and_ends():
    def parts(anchor):
        plan = oneshot_plan(_template(anchor))
        return plan._anchor_heads, plan._anchor_longer, plan._anchor_ends

    assert parts(r"<A>(?:</t>)?") == ("<A>", ("<A></t>",), ("<A>", "<A></t>"))
    assert parts(r"<A>(?:</t>)??") == ("<A>", ("<A></t>",), ("<A>",))  # (lazy: `<A></t>` is cut after `<A>`)
    assert parts(r"<A>|<A></t>") == ("<A>", ("<A></t>",), ("<A>",))
    assert parts(r"<A>(?:</t>)?|<B>") == (("<A>", "<B>"), ("<A></t>",), ("<A>", "<A></t>", "<B>"))
    ds = oneshot_plan(get_template("deepseek-v4"))
    assert ds._anchor_heads == "<｜Assistant｜>" and ds._anchor_ends == (
        "<｜Assistant｜>",
        "<｜Assistant｜></think>",
    )


@pytest.mark.parametrize("anchor", _ANCHORS)
@pytest.mark.parametrize(
    "prefix",
    ["", "<A>", "u<A></t>", "u<A></t>v", "<A>v", "<A></t><A>", "<B><A>", "<A><B>x", "<A></t", "x<A></t></t>"],
)
def test_each_cut_is_cut_prefix(anchor, prefix):
    tpl = load_template(_template(anchor))
    got = oneshot_plan(tpl)._fast_run("y", prefix, None)
    assert got == {"content": (tpl.cut_prefix(prefix) + "y").strip()}, (anchor, prefix)


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(_ANCHORS),
    st.lists(st.sampled_from(_PIECES), max_size=8).map("".join),
    st.lists(st.sampled_from([*_PIECES, "[r]", "[/r]"]), max_size=6).map("".join),
)
def test_the_cut_equals_cut_prefix_the_general_loop_and_the_state_machine(anchor, prefix, text):
    tpl = load_template(_template(anchor))
    got = oneshot_plan(tpl)._fast_run(text + "y", prefix, None)
    if got is not None and "r" not in got and "[r]" not in text:
        assert got == {"content": (tpl.cut_prefix(prefix) + text + "y").strip()}
    assert_fast_loop_agrees(tpl, text, prefix)
