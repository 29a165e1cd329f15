"""The kind-8 idle scan (`plan_shape._alone`: Mistral's, Ministral 3's, Phi-4-mini's) once a region has closed at the
very end of the text: its stale finds are not searched again (nothing can be found at the end), and the plan gives
the general loop's and the streaming parser's messages, on responses that end with a close, with or without text
after it, and on a synthetic template whose one-character texts can be found right before the end.
"""

from __future__ import annotations

from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import BODIES, NOISE, PIECES, TEMPLATES

#: The shipped templates whose idle scan is kind 8.
KIND8 = sorted(name for name, tpl in TEMPLATES.items() if (oneshot_plan(tpl)._fast or (None,))[0] == 8)
#: Idle texts of one character (`|`, `#`) beside a literal close that ends the text.
TINY = {
    "version": 1,
    "start_anchor": "<s>",
    "fields": {
        "a": {"open": "|", "close": "</a>", "repeats": True},
        "b": {"open": "#", "close": "</b>", "repeats": True},
        "content": {"close": "<e>"},
    },
}


def test_the_kind_8_templates():
    assert {"mistral-small-3.1", "mistral-small-3.2", "ministral-3", "phi-4-mini"} <= set(KIND8)
    assert oneshot_plan(TINY)._fast[0] == 8


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(KIND8), st.data())
def test_a_response_ending_with_a_close_equals_the_general_loop_and_the_state_machine(name, data):
    parts = data.draw(
        st.lists(st.one_of(st.sampled_from(PIECES[name]), st.sampled_from(BODIES), NOISE), max_size=12)
    )
    tail = data.draw(st.lists(st.sampled_from(PIECES[name]), min_size=1, max_size=3))
    text = "".join(parts + tail) + data.draw(st.sampled_from(["", " ", "x", "\n"]))
    cut = data.draw(st.integers(0, len(text)))
    assert_fast_loop_agrees(TEMPLATES[name], text[cut:], text[:cut])


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(["|", "#", "</a>", "</b>", "<e>", "x", " ", "<", "</"]), max_size=12).map(
        "".join
    ),
    st.sampled_from(["", "<s>"]),
)
def test_one_character_texts_at_the_end_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TINY, text, prefix)
