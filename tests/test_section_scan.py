"""The one-shot loop's tool calls read one right after another (`section_scan.py`, issue 19): Kimi K2's and K2
Thinking's `<|tool_call_begin|>...<|tool_call_argument_begin|>{json}<|tool_call_end|>` calls, each found where
the last close ends (`str.startswith`, the open's regex, `str.find` of the close) and its JSON value decoded in
the window when it ends right at the close. Anything else (text between calls, a value that does not end at the
close, no close, a regex that does not match) is the loop's usual path or the plain region. The messages are
the general loop's and the streaming parser's, with and without `tools=`.
"""

from __future__ import annotations

import json

import pytest
from engine_helpers import assert_fast_loop_agrees, oneshot_plan
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES

from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates import section_scan as section_module
from hf_response_templates.plan import OneShotPlan

_KIMI = ("kimi-k2", "kimi-k2-thinking")
_ANCHOR = "<|im_assistant|>assistant<|im_middle|>"


def _section_opens(tpl) -> list:
    fast = oneshot_plan(tpl)._fast
    return [] if fast is None else [d.field for d, act in fast[3].items() if act is not None and act[1] == -1
                                    and act[2].__qualname__.startswith("section_run.")]


def test_the_kimi_calls_are_read_one_after_another():
    # (fails on the code before `section_scan`: no open had close kind -1)
    for name in _KIMI:
        assert _section_opens(TEMPLATES[name]) == ["tool_calls"], name
    # (Kimi K3, without an implicit field: every open, each read on from where a close ends)
    assert _section_opens(TEMPLATES["kimi-k3"]) == ["content", "message_end", "reasoning_content", "tool_calls",
                                                    "tool_section", "tool_section_end"]
    # (calls that are not JSON in a template with an implicit field, an idle scan that is not one `LeadSearch`, a
    # close that is not one text)
    for name in ("qwen3.5", "glm-4.7", "deepseek-v3.2", "minimax-m2", "mistral-small-3.2", "hermes3"):
        assert _section_opens(TEMPLATES[name]) == [], name


def _call(name: str, k: int, args: str) -> str:
    return f"<|tool_call_begin|>functions.{name}:{k}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


@pytest.mark.parametrize("name", _KIMI)
def test_three_calls_take_one_section_run(name, monkeypatch):
    runs = []
    real = section_module.section_run

    def counted(*a):
        run = real(*a)
        return lambda *b: runs.append(b[1]) or run(*b)

    monkeypatch.setattr(section_module, "section_run", counted)
    plan = OneShotPlan(load_template(TEMPLATES[name]))  # (a plan made again, with the counting `run`)
    text = "Hi<|tool_calls_section_begin|>" + "".join(_call(f"f{k}", k, f'{{"a": {k}}}') for k in range(3)) + (
        "<|tool_calls_section_end|><|im_end|>")
    message = plan.run(text, _ANCHOR, None)
    assert [c["function"] for c in message["tool_calls"]] == [{"name": f"f{k}", "arguments": {"a": k}}
                                                              for k in range(3)]
    assert message["content"] == "Hi"
    assert len(runs) == 1


_SPECIAL = ["<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
            "<|tool_call_end|>", "<|tool_calls_section_end|>", "<|im_end|>"]


