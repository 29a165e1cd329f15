"""Raw outputs of the families added in issue 16 by group g3, and the CLI's ``verify --template auto`` on a
local tokenizer folder built from each of their fixture chat templates.

The raw outputs are the way each model emits them. Where a peer's parser tests hold model output, the case
transcribes it and names the source file and test (vLLM 0.33.0, ``tests/tool_parsers/...``, and the docs
``docs/features/tool_calling.md``): the model text and the expected values are facts taken from there; the
code is ours. Cases without a named source are written in the form the family's chat template asks the model
for (its tool-calling instructions) or renders in history. Every case runs one-shot and streamed one character
at a time, and streamed in random chunkings (hypothesis): all must give the same message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _chat_render import FIXTURES, TOOLS
from _cli_helpers import make_tokenizer_folder
from _raw_output_checks import assert_verify_auto_passes, cut, streamed, tokenizer_folder
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled

from hf_response_templates import parse_response
from hf_response_templates.cli import main
from hf_response_templates.library import detect_template, get_template


def call(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


# --------------------------------------------------------------------------- prompts (what the chat templates render)

INTERNLM2_PROMPT = (
    '<s><|im_start|>system name=<|plugin|>\n[{"name": "get_weather", ...}]<|im_end|>\n'
    "<|im_start|>user\nWeather in Tokyo?<|im_end|>\n<|im_start|>assistant\n"
)
FUNCTIONGEMMA_PROMPT = (
    "<start_of_turn>user\nYou are a helpful assistant.\n\nAvailable functions:\n\nFunction: get_weather\n...<end_of_turn>"
    "<start_of_turn>user\nWeather in London?<end_of_turn><start_of_turn>model"
)
LLAMA32_PROMPT = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: "
    "December 2023\nToday Date: 26 Jul 2024\n\nYou have access to the following functions. To call functions, please "
    "respond with a python list of the calls. ...<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
    "Weather in San Francisco?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
)
STEP35_PROMPT = (
    "<|im_start|>system\n# Tools\n\nYou have access to the following functions in JSONSchema format:\n\n<tools>...</tools>"
    "...<|im_end|>\n<|im_start|>user\nWeather in Dallas?<|im_end|>\n<|im_start|>assistant\n<think>\n"
)
DEEPSEEK_V4_PROMPT = (
    "<｜begin▁of▁sentence｜>## Tools\n\nYou have access to a set of tools ... <｜User｜>Weather in Beijing?<｜Assistant｜><think>"
)
DEEPSEEK_V4_NO_THINKING_PROMPT = "<｜begin▁of▁sentence｜>## Tools\n\n...<｜User｜>Weather in Beijing?<｜Assistant｜></think>"
KIMI_K3_PROMPT = (
    '<|open|>message role="system" type="tool-declare"<|sep|># Tools\n...<|close|>message<|sep|><|end_of_msg|>'
    '<|open|>message role="user"<|sep|>Run it.<|close|>message<|sep|><|end_of_msg|>'
    '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>'
)
KIMI_K3_NO_THINKING_PROMPT = (
    '<|open|>message role="user"<|sep|>Hi<|close|>message<|sep|><|end_of_msg|>'
    '<|open|>message role="assistant"<|sep|><|open|>response<|sep|>'
)
GEMMA3_PROMPT = (
    "<bos><start_of_turn>user\nTools (functions) are available. If you decide to invoke one or more of the tools, you "
    "must respond with a python list of the function calls.\nExample Format: [func_name1(params_name1=params_value1, "
    "params_name2=params_value2...), func_name2(params)] \n...\n\nWeather in San Francisco?<end_of_turn>\n"
    "<start_of_turn>model\n"
)

#: the tools of the request: the shared TOOLS plus the ones vLLM's parser tests call (typing is by these schemas)
G3_TOOLS: list[dict] = [
    *TOOLS,
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Current time.",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_counter",
            "description": "Set a counter.",
            "parameters": {
                "type": "object",
                "properties": {"count": {"type": "integer"}, "enabled": {"type": "boolean"},
                               "message": {"type": "string"}},
            },
        },
    },
    # the tool of the format example in vLLM's vllm/tool_parsers/kimi_k3_tool_parser.py (module docstring)
    {
        "type": "function",
        "function": {
            "name": "python",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "opts": {"type": "object"}}},
        },
    },
    # vLLM tests/tool_parsers/test_deepseekv4_tool_parser.py, test_streaming_emits_incremental_argument_chunks
    {
        "type": "function",
        "function": {
            "name": "plan_trip",
            "parameters": {
                "type": "object",
                "properties": {"days": {"type": "integer"}, "flexible": {"type": "boolean"},
                               "cities": {"type": "array", "items": {"type": "string"}}, "notes": {"type": "string"}},
            },
        },
    },
    # vLLM tests/tool_parsers/test_step3p5_tool_parser.py, sample_tools
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city name"},
                    "state": {"type": "string", "description": "The state code"},
                    "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]},
                },
                "required": ["city", "state"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculate_area",
            "description": "Calculate area of a shape",
            "parameters": {
                "type": "object",
                "properties": {"shape": {"type": "string"}, "dimensions": {"type": "object"},
                               "precision": {"type": "integer"}},
            },
        },
    },
]

# (case id, template name, prefix, raw model output, expected message)
CASES: list[tuple[str, str, str, str, dict]] = [
    # ---------------------------------------------------------------- InternLM2.5
    (
        # vLLM tests/tool_parsers/test_internlm2_tool_parser.py, TestInternLM2ToolParser: no_tool_calls_output
        "internlm2-no-tool-calls",
        "internlm2",
        INTERNLM2_PROMPT,
        "This is a regular response without any tool calls.<|im_end|>",
        {"role": "assistant", "content": "This is a regular response without any tool calls."},
    ),
    (
        # same file and class: single_tool_call_output (expected name, args, content None)
        "internlm2-single",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|><|im_end|>',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Tokyo"})]},
    ),
    (
        # same: various_data_types_output (test_function is not in TOOLS: values are kept as written)
        "internlm2-various-types",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{\n  "name": "test_function",\n  "parameters": {\n    "string_field": "hello",\n'
        '    "int_field": 42,\n    "float_field": 3.14,\n    "bool_field": true,\n    "null_field": null,\n'
        '    "array_field": ["a", "b", "c"],\n    "object_field": {"nested": "value"},\n    "empty_array": [],\n'
        '    "empty_object": {}\n  }\n}<|action_end|>',
        {
            "role": "assistant",
            "tool_calls": [
                call(
                    "test_function",
                    {
                        "string_field": "hello",
                        "int_field": 42,
                        "float_field": 3.14,
                        "bool_field": True,
                        "null_field": None,
                        "array_field": ["a", "b", "c"],
                        "object_field": {"nested": "value"},
                        "empty_array": [],
                        "empty_object": {},
                    },
                )
            ],
        },
    ),
    (
        # same: empty_arguments_output
        "internlm2-empty-arguments",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{"name": "refresh", "parameters": {}}<|action_end|>',
        {"role": "assistant", "tool_calls": [call("refresh", {})]},
    ),
    (
        # same: surrounding_text_output
        "internlm2-surrounding-text",
        "internlm2",
        INTERNLM2_PROMPT,
        'Let me check the weather for you. <|action_start|><|plugin|>{"name": "get_weather", '
        '"parameters": {"city": "Tokyo"}}<|action_end|>',
        {
            "role": "assistant",
            "content": "Let me check the weather for you.",
            "tool_calls": [call("get_weather", {"city": "Tokyo"})],
        },
    ),
    (
        # same: escaped_strings_output
        "internlm2-escaped-strings",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{\n  "name": "test_function",\n  "parameters": {\n'
        '    "quoted": "He said \\"hello\\"",\n    "path": "C:\\\\Users\\\\file.txt",\n'
        '    "newline": "line1\\nline2",\n    "unicode": "emoji: 🎉"\n  }\n}<|action_end|>',
        {
            "role": "assistant",
            "tool_calls": [
                call(
                    "test_function",
                    {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt", "newline": "line1\nline2",
                     "unicode": "emoji: 🎉"},
                )
            ],
        },
    ),
    (
        # same file, test_streaming_arguments_in_single_delta (the two deltas joined)
        "internlm2-dallas",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Dallas", "state": "TX"}}'
        "<|action_end|>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Dallas", "state": "TX"})]},
    ),
    (
        # same file, test_streaming_arguments_match_final_arguments ("location" is not in TOOLS' schema)
        "internlm2-beijing",
        "internlm2",
        INTERNLM2_PROMPT,
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"location": "Beijing", "days": 3}}'
        "<|action_end|>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"location": "Beijing", "days": 3})]},
    ),
    (
        # the chat template's own form: a newline after <|plugin|>, "arguments", two calls back to back
        "internlm2-chat-template-form",
        "internlm2",
        INTERNLM2_PROMPT,
        'Checking both.<|action_start|><|plugin|>\n{"name": "get_weather", "arguments": {"city": "Tokyo", "days": 2}}'
        '<|action_end|><|action_start|><|plugin|>\n{"name": "search", "arguments": {"query": "} <|im_end|>"}}'
        "<|action_end|><|im_end|>",
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [call("get_weather", {"city": "Tokyo", "days": 2}), call("search", {"query": "} <|im_end|>"})],
        },
    ),
]

CASES += [
    # ---------------------------------------------------------------- FunctionGemma
    (
        # vLLM tests/tool_parsers/test_functiongemma_tool_parser.py, TestExtractToolCalls.test_no_tool_calls
        "functiongemma-no-tool-calls",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "Hello, how can I help you today?<end_of_turn>",
        {"role": "assistant", "content": "Hello, how can I help you today?"},
    ),
    (
        # same file, test_single_tool_call ("location" is not in get_weather's schema: kept as text)
        "functiongemma-single",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"location": "London"})]},
    ),
    (
        # same file, test_multiple_arguments
        "functiongemma-multiple-arguments",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "<start_function_call>call:get_weather{location:<escape>San Francisco<escape>,unit:<escape>celsius<escape>}"
        "<end_function_call>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"location": "San Francisco", "unit": "celsius"})]},
    ),
    (
        # same file, test_text_before_tool_call (expected content "Let me check the weather for you.")
        "functiongemma-text-before",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>Paris<escape>}"
        "<end_function_call>",
        {
            "role": "assistant",
            "content": "Let me check the weather for you.",
            "tool_calls": [call("get_weather", {"location": "Paris"})],
        },
    ),
    (
        # same file, test_multiple_tool_calls
        "functiongemma-two-calls",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>"
        "<start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>",
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"location": "London"}), call("get_time", {"timezone": "UTC"})],
        },
    ),
    (
        # same file, TestParseArguments: test_numeric_argument, test_boolean_argument, test_argument_with_spaces
        # (their argument strings, in one call to a tool whose schema types them: 42, True, "Hello World")
        "functiongemma-typed-arguments",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "<start_function_call>call:set_counter{count:<escape>42<escape>,enabled:<escape>true<escape>,"
        "message:<escape>Hello World<escape>}<end_function_call><end_of_turn>",
        {"role": "assistant", "tool_calls": [call("set_counter", {"count": 42, "enabled": True,
                                                                  "message": "Hello World"})]},
    ),
    (
        # same file, TestParseArguments.test_empty_arguments (an empty argument list)
        "functiongemma-empty-arguments",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        "<start_function_call>call:get_time{}<end_function_call>",
        {"role": "assistant", "tool_calls": [call("get_time", {})]},
    ),
    (
        # vLLM docs/features/tool_calling.md, "FunctionGemma Models": the output format shown there; a string
        # value keeps its braces, quotes and newlines (text between the <escape> markers is verbatim)
        "functiongemma-docs-verbatim-string",
        "functiongemma",
        FUNCTIONGEMMA_PROMPT,
        '<start_function_call>call:search{query:<escape>{"a": 1}, it\'s\n"quoted"<escape>}<end_function_call>',
        {"role": "assistant", "tool_calls": [call("search", {"query": '{"a": 1}, it\'s\n"quoted"'})]},
    ),
]

# vLLM tests/tool_parsers/test_pythonic_tool_parser.py transcribes these outputs from Meta's Llama 3.2 prompt format
# ("llama-models/models/llama3_2/text_prompt_format.md#model-response-format-1"), the format vLLM's Llama 3.2
# pythonic chat template asks for. Each case below names the constant of that file it takes.
_PY_SIMPLE = "get_weather(city='San Francisco', metric='celsius')"  # SIMPLE_FUNCTION_OUTPUT
_PY_SIMPLE_CALL = call("get_weather", {"city": "San Francisco", "metric": "celsius"})
_PY_MORE_TYPES = (  # MORE_TYPES_FUNCTION_OUTPUT
    "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, "
    "passed_test=True, aliases=['John', 'Johnny'])"
)
_PY_MORE_TYPES_CALL = call(
    "register_user",
    {"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"}, "role": None,
     "passed_test": True, "aliases": ["John", "Johnny"]},
)
CASES += [
    # ---------------------------------------------------------------- Llama 3.2 (pythonic)
    (
        # vLLM tests/tool_parsers/test_pythonic_tool_parser.py, test_no_tool_call
        "llama3.2-no-tool-call",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        "How can I help you today?<|eot_id|>",
        {"role": "assistant", "content": "How can I help you today?"},
    ),
    (
        # same file, TEST_CASES "simple_nonstreaming"
        "llama3.2-simple",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        f"[{_PY_SIMPLE}]<|eot_id|>",
        {"role": "assistant", "tool_calls": [_PY_SIMPLE_CALL]},
    ),
    (
        # same, "more_types_nonstreaming"
        "llama3.2-more-types",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        f"[{_PY_MORE_TYPES}]<|eot_id|>",
        {"role": "assistant", "tool_calls": [_PY_MORE_TYPES_CALL]},
    ),
    (
        # same, "parameterless_nonstreaming" (PARAMETERLESS_FUNCTION_OUTPUT)
        "llama3.2-parameterless",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        "[get_weather()]<|eot_id|>",
        {"role": "assistant", "tool_calls": [call("get_weather", {})]},
    ),
    (
        # same, "empty_dict_nonstreaming" and "empty_list_nonstreaming" (EMPTY_DICT/EMPTY_LIST_FUNCTION_OUTPUT),
        # here as two calls of one list
        "llama3.2-empty-dict-and-list",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        "[do_something_cool(additional_data={}), do_something_cool(steps=[])]<|eot_id|>",
        {
            "role": "assistant",
            "tool_calls": [call("do_something_cool", {"additional_data": {}}), call("do_something_cool", {"steps": []})],
        },
    ),
    (
        # same, "escaped_string_nonstreaming" (ESCAPED_STRING_FUNCTION_OUTPUT)
        "llama3.2-escaped-string",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        r"""[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]<|eot_id|>""",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Martha's Vineyard",
                                                                  "metric": '"cool units"'})]},
    ),
    (
        # same, "parallel_calls_nonstreaming"
        "llama3.2-parallel",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        f"[{_PY_SIMPLE}, {_PY_MORE_TYPES}]<|eot_id|>",
        {"role": "assistant", "tool_calls": [_PY_SIMPLE_CALL, _PY_MORE_TYPES_CALL]},
    ),
    (
        # same file, test_streaming_tool_call_with_large_steps (its deltas joined), ended by <|eom_id|> and typed
        # by the tools' schemas
        "llama3.2-large-steps-eom",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        "[get_weather(city='San Francisco', metric='celsius'), get_weather(), do_something_cool(steps=[])]<|eom_id|>",
        {
            "role": "assistant",
            "tool_calls": [_PY_SIMPLE_CALL, call("get_weather", {}), call("do_something_cool", {"steps": []})],
        },
    ),
    (
        # brackets later in an answer are content: calls are recognised only at the start of the generation
        "llama3.2-brackets-in-content",
        "llama3.2-pythonic",
        LLAMA32_PROMPT,
        "Call it like this: [get_weather(city='Paris')]<|eot_id|>",
        {"role": "assistant", "content": "Call it like this: [get_weather(city='Paris')]"},
    ),
]

_STEP35_DALLAS = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n"
    "</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
)
_STEP35_DALLAS_CALL = call("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})
CASES += [
    # ---------------------------------------------------------------- Step 3.5 Flash (the qwen3.5 template)
    (
        # vLLM tests/tool_parsers/test_step3p5_tool_parser.py, test_extract_tool_calls "single_tool_with_content",
        # after reasoning closed by </think> (tests/reasoning/test_step3p5_reasoning_parser.py, the prompt opens
        # <think>: "This is a reasoning section</think>This is the rest")
        "step3.5-reasoning-content-call",
        "qwen3.5",
        STEP35_PROMPT,
        "This is a reasoning section</think>Sure! Let me check the weather for you." + _STEP35_DALLAS + "<|im_end|>",
        {
            "role": "assistant",
            "reasoning_content": "This is a reasoning section",
            "content": "Sure! Let me check the weather for you.",
            "tool_calls": [_STEP35_DALLAS_CALL],
        },
    ),
    (
        # test_step3p5_tool_parser.py, test_extract_tool_calls "single_tool_multiline_param" (typed by
        # sample_tools: dimensions an object, precision an integer)
        "step3.5-multiline-param",
        "qwen3.5",
        STEP35_PROMPT,
        "Area.\n</think>\n<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n'
        "</parameter>\n</function>\n</tool_call>",
        {
            "role": "assistant",
            "reasoning_content": "Area.",
            "tool_calls": [call("calculate_area", {"shape": "rectangle", "dimensions": {"width": 10, "height": 20},
                                                   "precision": 2})],
        },
    ),
    (
        # test_step3p5_tool_parser.py, test_extract_tool_calls "parallel_tools"
        "step3.5-parallel",
        "qwen3.5",
        STEP35_PROMPT,
        "</think>" + _STEP35_DALLAS + "\n" + _STEP35_DALLAS.replace("Dallas", "Orlando").replace("TX", "FL"),
        {
            "role": "assistant",
            "tool_calls": [_STEP35_DALLAS_CALL,
                           call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"})],
        },
    ),
    (
        # tests/reasoning/test_step3p5_reasoning_parser.py, the case "\n This is a \n reasoning section\n\n\n</think>
        # \n\nThis is the rest" (reasoning and content, both stripped)
        "step3.5-reasoning-newlines",
        "qwen3.5",
        STEP35_PROMPT,
        "\n This is a \n reasoning section\n\n\n</think>\n\nThis is the rest<|im_end|>",
        {"role": "assistant", "reasoning_content": "This is a \n reasoning section", "content": "This is the rest"},
    ),
]

_DSML_SEARCH = (  # test_deepseekv4_tool_parser.py, build_tool_call("search", {"query": "vllm"})
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="query" string="true">vllm'
    "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)
CASES += [
    # ---------------------------------------------------------------- DeepSeek V4
    (
        # vLLM tests/tool_parsers/test_deepseekv4_tool_parser.py, test_extract_tool_calls (after reasoning: the
        # prompt opens <think>)
        "deepseek-v4-content-and-call",
        "deepseek-v4",
        DEEPSEEK_V4_PROMPT,
        "The user wants the weather.</think>Let me check. <｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
        '<｜DSML｜parameter name="location" string="true">Beijing</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="unit" string="true">celsius</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
        "</｜DSML｜tool_calls><｜end▁of▁sentence｜>",
        {
            "role": "assistant",
            "reasoning_content": "The user wants the weather.",
            "content": "Let me check.",
            "tool_calls": [call("get_weather", {"location": "Beijing", "unit": "celsius"})],
        },
    ),
    (
        # same file, test_missing_tool_calls_wrapper_is_recovered (the model omits <｜DSML｜tool_calls>)
        "deepseek-v4-missing-wrapper",
        "deepseek-v4",
        DEEPSEEK_V4_NO_THINKING_PROMPT,
        _DSML_SEARCH.replace("<｜DSML｜tool_calls>\n", ""),
        {"role": "assistant", "tool_calls": [call("search", {"query": "vllm"})]},
    ),
    (
        # same file, test_streaming_extracts_complete_invokes
        "deepseek-v4-search",
        "deepseek-v4",
        DEEPSEEK_V4_NO_THINKING_PROMPT,
        _DSML_SEARCH.replace("vllm", "deepseek v4"),
        {"role": "assistant", "tool_calls": [call("search", {"query": "deepseek v4"})]},
    ),
    (
        # same file, test_streaming_emits_incremental_argument_chunks (typed by its plan_trip schema)
        "deepseek-v4-typed-arguments",
        "deepseek-v4",
        DEEPSEEK_V4_PROMPT,
        "Plan it.</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"plan_trip\">\n"
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="flexible" string="false">false</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="cities" string="false">["Beijing","Shanghai","Tokyo","New York"]</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="notes" string="true">靠窗座位</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
        {
            "role": "assistant",
            "reasoning_content": "Plan it.",
            "tool_calls": [call("plan_trip", {"days": 3, "flexible": False,
                                              "cities": ["Beijing", "Shanghai", "Tokyo", "New York"],
                                              "notes": "靠窗座位"})],
        },
    ),
    (
        # thinking off: the prompt already closed the reasoning; a plain answer
        "deepseek-v4-no-thinking-content",
        "deepseek-v4",
        DEEPSEEK_V4_NO_THINKING_PROMPT,
        "It is sunny in Beijing.<｜end▁of▁sentence｜>",
        {"role": "assistant", "content": "It is sunny in Beijing."},
    ),
]

CASES += [
    # ---------------------------------------------------------------- Kimi K3 (XTML)
    (
        # vLLM 0.33.0 vllm/tool_parsers/kimi_k3_tool_parser.py, the module docstring's format example (indented as
        # written there), after reasoning and an empty response channel; typed by the "python" tool's schema
        "kimi-k3-docstring-example",
        "kimi-k3",
        KIMI_K3_PROMPT,
        "I will run it.<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>"
        '<|open|>tools<|sep|>\n  <|open|>call tool="python" index="1"<|sep|>\n'
        '    <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>\n'
        '    <|open|>argument key="opts" type="object"<|sep|>{"a":1}<|close|>argument<|sep|>\n'
        "  <|close|>call<|sep|>\n<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        {
            "role": "assistant",
            "reasoning_content": "I will run it.",
            "tool_calls": [call("python", {"code": "print(1)", "opts": {"a": 1}})],
        },
    ),
    (
        # vLLM tests/reasoning/test_kimi_k3_reasoning_parser.py: the think channel closed, then
        # f"{RESPONSE_OPEN}answer" (the test of a close marker split over deltas)
        "kimi-k3-reasoning-then-answer",
        "kimi-k3",
        KIMI_K3_PROMPT,
        "Let me think.<|close|>think<|sep|><|open|>response<|sep|>answer<|close|>response<|sep|><|close|>message<|sep|>"
        "<|end_of_msg|>",
        {"role": "assistant", "reasoning_content": "Let me think.", "content": "answer"},
    ),
    (
        # same file, test_thinking_disabled_streams_content: the prompt opened the response channel
        "kimi-k3-thinking-disabled",
        "kimi-k3",
        KIMI_K3_NO_THINKING_PROMPT,
        "answer<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>",
        {"role": "assistant", "content": "answer"},
    ),
    (
        # the chat template's form: two calls, typed values (number, boolean, array), a raw string with quotes
        "kimi-k3-two-calls-typed",
        "kimi-k3",
        KIMI_K3_PROMPT,
        "<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>'
        'Rio "de" Janeiro<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument'
        '<|sep|><|open|>argument key="metric" type="boolean"<|sep|>true<|close|>argument<|sep|><|close|>call<|sep|>'
        '<|open|>call tool="search" index="2"<|sep|><|open|>argument key="query" type="string"<|sep|>rain'
        '<|close|>argument<|sep|><|open|>argument key="tags" type="array"<|sep|>["a","b"]<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [call("get_weather", {"city": 'Rio "de" Janeiro', "days": 3, "metric": True}),
                           call("search", {"query": "rain", "tags": ["a", "b"]})],
        },
    ),
]

CASES += [
    # ---------------------------------------------------------------- Gemma 3 (pythonic, vLLM's template)
    (
        # the pythonic format of vLLM's pythonic parser tests (SIMPLE_FUNCTION_OUTPUT, above), which this chat
        # template's "Example Format" asks for
        "gemma3-simple",
        "gemma3-pythonic",
        GEMMA3_PROMPT,
        f"[{_PY_SIMPLE}]<end_of_turn>",
        {"role": "assistant", "tool_calls": [_PY_SIMPLE_CALL]},
    ),
    (
        # vLLM tests/tool_parsers/test_pythonic_tool_parser.py, "parallel_calls_nonstreaming"
        "gemma3-parallel",
        "gemma3-pythonic",
        GEMMA3_PROMPT,
        f"[{_PY_SIMPLE}, {_PY_MORE_TYPES}]<end_of_turn>",
        {"role": "assistant", "tool_calls": [_PY_SIMPLE_CALL, _PY_MORE_TYPES_CALL]},
    ),
    (
        # the chat template's own form: JSON values (tojson), content written right after the "]"
        "gemma3-calls-then-content",
        "gemma3-pythonic",
        GEMMA3_PROMPT,
        '[get_weather(city="Paris", days=3), search(query="rain", tags=["a", "b"], options={"x": null})]'
        "Here you go.<end_of_turn>",
        {
            "role": "assistant",
            "content": "Here you go.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 3}),
                           call("search", {"query": "rain", "tags": ["a", "b"], "options": {"x": None}})],
        },
    ),
    (
        # the system text asks the model to point out when no function fits: plain content
        "gemma3-no-call",
        "gemma3-pythonic",
        GEMMA3_PROMPT,
        "None of the functions can tell the time.<end_of_turn>",
        {"role": "assistant", "content": "None of the functions can tell the time."},
    ),
    (
        # a call list later in the text is content: calls are recognised only at the start of the generation
        "gemma3-brackets-in-content",
        "gemma3-pythonic",
        GEMMA3_PROMPT,
        'Write [get_weather(city="Paris")] to call it.<end_of_turn>',
        {"role": "assistant", "content": 'Write [get_weather(city="Paris")] to call it.'},
    ),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert parse_response(output, get_template(name), prefix=prefix, tools=G3_TOOLS) == expected


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output_streamed_char_by_char(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert streamed(name, prefix, list(output), G3_TOOLS) == expected


@settings(max_examples=scaled(60), deadline=None, database=None)
@given(data=st.data())
def test_raw_output_any_chunking(data: st.DataObject) -> None:
    """Streaming equals one-shot for any chunking of every raw output above."""
    _case_id, name, prefix, output, expected = data.draw(st.sampled_from(CASES))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(output) - 1)), max_size=12)))
    assert streamed(name, prefix, cut(output, cuts), G3_TOOLS) == expected


# --------------------------------------------------------------------------- detection and `verify --template auto`

#: fixture -> (template detection must name, special tokens of the tokenizer, bos, eos)
VERIFY_FOLDERS: dict[str, tuple[str, tuple[str, ...], str | None, str]] = {
    "vllm-google-functiongemma-270m-it.jinja": (
        "functiongemma",
        ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<start_function_call>", "<end_function_call>",
         "<escape>"),
        "<bos>",
        "<end_of_turn>",
    ),
    "vllm-meta-llama-Llama-3.2-pythonic.jinja": (
        "llama3.2-pythonic",
        ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"),
        "<|begin_of_text|>",
        "<|eot_id|>",
    ),
    "vllm-meta-llama-Llama-3.2-json.jinja": (
        "llama3",
        ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"),
        "<|begin_of_text|>",
        "<|eot_id|>",
    ),
    "stepfun-ai-Step-3.5-Flash.jinja": (
        "qwen3.5",
        ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>",
         "</tool_response>"),
        None,
        "<|im_end|>",
    ),
    "deepseek-ai-DeepSeek-V4.jinja": (
        "deepseek-v4",
        ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>", "</think>"),
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
    ),
    "moonshotai-Kimi-K3.jinja": (
        "kimi-k3",
        ("<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"),
        None,
        "<|end_of_msg|>",
    ),
    "meta-llama-Llama-3.2-3B-Instruct.jinja": (
        "llama3",
        ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"),
        "<|begin_of_text|>",
        "<|eot_id|>",
    ),
    "vllm-google-gemma-3-it-pythonic.jinja": (
        "gemma3-pythonic",
        ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"),
        "<bos>",
        "<end_of_turn>",
    ),
    "vllm-internlm-internlm2_5-7b-chat.jinja": (
        "internlm2",
        ("<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|action_start|>", "<|action_end|>", "<|plugin|>",
         "<|interpreter|>"),
        "<s>",
        "<|im_end|>",
    ),
}


@pytest.mark.parametrize("fixture", sorted(VERIFY_FOLDERS))
def test_fixture_detects_as_its_own_family(fixture: str) -> None:
    assert detect_template((FIXTURES / fixture).read_text(encoding="utf-8")) == VERIFY_FOLDERS[fixture][0]


def _tokenizer_folder(folder: Path, fixture: str) -> Path:
    _name, specials, bos, eos = VERIFY_FOLDERS[fixture]
    return tokenizer_folder(folder, fixture, specials, bos, eos)


@pytest.mark.parametrize("fixture", sorted(VERIFY_FOLDERS))
def test_cli_verify_auto_passes(fixture: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert_verify_auto_passes(_tokenizer_folder(tmp_path / "tok", fixture), VERIFY_FOLDERS[fixture][0], capsys)


def test_verify_marks_bare_string_arguments_not_applicable(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's Llama 3.2 pythonic template prints every argument with "%s" (city=Paris): no parser can read such a
    call back, so the tool-call cases are n/a with the reason, while content and the turn after tool results are
    checked. The rule needs that bare KEY=VALUE form: a chat template that quotes strings and whose calls fail to
    parse (xLAM's JSON array read as a pythonic list) still fails."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _tokenizer_folder(tmp_path / "tok", "vllm-meta-llama-Llama-3.2-pythonic.jinja")
    assert main(["verify", str(folder), "--json"]) == 0
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call"]["status"] == "n/a"
    assert "bare words without quotes" in cases["tool_call"]["detail"]
    assert cases["content"]["status"] == "pass" and cases["tool_result_then_answer"]["status"] == "pass"
    folder = make_tokenizer_folder(
        tmp_path / "tok2",
        chat_template_text=(FIXTURES / "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja").read_text(encoding="utf-8"),
        special_tokens=("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>"),
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
    )
    assert main(["verify", str(folder), "--template", "llama3.2-pythonic", "--json"]) == 1
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call"]["status"] == "fail"


def test_verify_marks_unseparated_arguments_not_applicable(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's Gemma 3 pythonic template writes `get_weather(city="Paris"days=3)` (its separator flag is set inside
    the loop body, where Jinja scoping drops it): a call with several arguments is n/a with the reason, while content
    is checked. A chat template that separates arguments and whose calls fail to parse still fails."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _tokenizer_folder(tmp_path / "tok", "vllm-google-gemma-3-it-pythonic.jinja")
    assert main(["verify", str(folder), "--json"]) == 0
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call"]["status"] == "n/a"
    assert "no separator" in cases["tool_call"]["detail"]
    assert cases["content"]["status"] == "pass"
    folder = _tokenizer_folder(tmp_path / "tok2", "vllm-google-functiongemma-270m-it.jinja")
    assert main(["verify", str(folder), "--template", "gemma3-pythonic", "--json"]) == 1
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call"]["status"] == "fail"
