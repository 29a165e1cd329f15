"""Raw outputs of the 2025-2026 families (Qwen3.5 / 3.6, Nemotron 3, Qwen3 2507, GLM-4.7, MiniMax M2,
Kimi K2 Thinking / K2.5, ...), the way the models emit them, parsed with the shipped templates.

Model outputs and expected values are transcribed from vLLM 0.33.0's parser tests (the source file and
test name are given next to each case) or from the model's chat template / model card; the code here
is our own. Every case is parsed in one shot, streamed one character at a time, and streamed in
hypothesis-chosen chunks: all three must give the same message.

The last part runs ``hf-response-templates verify PATH --template auto`` on a local tokenizer folder
built from each of these families' fixture chat templates (detection must pick the family, and the
round trip through the chat template must pass).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _chat_render import TOOLS, chat_template
from _cli_helpers import make_tokenizer_folder
from _raw_output_checks import cut, streamed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_response_templates import parse_response
from hf_response_templates.library import detect_template, get_template


def call(name: str, arguments: dict, id: str | None = None) -> dict:
    out: dict = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id is not None:
        out = {"id": id, **out}
    return out


def _tool(name: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


#: the tools vLLM's parser tests call (tests/tool_parsers/conftest.py, test_qwen3coder_tool_parser.py, ...), as
#: JSON schemas so that arguments are typed as those tests expect
VLLM_TOOLS: list[dict] = [
    _tool(
        "get_current_weather",
        {"city": {"type": "string"}, "state": {"type": "string"}, "unit": {"type": "string"}},
        ["city"],
    ),
    _tool(
        "calculate_area",
        {"shape": {"type": "string"}, "dimensions": {"type": "object"}, "precision": {"type": "integer"}},
        ["shape"],
    ),
    _tool("bash", {"command": {"type": "string"}}, ["command"]),
    _tool("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}, ["content"]),
    _tool("final_answer", {"trigger": {"type": "boolean"}}, ["trigger"]),
    # test_deepseekv32_tool_parser.py
    _tool("toggle", {"enabled": {"type": "boolean"}, "count": {"type": "integer"}}, []),
    _tool("score", {"value": {"type": "integer"}}, []),
    _tool("update", {"tags": {"type": "array"}, "meta": {"type": "object"}}, []),
    _tool("measure", {"ratio": {"type": "number"}, "whole": {"type": "number"}}, []),
    # tests/parser/engine/test_seed_oss.py
    _tool("read", {"path": {"type": "string"}}, ["path"]),
    # test_hunyuan_a13b_tool_parser.py
    _tool("register_user", {"name": {"type": "string"}, "age": {"type": "integer"}, "address": {"type": "object"},
                            "role": {"type": "string"}, "passed_test": {"type": "boolean"}, "aliases": {"type": "array"}},
          ["name"]),
    # test_glm47_moe_tool_parser.py and test_minimax_m2_tool_parser.py request these tools (their parsers reject
    # calls to functions not in tools, as policy unknown_tools='unparsed' does)
    _tool("get_current_date", {}, []),
    _tool("mcp__computer_use__get_app_state", {"app": {"type": "string"}}, []),
    _tool("search_web", {"query": {"type": "string"}}, []),
    _tool("get_stock", {"ticker": {"type": "string"}}, []),
]
ALL_TOOLS = [*TOOLS, *VLLM_TOOLS]

CHATML_USER = "<|im_start|>user\nWeather in Dallas?<|im_end|>\n"
QWEN35_THINK = CHATML_USER + "<|im_start|>assistant\n<think>\n"
QWEN35_NO_THINK = CHATML_USER + "<|im_start|>assistant\n<think>\n\n</think>\n\n"
NEMOTRON_THINK = CHATML_USER + "<|im_start|>assistant\n<think>\n"
NEMOTRON_NO_THINK = CHATML_USER + "<|im_start|>assistant\n<think></think>"

#: vLLM tests/reasoning/test_qwen3_reasoning_parser.py: TOOL_CALL_BODY
QWEN3_TOOL_CALL_BODY = (
    "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>"
)
#: vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py, test_extract_tool_calls (parametrized outputs)
DALLAS = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\n"
    "TX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
)
ORLANDO = DALLAS.replace("Dallas", "Orlando").replace("TX", "FL")
DALLAS_ARGS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}

# (case id, template name, prefix, raw model output, expected message)
CASES: list[tuple[str, str, str, str, dict]] = [
    # ------------------------------------------------------------ Qwen3.5 / 3.6 (and Nemotron 3 Nano)
    # vLLM test_qwen3_reasoning_parser.py, WITHOUT_START_TOKEN: the prompt opened <think>
    (
        "qwen3.5-only-close-think",
        "qwen3.5",
        QWEN35_THINK,
        "This is a reasoning section</think>This is the rest<|im_end|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, WITH_THINK: the model writes <think> again
    (
        "qwen3.5-think-written-again",
        "qwen3.5",
        QWEN35_THINK,
        "<think>This is a reasoning section</think>This is the rest<|im_end|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, MULTILINE_REASONING
    (
        "qwen3.5-multiline",
        "qwen3.5",
        QWEN35_THINK,
        "This is a reasoning\nsection</think>This is the rest\nThat",
        {"role": "assistant", "reasoning_content": "This is a reasoning\nsection", "content": "This is the rest\nThat"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, TRUNCATED_NO_START_TOKEN: cut off mid-thought, all reasoning
    (
        "qwen3.5-truncated",
        "qwen3.5",
        QWEN35_THINK,
        "This is a reasoning section",
        {"role": "assistant", "reasoning_content": "This is a reasoning section"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, TOOL_CALL_NO_THINK_END: the call starts inside the reasoning
    (
        "qwen3.5-tool-call-inside-reasoning",
        "qwen3.5",
        QWEN35_THINK,
        "I need to read the file.\n\n" + QWEN3_TOOL_CALL_BODY + "<|im_end|>",
        {
            "role": "assistant",
            "reasoning_content": "I need to read the file.",
            "tool_calls": [call("bash", {"command": "cat /etc/hosts"})],
        },
    ),
    # vLLM test_qwen3_reasoning_parser.py, TOOL_CALL_WITH_THINK_NO_END
    (
        "qwen3.5-tool-call-inside-reasoning-think-again",
        "qwen3.5",
        QWEN35_THINK,
        "<think>I need to read the file.\n\n" + QWEN3_TOOL_CALL_BODY,
        {
            "role": "assistant",
            "reasoning_content": "I need to read the file.",
            "tool_calls": [call("bash", {"command": "cat /etc/hosts"})],
        },
    ),
    # the Qwen3.5 chat template's own layout: reasoning, content, "\n\n<tool_call>"
    (
        "qwen3.5-reasoning-content-tool",
        "qwen3.5",
        QWEN35_THINK,
        "The user wants Dallas weather.\n</think>\n\nSure! Let me check the weather for you.\n\n" + DALLAS
        + "<|im_end|>\n",
        {
            "role": "assistant",
            "reasoning_content": "The user wants Dallas weather.",
            "content": "Sure! Let me check the weather for you.",
            "tool_calls": [call("get_current_weather", DALLAS_ARGS)],
        },
    ),
    # vLLM test_qwen3coder_tool_parser.py, test_extract_tool_calls ("Sure! Let me check ..."), thinking off
    (
        "qwen3.5-no-think-content-then-call",
        "qwen3.5",
        QWEN35_NO_THINK,
        "Sure! Let me check the weather for you." + DALLAS,
        {
            "role": "assistant",
            "content": "Sure! Let me check the weather for you.",
            "tool_calls": [call("get_current_weather", DALLAS_ARGS)],
        },
    ),
    # vLLM test_qwen3coder_tool_parser.py, test_extract_tool_calls (parallel_tools)
    (
        "qwen3.5-parallel-calls",
        "qwen3.5",
        QWEN35_NO_THINK,
        DALLAS + "\n" + ORLANDO + "<|im_end|>",
        {
            "role": "assistant",
            "tool_calls": [
                call("get_current_weather", DALLAS_ARGS),
                call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
            ],
        },
    ),
    # vLLM test_qwen3coder_tool_parser.py, test_extract_tool_calls (typed params, JSON object value)
    (
        "qwen3.5-typed-params",
        "qwen3.5",
        QWEN35_NO_THINK,
        "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n"
        '{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
        {
            "role": "assistant",
            "tool_calls": [
                call("calculate_area", {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2})
            ],
        },
    ),
    # vLLM test_qwen3coder_tool_parser.py, TestParameterWhitespace: only the wrapping newlines are markup
    (
        "qwen3.5-parameter-whitespace",
        "qwen3.5",
        QWEN35_NO_THINK,
        "<tool_call>\n<function=write_file>\n<parameter=content>\n    def foo():\n        return 1\n\n"
        "</parameter>\n</function>\n</tool_call>",
        {"role": "assistant", "tool_calls": [call("write_file", {"content": "    def foo():\n        return 1\n"})]},
    ),
    # vLLM tests/reasoning/test_nemotron_v3_reasoning_parser.py, without_start_token / with_start_token
    (
        "nemotron-3-only-close-think",
        "qwen3.5",
        NEMOTRON_THINK,
        "This is a reasoning section</think>This is the rest<|im_end|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    (
        "nemotron-3-with-start-token",
        "qwen3.5",
        NEMOTRON_THINK,
        "<think>This is a reasoning section</think>This is the rest",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    # the Nemotron 3 chat template's layout with thinking on: "R\n</think>\n" then the calls
    (
        "nemotron-3-reasoning-then-calls",
        "qwen3.5",
        NEMOTRON_THINK,
        "The user wants Dallas and Orlando.\n</think>\n" + DALLAS + "\n" + ORLANDO + "\n<|im_end|>\n",
        {
            "role": "assistant",
            "reasoning_content": "The user wants Dallas and Orlando.",
            "tool_calls": [
                call("get_current_weather", DALLAS_ARGS),
                call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
            ],
        },
    ),
    # Qwen3.6 renders non-string values as JSON (true, 3, {...}); typed from the schema
    (
        "qwen3.6-json-scalars",
        "qwen3.5",
        QWEN35_THINK,
        "Metric units.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n<parameter=ratio>\n0.5\n"
        "</parameter>\n</function>\n</tool_call><|im_end|>",
        {
            "role": "assistant",
            "reasoning_content": "Metric units.",
            "tool_calls": [call("get_weather", {"city": "Dallas", "days": 3, "metric": True, "ratio": 0.5})],
        },
    ),
    # the Nemotron 3 chat template's tool-call layout: "<think></think>" prompt, calls each ending "\n"
    (
        "nemotron-3-no-think-tool-call",
        "qwen3.5",
        NEMOTRON_NO_THINK,
        "\n" + DALLAS + "\n<|im_end|>\n",
        {"role": "assistant", "tool_calls": [call("get_current_weather", DALLAS_ARGS)]},
    ),
]

QWEN3_THINKING_PROMPT = CHATML_USER + "<|im_start|>assistant\n<think>\n"
CASES += [
    # ------------------------------------------------------------ Qwen3 Thinking-2507 (prompt opens <think>)
    # vLLM test_qwen3_reasoning_parser.py (Qwen/Qwen3-4B-Thinking-2507 among its models), WITHOUT_START_TOKEN
    (
        "qwen3-thinking-2507-only-close-think",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        "This is a reasoning section</think>This is the rest<|im_end|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, WITHOUT_START_TOKEN_COMPLETE_REASONING
    (
        "qwen3-thinking-2507-complete-reasoning",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        "This is a reasoning section</think>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, WITH_THINK
    (
        "qwen3-thinking-2507-think-written-again",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        "<think>This is a reasoning section</think>This is the rest",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    # vLLM test_qwen3_reasoning_parser.py, WITHOUT_THINK: truncated before </think>, all reasoning
    (
        "qwen3-thinking-2507-truncated",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        "This is the rest",
        {"role": "assistant", "reasoning_content": "This is the rest"},
    ),
    # the chat template's layout ("\n</think>\n\n", calls separated by "\n"); the call body from vLLM
    # tests/tool_parsers/test_hermes_tool_parser.py, test_hermes_parser_streaming_failure_case_bug_19056
    (
        "qwen3-thinking-2507-tool-calls",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        "The user wants two things.\n</think>\n\n<tool_call>\n"
        '{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>\n<tool_call>\n'
        '{"name": "get_weather", "arguments": {"city": "Dallas", "days": "2"}}\n</tool_call><|im_end|>\n',
        {
            "role": "assistant",
            "reasoning_content": "The user wants two things.",
            "tool_calls": [call("final_answer", {"trigger": True}), call("get_weather", {"city": "Dallas", "days": 2})],
        },
    ),
    # a JSON call written before </think>: the reasoning ends where the call starts
    (
        "qwen3-thinking-2507-tool-call-inside-reasoning",
        "qwen3-thinking-2507",
        QWEN3_THINKING_PROMPT,
        'I need the weather.\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Dallas"}}\n</tool_call>',
        {
            "role": "assistant",
            "reasoning_content": "I need the weather.",
            "tool_calls": [call("get_weather", {"city": "Dallas"})],
        },
    ),
    # the answer after tool results (the tool response is a user turn in this chat template)
    (
        "qwen3-thinking-2507-after-tool-response",
        "qwen3-thinking-2507",
        CHATML_USER + '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Dallas"}}'
        "\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{\"t\": 31}\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n<think>\n",
        "It is 31.\n</think>\n\nIt is 31 °C in Dallas.<|im_end|>\n",
        {"role": "assistant", "reasoning_content": "It is 31.", "content": "It is 31 °C in Dallas."},
    ),
]

GLM47_THINK = "[gMASK]<sop><|user|>Weather in Beijing?<|assistant|><think>"
GLM47_NO_THINK = "[gMASK]<sop><|user|>Weather in Beijing?<|assistant|></think>"
CASES += [
    # ------------------------------------------------------------ GLM-4.7 / GLM-5
    # vLLM tests/reasoning/test_glm4_moe_reasoning_parser.py: reasoning outputs (the GLM-4.7 prompt opens <think>)
    (
        "glm-4.7-only-close-think",
        "glm-4.7",
        GLM47_THINK,
        "This is a reasoning section</think>This is the rest<|user|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    (
        "glm-4.7-think-written-again",
        "glm-4.7",
        GLM47_THINK,
        "<think>This is a reasoning\nsection</think>This is the rest\nThat",
        {"role": "assistant", "reasoning_content": "This is a reasoning\nsection", "content": "This is the rest\nThat"},
    ),
    (
        "glm-4.7-truncated-reasoning",
        "glm-4.7",
        GLM47_THINK,
        "This is the rest",
        {"role": "assistant", "reasoning_content": "This is the rest"},
    ),
    # vLLM tests/tool_parsers/test_glm47_moe_tool_parser.py: test_zero_arg_inline, test_content_before,
    # test_args_same_line, test_multiple, test_args_with_newlines, test_whitespace_preserved_in_arg_values
    (
        "glm-4.7-zero-arg-call",
        "glm-4.7",
        GLM47_NO_THINK,
        "Checking.<tool_call>get_current_date</tool_call><|observation|>",
        {"role": "assistant", "content": "Checking.", "tool_calls": [call("get_current_date", {})]},
    ),
    (
        "glm-4.7-zero-arg-call-newline",
        "glm-4.7",
        GLM47_NO_THINK,
        "<tool_call>get_current_date\n</tool_call>",
        {"role": "assistant", "tool_calls": [call("get_current_date", {})]},
    ),
    (
        "glm-4.7-two-calls-same-line",
        "glm-4.7",
        GLM47_THINK,
        "Two cities.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value><arg_key>days</arg_key>"
        "<arg_value>3</arg_value></tool_call><|observation|>",
        {
            "role": "assistant",
            "reasoning_content": "Two cities.",
            "tool_calls": [call("get_weather", {"city": "Beijing"}), call("get_weather", {"city": "Shanghai", "days": 3})],
        },
    ),
    (
        "glm-4.7-args-with-newlines",
        "glm-4.7",
        GLM47_NO_THINK,
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Beijing"})]},
    ),
    (
        "glm-4.7-whitespace-kept-in-values",
        "glm-4.7",
        GLM47_NO_THINK,
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>  Beijing  </arg_value></tool_call>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "  Beijing  "})]},
    ),
    # vLLM test_glm47_moe_tool_parser.py, test_namespace_tool_call_round_trip_to_responses_output
    (
        "glm-4.7-namespaced-tool-name",
        "glm-4.7",
        GLM47_NO_THINK,
        "<tool_call>mcp__computer_use__get_app_state<arg_key>app</arg_key><arg_value>Google Chrome</arg_value>"
        "</tool_call>",
        {"role": "assistant", "tool_calls": [call("mcp__computer_use__get_app_state", {"app": "Google Chrome"})]},
    ),
    # a call written before </think> ends the reasoning
    (
        "glm-4.7-call-inside-reasoning",
        "glm-4.7",
        GLM47_THINK,
        "I should look it up.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
        {
            "role": "assistant",
            "reasoning_content": "I should look it up.",
            "tool_calls": [call("get_weather", {"city": "Beijing"})],
        },
    ),
    # nested values are JSON (the chat template renders non-strings with tojson)
    (
        "glm-4.7-json-values",
        "glm-4.7",
        GLM47_NO_THINK,
        '<tool_call>search<arg_key>query</arg_key><arg_value>cafés</arg_value><arg_key>options</arg_key><arg_value>{"lang": '
        '"fr"}</arg_value><arg_key>tags</arg_key><arg_value>["a", "b"]</arg_value></tool_call><|observation|>',
        {
            "role": "assistant",
            "tool_calls": [call("search", {"query": "cafés", "options": {"lang": "fr"}, "tags": ["a", "b"]})],
        },
    ),
]

MINIMAX_PROMPT = "]~!b[]~b]system\nYou are a helpful assistant.[e~[\n]~b]user\nWeather in Seattle?[e~[\n]~b]ai\n<think>\n"
CASES += [
    # ------------------------------------------------------------ MiniMax M2 / M2.5
    # vLLM tests/reasoning/test_minimax_m2_reasoning_parser.py: SIMPLE_REASONING, COMPLETE_REASONING,
    # NO_END_TOKEN, MULTIPLE_LINES, SHORTEST_REASONING_STREAMING, CODE_IN_REASONING (no start token: the
    # prompt opened <think>)
    (
        "minimax-m2-simple-reasoning",
        "minimax-m2",
        MINIMAX_PROMPT,
        "This is a reasoning section</think>This is the rest[e~[",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    (
        "minimax-m2-complete-reasoning",
        "minimax-m2",
        MINIMAX_PROMPT,
        "This is a reasoning section</think>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section"},
    ),
    (
        "minimax-m2-reasoning-in-progress",
        "minimax-m2",
        MINIMAX_PROMPT,
        "This is reasoning in progress",
        {"role": "assistant", "reasoning_content": "This is reasoning in progress"},
    ),
    (
        "minimax-m2-multiple-lines",
        "minimax-m2",
        MINIMAX_PROMPT,
        "First line\nSecond line</think>Response first line\nResponse second",
        {"role": "assistant", "reasoning_content": "First line\nSecond line", "content": "Response first line\nResponse second"},
    ),
    (
        "minimax-m2-only-end-token",
        "minimax-m2",
        MINIMAX_PROMPT,
        "</think>This is the response",
        {"role": "assistant", "content": "This is the response"},
    ),
    (
        "minimax-m2-code-in-reasoning",
        "minimax-m2",
        MINIMAX_PROMPT,
        "```python\nprint('hello')\n```</think>Here is the code.",
        {"role": "assistant", "reasoning_content": "```python\nprint('hello')\n```", "content": "Here is the code."},
    ),
    # vLLM tests/tool_parsers/test_minimax_m2_tool_parser.py, test_content_before_tool_call and
    # test_multiple_params (vLLM, without a schema, keeps "5" a string; tools= types it)
    (
        "minimax-m2-content-then-call",
        "minimax-m2",
        MINIMAX_PROMPT,
        'Weather lookup.</think>Let me check. <minimax:tool_call><invoke name="get_weather"><parameter name="city">'
        'Seattle</parameter><parameter name="days">5</parameter></invoke></minimax:tool_call>[e~[',
        {
            "role": "assistant",
            "reasoning_content": "Weather lookup.",
            "content": "Let me check.",
            "tool_calls": [call("get_weather", {"city": "Seattle", "days": 5})],
        },
    ),
    # vLLM test_minimax_m2_tool_parser.py, test_two_invokes_incremental / test_different_functions
    (
        "minimax-m2-two-invokes",
        "minimax-m2",
        MINIMAX_PROMPT,
        '</think><minimax:tool_call><invoke name="search_web"><parameter name="query">OpenAI</parameter></invoke>'
        '<invoke name="get_stock"><parameter name="ticker">AAPL</parameter></invoke></minimax:tool_call>',
        {
            "role": "assistant",
            "tool_calls": [call("search_web", {"query": "OpenAI"}), call("get_stock", {"ticker": "AAPL"})],
        },
    ),
    # the chat template's own layout: "\n\n" after </think>, "\n" around the block and after each invoke,
    # non-string values as JSON; a call started without </think> ends the reasoning
    (
        "minimax-m2-template-layout",
        "minimax-m2",
        MINIMAX_PROMPT,
        "Need two lookups.\n</think>\n\nChecking.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
        '<parameter name="city">Seattle</parameter>\n<parameter name="metric">true</parameter>\n</invoke>\n'
        '<invoke name="search">\n<parameter name="query">rain "gear"</parameter>\n<parameter name="tags">["a", "b"]'
        "</parameter>\n</invoke>\n</minimax:tool_call>[e~[\n",
        {
            "role": "assistant",
            "reasoning_content": "Need two lookups.",
            "content": "Checking.",
            "tool_calls": [
                call("get_weather", {"city": "Seattle", "metric": True}),
                call("search", {"query": 'rain "gear"', "tags": ["a", "b"]}),
            ],
        },
    ),
    (
        "minimax-m2-call-inside-reasoning",
        "minimax-m2",
        MINIMAX_PROMPT,
        'I will look it up.\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Seattle'
        "</parameter>\n</invoke>\n</minimax:tool_call>[e~[",
        {
            "role": "assistant",
            "reasoning_content": "I will look it up.",
            "tool_calls": [call("get_weather", {"city": "Seattle"})],
        },
    ),
]

KIMI_PROMPT = (
    "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
    "<|im_user|>user<|im_middle|>Weather in Beijing?<|im_end|><|im_assistant|>assistant<|im_middle|>"
)
KIMI_K25_THINK = KIMI_PROMPT + "<think>"
KIMI_K25_NO_THINK = KIMI_PROMPT + "<think></think>"


def _kimi_call(tool_id: str, args: str) -> str:
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py, _tool(): "{TOOL_BEGIN}{tool_id} {ARG_BEGIN}{args}{TOOL_END}"
    return f"<|tool_call_begin|>{tool_id} <|tool_call_argument_begin|>{args}<|tool_call_end|>"


def _kimi_section(*calls: str) -> str:
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


CASES += [
    # ------------------------------------------------------------ Kimi K2 Thinking / K2.5 (ids kept)
    # vLLM tests/reasoning/test_kimi_k2_reasoning_parser.py, test_extract_reasoning_with_think_tags
    (
        "kimi-k2-thinking-think-tags",
        "kimi-k2-thinking",
        KIMI_PROMPT,
        "<think>step by step reasoning</think>final answer<|im_end|>",
        {"role": "assistant", "reasoning_content": "step by step reasoning", "content": "final answer"},
    ),
    # vLLM test_kimi_k2_reasoning_parser.py, test_extract_reasoning_empty_thinking
    (
        "kimi-k2-thinking-empty-thinking",
        "kimi-k2-thinking",
        KIMI_PROMPT,
        "<think></think>final answer",
        {"role": "assistant", "content": "final answer"},
    ),
    # vLLM test_kimi_k2_reasoning_parser.py, test_extract_reasoning_tool_section_ends_reasoning (with a
    # real call in the section)
    (
        "kimi-k2-thinking-tool-section-ends-reasoning",
        "kimi-k2-thinking",
        KIMI_PROMPT,
        "<think>some reasoning" + _kimi_section(_kimi_call("functions.get_weather:0", '{"city": "Beijing"}'))
        + "<|im_end|>",
        {
            "role": "assistant",
            "reasoning_content": "some reasoning",
            "tool_calls": [call("get_weather", {"city": "Beijing"}, id="functions.get_weather:0")],
        },
    ),
    # vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py, test_extract_tool_calls: single_tool_call,
    # parallel_tool_calls, three_tool_calls, angle_brackets_in_json, multiline_json, no_functions_prefix,
    # empty_arguments; test_native_id_extracted (the id is kept)
    (
        "kimi-k2.5-single-call-native-id",
        "kimi-k2-thinking",
        KIMI_K25_THINK,
        "Weather.</think>I'll check. " + _kimi_section(_kimi_call("functions.get_weather:0", '{"city": "Beijing"}')),
        {
            "role": "assistant",
            "reasoning_content": "Weather.",
            "content": "I'll check.",
            "tool_calls": [call("get_weather", {"city": "Beijing"}, id="functions.get_weather:0")],
        },
    ),
    (
        "kimi-k2.5-three-calls",
        "kimi-k2-thinking",
        KIMI_K25_NO_THINK,
        "Multiple tasks. "
        + _kimi_section(
            _kimi_call("functions.get_weather:0", '{"city": "New York"}'),
            _kimi_call("functions.get_news:1", '{"topic": "technology"}'),
            _kimi_call("functions.send_email:2", '{"to": "user@example.com", "subject": "Daily Update"}'),
        )
        + "<|im_end|>",
        {
            "role": "assistant",
            "content": "Multiple tasks.",
            "tool_calls": [
                call("get_weather", {"city": "New York"}, id="functions.get_weather:0"),
                call("get_news", {"topic": "technology"}, id="functions.get_news:1"),
                call("send_email", {"to": "user@example.com", "subject": "Daily Update"}, id="functions.send_email:2"),
            ],
        },
    ),
    (
        "kimi-k2.5-angle-brackets-and-multiline-json",
        "kimi-k2-thinking",
        KIMI_K25_NO_THINK,
        "Process HTML. "
        + _kimi_section(
            _kimi_call("functions.process_html:0", '{"html": "<div>content</div>"}'),
            _kimi_call("functions.process_data:1", '{\n  "name": "test",\n  "value": 123\n}'),
        ),
        {
            "role": "assistant",
            "content": "Process HTML.",
            "tool_calls": [
                call("process_html", {"html": "<div>content</div>"}, id="functions.process_html:0"),
                call("process_data", {"name": "test", "value": 123}, id="functions.process_data:1"),
            ],
        },
    ),
    (
        "kimi-k2.5-no-functions-prefix-and-empty-args",
        "kimi-k2-thinking",
        KIMI_K25_NO_THINK,
        "No prefix. " + _kimi_section(_kimi_call("get_weather:0", '{"city": "Tokyo"}'), _kimi_call("functions.test:1", "{}")),
        {
            "role": "assistant",
            "content": "No prefix.",
            "tool_calls": [
                call("get_weather", {"city": "Tokyo"}, id="get_weather:0"),
                call("test", {}, id="functions.test:1"),
            ],
        },
    ),
    # vLLM test_kimi_k2_tool_parser.py, test_multi_turn_native_id_continuity: a second turn after the first
    # call's result (the chat template's "## Return of ID" tool message)
    (
        "kimi-k2-thinking-second-turn-after-tool-result",
        "kimi-k2-thinking",
        KIMI_PROMPT + "<think>Need weather.</think>" + _kimi_section(_kimi_call("functions.get_weather:0", '{"city": "Beijing"}'))
        + "<|im_end|><|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\nSunny<|im_end|>"
        "<|im_assistant|>assistant<|im_middle|>",
        "<think>Now the news.</think>" + _kimi_section(_kimi_call("functions.get_news:0", '{"topic": "weather in Beijing"}')),
        {
            "role": "assistant",
            "reasoning_content": "Now the news.",
            "tool_calls": [call("get_news", {"topic": "weather in Beijing"}, id="functions.get_news:0")],
        },
    ),
]

# vLLM tests/tool_parsers/test_deepseekv32_tool_parser.py: FC_START ... PARAM_END and build_tool_call()
DSML_FC_START, DSML_FC_END = "<｜DSML｜function_calls>", "</｜DSML｜function_calls>"
DSML_INV_START, DSML_INV_END = '<｜DSML｜invoke name="', "</｜DSML｜invoke>"
DSML_PARAM_START, DSML_PARAM_END = '<｜DSML｜parameter name="', "</｜DSML｜parameter>"


def _dsml_call(func_name: str, params: dict[str, str]) -> str:
    param_strs = "".join(f'{DSML_PARAM_START}{k}" string="true">{v}{DSML_PARAM_END}' for k, v in params.items())
    return f'{DSML_FC_START}\n{DSML_INV_START}{func_name}">\n{param_strs}\n{DSML_INV_END}\n{DSML_FC_END}'


DSV32_THINK = "<｜begin▁of▁sentence｜><｜User｜>Weather in SF?<｜Assistant｜><think>"
DSV32_NO_THINK = "<｜begin▁of▁sentence｜><｜User｜>Weather in SF?<｜Assistant｜><think></think>"
CASES += [
    # ------------------------------------------------------------ DeepSeek-V3.2 (DSML)
    # vLLM test_deepseekv32_tool_parser.py, TestExtractToolCalls.test_single_tool_no_params
    (
        "deepseek-v3.2-no-params",
        "deepseek-v3.2",
        DSV32_NO_THINK,
        f'{DSML_FC_START}\n{DSML_INV_START}get_time">\n{DSML_INV_END}\n{DSML_FC_END}<｜end▁of▁sentence｜>',
        {"role": "assistant", "tool_calls": [call("get_time", {})]},
    ),
    # test_single_tool_with_params / test_content_before_tool_call
    (
        "deepseek-v3.2-content-then-call",
        "deepseek-v3.2",
        DSV32_NO_THINK,
        "Sure, let me check! " + _dsml_call("get_weather", {"location": "NYC", "date": "2024-01-16"}),
        {
            "role": "assistant",
            "content": "Sure, let me check!",
            "tool_calls": [call("get_weather", {"location": "NYC", "date": "2024-01-16"})],
        },
    ),
    # test_multiple_tools
    (
        "deepseek-v3.2-two-invokes",
        "deepseek-v3.2",
        DSV32_NO_THINK,
        f'{DSML_FC_START}\n{DSML_INV_START}get_weather">\n{DSML_PARAM_START}location" string="true">SF{DSML_PARAM_END}\n'
        f'{DSML_INV_END}\n{DSML_INV_START}get_weather">\n{DSML_PARAM_START}location" string="true">NYC{DSML_PARAM_END}\n'
        f"{DSML_INV_END}\n{DSML_FC_END}",
        {"role": "assistant", "tool_calls": [call("get_weather", {"location": "SF"}), call("get_weather", {"location": "NYC"})]},
    ),
    # test_type_conversion_in_non_streaming, test_string_attr_true_coerced_by_schema,
    # test_object_and_array_params, test_number_param (values typed by their string="false" JSON). vLLM's
    # test_string_attr_true_coerced_by_schema: the string="true" 42 of an `integer` parameter is cast to 42 by the
    # schema, as here (a value_parser_by field is typed as a typed body: a string for a parameter that admits no
    # string is cast). Transformers 5.25 types nothing in a value_parser_by field and leaves "42" (README)
    (
        "deepseek-v3.2-typed-by-schema",
        "deepseek-v3.2",
        DSV32_THINK,
        "Several tools.</think>\n\n"
        f'{DSML_FC_START}\n{DSML_INV_START}toggle">\n{DSML_PARAM_START}enabled" string="false">true{DSML_PARAM_END}\n'
        f'{DSML_PARAM_START}count" string="false">42{DSML_PARAM_END}\n{DSML_INV_END}\n'
        f'{DSML_INV_START}score">\n{DSML_PARAM_START}value" string="true">42{DSML_PARAM_END}\n{DSML_INV_END}\n'
        f'{DSML_INV_START}update">\n{DSML_PARAM_START}tags" string="false">["a", "b"]{DSML_PARAM_END}\n'
        f'{DSML_PARAM_START}meta" string="false">{{"k": 1}}{DSML_PARAM_END}\n{DSML_INV_END}\n'
        f'{DSML_INV_START}measure">\n{DSML_PARAM_START}ratio" string="false">3.14{DSML_PARAM_END}\n'
        f"{DSML_INV_END}\n{DSML_FC_END}<｜end▁of▁sentence｜>",
        {
            "role": "assistant",
            "reasoning_content": "Several tools.",
            "tool_calls": [
                call("toggle", {"enabled": True, "count": 42}),
                call("score", {"value": 42}),
                call("update", {"tags": ["a", "b"], "meta": {"k": 1}}),
                call("measure", {"ratio": 3.14}),
            ],
        },
    ),
    # the thinking prompt, reasoning then an answer
    (
        "deepseek-v3.2-thinking-answer",
        "deepseek-v3.2",
        DSV32_THINK,
        "The user asks about SF.\nFoggy, usually.</think>It is usually foggy in SF.<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "The user asks about SF.\nFoggy, usually.", "content": "It is usually foggy in SF."},
    ),
    # after tool results the prompt continues "\n\n<think>" (anchored at </function_results>)
    (
        "deepseek-v3.2-after-function-results",
        "deepseek-v3.2",
        DSV32_THINK + "Check.</think>\n\n" + _dsml_call("get_weather", {"location": "SF"}) + "<｜end▁of▁sentence｜>"
        "\n\n<function_results>\n<result>18 C</result>\n</function_results>\n\n<think>",
        "It is 18 C.</think>It is 18 °C in SF.<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "It is 18 C.", "content": "It is 18 °C in SF."},
    ),
]

SEED_PROMPT = "<seed:bos>user\nWeather in Tokyo?<seed:eos><seed:bos>assistant\n"
SEED_CALL_TOKYO = "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</seed:tool_call>"
CASES += [
    # ------------------------------------------------------------ Seed-OSS
    # vLLM tests/parser/engine/test_seed_oss.py, test_single_tool_call (thinking disabled)
    (
        "seed-oss-single-call",
        "seed-oss",
        SEED_PROMPT,
        SEED_CALL_TOKYO + "<seed:eos>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Tokyo"})]},
    ),
    # test_reasoning_then_tool_call / test_streaming_think_end_and_tool_call_same_delta
    (
        "seed-oss-reasoning-then-call",
        "seed-oss",
        SEED_PROMPT,
        "<seed:think>I need to read the file.</seed:think><seed:tool_call>\n<function=read>\n"
        "<parameter=path>/tmp/x</parameter>\n</function>\n</seed:tool_call>",
        {"role": "assistant", "reasoning_content": "I need to read the file.", "tool_calls": [call("read", {"path": "/tmp/x"})]},
    ),
    # test_budget_reflect_tags_do_not_break_adapter_pipeline: budget reflections stay in the reasoning
    (
        "seed-oss-budget-reflections",
        "seed-oss",
        SEED_PROMPT,
        "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nI need the weather.\n"
        "<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n</seed:think>"
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Barcelona</parameter>\n</function>\n"
        "</seed:tool_call><seed:eos>",
        {
            "role": "assistant",
            "reasoning_content": "The user's current thinking budget is 512.</seed:cot_budget_reflect>\nI need the weather.\n"
            "<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>",
            "tool_calls": [call("get_weather", {"city": "Barcelona"})],
        },
    ),
    # the chat template's layout: "\n<seed:think>R</seed:think>\nC<seed:eos>"; values verbatim, typed by schema
    (
        "seed-oss-reasoning-answer",
        "seed-oss",
        SEED_PROMPT,
        "<seed:think>Tokyo weather question.</seed:think>\nTokyo is mild in spring.<seed:eos>",
        {"role": "assistant", "reasoning_content": "Tokyo weather question.", "content": "Tokyo is mild in spring."},
    ),
    (
        "seed-oss-content-and-typed-calls",
        "seed-oss",
        SEED_PROMPT,
        "<seed:think>Two calls.</seed:think>\nChecking.\n\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>"
        " Tokyo </parameter>\n<parameter=days>3</parameter>\n<parameter=metric>True</parameter>\n</function>\n"
        "</seed:tool_call>\n" + SEED_CALL_TOKYO + "<seed:eos>",
        {
            "role": "assistant",
            "reasoning_content": "Two calls.",
            "content": "Checking.",
            "tool_calls": [
                call("get_weather", {"city": " Tokyo ", "days": 3, "metric": True}),
                call("get_weather", {"city": "Tokyo"}),
            ],
        },
    ),
    # the thinking_budget=0 prompt pre-writes a closed reasoning block: the model answers directly (the
    # prompt's block is parsed as written, like any region the prefix opens and closes)
    (
        "seed-oss-budget-zero-prompt",
        "seed-oss",
        SEED_PROMPT + "<seed:think>\n<seed:cot_budget_reflect>The current thinking budget is 0, so I will directly "
        "start answering the question.</seed:cot_budget_reflect>\n</seed:think>",
        "Tokyo is mild.<seed:eos>",
        {
            "role": "assistant",
            "reasoning_content": "<seed:cot_budget_reflect>The current thinking budget is 0, so I will directly start "
            "answering the question.</seed:cot_budget_reflect>",
            "content": "Tokyo is mild.",
        },
    ),
]

HUNYUAN_PROMPT = "<|startoftext|>You are helpful.<|extra_4|>Weather in Boston?<|extra_0|>"
# vLLM tests/reasoning/test_hunyuan_reasoning_parser.py: START_REASONING, START_RESPONSE, END_RESPONSE
HY_START_REASONING, HY_START_RESPONSE, HY_END_RESPONSE = "<think>\n", "\n</think>\n<answer>\n", "\n</answer>"
CASES += [
    # ------------------------------------------------------------ Hunyuan-A13B
    # vLLM test_hunyuan_reasoning_parser.py: SIMPLE_REASONING, NO_REASONING_QUICK_THOUGHT, COMPLETE_REASONING,
    # MULTIPLE_LINES, NO_REASONING
    (
        "hunyuan-a13b-simple-reasoning",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        f"{HY_START_REASONING}This is a reasoning section{HY_START_RESPONSE}This is the rest{HY_END_RESPONSE}<|eos|>",
        {"role": "assistant", "reasoning_content": "This is a reasoning section", "content": "This is the rest"},
    ),
    (
        "hunyuan-a13b-quick-thought",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        f"{HY_START_REASONING}{HY_START_RESPONSE}This is the rest{HY_END_RESPONSE}",
        {"role": "assistant", "content": "This is the rest"},
    ),
    (
        "hunyuan-a13b-complete-reasoning",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        f"{HY_START_REASONING}This is a reasoning section!{HY_START_RESPONSE}",
        {"role": "assistant", "reasoning_content": "This is a reasoning section!"},
    ),
    (
        "hunyuan-a13b-multiple-lines",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        f"{HY_START_REASONING}This\nThat{HY_START_RESPONSE}This is the rest\nThat",
        {"role": "assistant", "reasoning_content": "This\nThat", "content": "This is the rest\nThat"},
    ),
    (
        "hunyuan-a13b-no-reasoning",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        "This is content",
        {"role": "assistant", "content": "This is content"},
    ),
    # thinking off: the prompt ends with "<think>\n\n</think>\n"; the model still opens <answer>
    (
        "hunyuan-a13b-thinking-off-answer",
        "hunyuan-a13b",
        HUNYUAN_PROMPT + "<think>\n\n</think>\n",
        "<answer>\nIt is cold in Boston.\n</answer><|eos|>",
        {"role": "assistant", "content": "It is cold in Boston."},
    ),
    # the tool system prompt asks for answers starting with 助手： (the chat template adds it back)
    (
        "hunyuan-a13b-assistant-prefix",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        "助手：今天波士顿很冷。<|eos|>",
        {"role": "assistant", "content": "今天波士顿很冷。"},
    ),
    # vLLM tests/tool_parsers/test_hunyuan_a13b_tool_parser.py, test_hunyuan_a13b_tool_parser_extract
    (
        "hunyuan-a13b-two-calls",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        '<tool_calls>[{"name": "get_current_weather", "arguments": {"city": "San Francisco", "unit": "celsius"}}, '
        '{"name": "register_user", "arguments": {"name": "John Doe", "age": 37, "address": {"city": "San Francisco", '
        '"state": "CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}}]</tool_calls><|eos|>',
        {
            "role": "assistant",
            "tool_calls": [
                call("get_current_weather", {"city": "San Francisco", "unit": "celsius"}),
                call(
                    "register_user",
                    {
                        "name": "John Doe",
                        "age": 37,
                        "address": {"city": "San Francisco", "state": "CA"},
                        "role": None,
                        "passed_test": True,
                        "aliases": ["John", "Johnny"],
                    },
                ),
            ],
        },
    ),
    (
        "hunyuan-a13b-content-before-call",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        'I will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>',
        {"role": "assistant", "content": "I will call the tool now.", "tool_calls": [call("get_weather", {"city": "Boston"})]},
    ),
    # vLLM drops text after </tool_calls> ("should be stripped"); nothing of the output is lost here
    (
        "hunyuan-a13b-content-after-call-kept",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]</tool_calls>\nThank you!',
        {"role": "assistant", "content": "Thank you!", "tool_calls": [call("get_weather", {"city": "Seattle"})]},
    ),
    (
        "hunyuan-a13b-nested-and-non-ascii",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        '<tool_calls>[{"name": "complex_tool", "arguments": {"level1": {"level2": {"level3": {"value": 123}}}}}, '
        '{"name": "get_weather", "arguments": {"city": "北京"}}]</tool_calls>',
        {
            "role": "assistant",
            "tool_calls": [
                call("complex_tool", {"level1": {"level2": {"level3": {"value": 123}}}}),
                call("get_weather", {"city": "北京"}),
            ],
        },
    ),
    # reasoning, then a call inside the answer
    (
        "hunyuan-a13b-reasoning-then-call",
        "hunyuan-a13b",
        HUNYUAN_PROMPT,
        f"{HY_START_REASONING}Need the weather.{HY_START_RESPONSE}"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston", "days": 2}}]</tool_calls>'
        f"{HY_END_RESPONSE}<|eos|>",
        {
            "role": "assistant",
            "reasoning_content": "Need the weather.",
            "tool_calls": [call("get_weather", {"city": "Boston", "days": 2})],
        },
    ),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert parse_response(output, get_template(name), prefix=prefix, tools=ALL_TOOLS) == expected


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output_streamed_char_by_char(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert streamed(name, prefix, list(output), ALL_TOOLS) == expected


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_raw_output_any_chunking(data: st.DataObject) -> None:
    """Streaming equals one-shot for any chunking of every case."""
    case_id, name, prefix, output, expected = data.draw(st.sampled_from(CASES), label="case")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(output)), max_size=12), label="cuts"))
    assert streamed(name, prefix, cut(output, cuts), ALL_TOOLS) == expected, case_id


# --------------------------------------------------------------------------- verify --template auto

#: fixture chat template -> (the family detection must name, special tokens of the tiny tokenizer, eos)
_CHATML = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
           "<tool_response>", "</tool_response>")
_MINIMAX = ("<|endoftext|>", "]~!b[", "]~b]", "[e~[", "<think>", "</think>", "<minimax:tool_call>",
            "</minimax:tool_call>")
_KIMI = ("<|endoftext|>", "<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>",
         "<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
         "<|tool_call_argument_begin|>", "<|tool_call_end|>")
VERIFY: dict[str, tuple[str, tuple[str, ...], str]] = {
    "Qwen-Qwen3.5-4B.jinja": ("qwen3.5", _CHATML, "<|im_end|>"),
    "Qwen-Qwen3.5-0.8B.jinja": ("qwen3.5", _CHATML, "<|im_end|>"),
    "Qwen-Qwen3.6-35B-A3B.jinja": ("qwen3.5", _CHATML, "<|im_end|>"),
    "nvidia-NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": ("qwen3.5", _CHATML, "<|im_end|>"),
    "Qwen-Qwen3-235B-A22B-Thinking-2507.jinja": ("qwen3-thinking-2507", _CHATML, "<|im_end|>"),
    "Qwen-Qwen3-235B-A22B-Instruct-2507.jinja": ("qwen3", _CHATML, "<|im_end|>"),
    "Qwen-Qwen3-Next-80B-A3B-Instruct.jinja": ("hermes3", _CHATML, "<|im_end|>"),
    "XiaomiMiMo-MiMo-VL.jinja": ("qwen3", _CHATML, "<|im_end|>"),
    "moonshotai-Kimi-K2-Thinking.jinja": ("kimi-k2-thinking", _KIMI, "<|im_end|>"),
    "moonshotai-Kimi-K2.5.jinja": ("kimi-k2-thinking", _KIMI, "<|im_end|>"),
    "deepseek-ai-DeepSeek-V3.2.jinja": (
        "deepseek-v3.2",
        ("<｜end▁of▁sentence｜>", "<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>", "</think>"),
        "<｜end▁of▁sentence｜>",
    ),
    "ByteDance-Seed-Seed-OSS-36B-Instruct.jinja": (
        "seed-oss",
        ("<seed:pad>", "<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>",
         "</seed:tool_call>", "<seed:cot_budget_reflect>", "</seed:cot_budget_reflect>"),
        "<seed:eos>",
    ),
    "vllm-tencent-Hunyuan-A13B-Instruct.jinja": (
        "hunyuan-a13b",
        ("<|eos|>", "<|startoftext|>", "<|extra_0|>", "<|extra_4|>", "<think>", "</think>", "<answer>", "</answer>",
         "<tool_calls>", "</tool_calls>"),
        "<|eos|>",
    ),
    "MiniMaxAI-MiniMax-M2.jinja": ("minimax-m2", _MINIMAX, "[e~["),
    "MiniMaxAI-MiniMax-M2.5.jinja": ("minimax-m2", _MINIMAX, "[e~["),
    "zai-org-GLM-4.7-Flash.jinja": (
        "glm-4.7",
        ("<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<think>",
         "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
        "<|user|>",
    ),
}


@pytest.mark.parametrize("fixture", sorted(VERIFY))
def test_detected_and_verified_from_a_tokenizer_folder(fixture: str, tmp_path: Path, capsys) -> None:
    from hf_response_templates.cli import main

    name, specials, eos = VERIFY[fixture]
    assert detect_template(chat_template(fixture)) == name
    folder = make_tokenizer_folder(
        tmp_path / "tok", chat_template_text=chat_template(fixture), special_tokens=specials, eos_token=eos,
        extra={"pad_token": specials[0]},
    )
    code = main(["verify", str(folder), "--template", "auto", "--json"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["template"] == json.dumps(name)
    assert code == 0 and data["passed"], out + err
    assert "pass" in {c["status"] for c in data["cases"]}
    assert "fail" not in {c["status"] for c in data["cases"]}


@pytest.mark.parametrize(
    "fixture,wrong",
    [
        # the native-id retry must not let a template without the Kimi call syntax pass
        ("moonshotai-Kimi-K2-Thinking.jinja", "qwen3.5"),
        # ids are read back from the header: the K2 Instruct template (no reasoning field) still fails K2 Thinking
        ("moonshotai-Kimi-K2-Thinking.jinja", "kimi-k2"),
        # dropping str()-rendered arguments must not let a template with another call syntax pass
        ("ByteDance-Seed-Seed-OSS-36B-Instruct.jinja", "qwen3.5"),
    ],
)
def test_verify_retries_never_pass_a_wrong_template(fixture: str, wrong: str) -> None:
    from hf_response_templates.upgrade import verify_chat_template

    verification = verify_chat_template(chat_template(fixture), get_template(wrong), label=wrong)
    assert not verification.passed
    assert verification.failures()
