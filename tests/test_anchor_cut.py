"""The start anchor's last match searched from the prompt's end (`anchor_cut.py`, issue 19): `anchor_lead` proves a
regex anchor's lead cannot start inside a match (Granite 3.3's `<|start_of_role|>assistant[^<]*<|end_of_role|>`),
and `ResponseTemplate.cut_prefix` then gives what iterating over every match from the start gives, on
hypothesis-generated prompts; the leads it refuses are those where it would not.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import load_template, parse_response
from hf_response_templates.anchor_cut import anchor_lead, last_cut


def _scanned(prefix: str, source: str) -> str:
    # the left-to-right reading (`cut_prefix` without a lead): after the last of `finditer`'s matches
    last = None
    for m in re.compile(source, re.DOTALL).finditer(prefix):
        last = m
    return prefix if last is None else prefix[last.end() :]


_GRANITE = r"<\|start_of_role\|>assistant[^<]*<\|end_of_role\|>"


@pytest.mark.parametrize(
    "source, lead",
    [
        (_GRANITE, "<|start_of_role|>assistant"),
        (r"<a>[^<]*<b>", "<a>"),
        (r"<a>[^<\n]+?<b>x", "<a>"),
        (r"<a>[b-z]*<b>", "<a>"),
        # (refused: the lead may start inside a match)
        (r"aa[^b]*c", None),  # (in itself: `aaa`)
        (r"<a>[^x]*<b>", None),  # (the class takes `<`)
        (r"<a>[^<]*<a", None),  # (a run that may begin it)
        (r"<a>[^<]*<a>", None),
        (r"<a>\w*<b>", None),  # (a category: not known)
        (r"<a>.*<b>", None),
        (r"<a>(x|y)<b>", None),
        (r"[<>]a", None),  # (no fixed text first)
        (r"(?i)<a>[^<]*<b>", None),
    ],
)
def test_anchor_lead(source, lead):
    assert anchor_lead(source) == lead


def test_granite_reads_its_anchor_from_the_end():
    # (fails on the code before `anchor_cut.py`: no lead, every match iterated)
    assert load_template(TEMPLATES["granite-3.3"]).anchor_lead == "<|start_of_role|>assistant"


_PIECES = [
    "<|start_of_role|>assistant",
    "<|start_of_role|>",
    "<|end_of_role|>",
    "<|end_of_text|>",
    "<",
    "x",
    "\n",
    "assistant",
    " a",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_the_last_match_from_the_end_is_the_scans(prefix):
    tpl = load_template(TEMPLATES["granite-3.3"])
    assert tpl.cut_prefix(prefix) == _scanned(prefix, _GRANITE)
    assert last_cut(prefix, "<|start_of_role|>assistant", re.compile(_GRANITE, re.DOTALL).match) == _scanned(
        prefix, _GRANITE
    )


#: Anchors whose leads `anchor_lead` refuses (a run that may begin the lead, a class that takes its first character),
#: read from the end anyway: a prompt where that reading is not the scan's.
_REFUSED = [(r"<a>[^<]*<a", "<a><a><a>"), (r"<a>[^x]*?a>y", "<a><a>y<a>y")]


@pytest.mark.parametrize("source, prefix", _REFUSED)
def test_a_refused_lead_would_give_another_cut(source, prefix):
    assert anchor_lead(source) is None
    assert last_cut(prefix, "<a>", re.compile(source, re.DOTALL).match) != _scanned(prefix, source)


_ANCHORED = {
    "start_anchor_pattern": r"<s>[^<]*<m>",
    "fields": {"t": {"open": "<t>", "close": "</t>"}, "content": {"close": "<e>"}},
}


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(["<s>", "<m>", "<", "x", "<t>", "</t>", "<e>", "<s>x<m>"]), max_size=10).map(
        "".join
    ),
    st.lists(st.sampled_from(["<t>", "</t>", "<e>", "x", "<s>", "<m>"]), max_size=8).map("".join),
)
def test_a_template_with_a_lead_parses_as_the_stream(prefix, text):
    assert load_template(_ANCHORED).anchor_lead == "<s>"
    from engine_helpers import assert_fast_loop_agrees

    assert_fast_loop_agrees(_ANCHORED, text, prefix)
    tpl = load_template(_ANCHORED)
    assert tpl.cut_prefix(prefix) == _scanned(prefix, r"<s>[^<]*<m>")
    assert parse_response(text, _ANCHORED, prefix=prefix, strict=False) is not None
