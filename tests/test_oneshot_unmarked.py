"""`report_as` bodies without markup in the one-shot plan's two-state loop (`plan_shape._unmarked_lead`).

A stripped `text` field with `remove_pattern` and no transform (Cohere's three, reported as ``"citations"``) has
no parse in the loop's field info: a body where the one fixed text every markup match starts with (`<co>`) is not
found is stored as its strip, with no marks listed; a body where it is found is parsed whole and its marks listed
as before. These tests hold that to the general loop and the streaming parser on bodies with the lead text at and
across their ends, in one region and not the next, and on fields the shortcut must not take (not stripped, a
markup of several leads).
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates.library import get_template

COHERE = get_template("cohere-command-r7b")
PREFIX = (
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
)
MARK = COHERE["fields"]["content"]["content_args"]["remove_pattern"]
#: the same markup with a second lead (`<ci>`): `Markup.leads` has two texts, so no shortcut
TWO_LEADS = MARK.replace("<co>", "(?:<co>|<ci>)", 1)


def _field(extra: dict, **args) -> dict:
    return {
        **extra,
        "content": "text",
        "content_args": {"remove_pattern": MARK, "report_as": "citations", **args},
    }


#: a stripped reported field (shortcut), one that keeps its whitespace and one of two leads (no shortcut)
MIXED = {
    "version": 1,
    "start_anchor": "<a>",
    "fields": {
        "kept": _field({"open": "<k>", "close": "</k>"}, strip=False),
        "two": {
            **_field({"open": "<t>", "close": "</t>", "repeats": True}),
            "content_args": {"remove_pattern": TWO_LEADS, "report_as": "citations"},
        },
        "content": _field({"close": "<end>"}),
    },
}

_PIECES = [
    "text ",
    " ",
    "\n",
    "<co>",
    "<co",
    "co>",
    "<",
    "<co>Paris</co: 0:[1]>",
    "<ci>Rome</co: 1:[2]>",
    "<co><co>x</co: 1:[1]>",
    "<co>broken</co>",
    "",
    "x",
]
bodies = st.lists(st.sampled_from(_PIECES), max_size=5).map("".join)
COHERE_REGIONS = [
    "<|START_THINKING|>{}<|END_THINKING|>",
    "<|START_RESPONSE|>{}<|END_RESPONSE|>",
    "<|START_TEXT|>{}<|END_TEXT|>",
    "<|START_ACTION|>[]<|END_ACTION|>{}",
    "{}",
]
MIXED_REGIONS = ["<k>{}</k>", "<t>{}</t>", "{}"]


def _infos(tpl: dict) -> dict:
    plan = oneshot_plan(tpl)
    acts = [act for act in plan._fast[3].values() if act is not None]
    return {info[0]: info for info in [act[0] for act in acts] + [plan._fast[4]]}


def test_cohere_reported_fields_take_the_shortcut():
    infos = _infos(COHERE)
    for name in ("tool_plan", "content", "unmarked_text"):
        _, parse, store, (field, _, lead) = infos[name]
        assert (parse, store, lead) == (None, 6, "<co>"), name
        assert field.markup.leads == ("<co>",)
    assert infos["tool_calls"][1] is not None


def test_fields_that_may_not_take_it():
    infos = _infos(MIXED)
    for name in ("kept", "two"):
        _, parse, store, (_, _, lead) = infos[name]
        assert parse is not None and store == 6 and lead is None, name
    assert infos["content"][1] is None and infos["content"][3][2] == "<co>"


@pytest.mark.parametrize(
    "text",
    [
        "<|START_RESPONSE|> plain <|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        # the lead in the body's last characters, and right after it (in the close: not the body's)
        "<|START_RESPONSE|>a <co><|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        "<|START_RESPONSE|>a <co<|END_RESPONSE|>co><|END_OF_TURN_TOKEN|>",
        # a cited region then an uncited one of the same field (merged: the marks' offsets past the first)
        "<|START_RESPONSE|>x <co>Paris</co: 0:[1]><|END_RESPONSE|><|START_TEXT|> y <|END_TEXT|><|END_OF_TURN_TOKEN|>",
        "<|START_RESPONSE|> y <|END_RESPONSE|><|START_TEXT|>x <co>Paris</co: 0:[1]><|END_TEXT|><|END_OF_TURN_TOKEN|>",
        "<|START_THINKING|><co>a</co: 0:[0]><|END_THINKING|>plain<|END_OF_TURN_TOKEN|>",
        "<|START_THINKING|>plain<|END_THINKING|> <co>a</co: 0:[0]> <|END_OF_TURN_TOKEN|>",
    ],
)
def test_cohere_bodies_as_the_general_loop_and_the_stream(text):
    assert_fast_loop_agrees(COHERE, text, PREFIX)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(COHERE_REGIONS), bodies), max_size=4), st.sampled_from(["", "<co>"])
)
def test_cohere_regions_with_and_without_markup(regions, tail):
    text = "".join(form.format(body) for form, body in regions) + "<|END_OF_TURN_TOKEN|>" + tail
    assert_fast_loop_agrees(COHERE, text, PREFIX)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(MIXED_REGIONS), bodies), max_size=5))
def test_fields_without_the_shortcut_as_the_general_loop(regions):
    text = "".join(form.format(body) for form, body in regions) + "<end>"
    assert_fast_loop_agrees(MIXED, text, "")
