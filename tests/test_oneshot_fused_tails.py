"""The one-shot loop's regex opens read with their tail close in one turn (`plan_shape._fused_tails`, issue 19): a
`LeadSearch` idle scan (kind 9) whose regex open starts a field closed by a run then a fixed tail (`tail_scan.py`'s
close kind 10: FunctionGemma's, InternLM2's and DeepSeek-R1's tool calls). The open is matched where its text is
found, the close found from the body's start as close kind 10 finds it, and the region stored in the same loop
turn; a plain JSON body (`FieldSpec.plain_json`) is decoded there, in the window, as `json_values._loads` decodes
the body. Anything else (no tail, no match of the close, a timed search, a body that is not one JSON value) takes
the loop's usual path from the open. The messages are the general loop's and the streaming parser's.
"""

from __future__ import annotations

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import ResponseParser, load_template, parse_response


def _fused(tpl) -> dict[str, bool]:
    """The fused opens of `tpl`'s kind-9 idle table: field name -> whether its body is decoded in the loop."""
    ik, _, table = oneshot_plan(tpl)._fast[:3]
    if ik != 9:
        return {}
    return {t[0].field: t[5][6] is not None for t in table if t[0] is not None and t[1] == 0}


def test_the_tail_closed_tool_calls_are_fused():
    # (fails on the code before `_fused_tails`: no try of a kind-9 table was marked)
    assert _fused(TEMPLATES["functiongemma"]) == {"tool_calls": False}  # (xml-inline: parsed in the epilogue)
    assert _fused(TEMPLATES["internlm2"]) == {"tool_calls": True}
    assert _fused(TEMPLATES["deepseek-r1"]) == {"tool_calls": True}
    # (closes of other kinds, a kind-8 idle scan: the usual path)
    for name in ("kimi-k2", "qwen3.5", "glm-4.7", "deepseek-v3.1", "mistral-small-3.2", "qwen3"):
        assert _fused(TEMPLATES[name]) == {}, name


def test_plain_json_is_json_without_options():
    fields = {
        "a": {"open": "<a>", "close": "</a>", "content": "json"},
        "b": {"open": "<b>", "close": "</b>", "content": "json", "content_args": {"unquoted_keys": True}},
        "c": {"open": "<c>", "close": "</c>", "content": "json", "content_args": {"trailing": "stream"}},
        "d": {"open": "<d>", "close": "</d>"},
    }
    tpl = load_template({"start_anchor": "<s>", "fields": fields})
    assert {f.name: f.plain_json for f in tpl.fields} == {"a": True, "b": False, "c": False, "d": False}


_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}


#: Synthetic: every idle text starts with `<` (a `LeadSearch`); regex opens closed by runs then fixed tails,
#: bounded (`f`, `g`) or reading on (`k`); plain JSON with the call transform (`g`: decoded in the loop), plain
#: JSON without a transform (`k`: no `reshape.decoded`, parsed in the epilogue), text with a transform (`f`, an
#: optional group that may not take part); the implicit field holding whitespace or not.
def _synthetic(hold: bool) -> dict:
    fields = {
        "f": {"open_pattern": r"<f(?P<n>[a-z])?>", "close_pattern": r"\}\s*<e>", "repeats": True,
              "transform": {"n": "{n}", "b": "{content}"}},
        "g": {"open_pattern": r"<g(?P<name>[a-z]*)>\s*", "close_pattern": r"\s*\}\s*</g>", "content": "json",
              "repeats": True, "transform": _CALL},
        "k": {"open_pattern": r"<k(?:x)?>", "close_pattern": r"\s*`+\s*</k>(?:<z>|\s+<y>|(?=\s*<k|\s*\Z|\s*[^<\s]))",
              "content": "json", "repeats": True},
        "content": {"close": "<z>"} if hold else {"close": "<z>", "content_args": {"strip": False}},
    }
    return {"start_anchor": "<s>", "fields": fields}


@pytest.mark.parametrize("hold", [False, True])
def test_the_synthetic_templates_are_fused(hold):
    assert _fused(_synthetic(hold)) == {"f": False, "g": True, "k": False}
    assert oneshot_plan(_synthetic(hold))._fast[5] == hold