@pytest.mark.parametrize("text", [
    "Hi<|tool_calls_section_begin|>" + _call("f", 0, '{"a": 1}') + _call("g", 1, "[1, 2]") + _call("h", 2, '"s"')
    + "<|tool_calls_section_end|><|im_end|>",
    _call("f", 0, '{"a": 1}') + _call("g", 1, '{"a": 1} '),  # (a value that does not end right at the close)
    _call("f", 0, ' {"a": 1}') + _call("g", 1, '{"a": 1}}'),  # (one that does not start at the open's end; bad)
    _call("f", 0, "3") + _call("g", 1, "true") + _call("h", 2, "{"),  # (values the loop leaves to the parse)
    _call("f", 0, '{"a": "<|tool_call_end|>"}') + _call("g", 1, "{}"),  # (the close inside a string)
    _call("f", 0, "{}") + " " + _call("g", 1, "{}") + "x" + _call("h", 2, "{}"),  # (text between calls)
    _call("f", 0, "{}") + "<|tool_call_begin|>functions.g:1 {}<|tool_call_end|>",  # (no regex match there)
    _call("f", 0, "{}") + "<|tool_call_begin|>functions.g:1<|tool_call_argument_begin|>{",  # (no close)
    _call("f", 0, "{}") + "<|tool_call_begin|>f<|tool_call_argument_begin|>{}<|tool_call_end|><|im_end|>x",
    "<think>a</think>" + _call("f", 0, '{"a": [1]}') + _call("f", 1, '{"a": [2]}'),
    "<|tool_calls_section_begin|>" + _call("f", 0, "{}") + "<|tool_calls_section_begin|>" + _call("g", 1, "{}"),
    _call("f", 0, "{" * 3000 + "}" * 3000) + _call("g", 1, "[" * 3000 + "]" * 3000),  # (nested too deeply)
    _call("f", 0, "{}") + _call("g" * 600, 1, "{}") + _call("h", 2, "{}"),  # (an open longer than a delimiter can be)
    _call("f", 0, "{}") + _call("g" * 470, 1, "{}") + _call("h", 2, "{}"),  # (one just short of it)
])
@pytest.mark.parametrize("name", _KIMI)
def test_the_section_reading_equals_the_general_loop(name, text):
    for prefix in (_ANCHOR, "", _ANCHOR + "<think>"):
        assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


_PIECES = [*_SPECIAL, *_SPECIAL, "functions.f:0", "functions.get_weather:12", "g", " ", "\n", "x", ":", '{"a": 1}',
           '{"b": [1, "<|tool_call_end|>"]}', "{", "}", "[1]", '"s"', "3", "<think>", "</think>", "<"]


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(_KIMI), st.lists(st.sampled_from(_PIECES), max_size=16).map("".join),
       st.sampled_from([_ANCHOR, "", _ANCHOR + "<think>"]))
def test_the_section_reading_equals_the_general_loop_and_the_state_machine(name, text, prefix):
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=6)


@st.composite
def _sections(draw) -> str:
    """A section of well-formed calls (any JSON arguments, written compact or spaced), now and then with text
    between two calls or a bad value."""
    parts = [draw(st.sampled_from(["", "Hi ", "Hi\n", "<think>r</think>ok"])), "<|tool_calls_section_begin|>"]
    for k in range(draw(st.integers(1, 4))):
        value = draw(_JSON)
        args = json.dumps(value, separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])), ensure_ascii=False)
        args = draw(st.sampled_from([args, args, args, f" {args}", f"{args}\n", args[:-1] or "{", f"{args}x"]))
        parts.append(draw(st.sampled_from(["", "", "", " ", "\n", "y"])))
        parts.append(_call(draw(st.sampled_from(["f", "get_weather", "a.b"])), k, args))
    parts.append(draw(st.sampled_from(["<|tool_calls_section_end|><|im_end|>", "<|im_end|>", "", "z<|im_end|>"])))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_KIMI), _sections(), st.sampled_from([_ANCHOR, ""]))
def test_well_formed_sections_equal_the_general_loop_and_the_state_machine(name, text, prefix):
    assert_fast_loop_agrees(TEMPLATES[name], text, prefix)


_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}}}]


@pytest.mark.parametrize("args", ['{"a": 1, "n": "2"}', '{"a": "x", "n": 3}', "[1]", '{"a": [1]}'])
@pytest.mark.parametrize("name", _KIMI)
def test_the_decoded_values_are_typed_by_the_tools(name, args):
    text = "<|tool_calls_section_begin|>" + _call("f", 0, args) + _call("f", 1, args) + "<|tool_calls_section_end|>"
    tpl = TEMPLATES[name]
    parser = ResponseParser(tpl, _ANCHOR, tools=_TOOLS)
    parser.feed(text)
    streamed, _ = parser.finalize()
    assert parse_response(text, tpl, prefix=_ANCHOR, tools=_TOOLS, strict=False) == streamed


_K3_ANCHOR = '<|open|>message role="assistant"<|sep|>'


def _k3_call(name: str, k: int, args: str) -> str:
    return f'<|open|>call tool="{name}" index="{k}"<|sep|>{args}<|close|>call<|sep|>'


def _k3_arg(key: str, value: str) -> str:
    return f'<|open|>argument key="{key}" type="string"<|sep|>{value}<|close|>argument<|sep|>'


