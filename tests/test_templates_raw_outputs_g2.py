"""Raw outputs of the 2025-2026 families added in issue 16 (group g2), and the CLI's ``verify --template auto``
on a local tokenizer folder built from each of their fixture chat templates.

The raw outputs are the way each model emits them. Where a peer's parser tests hold model output, the case
transcribes it and names the source file and test (mostly vLLM 0.33.0, ``tests/tool_parsers/...``; a few
other public sources are named where used): the model text and the expected values are facts taken from
there; the code is ours. Cases without a named source are written in the form the family's chat template
asks the model for (its tool-calling instructions) or renders in history. Every case runs one-shot and
streamed one character at a time, and streamed in random chunkings (hypothesis): all must give the same
message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _chat_render import FIXTURES, TOOLS
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

LLAMA4_PROMPT = (
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nYou are a helpful assistant.<|eot|>"
    "<|header_start|>user<|header_end|>\n\nWeather in Paris?<|eot|><|header_start|>assistant<|header_end|>\n\n"
)
LLAMA4_JSON_PROMPT = (
    "<|begin_of_text|><|header_start|>system<|header_end|>\n\nYou are a helpful assistant with tool calling "
    "capabilities. ...\n<|eot|>\n<|header_start|>user<|header_end|>\n\nTools: You have access to the following "
    "tools. ...\n\nWeather in Paris?\n<|eot|>\n<|header_start|>assistant<|header_end|>\n\n"
)
MINISTRAL3_PROMPT = (
    "<s>[SYSTEM_PROMPT]# HOW YOU SHOULD THINK AND ANSWER\n\n...[THINK]Your thoughts...[/THINK]Here, provide a "
    "self-contained response.[/SYSTEM_PROMPT][AVAILABLE_TOOLS][...][/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST]"
)
MISTRAL31_PROMPT = (
    "<s>[SYSTEM_PROMPT]You are a helpful assistant that can call tools. ...[/SYSTEM_PROMPT]"
    '[AVAILABLE_TOOLS] [{"type": "function", "function": {...}}][/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST]'
)
GRANITE4_PROMPT = (
    "<|start_of_role|>system<|end_of_role|>You are a helpful assistant with access to the following tools. ..."
    "<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Weather in Paris?<|end_of_text|>\n"
    "<|start_of_role|>assistant<|end_of_role|>"
)
PHI4_PROMPT = (
    '<|system|>You are a helpful assistant.<|tool|>[{"name": "get_weather", ...}]<|/tool|><|end|>'
    "<|user|>Weather in Tokyo?<|end|><|assistant|>"
)
LFM2_PROMPT = (
    "<|startoftext|><|im_start|>system\nList of tools: [...]<|im_end|>\n<|im_start|>user\nWeather in Paris?"
    "<|im_end|>\n<|im_start|>assistant\n"
)
XLAM_LLAMA_PROMPT = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant. You are developed "
    "by Salesforce xLAM team.\n...<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWeather in Dallas?"
    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
)
XLAM_QWEN_PROMPT = (
    "<|im_start|>system\nYou are a helpful assistant. You are developed by Salesforce xLAM team.\n...<|im_end|>\n"
    "<|im_start|>user\nWeather in Dallas?<|im_end|>\n<|im_start|>assistant\n"
)
APRIEL_PROMPT = (
    "<s><|system|>\nYou are a thoughtful and systematic AI assistant built by ServiceNow Language Models (SLAM) lab. "
    "... [BEGIN FINAL RESPONSE] ... [END FINAL RESPONSE].\n<|end|>\n<|user|>\nWhat is new in Iran?\n<|end|>\n"
    "<|assistant|>\n"
)
NEMOTRON_V2_PROMPT = (
    "<SPECIAL_10>System\nYou can use the following tools to assist the user if required:\n<AVAILABLE_TOOLS>[...]"
    "</AVAILABLE_TOOLS>\n\n...\n\n<SPECIAL_11>User\nWhat should I charge at a 25% margin on a cost of 200?\n"
    "<SPECIAL_11>Assistant\n"
)
GIGACHAT3_PROMPT = (
    "<s>developer system<|role_sep|>\n<role_description>...<|message_sep|>\n\n"
    "function descriptions<|role_sep|>\nnamespace functions {\n...\n} // namespace functions\n\n<|message_sep|>\n\n"
    "user<|role_sep|>\nRemember that I like short answers.<|message_sep|>\n\nassistant<|role_sep|>\n"
)

# (case id, template name, prefix, raw model output, expected message)
CASES: list[tuple[str, str, str, str, dict]] = [
    # ---------------------------------------------------------------- Llama 4 (pythonic)
    (
        # vLLM tests/tool_parsers/test_llama4_pythonic_tool_parser.py, SIMPLE_FUNCTION_OUTPUT
        "llama4-simple",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        "[get_weather(city='LA', metric='C')]<|eot|>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "LA", "metric": "C"})]},
    ),
    (
        # same file, MORE_TYPES_FUNCTION_OUTPUT (register_user is not in TOOLS: values are kept as written)
        "llama4-more-types",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        "[register_user(name='Doe', age=9, address={'city': 'LA', 'state': 'CA'}, role=None, passed_test=True, "
        "aliases=['John', 'Johnny'])]<|eot|>",
        {
            "role": "assistant",
            "tool_calls": [
                call(
                    "register_user",
                    {
                        "name": "Doe",
                        "age": 9,
                        "address": {"city": "LA", "state": "CA"},
                        "role": None,
                        "passed_test": True,
                        "aliases": ["John", "Johnny"],
                    },
                )
            ],
        },
    ),
    (
        # same file, ESCAPED_STRING_FUNCTION_OUTPUT
        "llama4-escaped-strings",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        r"""[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]<|eot|>""",
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
        },
    ),
    (
        # same file, PYTHON_TAG_FUNCTION_OUTPUT
        "llama4-python-tag",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|><|eom|>",
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "LA", "metric": "C"})]},
    ),
    (
        # same file, test_str / "parallel_calls_streaming": the stream ends without <|python_end|>
        "llama4-parallel-python-tag-cut",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        "<|python_start|>[get_weather(city='LA', metric='C'),register_user(name='Doe', age=9)]",
        {
            "role": "assistant",
            "tool_calls": [
                call("get_weather", {"city": "LA", "metric": "C"}),
                call("register_user", {"name": "Doe", "age": 9}),
            ],
        },
    ),
    (
        # same file, PARAMETERLESS_FUNCTION_OUTPUT; typed by TOOLS: days is an integer
        "llama4-parameterless-and-typed",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        '[get_weather(), get_weather(city="Paris", days="3")]<|eot|>',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {}), call("get_weather", {"city": "Paris", "days": 3})],
        },
    ),
    (
        # same file, test_no_tool_call ("How can I help you today?"); brackets inside text stay content
        "llama4-content",
        "llama4-pythonic",
        LLAMA4_PROMPT,
        "How can I help you today? [Note: get_weather(city) needs a city.]<|eot|>",
        {"role": "assistant", "content": "How can I help you today? [Note: get_weather(city) needs a city.]"},
    ),
    # ---------------------------------------------------------------- Llama 4 (JSON)
    (
        # vLLM tests/tool_parsers/test_llama3_json_tool_parser.py, test_extract_tool_calls_multiple_json (the
        # llama3_json parser, which vLLM's docs list for meta-llama/Llama-4-*): "; "-separated calls
        "llama4-json-multiple",
        "llama4-json",
        LLAMA4_JSON_PROMPT,
        '{"name": "searchTool", "parameters": {"query": "test1"}}; '
        '{"name": "getOpenIncidentsTool", "parameters": {}}; '
        '{"name": "searchTool", "parameters": {"query": "test2"}}<|eot|>',
        {
            "role": "assistant",
            "tool_calls": [
                call("searchTool", {"query": "test1"}),
                call("getOpenIncidentsTool", {}),
                call("searchTool", {"query": "test2"}),
            ],
        },
    ),
    (
        # same file, test_extract_tool_calls_multiple_json_with_whitespace (" ; " between calls)
        "llama4-json-multiple-whitespace",
        "llama4-json",
        LLAMA4_JSON_PROMPT,
        '{"name": "searchTool", "parameters": {"query": "test1"}} ; '
        '{"name": "getOpenIncidentsTool", "parameters": {}} ; '
        '{"name": "searchTool", "parameters": {"query": "test2"}}<|eom|>',
        {
            "role": "assistant",
            "tool_calls": [
                call("searchTool", {"query": "test1"}),
                call("getOpenIncidentsTool", {}),
                call("searchTool", {"query": "test2"}),
            ],
        },
    ),
    (
        # same file, test_extract_tool_calls_with_arguments; the chat template's own form (calls back to back,
        # then "\n<|eot|>"), typed by TOOLS
        "llama4-json-template-form",
        "llama4-json",
        LLAMA4_JSON_PROMPT,
        '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}'
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": "2"}}\n<|eot|>',
        {
            "role": "assistant",
            "tool_calls": [
                call("searchTool", {"query": "test query", "limit": 10}),
                call("get_weather", {"city": "Paris", "days": 2}),
            ],
        },
    ),
    (
        # same file, test_extract_tool_calls_with_arguments_key: "arguments" written instead of "parameters"
        "llama4-json-arguments-key",
        "llama4-json",
        LLAMA4_JSON_PROMPT,
        '{"name": "searchTool", "arguments": {"query": "test"}}<|eot|>',
        {"role": "assistant", "tool_calls": [call("searchTool", {"query": "test"})]},
    ),
    (
        # same file, test_extract_tool_calls_no_json; a JSON object inside text is not a call
        "llama4-json-content",
        "llama4-json",
        LLAMA4_JSON_PROMPT,
        'This is just some text without any tool calls, e.g. {"name": "x"}.\n<|eot|>',
        {"role": "assistant", "content": 'This is just some text without any tool calls, e.g. {"name": "x"}.'},
    ),
    # ---------------------------------------------------------------- Ministral 3 reasoning / Devstral
    (
        "ministral3-think-then-answer",
        "ministral-3",
        MINISTRAL3_PROMPT,
        "[THINK]The user asks about Paris. I have a tool for that, but a general answer is fine.[/THINK]"
        "Paris is mild in spring.</s>",
        {
            "role": "assistant",
            "reasoning_content": "The user asks about Paris. I have a tool for that, but a general answer is fine.",
            "content": "Paris is mild in spring.",
        },
    ),
    (
        # the [TOOL_CALLS]NAME[ARGS]{json} form of vLLM tests/tool_parsers (mistral, tokenizer v11+):
        # one [TOOL_CALLS] per call, nothing between calls
        "ministral3-think-then-parallel-calls",
        "ministral-3",
        MINISTRAL3_PROMPT,
        "[THINK]Two lookups.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\", \"days\": 3}"
        '[TOOL_CALLS]search[ARGS]{"query": "Paris events", "options": {"lang": "fr"}}</s>',
        {
            "role": "assistant",
            "reasoning_content": "Two lookups.",
            "tool_calls": [
                call("get_weather", {"city": "Paris", "days": 3}),
                call("search", {"query": "Paris events", "options": {"lang": "fr"}}),
            ],
        },
    ),
    (
        "devstral-content-then-call",
        "ministral-3",
        "<s>[SYSTEM_PROMPT]You are Devstral, ...[/SYSTEM_PROMPT][AVAILABLE_TOOLS][...][/AVAILABLE_TOOLS]"
        "[INST]List the files.[/INST]",
        'I will list them.[TOOL_CALLS]search[ARGS]{"query": "ls -la", "tags": ["shell"]}</s>',
        {
            "role": "assistant",
            "content": "I will list them.",
            "tool_calls": [call("search", {"query": "ls -la", "tags": ["shell"]})],
        },
    ),
    (
        "ministral3-after-tool-results",
        "ministral-3",
        MINISTRAL3_PROMPT + '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>[TOOL_RESULTS]{"temp": 21}[/TOOL_RESULTS]',
        "[THINK]21 degrees.[/THINK]It is 21 °C in Paris.</s>",
        {"role": "assistant", "reasoning_content": "21 degrees.", "content": "It is 21 °C in Paris."},
    ),
    # ---------------------------------------------------------------- Mistral Small 3.1 (array form)
    (
        # the array form of vLLM's mistral tool parser (pre-v11 tokenizers): [TOOL_CALLS] [{...}, ...]
        "mistral31-parallel-array",
        "mistral-small-3.1",
        MISTRAL31_PROMPT,
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}, '
        '{"name": "search", "arguments": {"query": "Louvre hours"}}]</s>',
        {
            "role": "assistant",
            "tool_calls": [
                call("get_weather", {"city": "Paris", "days": 2}),
                call("search", {"query": "Louvre hours"}),
            ],
        },
    ),
    (
        # the chat template's own history form carries a 9-character id: read, not kept
        "mistral31-array-with-id",
        "mistral-small-3.1",
        MISTRAL31_PROMPT,
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call00001"}]</s>',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris"})]},
    ),
    (
        "mistral31-content",
        "mistral-small-3.1",
        MISTRAL31_PROMPT,
        "I don't have live weather data, but Paris is mild in spring.</s>",
        {"role": "assistant", "content": "I don't have live weather data, but Paris is mild in spring."},
    ),
    # ---------------------------------------------------------------- Granite 4
    (
        # vLLM tests/tool_parsers/test_granite4_tool_parser.py, test_tool_call_parser_complex: text between
        # "<tool_call> {json} </tool_call>" blocks (arguments given as objects here)
        "granite4-text-between-calls",
        "granite-4",
        GRANITE4_PROMPT,
        "Here goes the bbox call: \n"
        '<tool_call> {"name": "find_bbox", "arguments": {"coordinates": [[23.54, 43.1], [-12.2, 54.3], [4, 5]], '
        '"coordinate_type": "latlong"}} </tool_call>'
        " Now the stock price call: \n "
        '<tool_call> {"name": "get_stock_price", "arguments": {"symbol": "AAPL", "start_date": "2021-01-01", '
        '"end_date": "2021-12-31"}} </tool_call>'
        " See? I'm a helpful assistant.<|end_of_text|>",
        {
            "role": "assistant",
            "content": "Here goes the bbox call:\nNow the stock price call:\nSee? I'm a helpful assistant.",
            "tool_calls": [
                call(
                    "find_bbox",
                    {"coordinates": [[23.54, 43.1], [-12.2, 54.3], [4, 5]], "coordinate_type": "latlong"},
                ),
                call("get_stock_price", {"symbol": "AAPL", "start_date": "2021-01-01", "end_date": "2021-12-31"}),
            ],
        },
    ),
    (
        # the form the chat template prompts for: <tool_call>\n{json}\n</tool_call>, newline-separated
        "granite4-parallel-template-form",
        "granite-4",
        GRANITE4_PROMPT,
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "Paris"}}\n</tool_call><|end_of_text|>',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 3}), call("search", {"query": "Paris"})],
        },
    ),
    # ---------------------------------------------------------------- Phi-4-mini (functools[...])
    (
        # vLLM tests/tool_parsers/test_phi4mini_tool_parser.py, single_tool_call_output
        "phi4-single",
        "phi-4-mini",
        PHI4_PROMPT,
        'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]<|end|>',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Tokyo"})]},
    ),
    (
        # same file, parallel_tool_calls_output
        "phi4-parallel",
        "phi-4-mini",
        PHI4_PROMPT,
        'functools[\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n'
        '  {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n]<|end|>',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Tokyo"}), call("get_time", {"timezone": "Asia/Tokyo"})],
        },
    ),
    (
        # same file, various_data_types_output (xfailed there: "regex has nesting limitations")
        "phi4-various-data-types",
        "phi-4-mini",
        PHI4_PROMPT,
        'functools[{\n  "name": "test_function",\n  "arguments": {\n    "string_field": "hello",\n'
        '    "int_field": 42,\n    "float_field": 3.14,\n    "bool_field": true,\n    "null_field": null,\n'
        '    "array_field": ["a", "b", "c"],\n    "object_field": {"nested": "value"},\n    "empty_array": [],\n'
        '    "empty_object": {}\n  }\n}]<|end|>',
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
        # same file, escaped_strings_output
        "phi4-escaped-strings",
        "phi-4-mini",
        PHI4_PROMPT,
        'functools[{\n  "name": "test_function",\n  "arguments": {\n    "quoted": "He said \\"hello\\"",\n'
        '    "path": "C:\\\\Users\\\\file.txt",\n    "newline": "line1\\nline2",\n    "unicode": "emoji: 🎉"\n  }\n}]'
        "<|end|>",
        {
            "role": "assistant",
            "tool_calls": [
                call(
                    "test_function",
                    {
                        "quoted": 'He said "hello"',
                        "path": "C:\\Users\\file.txt",
                        "newline": "line1\nline2",
                        "unicode": "emoji: 🎉",
                    },
                )
            ],
        },
    ),
    (
        # same file, empty_arguments_output; text before the call stays content
        "phi4-text-then-call",
        "phi-4-mini",
        PHI4_PROMPT,
        'Let me check the weather for you.\nfunctools[{"name": "refresh", "arguments": {}}]<|end|>',
        {
            "role": "assistant",
            "content": "Let me check the weather for you.",
            "tool_calls": [call("refresh", {})],
        },
    ),
    (
        # same file, no_tool_calls_output; "functools" not followed by "[" is plain text
        "phi4-content",
        "phi-4-mini",
        PHI4_PROMPT,
        "This is a regular response without any tool calls. Use functools.partial for that.<|end|>",
        {
            "role": "assistant",
            "content": "This is a regular response without any tool calls. Use functools.partial for that.",
        },
    ),
    # ---------------------------------------------------------------- LFM2 / LFM2.5
    (
        # vLLM tests/tool_parsers/test_lfm2_tool_parser.py, SIMPLE_FUNCTION_OUTPUT wrapped by _wrap with
        # content_after (the "content_after_tool_call" case)
        "lfm2-call-then-content",
        "lfm2",
        LFM2_PROMPT,
        "<|tool_call_start|>[get_candidate_status(candidate_id='12345')]<|tool_call_end|>\n"
        "Checking the current status of candidate ID 12345.<|im_end|>",
        {
            "role": "assistant",
            "content": "Checking the current status of candidate ID 12345.",
            "tool_calls": [call("get_candidate_status", {"candidate_id": "12345"})],
        },
    ),
    (
        # same file, MORE_TYPES_FUNCTION_OUTPUT and DOTTED_NAME_FUNCTION_OUTPUT as parallel calls
        "lfm2-more-types-dotted-name",
        "lfm2",
        LFM2_PROMPT,
        "<|tool_call_start|>[register_user(name='John Doe', age=37, address={'city': 'San Francisco', "
        "'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny']), grocery.orderIngredients("
        "ingredientList=[{'name': 'Lasagna noodles', 'amount': 250, 'unit': 'g'}], "
        "deliveryAddress='845 Willow Lane, Springfield, IL 62704')]<|tool_call_end|><|im_end|>",
        {
            "role": "assistant",
            "tool_calls": [
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
                call(
                    "grocery.orderIngredients",
                    {
                        "ingredientList": [{"name": "Lasagna noodles", "amount": 250, "unit": "g"}],
                        "deliveryAddress": "845 Willow Lane, Springfield, IL 62704",
                    },
                ),
            ],
        },
    ),
    (
        # same file, BRACKET_IN_STRING_FUNCTION_OUTPUT and the leading-space case
        # (test_whitespace_before_bracket: "<|tool_call_start|> [...]")
        "lfm2-bracket-in-string",
        "lfm2",
        LFM2_PROMPT,
        "<|tool_call_start|> [exec(command='grep -F \"]\" log.txt')]<|tool_call_end|><|im_end|>",
        {"role": "assistant", "tool_calls": [call("exec", {"command": 'grep -F "]" log.txt'})]},
    ),
    (
        # LFM2.5-8B-A1B thinks in <think>...</think> (the chat template's `thinking`), then calls
        "lfm25-thinking-then-call",
        "lfm2",
        LFM2_PROMPT,
        "<think>The user wants the weather in Paris; get_weather takes a city.</think>"
        "<|tool_call_start|>[get_weather(city='Paris', days=2)]<|tool_call_end|><|im_end|>",
        {
            "role": "assistant",
            "thinking": "The user wants the weather in Paris; get_weather takes a city.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2})],
        },
    ),
    (
        # same file, test_no_tool_call
        "lfm2-content",
        "lfm2",
        LFM2_PROMPT,
        "How can I help you today?<|im_end|>\n",
        {"role": "assistant", "content": "How can I help you today?"},
    ),
    # ---------------------------------------------------------------- xLAM-2
    (
        # vLLM tests/tool_parsers/test_xlam_tool_parser.py, "parallel_tool_calls"
        "xlam-llama-parallel",
        "xlam-llama",
        XLAM_LLAMA_PROMPT,
        '[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}, '
        '{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}]'
        "<|eot_id|>",
        {
            "role": "assistant",
            "tool_calls": [
                call("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}),
                call("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}),
            ],
        },
    ),
    (
        # same file, test_extract_tool_calls_no_tools ("This is a test"); a JSON array later in the text
        # is not a call
        "xlam-llama-content",
        "xlam-llama",
        XLAM_LLAMA_PROMPT,
        'This is a test. Example: [{"name": "x", "arguments": {}}]<|eot_id|>',
        {"role": "assistant", "content": 'This is a test. Example: [{"name": "x", "arguments": {}}]'},
    ),
    (
        # same file, the Seattle case of test_extract_tool_calls_list_structure
        "xlam-qwen-single",
        "xlam-qwen",
        XLAM_QWEN_PROMPT,
        '[{"name": "get_current_weather", "arguments": {"city": "Seattle", "state": "WA", "unit": "celsius"}}]'
        "<|im_end|>\n",
        {
            "role": "assistant",
            "tool_calls": [call("get_current_weather", {"city": "Seattle", "state": "WA", "unit": "celsius"})],
        },
    ),
    (
        "xlam-qwen-content",
        "xlam-qwen",
        XLAM_QWEN_PROMPT,
        "Which state is Dallas in? I need the state to look it up.<|im_end|>",
        {"role": "assistant", "content": "Which state is Dallas in? I need the state to look it up."},
    ),
    # ---------------------------------------------------------------- Apriel 1.5
    (
        # the form of a public Go test of Apriel output parsing (package clanker, TestParseToolCallsFromContent,
        # "with thinking prefix before tool calls"); the header is what the model card says the model starts with
        "apriel-reasoning-then-call",
        "apriel-1.5",
        APRIEL_PROMPT,
        "Here are my reasoning steps:\nThe user wants recent news about Iran. I should search the web.\n"
        '[BEGIN FINAL RESPONSE]\n<tool_calls>[{"name": "web_search", "arguments": {"query": "Iran news 2025"}}]'
        "</tool_calls>\n<|end|>",
        {
            "role": "assistant",
            "reasoning_content": "The user wants recent news about Iran. I should search the web.",
            "tool_calls": [call("web_search", {"query": "Iran news 2025"})],
        },
    ),
    (
        # the end of an Apriel-1.5-15b-Thinker sample output in a public MLX model-check report: the reasoning,
        # then the final response between the markers, then <|end|>
        "apriel-reasoning-then-final",
        "apriel-1.5",
        APRIEL_PROMPT,
        "Here are my reasoning steps:\nThe image shows two cats on a couch. That's it. No need for extra. We'll "
        "comply.\n[BEGIN FINAL RESPONSE]\nTwo tabby cats are curled up sleeping side‑by‑side on a pink couch, with "
        "a TV remote resting nearby.\n[END FINAL RESPONSE]\n<|end|>",
        {
            "role": "assistant",
            "reasoning_content": "The image shows two cats on a couch. That's it. No need for extra. We'll comply.",
            "content": "Two tabby cats are curled up sleeping side‑by‑side on a pink couch, with a TV remote resting "
            "nearby.",
        },
    ),
    (
        # the prompt already ends with the header (the official template's generation prompt); parallel calls
        # with the ids the chat template writes into history (read, not kept), typed by TOOLS
        "apriel-header-in-prompt-parallel-calls",
        "apriel-1.5",
        APRIEL_PROMPT + "Here are my reasoning steps:\n",
        "Two lookups.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"get_weather\", \"arguments\": "
        '{"city": "Paris", "days": "2"}, "id": "call_0"}, {"name": "search", "arguments": {"query": "Paris"}, '
        '"id": "call_1"}]</tool_calls>\n<|end|>',
        {
            "role": "assistant",
            "reasoning_content": "Two lookups.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2}), call("search", {"query": "Paris"})],
        },
    ),
    (
        # an answer without the header stays content (history turns hold only the final response)
        "apriel-plain-answer",
        "apriel-1.5",
        APRIEL_PROMPT,
        "Paris is mild in spring.\n<|end|>\n",
        {"role": "assistant", "content": "Paris is mild in spring."},
    ),
    # ---------------------------------------------------------------- Nemotron Nano v2
    (
        # the call is an OpenRouter response preview of this model family in a public benchmark report
        # ("<TOOLCALL>[{"name": "calculate_margin", ...}]</TOOLCALL>"); the prompt opens <think> (thinking on)
        "nemotron-v2-think-then-call",
        "nemotron-nano-v2",
        NEMOTRON_V2_PROMPT + "<think>\n",
        "The user wants the price at a 25% margin on a cost of 200. I will call calculate_margin.\n</think>\n\n"
        '<TOOLCALL>[{"name": "calculate_margin", "arguments": {"cost": 200, "margin_percentage": 25}}]</TOOLCALL>\n'
        "<SPECIAL_12>\n",
        {
            "role": "assistant",
            "reasoning_content": "The user wants the price at a 25% margin on a cost of 200. I will call "
            "calculate_margin.",
            "tool_calls": [call("calculate_margin", {"cost": 200, "margin_percentage": 25})],
        },
    ),
    (
        # the parallel form the chat template's system prompt asks for, typed by TOOLS
        "nemotron-v2-parallel-calls",
        "nemotron-nano-v2",
        NEMOTRON_V2_PROMPT + "<think>\n",
        "Two lookups.\n</think>\n\n"
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris", "days": "2"}}, '
        '{"name": "search", "arguments": {"query": "Paris events"}}]</TOOLCALL><SPECIAL_12>',
        {
            "role": "assistant",
            "reasoning_content": "Two lookups.",
            "tool_calls": [
                call("get_weather", {"city": "Paris", "days": 2}),
                call("search", {"query": "Paris events"}),
            ],
        },
    ),
    (
        # /no_think: the prompt holds an empty <think></think>, the model answers right away
        "nemotron-v2-no-think",
        "nemotron-nano-v2",
        NEMOTRON_V2_PROMPT + "<think></think>",
        "Paris is mild in spring, around 15 °C.\n<SPECIAL_12>\n",
        {"role": "assistant", "content": "Paris is mild in spring, around 15 °C."},
    ),
    (
        # thinking on, an answer after the reasoning
        "nemotron-v2-think-then-answer",
        "nemotron-nano-v2",
        NEMOTRON_V2_PROMPT + "<think>\n",
        "Spring in Paris: mild.\n</think>\n\nIt is usually mild in spring.\n<SPECIAL_12>\n",
        {"role": "assistant", "reasoning_content": "Spring in Paris: mild.", "content": "It is usually mild in spring."},
    ),
    # ---------------------------------------------------------------- GigaChat 3
    (
        # vLLM tests/tool_parsers/test_gigachat3_tool_parser.py, SIMPLE_FUNCTION_OUTPUT_GIGACHAT3: an empty
        # assistant turn, then the "function call" role turn; the stream ends after the JSON
        "gigachat3-simple",
        "gigachat3",
        GIGACHAT3_PROMPT,
        '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "manage_user_memory", "arguments": '
        '{"action": "create", "id": "preferences"}}',
        {
            "role": "assistant",
            "tool_calls": [call("manage_user_memory", {"action": "create", "id": "preferences"})],
        },
    ),
    (
        # same file, the complex arguments (COMPLEX_ARGS_DICT), ended by </s>; content before the call
        "gigachat3-content-then-call",
        "gigachat3",
        GIGACHAT3_PROMPT,
        "Запомню.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences", "content": '
        '{"short_answers": true, "hate_emojis": true, "english_ui": false, "russian_math_explanations": true}}}</s>',
        {
            "role": "assistant",
            "content": "Запомню.",
            "tool_calls": [
                call(
                    "manage_user_memory",
                    {
                        "action": "create",
                        "id": "preferences",
                        "content": {
                            "short_answers": True,
                            "hate_emojis": True,
                            "english_ui": False,
                            "russian_math_explanations": True,
                        },
                    },
                )
            ],
        },
    ),
    (
        # same file, MIXED_OUTPUT_GIGACHAT3: CONTENT_TEXT, then the simple call
        "gigachat3-mixed",
        "gigachat3",
        GIGACHAT3_PROMPT,
        "I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences"}}',
        {
            "role": "assistant",
            "content": "I'll check that for you.",
            "tool_calls": [call("manage_user_memory", {"action": "create", "id": "preferences"})],
        },
    ),
    (
        # same file, PARAMETERLESS_FUNCTION_OUTPUT_GIGACHAT3
        "gigachat3-parameterless",
        "gigachat3",
        GIGACHAT3_PROMPT,
        '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "manage_user_memory", "arguments": {}}',
        {"role": "assistant", "tool_calls": [call("manage_user_memory", {})]},
    ),
    (
        "gigachat3-content",
        "gigachat3",
        GIGACHAT3_PROMPT,
        "Хорошо, буду отвечать коротко.<|message_sep|>\n\n",
        {"role": "assistant", "content": "Хорошо, буду отвечать коротко."},
    ),
]

IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert parse_response(output, get_template(name), prefix=prefix, tools=TOOLS) == expected


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=IDS)
def test_raw_output_streamed_char_by_char(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    assert streamed(name, prefix, list(output), TOOLS) == expected


@settings(max_examples=scaled(60), deadline=None, database=None)
@given(data=st.data())
def test_raw_output_any_chunking(data: st.DataObject) -> None:
    """Streaming equals one-shot for any chunking of every raw output above."""
    _case_id, name, prefix, output, expected = data.draw(st.sampled_from(CASES))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(output) - 1)), max_size=12)))
    assert streamed(name, prefix, cut(output, cuts), TOOLS) == expected


# --------------------------------------------------------------------------- detection and `verify --template auto`

#: fixture -> (template detection must name, special tokens of the tokenizer, bos, eos)
VERIFY_FOLDERS: dict[str, tuple[str, tuple[str, ...], str | None, str]] = {
    "vllm-meta-llama-Llama-4-pythonic.jinja": (
        "llama4-pythonic",
        ("<|begin_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|eom|>", "<|python_start|>",
         "<|python_end|>"),
        "<|begin_of_text|>",
        "<|eot|>",
    ),
    "vllm-meta-llama-Llama-4-json.jinja": (
        "llama4-json",
        ("<|begin_of_text|>", "<|header_start|>", "<|header_end|>", "<|eot|>", "<|eom|>", "<|python_start|>",
         "<|python_end|>"),
        "<|begin_of_text|>",
        "<|eot|>",
    ),
    "mistralai-Ministral-3-14B-Reasoning-2512.jinja": (
        "ministral-3",
        ("<s>", "</s>", "[INST]", "[/INST]", "[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]", "[TOOL_RESULTS]",
         "[/TOOL_RESULTS]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]"),
        "<s>",
        "</s>",
    ),
    "unsloth-mistral-Devstral-Small-2507.jinja": (
        "ministral-3",
        ("<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[ARGS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]",
         "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]"),
        "<s>",
        "</s>",
    ),
    "vllm-mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja": (
        "mistral-small-3.1",
        ("<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]",
         "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]"),
        "<s>",
        "</s>",
    ),
    "ibm-granite-granite-4.0.jinja": (
        "granite-4",
        ("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>", "<tool_call>", "</tool_call>",
         "<tool_response>", "</tool_response>"),
        None,
        "<|end_of_text|>",
    ),
    "ibm-granite-granite-4.1.jinja": (
        "granite-4",
        ("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>", "<tool_call>", "</tool_call>",
         "<tool_response>", "</tool_response>"),
        None,
        "<|end_of_text|>",
    ),
    "microsoft-Phi-4-mini-instruct.jinja": (
        "phi-4-mini",
        ("<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|tool|>", "<|/tool|>"),
        None,
        "<|endoftext|>",
    ),
    "LiquidAI-LFM2-8B-A1B.jinja": (
        "lfm2",
        ("<|startoftext|>", "<|im_start|>", "<|im_end|>", "<|tool_list_start|>", "<|tool_list_end|>",
         "<|tool_call_start|>", "<|tool_call_end|>", "<|tool_response_start|>", "<|tool_response_end|>"),
        "<|startoftext|>",
        "<|im_end|>",
    ),
    "LiquidAI-LFM2.5-8B-A1B.jinja": (
        "lfm2",
        ("<|startoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|tool_call_start|>",
         "<|tool_call_end|>"),
        "<|startoftext|>",
        "<|im_end|>",
    ),
    "LiquidAI-LFM2.5-Instruct.jinja": (
        "lfm2",
        ("<|startoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|tool_call_start|>",
         "<|tool_call_end|>"),
        "<|startoftext|>",
        "<|im_end|>",
    ),
    "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja": (
        "xlam-llama",
        ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>"),
        "<|begin_of_text|>",
        "<|eot_id|>",
    ),
    "vllm-Salesforce-Qwen-xLAM-fc-r.jinja": (
        "xlam-qwen",
        ("<|endoftext|>", "<|im_start|>", "<|im_end|>"),
        None,
        "<|im_end|>",
    ),
    "unsloth-Apriel-1.5.jinja": (
        "apriel-1.5",
        ("<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool_result|>", "<|end|>"),
        "<s>",
        "</s>",
    ),
    "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja": (
        "nemotron-nano-v2",
        ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<think>", "</think>", "<TOOLCALL>", "</TOOLCALL>"),
        None,
        "<SPECIAL_12>",
    ),
    "ai-sage-GigaChat3-10B-A1.8B.jinja": (
        "gigachat3",
        ("<s>", "</s>", "<|role_sep|>", "<|message_sep|>"),
        "<s>",
        "</s>",
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


def test_verify_marks_unescaped_string_arguments_not_applicable(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM's Llama 4 pythonic template writes `query="%s"` unescaped: the sample call whose query holds quotes
    cannot be read back by any parser, so it is n/a (with the reason), while the plain call is checked."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _tokenizer_folder(tmp_path / "tok", "vllm-meta-llama-Llama-4-pythonic.jinja")
    assert main(["verify", str(folder), "--json"]) == 0
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call_nested_arguments"]["status"] == "n/a"
    assert "without escaping" in cases["tool_call_nested_arguments"]["detail"]
    assert cases["tool_call"]["status"] == "pass" and cases["tool_result_then_answer"]["status"] == "pass"
    # the rule needs the chat template to print strings verbatim: a JSON-escaping chat template (xLAM) whose
    # calls fail to parse is still a failure, not n/a
    folder = _tokenizer_folder(tmp_path / "tok2", "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja")
    assert main(["verify", str(folder), "--template", "llama4-pythonic", "--json"]) == 1
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call_nested_arguments"]["status"] == "fail"


def test_verify_retries_arguments_as_json_text_after_a_parse_failure(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """unsloth's Apriel 1.5 template prints a dict argument with |string (Python's repr, not JSON): the call is
    checked again with the arguments given as JSON text, and the note says so."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _tokenizer_folder(tmp_path / "tok", "unsloth-Apriel-1.5.jinja")
    assert main(["verify", str(folder), "--json"]) == 0
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["tool_call"]["status"] == "pass"
    assert any("JSON text" in note for note in cases["tool_call"]["notes"])
    assert cases["content"]["status"] == "pass" and not cases["content"]["notes"]


def test_verify_switches_thinking_off_by_the_no_think_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Nemotron Nano v2's chat template reads no variable: "/no_think" in the system message switches thinking
    off. With thinking on, the rendered turn continues the prompt's open <think>, so verify checks the content
    cases again with the flag, and says so."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _tokenizer_folder(tmp_path / "tok", "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja")
    assert main(["verify", str(folder), "--json"]) == 0
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert cases["content"]["status"] == "pass"
    assert "rendered with /no_think in the system message" in cases["content"]["notes"]
    # the same template without the flag fails the content case: the switch is what made it pass
    template = (FIXTURES / "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja").read_text(encoding="utf-8")
    from hf_response_templates.upgrade import verify_chat_template
    from hf_response_templates.verify import sample_conversations

    content_only = {"content": sample_conversations()["content"]}
    plain = verify_chat_template(template.replace("/no_think", "/no-flag"), get_template("nemotron-nano-v2"),
                                 conversations=content_only)
    assert [c.status for c in plain.cases] == ["fail"]