@pytest.mark.parametrize("text", [
    'a<fq>x} <e>b<gh> {"a": 1} }</g> <k>[1]```</k>c<z>tail',
    '<g>{"a": 1}}</g>', '<g>{"a": 1} x}</g>', '<g>{"a": 1}{}}</g>', '<g> [1, 2]\n}</g>', '<g>"s"}</g>', "<g>3}</g>",
    "<g>}</g>", "<g>{}</g>", '<g>{"a": 1}\x1c}</g>', '<g>{"a": 1}', '<g>{"a": 1}}', "<g>{</g>}</g>",
    '<g>{"a": [}</g>]}</g>', '<g>{"a": "}</g>"}}</g>', "<f>x<e>}<e>", "<f>}<e>", "<fz>y}}<e><f>", "<k>1`</k>",
    "<k>2`</k><q", "<k>{}`</k>", "  <f>x}<e>  <z>", " \n ", "<fa", "<g" + " " * 600 + "{}}</g>",
    "<k>[]" + "`" * 600 + "</k>", "<f>" + " " * 600 + "}<e>",
])
@pytest.mark.parametrize("hold", [False, True])
def test_the_fused_reading_equals_the_general_loop(text, hold):
    tpl = _synthetic(hold)
    for prefix in ("", "<s>", "<s><g>"):
        assert_fast_loop_agrees(tpl, text, prefix)


_PIECES = ["<f>", "<fa>", "<g>", "<gh>", "<k>", "<kx>", "`", "```", "</k>", "<y>", "}", "}}", "<e>", "</g>", "<z>",
           " ", "\n", "\x1c", '{"a": 1}', "[1, 2]", '"s"', "3", "{", "[", "<", "q", " " * 520]


@settings(max_examples=800, deadline=None)
@given(st.booleans(), st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
       st.sampled_from(["", "<s>", "<s><g>"]))
def test_the_fused_reading_equals_the_general_loop_and_the_state_machine(hold, text, prefix):
    assert_fast_loop_agrees(_synthetic(hold), text, prefix)


_GEMMA = ["<start_function_call>", "call:f{", "call:get_weather{", "k:<escape>v<escape>", ",", "}", "}}",
          "<end_function_call>", "<end_of_turn>", " ", "\n", "x", "{", "<start_function_call>call:", "<"]
_R1 = ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n", '{"a": 1}', "\n", "```",
       "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>", " ", "x", "<", "<think>", "</think>",
       "[1]", "{", '"s"', "2"]
_INTERN = ['<|action_start|><|plugin|>\n{"name": "f", "arguments": ', '{"a": 1}', "{", "}", "}}", " ", "\n",
           "<|action_end|>", "<|im_end|>", "x", "[1]", '"s"', "3", "\x1c", "<|action_start|><|plugin|>"]


@settings(max_examples=800, deadline=None)
@given(st.sampled_from([("functiongemma", _GEMMA), ("internlm2", _INTERN), ("deepseek-r1", _R1)]).flatmap(
    lambda p: st.tuples(st.just(p[0]), st.lists(st.sampled_from(p[1]), max_size=14).map("".join))),
    st.sampled_from(["", "x<s>"]))
def test_the_fused_templates_equal_the_general_loop_and_the_state_machine(case, prefix):
    name, text = case
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}}}]


@pytest.mark.parametrize("name, text", [
    ("internlm2", 'Hi<|action_start|><|plugin|>\n{"name": "f", "arguments": {"a": "1", "b": 2}}<|action_end|><|im_end|>'),
    ("deepseek-r1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
                    '{"a": "1", "b": 2}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'),
])
def test_a_decoded_call_is_typed_by_the_tools(name, text):
    tpl = TEMPLATES[name]
    parser = ResponseParser(tpl, "", tools=_TOOLS)
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert parse_response(text, tpl, prefix="", tools=_TOOLS) == streamed
    assert streamed["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": 2}  # ("1" typed as the integer)
