"""The one-shot loop's opens read with their close in one turn (`plan_shape._fused`, issue 19): an idle scan of
fixed texts (kind 8) whose regex open starts a field closed by two of the idle scan's own texts (Mistral Small
3.2's JSON call, read whole before `(?=\\[TOOL_CALLS\\])|</s>`; Ministral 3's region to that close). The close
is found from the idle finds (no second finds list), and the region stored in the same loop turn; anything
else (a value that does not decode whole before the close, a regex that does not match) takes the loop's usual
path from the open. The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import parse_response
from hf_response_templates.lead_scan import LeadScan


def _fused_kinds(tpl) -> list[int]:
    ik, scan = oneshot_plan(tpl)._fast[:2]
    if ik != 8:
        return []
    return [t[5][0] for t in scan.only if t[1] == 0]


def test_the_mistral_family_reads_its_calls_with_their_close():
    # (fails on the code before `_fused`: no try of the idle scan was marked)
    assert _fused_kinds(TEMPLATES["mistral-small-3.2"]) == [5]
    assert _fused_kinds(TEMPLATES["ministral-3"]) == [6]
    # (a literal open, a close of one text, an idle scan that is not kind 8: the usual path)
    for name in ("mistral-small-3.1", "phi-4-mini", "qwen3", "kimi-k3"):
        assert _fused_kinds(TEMPLATES[name]) == [], name


@pytest.mark.parametrize("name, calls", [("mistral-small-3.2", 3), ("ministral-3", 3)])
def test_the_close_is_found_from_the_idle_finds(name, calls, monkeypatch):
    # one finds list per response (the idle scan's), where the usual path made a second for the close watch
    made = []
    fresh = LeadScan.fresh
    monkeypatch.setattr(LeadScan, "fresh", lambda self, w, p: made.append(self) or fresh(self, w, p))
    text = "Hi " + "".join(f'[TOOL_CALLS]f{k}[ARGS]{{"a": {k}}}' for k in range(calls)) + "</s>"
    message = parse_response(text, TEMPLATES[name], prefix="[/INST]")
    assert [c["function"] for c in message["tool_calls"]] == [{"name": f"f{k}", "arguments": {"a": k}}
                                                              for k in range(calls)]
    assert message["content"] == "Hi"
    assert len(made) == 1


#: Synthetic: a JSON call read whole (`j`), a plain region (`p`), both closed by `(?=[J])|(?=[P])|<e>`-like
#: closes of the idle's texts, and whitespace held or not.
def _synthetic(hold: bool) -> dict:
    fields = {
        "j": {"open_pattern": r"\[J\](?P<name>[a-z]+)(?:@[0-9]+)?(?:\|)?", "close_pattern": r"(?=\[J\])|<e>",
              "repeats": True, "content": "json", "content_args": {"trailing": "stream", "empty": {}},
              "transform": {"name": "{name}", "args": "{content}"}},
        "p": {"open_pattern": r"\[P\](?P<tag>[a-z]*):", "close_pattern": r"(?=\[P\])|<e>", "repeats": True,
              "transform": {"tag": "{tag}", "body": "{content}"}},
        # (whitespace held before the implicit field opens unless its text keeps whitespace)
        "content": {"close": "<e>"} if hold else {"close": "<e>", "content_args": {"strip": False}},
    }
    return {"start_anchor": "<s>", "fields": fields}


_PIECES = ["[J]", "[J]f", "[J]g@12|", "[J]h|", '{"a": 1}', '{"b": [1, 2]}', "{", "}", '"s"', "[1]", "3",
           "[P]", "[P]x:", "[P]:", "<e>", "x", " ", "\n", "[", "<"]


@pytest.mark.parametrize("hold", [False, True])
def test_the_synthetic_templates_are_fused(hold):
    assert sorted(_fused_kinds(_synthetic(hold))) == [5, 6]
    assert oneshot_plan(_synthetic(hold))._fast[5] == hold


@pytest.mark.parametrize("text", [
    'a[J]f{"a": 1}[J]g@12|{"b": [1, 2]} b[P]x:y[P]:z<e>tail',
    '[J]f{"a": 1', '[J]f{"a": 1}}<e>', '  [J]f {"a": 1} <e>', "[P]x:a<e>", "[P]x:", "[J]f", "[J]f3<e>",
    '[J]f{"a": 1}[P]q:w', "x [P]:", ' [J]f"s"x<e>',
])
@pytest.mark.parametrize("hold", [False, True])
def test_the_fused_reading_equals_the_general_loop(text, hold):
    tpl = _synthetic(hold)
    for prefix in ("", "<s>", "<s>[J]f"):
        assert_fast_loop_agrees(tpl, text, prefix)


@settings(max_examples=500, deadline=None)
@given(st.booleans(), st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
       st.sampled_from(["", "<s>", "<s>[J]f"]))
def test_the_fused_reading_equals_the_general_loop_and_the_state_machine(hold, text, prefix):
    assert_fast_loop_agrees(_synthetic(hold), text, prefix)


_MISTRAL = ["[TOOL_CALLS]", "[TOOL_CALLS]f[ARGS]", "[TOOL_CALLS]g", "[TOOL_CALLS]h[CALL_ID]c1[ARGS]", "[CALL_ID]c1",
            "[ARGS]", '{"a": 1}', '{"b": "[TOOL_CALLS]"}', "{", "}", "</s>", "[THINK]", "[/THINK]", "x", " ", "\n"]


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["mistral-small-3.2", "ministral-3"]),
       st.lists(st.sampled_from(_MISTRAL), max_size=14).map("".join), st.sampled_from(["[/INST]", "", "[/INST] "]))
def test_the_mistral_family_equals_the_general_loop_and_the_state_machine(name, text, prefix):
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


#: A tool call's transform of the common shape (`transform.constants_and_two_lookups`): the field's parse, reshape
#: and `reshape.decoded` read the name from the captures in place (`template._compile_field`).
_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


@pytest.mark.parametrize("captures", [None, {}, {"name": "f"}, {"name": "f", "content": "x"}, {"other": "o"},
                                      {"name": None}, {"other": "o", "name": "g"}])
@pytest.mark.parametrize("body", ['{"a": 1}', "[1, 2]", '"s"', "{", ""])
def test_a_call_transform_reads_the_name_in_place(captures, body):
    import json

    from hf_response_templates import load_template
    from hf_response_templates.transform import compile_transform

    field = load_template({"start_anchor": "<s>", "fields": {
        "t": {"open_pattern": r"\[T\](?P<name>[a-z]*)", "close": "</t>", "content": "json", "transform": _CALL},
        "content": {"close": "<e>"}}}).by_name["t"]
    apply = compile_transform(_CALL, field="t")
    assert getattr(apply, "parts", None) is not None  # (the shape the fast path reads)

    def want(value):
        return apply({**captures, "content": value} if captures else {"content": value})

    def outcome(f, *a):
        try:
            return "ok", f(*a)
        except Exception as e:  # (the same error, or the same value)
            return type(e), str(e)

    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if value is not None:
        assert outcome(field.parse, body, captures) == outcome(want, value)
    assert outcome(field.reshape, value, captures) == outcome(want, value)
    assert outcome(field.reshape.decoded, body, (value, captures)) == outcome(want, value)
    if value is None:
        assert outcome(field.parse, body, captures)[0] is ValueError
