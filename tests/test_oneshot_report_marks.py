"""`report_as` fields in the one-shot plan's two-state loop (`plan._fast_run`'s store 6, `plan_shape._fast_shape`).

A field whose markup is reported (Cohere's citations `<co>…</co: 0:[1]>` listed under ``"citations"``) is stored
as the general loop stores it (one value, join or repeats, merged values included) and then its marks are listed
with offsets into the stored value (`plan_general._report_marks`). These tests hold the two-state loop to the
general loop and to the streaming parser on Cohere's template and on templates whose reported field joins or
repeats, with citations in one or several regions, empty values and markup only.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import parse_response
from hf_response_templates.library import get_template

COHERE = get_template("cohere-command-r7b")
PREFIX = "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
MARK = COHERE["fields"]["content"]["content_args"]["remove_pattern"]


def _reported(field: dict) -> dict:
    return {**field, "content": "text", "content_args": {"remove_pattern": MARK, "report_as": "citations"}}


#: A reported field that joins its values, one that repeats, and an implicit one after them
JOINED = {
    "version": 1,
    "start_anchor": "<a>",
    "fields": {
        "notes": _reported({"open": "<n>", "close": "</n>", "repeats": True, "join": " | "}),
        "quotes": _reported({"open": "<q>", "close": "</q>", "repeats": True}),
        "content": _reported({"close": "<end>"}),
    },
}

_PIECES = [
    "The capital is ", "<co>Paris</co: 0:[1]>", ", on the ", "<co>Seine</co: 0:[1,2],1:[0]>", ".", " ", "\n",
    "<co>only</co: 2:[3]>", "<co>broken</co>", "x", "",
]
COHERE_REGIONS = ["<|START_THINKING|>{}<|END_THINKING|>", "<|START_RESPONSE|>{}<|END_RESPONSE|>",
                  "<|START_TEXT|>{}<|END_TEXT|>", "{}"]
JOINED_REGIONS = ["<n>{}</n>", "<q>{}</q>", "{}"]

bodies = st.lists(st.sampled_from(_PIECES), max_size=5).map("".join)


def test_cohere_takes_the_two_state_loop():
    plan = oneshot_plan(COHERE)
    assert plan._fast is not None and plan.run == plan._fast_run
    assert oneshot_plan(JOINED)._fast is not None


@pytest.mark.parametrize(
    "text",
    [
        "<|START_RESPONSE|>The capital is <co>Paris</co: 0:[1]>, on the <co>Seine</co: 0:[1,2],1:[0]>.<|END_RESPONSE|>"
        "<|END_OF_TURN_TOKEN|>",
        "<|START_THINKING|>The rainbow <co>emoji: 🌈</co: 0:[1]> helps.<|END_THINKING|><|START_RESPONSE|>A <co>b</co: "
        "1:[2]><|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        # two regions of the one-value content field: merged with a newline, the second's marks offset past the first
        "<|START_RESPONSE|> <co>one</co: 0:[0]> <|END_RESPONSE|><|START_TEXT|>two <co>three</co: 1:[1]><|END_TEXT|>"
        "<|END_OF_TURN_TOKEN|>",
        # markup only (the value is the kept text), an empty region first, unmarked text with a citation
        "<|START_RESPONSE|><|END_RESPONSE|><|START_TEXT|><co>x</co: 0:[0]><|END_TEXT|><|END_OF_TURN_TOKEN|>",
        "Plain <co>text</co: 0:[4]> here<|END_OF_TURN_TOKEN|>",
    ],
)
def test_cohere_citations_as_the_general_loop_and_the_stream(text):
    assert_fast_loop_agrees(COHERE, text, PREFIX)
    message = parse_response(text, COHERE, prefix=PREFIX)
    assert message.get("citations"), message  # (every case here cites something)
    for mark in message["citations"]:
        value = message[mark["field"]]
        assert value[mark["start"]:mark["end"]] == mark["text"], (mark, value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(COHERE_REGIONS), bodies), max_size=4))
def test_cohere_regions_as_the_general_loop(regions):
    text = "".join(form.format(body) for form, body in regions) + "<|END_OF_TURN_TOKEN|>"
    assert_fast_loop_agrees(COHERE, text, PREFIX)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(JOINED_REGIONS), bodies), max_size=5))
def test_joined_and_repeated_reported_fields_as_the_general_loop(regions):
    text = "".join(form.format(body) for form, body in regions) + "<end>"
    assert_fast_loop_agrees(JOINED, text, "")
