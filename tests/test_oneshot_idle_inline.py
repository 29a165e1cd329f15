"""The one-shot two-state loop's idle watch of fixed texts that each start one delimiter (`plan_shape._alone`,
issue 19): Mistral's `[TOOL_CALLS]` open and `</s>` close, MiniMax's, Phi-4-mini's, and most `LeadSearch` idle
watches (Kimi K3's, Qwen3.5's, DeepSeek's, FunctionGemma's). `OneShotPlan._fast_run` reads the idle scan's
finds itself (a `LeadScan`'s list, kind 8; a `LeadSearch`'s `[at, j]`, kind 9): the first find's literal, or
its regex's match there (untimed, not zero-width, not longer than `MAX_DELIMITER_LENGTH`), instead of calling
the scan's `end`, which still decides every other case from the same finds (a regex that fails at its text, a
zero-width or over-long match, a timed match). The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response


def test_the_mistral_family_and_others_read_their_idle_watch_in_the_loop():
    # (fails on the code before `_alone`: these idle watches were `LeadScan`s / `LeadSearch`es called per
    # scan, kind 2)
    for name in ("mistral-small-3.2", "ministral-3", "phi-4-mini"):
        assert oneshot_plan(TEMPLATES[name])._fast[0] == 8, name
    # (MiniMax M2's five texts: a `group_search.GroupSearch`, read as a `LeadSearch`)
    for name in ("kimi-k3", "qwen3.5", "deepseek-r1", "functiongemma", "glm-4.7", "seed-oss", "qwen3-coder",
                 "minimax-m2"):
        assert oneshot_plan(TEMPLATES[name])._fast[0] == 9, name
    # (not for a watch with a regex tried at offset 0 only, nor a `TriggerScan`; a `LeadSearch` with texts at one
    # find with several tries, Kimi K2's `<|tool_calls_section_begin|>` and the longer close it begins, is kind 9,
    # those texts left to `LeadSearch.end`: `tests/test_oneshot_search_each_time.py`)
    # (the regex tried at offset 0 inline: `plan_shape._start`, kind 5; Llama 4 JSON's and Hunyuan's `TriggerScan`
    # too, tests/test_value_close.py, where it was kind 2)
    for name in ("xlam-qwen", "llama3", "llama4-json", "hunyuan-a13b"):
        assert oneshot_plan(TEMPLATES[name])._fast[0] == 5, name


_IDLE = {"start_anchor": "<s>", "fields": {
    # a regex with an optional group (a match without it: no `tag` capture, the name read), which fails where
    # `[X]` is not followed
    # by a name and a colon (the next find then)
    "t": {"open_pattern": r"\[X\](?P<name>[a-z]+)(?:@(?P<tag>[0-9]+))?:", "close": "</t>", "repeats": True,
          "transform": {"name": "{name}", "tag": "{tag|name}", "body": "{content}"}},
    # a regex whose match may be longer than a delimiter may be (a long run of spaces)
    "y": {"open_pattern": r"\[Y\] *", "close": "</y>", "repeats": True},
    "u": {"open": "<u>", "close": "</u>"},
    "content": {"close": "<e>"},
}}
_PIECES = ["[X]", "[X]f:", "[X]g@12:", "[X]h@:", "[X]:", "</t>", "[Y]", " " * 300, "</y>", "<u>", "</u>", "<e>",
           "x", " ", "[", "<"]


#: The same, every delimiter starting with `<` (a `LeadSearch`: kind 9).
_IDLE_SEARCH = {"start_anchor": "<s>", "fields": {
    "t": {"open_pattern": r"<x>(?P<name>[a-z]+)(?:@(?P<tag>[0-9]+))?:", "close": "</t>", "repeats": True,
          "transform": {"name": "{name}", "tag": "{tag|name}", "body": "{content}"}},
    "y": {"open_pattern": r"<y> *", "close": "</y>", "repeats": True},
    "u": {"open": "<u>", "close": "</u>"},
    "content": {"close": "<e>"},
}}
_PIECES_SEARCH = [p.replace("[X]", "<x>").replace("[Y]", "<y>") for p in _PIECES]


def test_the_synthetic_templates_read_their_idle_watch_in_the_loop():
    assert oneshot_plan(_IDLE)._fast[0] == 8
    assert oneshot_plan(_IDLE_SEARCH)._fast[0] == 9


@pytest.mark.parametrize("text, expected", [
    ("a[X]f:b</t>c<e>", {"t": [{"name": "f", "tag": "f", "body": "b"}], "content": "a\nc"}),
    ("[X]g@12:b</t>", {"t": [{"name": "g", "tag": "12", "body": "b"}]}),
    ("[X]:a[X]f:b</t><e>", {"content": "[X]:a", "t": [{"name": "f", "tag": "f", "body": "b"}]}),  # a failed find, then the next
    ("[Y]" + " " * 600 + "q</y>", None),  # longer than a delimiter may be: `[Y]` opens nothing there
    ("<u>u</u>x", {"u": "u", "content": "x"}),
])
@pytest.mark.parametrize("tpl, brackets", [(_IDLE, False), (_IDLE_SEARCH, True)])
def test_the_inlined_idle_scan_reads_each_case(tpl, brackets, text, expected):
    if brackets:
        text = text.replace("[X]", "<x>").replace("[Y]", "<y>")
        expected = expected and {k: v.replace("[X]", "<x>") if isinstance(v, str) else v for k, v in expected.items()}
    plan = oneshot_plan(tpl)
    got = plan._fast_run(text, "", None)
    assert got == plan._general(text, "", None)
    if expected is not None:
        assert got == expected
        assert parse_response(text, tpl, prefix="") == expected


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), st.sampled_from(["", "<s>", "<s>[X]f:"]))
def test_the_inlined_idle_scan_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_IDLE, text, prefix)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES_SEARCH), max_size=12).map("".join), st.sampled_from(["", "<s>", "<s><x>f:"]))
def test_the_inlined_idle_search_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(_IDLE_SEARCH, text, prefix)


_MISTRAL = ["[TOOL_CALLS]", "[TOOL_CALLS]f[ARGS]", "[TOOL_CALLS]g", "[CALL_ID]c1", "[ARGS]", '{"a": 1}', "{", "}",
            "</s>", "[THINK]", "[/THINK]", "x", " ", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["mistral-small-3.2", "ministral-3"]),
       st.lists(st.sampled_from(_MISTRAL), max_size=12).map("".join))
def test_mistral_family_equals_the_general_loop_and_the_state_machine(name, text):
    assert_fast_loop_agrees(TEMPLATES[name], text, "[/INST]")
