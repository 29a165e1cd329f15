"""`hf_response_templates.serve.protocol`: the three APIs' request bodies as one conversation for the chat
template, and 400s that name the field. No model, no server, no Transformers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hf_response_templates.serve.protocol import (
    RequestError,
    parse_chat_completions,
    parse_messages,
    parse_responses,
)

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
CALL_TURN = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}
RESULT_TURN = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


def test_chat_completions_conversation_and_options() -> None:
    request, options = parse_chat_completions({
        "model": "m", "stream": True, "stream_options": {"include_usage": True}, "n": 2, "max_tokens": 7,
        "temperature": 0, "tools": [TOOL], "tool_choice": "auto",
        "chat_template_kwargs": {"enable_thinking": False},
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    })
    assert request.messages == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}, CALL_TURN, RESULT_TURN
    ]
    assert (request.max_new_tokens, request.temperature, request.tool_choice) == (7, 0.0, "auto")
    assert request.chat_template_kwargs == {"enable_thinking": False}
    assert (options.model, options.stream, options.include_usage, options.n) == ("m", True, True, 2)


def test_anthropic_blocks_become_the_same_conversation() -> None:
    request, options = parse_messages({
        "model": "m", "max_tokens": 5, "system": "Be brief.", "stream": True,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Call it.", "signature": ""},
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": [
                {"type": "text", "text": "sunny"}]}]},
        ],
    })
    assert request.messages == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
        {**CALL_TURN, "reasoning_content": "Call it."}, RESULT_TURN,
    ]
    assert request.tools == [{"type": "function", "function": {
        "name": "get_weather", "description": "", "parameters": {"type": "object"}}}]
    assert request.tool_choice == "required" and options.stream and request.max_new_tokens == 5


def test_responses_items_become_the_same_conversation() -> None:
    request, _ = parse_responses({
        "model": "m", "instructions": "Be brief.", "max_output_tokens": 9,
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ],
    })
    assert request.messages == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}, CALL_TURN, RESULT_TURN
    ]
    assert request.tools == [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    assert request.max_new_tokens == 9


@pytest.mark.parametrize(
    "parse, body, param",
    [
        (parse_chat_completions, [], None),
        (parse_chat_completions, {"messages": []}, "messages"),
        (parse_chat_completions, {"messages": [{"role": "user"}]}, "messages[0].content"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
         "messages[0].content[0].type"),
        (parse_chat_completions, {"messages": [{"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": "{oops"}}]}]}, "messages[0].tool_calls[0].function.arguments"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "n": 0}, "n"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "temperature": 3}, "temperature"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "max_tokens": "5"}, "max_tokens"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "stop": ["\n"]}, "stop"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "stream_options": {}},
         "stream_options"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web"}]},
         "tools[0].type"),
        (parse_chat_completions, {"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"},
         "tool_choice"),
        (parse_messages, {"messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        (parse_messages, {"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        (parse_messages, {"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image"}]}]},
         "messages[0].content[0].type"),
        (parse_messages, {"max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
                          "tool_choice": {"type": "tool", "name": "f"}}, "tool_choice.name"),
        (parse_responses, {"input": []}, "input"),
        (parse_responses, {"input": 3}, "input"),
        (parse_responses, {"input": [{"type": "web_search_call"}]}, "input[0].type"),
        (parse_responses, {"input": [{"type": "function_call", "arguments": "{}"}]}, "input[0].name"),
    ],
)
def test_bad_requests_name_the_field(parse, body, param) -> None:
    with pytest.raises(RequestError) as info:
        parse(body)
    assert info.value.param == param
    assert str(info.value).startswith(f"{param}: " if param else "expected a JSON object")


def test_the_protocol_module_imports_without_transformers() -> None:
    code = (
        "import sys; import hf_response_templates.serve.protocol; "
        "print(sorted(m for m in ('transformers', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