@pytest.mark.parametrize("text", [
    "<|open|>response<|sep|>Hi<|close|>response<|sep|><|open|>tools<|sep|>" + _k3_call("f", 1, _k3_arg("a", "x"))
    + _k3_call("g", 2, _k3_arg("b", "1") + _k3_arg("c", "[1]")) + _k3_call("h", 3, "")
    + "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
    _k3_call("f", 1, _k3_arg("a", "x")) + "\n" + _k3_call("g", 2, _k3_arg("a", "y")),  # (whitespace between calls)
    _k3_call("f", 1, _k3_arg("a", "x")) + "z" + _k3_call("g", 2, _k3_arg("a", "y")),  # (text between: no message)
    _k3_call("f", 1, "") + '<|open|>call tool="g"<|sep|>' + _k3_arg("a", "<|close|>call"),  # (no close)
    _k3_call("f", 1, "") + '<|open|>call tool=""<|sep|>' + _k3_call("g", 2, ""),  # (no regex match there)
    _k3_call("f", 1, "") + _k3_call("g" * 600, 2, "") + _k3_call("h", 3, ""),  # (an open too long to be one)
    _k3_call("f", 1, _k3_arg("a", "<|open|>call")) + _k3_call("g", 2, "<|open|>think<|sep|>"),
])
def test_kimi_k3_calls_read_one_after_another_equal_the_general_loop(text):
    for prefix in (_K3_ANCHOR, "", _K3_ANCHOR + "<|open|>think<|sep|>"):
        assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)


def test_kimi_k3_three_calls_take_one_section_run(monkeypatch):
    runs = []
    real = section_module.section_run

    def counted(*a):
        run = real(*a)
        return lambda *b: runs.append(b[1]) or run(*b)

    monkeypatch.setattr(section_module, "section_run", counted)
    plan = OneShotPlan(load_template(TEMPLATES["kimi-k3"]))
    text = "<|open|>tools<|sep|>" + "".join(_k3_call(f"f{k}", k, _k3_arg("a", str(k))) for k in range(3)) + (
        "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>")
    message = plan.run(text, _K3_ANCHOR, None)
    assert [c["function"] for c in message["tool_calls"]] == [{"name": f"f{k}", "arguments": {"a": str(k)}}
                                                              for k in range(3)]
    assert len(runs) == 1


_K3_PIECES = ['<|open|>call tool="f"<|sep|>', '<|open|>call tool="g" index="2"<|sep|>', "<|close|>call<|sep|>",
              '<|open|>argument key="a"<|sep|>', "<|close|>argument<|sep|>", "<|open|>tools<|sep|>",
              "<|close|>tools<|sep|>", "<|close|>message<|sep|>", "<|end_of_msg|>", "<|open|>response<|sep|>",
              "<|close|>response<|sep|>", "<", "x", " ", "\n", '"']


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_K3_PIECES), max_size=16).map("".join),
       st.sampled_from([_K3_ANCHOR, "", _K3_ANCHOR + "<|open|>think<|sep|>"]))
def test_kimi_k3_sections_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)


# Kimi K3's whole message read on from close to open (`section_run`'s links): the reasoning, the answer, the tool
# section's wrappers (closed by `(?=<)`, zero width), the calls and the message end, each right where the last
# close ends; anything else (text between, no close, a region not empty where it is always empty, text after the
# end) is the loop's usual path.
_K3_END = "<|close|>message<|sep|><|end_of_msg|>"
_K3_THINK = "<|open|>think<|sep|>r<|close|>think<|sep|>"
_K3_ANSWER = "<|open|>response<|sep|>Hi<|close|>response<|sep|>"
_K3_TOOLS = "<|open|>tools<|sep|>" + _k3_call("f", 1, _k3_arg("a", "x")) + _k3_call("g", 2, "") + "<|close|>tools<|sep|>"


