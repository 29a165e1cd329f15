"""The two-state loop's shortcut for a response that is the implicit field's region alone (`OneShotPlan._imp_text`:
a plain one-value text field not in the defaults, the usual `content`): its stripped text is stored directly, not
through the regions list. The plan gives the general loop's and the streaming parser's messages on content-only
responses (text, whitespace, nothing; with or without the close, text after it), on responses that mix those
with other regions, and on synthetic templates: an implicit close with named groups (the regions path), the
implicit field in the defaults or required, and content that must not be stored (empty, whitespace only).
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import BODIES, NOISE, PIECES, TEMPLATES

#: The shipped templates whose implicit field takes the shortcut.
ALONE = sorted(
    name for name, tpl in TEMPLATES.items() if getattr(oneshot_plan(tpl), "_imp_text", None) is not None
)
#: The implicit close (`<e>`, a regex, a regex with a named group and a transform), the field plain, in the defaults,
#: required, or keeping whitespace.
SYNTHETIC = [
    {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {"content": {"close": "<e>"}, "r": {"open": "<r>", "close": "</r>"}},
    },
    {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {"content": {"close_pattern": r"\s*<e\d>"}, "r": {"open": "<r>", "close": "</r>"}},
    },
    {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {
            "content": {"close_pattern": r"<e(?P<n>\d)>", "transform": {"t": "{content}", "n": "{n}"}},
            "r": {"open": "<r>", "close": "</r>"},
        },
    },
    {
        "version": 1,
        "start_anchor": "<s>",
        "defaults": {"content": "d"},
        "fields": {"content": {"close": "<e>"}, "r": {"open": "<r>", "close": "</r>"}},
    },
    {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {"content": {"close": "<e>", "optional": False}, "r": {"open": "<r>", "close": "</r>"}},
    },
    {
        "version": 1,
        "start_anchor": "<s>",
        "fields": {
            "content": {"close": "<e>", "content": "text", "content_args": {"strip": False}},
            "r": {"open": "<r>", "close": "</r>"},
        },
    },
]
#: Another field required: the content-only short exit's test of it (not in `SYNTHETIC`: on an empty `<r></r>` the
#: two-state loop drops the empty region before its required test and defers to the state machine where `_general`
#: answers, the same final message but not the same plan answer)
REQUIRED_OTHER = {
    "version": 1,
    "start_anchor": "<s>",
    "fields": {"content": {"close": "<e>"}, "r": {"open": "<r>", "close": "</r>", "optional": False}},
}
SYNTHETIC_PIECES = ["<e>", "<e1>", "<r>", "</r>", "<s>", "x", " ", "\n", "", "<", "y z"]


def test_the_shortcut_is_taken_where_expected():
    assert {"llama3", "llama3.2-pythonic", "functiongemma", "gigachat3", "qwen3", "hermes3"} <= set(ALONE)
    assert oneshot_plan(SYNTHETIC[0])._imp_text == "content"
    assert oneshot_plan(SYNTHETIC[1])._imp_text == "content"
    assert all(oneshot_plan(TEMPLATES[name])._hold_ws for name in ALONE)  # (the region's text is never empty)
    assert (
        oneshot_plan(SYNTHETIC[2])._imp_text is None
    )  # (a transform: the regions path, with the close's captures)
    assert oneshot_plan(SYNTHETIC[3])._imp_text is None  # (in the defaults: merged there)
    assert oneshot_plan(SYNTHETIC[4])._imp_text == "content"  # (required: the epilogue's test)
    assert (
        oneshot_plan(SYNTHETIC[5])._imp_text is None
    )  # (whitespace kept: a region of whitespace alone opens)
    assert (
        oneshot_plan(REQUIRED_OTHER)._imp_text == "content"
    )  # (another field required: the short exit's test)


@pytest.mark.parametrize("text", ["Hi", "Hi<e>", " Hi <e> ", "Hi<e>x"])
def test_the_region_alone_is_no_message_when_another_field_is_required(text):
    """The region alone ends the plan early (`_fast_run`'s short exit: no other region to store); a required field
    that is missing then still sends the response to the state machine, which reports it."""
    plan = oneshot_plan(REQUIRED_OTHER)
    assert plan._fast_run(text, "", None) is None
    assert_fast_loop_agrees(REQUIRED_OTHER, text, "")
    assert plan._fast_run("<r>x</r>" + text, "", None) == {"r": "x", "content": "Hi"}


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(ALONE), st.data())
def test_content_only_responses_equal_the_general_loop_and_the_state_machine(name, data):
    closes = [p for p in PIECES[name] if "eot" in p or "end" in p or p.startswith("</")] or PIECES[name]
    body = data.draw(st.one_of(NOISE, st.sampled_from(["", " ", "\n\n", "Hi", " Hi \n", *BODIES])))
    close = data.draw(st.sampled_from(["", *closes]))
    after = data.draw(st.sampled_from(["", " ", "x", *PIECES[name]]))
    text = body + close + after
    cut = data.draw(st.integers(0, len(text)))
    assert_fast_loop_agrees(TEMPLATES[name], text[cut:], text[:cut])
    assert_fast_loop_agrees(TEMPLATES[name], text, "")


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(ALONE), st.data())
def test_mixed_responses_equal_the_general_loop_and_the_state_machine(name, data):
    parts = data.draw(
        st.lists(st.one_of(st.sampled_from(PIECES[name]), st.sampled_from(BODIES), NOISE), max_size=8)
    )
    assert_fast_loop_agrees(TEMPLATES[name], "".join(parts), "")


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(range(len(SYNTHETIC))),
    st.lists(st.sampled_from(SYNTHETIC_PIECES), max_size=8).map("".join),
    st.sampled_from(["", "<s>", "<s> "]),
)
def test_synthetic_templates_equal_the_general_loop_and_the_state_machine(i, text, prefix):
    assert_fast_loop_agrees(SYNTHETIC[i], text, prefix)


@pytest.mark.parametrize("name", ["llama3", "qwen3", "hermes3", "functiongemma"])
def test_the_region_alone_still_meets_the_regex_guard(name, monkeypatch):
    """The short exit keeps the end's regex guard: with a clock that moves 10 s a call, a template that runs a regex
    (`timed`) sends its content-only response to the state machine, as the general loop does; one that runs none
    (Hermes 3) answers."""
    from hf_response_templates import plan as plan_module
    from hf_response_templates import plan_general

    plan = oneshot_plan(TEMPLATES[name])
    text = "Hi" + next(p for p in PIECES[name] if "end" in p or "eot" in p)
    assert plan._fast_run(text, "", None)["content"] == "Hi"  # (the short exit, with the usual clock)
    clock = iter(range(0, 10**6, 10))
    monkeypatch.setattr(plan_module, "perf_counter", lambda: float(next(clock)))
    monkeypatch.setattr(plan_general, "perf_counter", lambda: float(next(clock)))
    got = plan._fast_run(text, "", None)
    assert got == plan._general(text, "", None)
    assert (got is None) == bool(plan._timed)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(SYNTHETIC_PIECES), max_size=8).map("".join), st.sampled_from(["", "<s>", "<s> "])
)
def test_another_required_field_reads_as_the_state_machine(text, prefix):
    """With another field required, the plan's answer (the short exit's included) is the streaming parser's message
    when it answers, and `parse_response` gives the streamed message either way (not compared with `_general`: see
    `REQUIRED_OTHER`)."""
    assert_fast_loop_agrees(REQUIRED_OTHER, text, prefix, general=False)
