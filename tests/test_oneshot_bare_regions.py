"""The one-shot loop's empty regions of plain one-value text fields (`plan_shape._bare`, issue 19): a kind-7 close
(`_sure`: one fixed text, Kimi K3's `(?=<)`) found right at its open's end makes an empty region, which the store
would drop (a one-value text field's "" is as no region at all); `OneShotPlan._fast_run` does not list it, and
still marks a zero-width close as fired there. The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response


def _bare(tpl) -> dict:
    # each kind-7 close's flag: whether an empty region of its field is not listed
    return {
        d.field: act[3][2] for d, act in oneshot_plan(tpl)._fast[3].items() if act is not None and act[1] == 7
    }


def test_kimi_k3_wrappers_are_bare():
    # (fails on the code before `_bare`: the kind-7 closes were `(delimiter, width)`; `section_scan` reads them on
    # from a close, close kind -1, with the same flag in its link, `(info, close, width, bare, dinfo)`)
    acts = oneshot_plan(TEMPLATES["kimi-k3"])._fast[3].items()
    assert {d.field: act[2].first[3] for d, act in acts if act[1] == -1 and d.field.startswith("tool_section")} == {
        "tool_section": True, "tool_section_end": True}


_BARE = {
    "start_anchor": "<s>",
    "fields": {
        "k": {"open": "<k>", "close_pattern": r"(?=<)"},
        "r": {"open": "<r>", "close_pattern": r"(?=<)", "repeats": True},
        "j": {"open": "<j>", "close_pattern": r"(?=<)", "repeats": True, "join": "+"},
        "q": {"open": "<q>", "close_pattern": r"(?=<)"},
        "z": {"open_pattern": r"(?=<z>)", "close_pattern": r"(?=<)"},
        "n": {"open": "<n>", "close_pattern": r"(?=<)", "content": "json"},
        "content": {"close": "<e>"},
    },
}
_PIECES = ["<k>", "<r>", "<j>", "<q>", "<z>", "<n>", "<e>", "<", "x", " ", "\n", "1", "<s>"]


def test_the_synthetic_template_has_bare_and_listed_closes():
    assert _bare(_BARE) == {"k": True, "r": False, "j": False, "q": True, "z": True, "n": False}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<q>x<k><k>y<e>", {"q": "x", "k": "y"}),
        ("<q><k><q>x<k>", {"q": "x"}),
        ("<q>a<z>b<", {"q": "a", "content": "<z>b<"}),  # (a zero-width open and an empty region at one `<`)
        ("<q>a<r><r>b<j><j>c<", {"q": "a", "r": ["", "b"], "j": "+c", "content": "<"}),  # (listed: not bare)
    ],
)
def test_bare_regions_read_each_shape(text, expected):
    assert oneshot_plan(_BARE)._fast_run(text, "", None) == expected
    assert parse_response(text, _BARE, prefix="") == expected


def test_a_required_field_with_only_an_empty_region_is_missing():
    # (as before `_bare`, where the empty region was listed and dropped by the store: the two-state loop leaves the
    # response to the state machine; the general loop counts an empty region as the field's, see the report)
    tpl = {
        "start_anchor": "<s>",
        "fields": {
            "q": {"open": "<q>", "close_pattern": r"(?=<)", "optional": False},
            "content": {"close": "<e>"},
        },
    }
    assert oneshot_plan(tpl)._fast_run("<q><k>x", "", None) is None
    assert oneshot_plan(tpl)._fast_run("<q>a<k>x", "", None) == {"q": "a", "content": "<k>x"}


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.sampled_from(["", "<s>", "<s><k>", "<s><z>"]),
)
def test_bare_regions_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_BARE, text, prefix)


_K3 = [
    "<|open|>tools<|sep|>",
    "<|close|>tools<|sep|>",
    '<|open|>call tool="f"<|sep|>',
    "<|close|>call<|sep|>",
    '<|open|>argument key="a"<|sep|>',
    "<|close|>argument<|sep|>",
    "<|open|>think<|sep|>",
    "<|close|>think<|sep|>",
    "<|open|>response<|sep|>",
    "<|close|>response<|sep|>",
    "<|close|>message<|sep|>",
    "<|end_of_msg|>",
    "<",
    "x",
    " ",
    "\n",
]


@settings(max_examples=800, deadline=None)
@given(
    st.lists(st.sampled_from(_K3), max_size=14).map("".join),
    st.sampled_from(
        [
            "",
            '<|open|>message role="assistant"<|sep|>',
            '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>',
        ]
    ),
)
def test_kimi_k3_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)