@pytest.mark.parametrize("text", [
    _K3_THINK + _K3_ANSWER + _K3_END,
    _K3_THINK + _K3_ANSWER + _K3_TOOLS + _K3_END,
    _K3_THINK + _K3_TOOLS + _K3_END,
    _K3_ANSWER + _K3_END + "x",  # (text after the end)
    _K3_ANSWER + _K3_END + _K3_ANSWER,  # (a second answer after the end)
    _K3_ANSWER + "<|close|>message<|sep|>x<|end_of_msg|>",  # (a message end that is not empty)
    _K3_ANSWER + "<|close|>message<|sep|> <|end_of_msg|>",
    _K3_ANSWER + "<|close|>message<|sep|>",  # (no end)
    _K3_ANSWER + "\n" + _K3_END,  # (whitespace between)
    "<|open|>think<|sep|><|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>" + _K3_END,  # (empty)
    _K3_ANSWER + _K3_ANSWER.replace("Hi", "Ho") + _K3_END,  # (a second answer: joined)
    _K3_ANSWER + "<|open|>tools<|sep|>",  # (a wrapper at the very end: its zero-width close finds nothing)
    _K3_ANSWER + "<|open|>tools<|sep|>x" + _k3_call("f", 1, "") + "<|close|>tools<|sep|>y" + _K3_END,  # (not empty)
    _K3_ANSWER + "<|open|>tools<|sep|><|open|>tools<|sep|><|close|>tools<|sep|><|close|>tools<|sep|>" + _K3_END,
    _K3_ANSWER + "<|open|>tools<|sep|>" + '<|open|>call tool=""<|sep|>' + _K3_END,  # (no regex match after a wrapper)
    _K3_ANSWER + "<|open|>tools<|sep|><" + _K3_END,
    _K3_THINK.replace("r", "<|open|>response<|sep|>") + _K3_END,  # (an open inside a region)
    "<|open|>response<|sep|>Hi<|close|>think<|sep|>" + _K3_END,  # (another field's close)
    _K3_ANSWER + _k3_call("f", 1, "") + _K3_END,  # (a call outside the wrapper)
    _K3_ANSWER + _K3_END + _K3_END,
])
def test_kimi_k3_messages_read_on_from_close_to_open_equal_the_general_loop(text):
    for prefix in (_K3_ANCHOR, "", _K3_ANCHOR + "<|open|>think<|sep|>", _K3_ANCHOR + "<|open|>response<|sep|>"):
        assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)


def test_a_kimi_k3_message_takes_one_section_run(monkeypatch):
    # (fails on the code before: the reasoning and the answer were each a loop turn, and the calls' run returned at
    # the wrapper's close)
    runs = []
    real = section_module.section_run

    def counted(*a):
        run = real(*a)

        def inner(*b):
            r = run(*b)
            runs.append((b[1], r))
            return r

        return inner

    monkeypatch.setattr(section_module, "section_run", counted)
    plan = OneShotPlan(load_template(TEMPLATES["kimi-k3"]))
    message = plan.run(_K3_THINK + _K3_ANSWER + _K3_TOOLS + _K3_END, _K3_ANCHOR, None)
    assert message == {"role": "assistant", "reasoning_content": "r", "content": "Hi", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": "x"}}},
        {"type": "function", "function": {"name": "g", "arguments": {}}}]}
    assert runs == [(len("<|open|>think<|sep|>"), -1)]  # (one run, to the end: -1 stops the loop)


@pytest.mark.parametrize("end", ["<|tool_calls_section_end|><|im_end|>", "<|im_end|>", "<|tool_calls_section_end|>"])
@pytest.mark.parametrize("name", _KIMI)
def test_the_kimi_k2_calls_end_the_message_at_the_content_close(name, end, monkeypatch):
    # the implicit field's close right after the last call's: the run stops the loop (-1), as its next idle turn
    # would (fails on the code before: the run returned the position, and the loop searched again from there)
    runs = []
    real = section_module.section_run

    def counted(*a):
        run = real(*a)

        def inner(*b):
            r = run(*b)
            runs.append(r)
            return r

        return inner

    monkeypatch.setattr(section_module, "section_run", counted)
    plan = OneShotPlan(load_template(TEMPLATES[name]))
    text = "Hi<|tool_calls_section_begin|>" + _call("f", 0, '{"a": 1}') + _call("g", 1, "[1]") + end + "x"
    message = plan.run(text, _ANCHOR, None)
    assert runs == [-1]
    assert message == parse_response(text, TEMPLATES[name], prefix=_ANCHOR)
    assert_fast_loop_agrees(TEMPLATES[name], text, _ANCHOR)


_K3_ALL = [*_K3_PIECES, "<|open|>think<|sep|>", "<|close|>think<|sep|>", _K3_END, _K3_END, _K3_THINK, _K3_ANSWER,
           _K3_ANSWER, "<|open|>tools<|sep|>", '<|open|>call tool="f" index="1"<|sep|>', _k3_arg("a", "x"), "Hi"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_K3_ALL), max_size=14).map("".join),
       st.sampled_from([_K3_ANCHOR, "", _K3_ANCHOR + "<|open|>think<|sep|>", _K3_ANCHOR + "<|open|>response<|sep|>"]))
def test_kimi_k3_messages_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)


@st.composite
def _k3_messages(draw) -> str:
    """A Kimi K3 message as the model writes it (reasoning, answer, a tool section of calls, the end), now and then
    with a region missing, whitespace or text between two regions, or the end cut short."""
    parts = []
    gap = st.sampled_from(["", "", "", "", " ", "\n", "z"])
    if draw(st.booleans()):
        parts.append(f"<|open|>think<|sep|>{draw(st.sampled_from(['', 'r', ' r ']))}<|close|>think<|sep|>")
    parts.append(draw(gap))
    if draw(st.booleans()):
        parts.append(f"<|open|>response<|sep|>{draw(st.sampled_from(['', 'Hi', 'a<b']))}<|close|>response<|sep|>")
    if draw(st.booleans()):
        parts.append(draw(gap) + "<|open|>tools<|sep|>" + draw(gap))
        for k in range(draw(st.integers(0, 3))):
            args = "".join(_k3_arg(key, draw(st.sampled_from(["x", "", "[1]"])))
                           for key in draw(st.lists(st.sampled_from("abc"), max_size=2, unique=True)))
            parts.append(_k3_call(draw(st.sampled_from(["f", "get_weather"])), k, args) + draw(gap))
        parts.append("<|close|>tools<|sep|>")
    parts.append(draw(gap))
    parts.append(draw(st.sampled_from([_K3_END, _K3_END, _K3_END, "<|close|>message<|sep|>", "", _K3_END + "x"])))
    return "".join(parts)


@settings(max_examples=500, deadline=None)
@given(_k3_messages(), st.sampled_from([_K3_ANCHOR, _K3_ANCHOR + "<|open|>think<|sep|>",
                                        _K3_ANCHOR + "<|open|>response<|sep|>"]))
def test_well_formed_kimi_k3_messages_equal_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(TEMPLATES["kimi-k3"], text, prefix)


# A template without an implicit field where one open's text begins another's (`[a]`, `[a]b`): the shorter is not
# read at a close's end (the idle search names the longer there, whose tries `LeadSearch.end` decides), the others
# are (fails with that check dropped: `[a]b` read as `[a]`).
_BEGINS = {"version": 1, "start_anchor": "<s>", "fields": {
    "a": {"open": "[a]", "close": "[/a]", "content": "text"},
    "b": {"open": "[a]b", "close": "[/b]", "content": "text"},
    "calls": {"open_pattern": '\\[c n="(?P<name>[a-z]+)"\\]', "close": "[/c]", "repeats": True, "content": "text",
              "transform": {"name": "{name}", "body": "{content}"}},
    "wrap": {"open": "[w]", "close_pattern": "(?=\\[)", "content": "text"},
}}


def test_an_open_that_begins_another_is_not_read_at_a_close():
    tpl = load_template(_BEGINS)
    assert _section_opens(tpl) == ["calls", "wrap"]
    for text in ['[a]x[/a][a]by[/b]', '[c n="f"]q[/c][a]bv[/b][a][/a]', '[w][c n="f"]q[/c][a]by[/b][w][a]x[/a]']:
        assert_fast_loop_agrees(tpl, text, "")


_BEGINS_PIECES = ["[a]", "[/a]", "[a]b", "[/b]", '[c n="f"]', '[c n="gh"]', '[c n=""]', "[/c]", "[w]", "[", "x", " "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_BEGINS_PIECES), max_size=14).map("".join), st.sampled_from(["", "<s>", "<s>[a]"]))
def test_reading_on_in_a_template_of_such_opens_equals_the_general_loop_and_the_state_machine(text, prefix):
    assert_fast_loop_agrees(load_template(_BEGINS), text, prefix)
