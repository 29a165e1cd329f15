"""Hand-written raw outputs, the way each model really emits them, parsed with the shipped templates.

The round-trip tests prove the templates against what chat templates render for history; these
prove them against what models *generate*: trailing EOS tokens, ``<|im_end|>`` followed by a newline,
tool calls separated by newlines, gpt-oss's analysis then final or analysis then a
``commentary to=functions.NAME <|constrain|>json`` tool call, and so on. Every case is also streamed
one character at a time, which must give the same message.
"""

from __future__ import annotations

import pytest
from _chat_render import TOOLS

from hf_response_templates import ResponseParser, parse_response
from hf_response_templates.library import get_template


def call(name: str, arguments: dict | str) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


CHATML_PROMPT = (
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n"
)
GPT_OSS_PROMPT = (
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Reasoning: medium\n\n# Valid channels: analysis, commentary, final.<|end|>"
    "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant"
)
LLAMA3_PROMPT = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
    "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a "
    "function call with its proper arguments that best answers the given prompt.\n\n...\n\nWeather in Paris?<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)
GRANITE_PROMPT = (
    "<|start_of_role|>system<|end_of_role|>Knowledge Cutoff Date: April 2024. Today's Date: April 02, 2026. "
    "You are Granite, developed by IBM. You are a helpful AI assistant.<|end_of_text|>\n"
    "<|start_of_role|>user<|end_of_role|>Weather in Paris?<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"
)
DEEPSEEK_R1_PROMPT = "<｜begin▁of▁sentence｜>You are helpful.<｜User｜>Weather in Paris?<｜Assistant｜><think>\n"
GEMMA4_PROMPT = "<bos><|turn>user\nWeather in Paris?<turn|>\n<|turn>model\n"
GEMMA4_PROMPT_THINKING = (
    "<bos><|turn>system\n<|think|>\nYou are helpful.<turn|>\n<|turn>user\nWeather in Paris?<turn|>\n<|turn>model\n"
)
COHERE_PROMPT = (
    "<BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|># System Preamble\n...<|END_OF_TURN_TOKEN|>"
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather in Paris?<|END_OF_TURN_TOKEN|>"
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
)

# (template name, prefix, raw model output, expected message)
CASES: list[tuple[str, str, str, str, dict]] = [
    # ---------------------------------------------------------------- SmolLM3
    (
        "smollm3-think",
        "smollm3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "<think>\nThe user wants the weather. I cannot look it up.\n</think>\nI don't have live weather data.<|im_end|>",
        {
            "role": "assistant",
            "reasoning_content": "The user wants the weather. I cannot look it up.",
            "content": "I don't have live weather data.",
        },
    ),
    (
        "smollm3-no-think",
        "smollm3",
        CHATML_PROMPT + "<|im_start|>assistant\n<think>\n\n</think>\n",
        "Hello! How can I help?<|im_end|>\n",
        {"role": "assistant", "content": "Hello! How can I help?"},
    ),
    (
        "smollm3-tool-call",
        "smollm3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        '<think>\nI should call get_weather.\n</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
        {
            "role": "assistant",
            "reasoning_content": "I should call get_weather.",
            "tool_calls": [call("get_weather", {"city": "Paris"})],
        },
    ),
    # ---------------------------------------------------------------- Qwen3 (JSON tool calls)
    (
        "qwen3-think-then-answer",
        "qwen3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "<think>\nOkay, the user asks about Paris.\n</think>\n\nIt is usually mild in spring.<|im_end|>\n",
        {
            "role": "assistant",
            "reasoning_content": "Okay, the user asks about Paris.",
            "content": "It is usually mild in spring.",
        },
    ),
    (
        "qwen3-parallel-tools",
        "qwen3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "<think>\nTwo lookups.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "Paris events", "options": {"lang": "fr"}}}\n</tool_call>'
        "<|im_end|>",
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
        "qwen3-no-think-content-and-tool",
        "qwen3",
        CHATML_PROMPT + "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n',
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [call("get_weather", {"city": "Paris"})],
        },
    ),
    (
        "qwen3-multi-turn-prefix",
        "qwen3",
        CHATML_PROMPT + "<|im_start|>assistant\n<think>\nold\n</think>\n\nOld answer.<|im_end|>\n"
        "<|im_start|>user\nAnd tomorrow?<|im_end|>\n<|im_start|>assistant\n",
        "<think>\nTomorrow.\n</think>\n\nProbably rain.<|im_end|>",
        {"role": "assistant", "reasoning_content": "Tomorrow.", "content": "Probably rain."},
    ),
    # ---------------------------------------------------------------- Qwen3-Coder (XML tool calls)
    (
        "qwen3-coder-xml-tools",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "I'll look that up.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=search>\n"
        '<parameter=query>\nwhat to wear\nin fog\n</parameter>\n<parameter=options>\n{"lang": "en"}\n</parameter>\n'
        "</function>\n</tool_call><|im_end|>\n",
        {
            "role": "assistant",
            "content": "I'll look that up.",
            "tool_calls": [
                call("get_weather", {"city": "San Francisco", "days": 3}),
                call("search", {"query": "what to wear\nin fog", "options": {"lang": "en"}}),
            ],
        },
    ),
    (
        "qwen3-coder-plain",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "def f():\n    return {'a': 1}<|im_end|>\n",
        {"role": "assistant", "content": "def f():\n    return {'a': 1}"},
    ),
    # ---------------------------------------------------------------- gpt-oss (harmony)
    (
        "gpt-oss-analysis-final",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>User asks about weather; no tools, answer generally.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Paris is mild in spring.<|return|>",
        {
            "role": "assistant",
            "thinking": "User asks about weather; no tools, answer generally.",
            "content": "Paris is mild in spring.",
        },
    ),
    (
        "gpt-oss-model-tool-call",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris","days":2}<|call|>',
        {
            "role": "assistant",
            "thinking": "Need to use function get_weather.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2})],
        },
    ),
    (
        "gpt-oss-template-tool-call",
        "gpt-oss",
        GPT_OSS_PROMPT,
        ' to=functions.search<|channel|>commentary json<|message|>{"query": "Paris", "options": {"n": 3}}<|call|>',
        {"role": "assistant", "tool_calls": [call("search", {"query": "Paris", "options": {"n": 3}})]},
    ),
    (
        "gpt-oss-preamble-then-call",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>Check weather.<|end|><|start|>assistant<|channel|>commentary<|message|>"
        "Let me check that for you.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
        '<|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        {
            "role": "assistant",
            "thinking": "Check weather.",
            "content": "Let me check that for you.",
            "tool_calls": [call("get_weather", {"city": "Paris"})],
        },
    ),
    (
        "gpt-oss-after-tool-result",
        "gpt-oss",
        GPT_OSS_PROMPT + "<|channel|>analysis<|message|>old<|end|><|start|>assistant to=functions.get_weather"
        '<|channel|>commentary json<|message|>{"city": "Paris"}<|call|><|start|>functions.get_weather to=assistant'
        '<|channel|>commentary<|message|>"{\\"t\\": 21}"<|end|><|start|>assistant',
        "<|channel|>analysis<|message|>21 degrees.<|end|><|start|>assistant<|channel|>final<|message|>It is 21 °C.<|return|>",
        {"role": "assistant", "thinking": "21 degrees.", "content": "It is 21 °C."},
    ),
    # ---------------------------------------------------------------- Command R7B
    (
        "cohere-plan-and-actions",
        "cohere-command-r7b",
        COHERE_PROMPT,
        "<|START_THINKING|>I will look up the weather and search for events.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n'
        '    {"tool_call_id": "1", "tool_name": "search", "parameters": {"query": "events"}}\n]<|END_ACTION|>'
        "<|END_OF_TURN_TOKEN|>",
        {
            "role": "assistant",
            "tool_plan": "I will look up the weather and search for events.",
            "tool_calls": [call("get_weather", {"city": "Paris"}), call("search", {"query": "events"})],
        },
    ),
    (
        "cohere-response",
        "cohere-command-r7b",
        COHERE_PROMPT,
        "<|START_RESPONSE|>It is sunny in Paris today.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        {"role": "assistant", "content": "It is sunny in Paris today."},
    ),
    # ---------------------------------------------------------------- Hermes 3
    (
        "hermes3-tools",
        "hermes3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "Louvre"}}\n</tool_call><|im_end|>\n',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Paris"}), call("search", {"query": "Louvre"})],
        },
    ),
    (
        "hermes3-content",
        "hermes3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "Bonjour!<|im_end|>\n",
        {"role": "assistant", "content": "Bonjour!"},
    ),
    # ---------------------------------------------------------------- Kimi K2
    (
        "kimi-k2-tools",
        "kimi-k2",
        "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>user<|im_middle|>Weather?"
        "<|im_end|><|im_assistant|>assistant<|im_middle|>",
        "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>'
        '{"query": "x"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [call("get_weather", {"city": "Paris"}), call("search", {"query": "x"})],
        },
    ),
    # ---------------------------------------------------------------- GLM-4.6
    (
        "glm-think-tool",
        "glm-4.6",
        "[gMASK]<sop><|user|>\nWeather in Paris?<|assistant|>",
        "\n<think>The user wants the weather.</think>\nI'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call><|observation|>",
        {
            "role": "assistant",
            "reasoning_content": "The user wants the weather.",
            "content": "I'll check.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 3})],
        },
    ),
    (
        "glm-no-think",
        "glm-4.6",
        "[gMASK]<sop><|user|>\nHi/nothink<|assistant|>\n<think></think>",
        "\nHello!<|user|>",
        {"role": "assistant", "content": "Hello!"},
    ),
    # ---------------------------------------------------------------- DeepSeek-V3.1
    (
        "deepseek-v3.1-tool",
        "deepseek-v3.1",
        "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜></think>",
        'Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}'
        '<｜tool▁call▁end｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"query": "x"}<｜tool▁call▁end｜>'
        "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [call("get_weather", {"city": "Paris"}), call("search", {"query": "x"})],
        },
    ),
    (
        "deepseek-v3.1-thinking",
        "deepseek-v3.1",
        "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜><think>",
        "The user greets me.</think>Hello!<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "The user greets me.", "content": "Hello!"},
    ),
    # ---------------------------------------------------------------- Mistral Small 3.2
    (
        "mistral-tools",
        "mistral-small-3.2",
        "<s>[SYSTEM_PROMPT]You are Mistral.[/SYSTEM_PROMPT][INST]Weather?[/INST]",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 2}[TOOL_CALLS]search[ARGS]{"query": "x"}</s>',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2}), call("search", {"query": "x"})],
        },
    ),
    (
        "mistral-content",
        "mistral-small-3.2",
        "<s>[INST]Hi[/INST]",
        "Hello! How can I help?</s>",
        {"role": "assistant", "content": "Hello! How can I help?"},
    ),
    # ---------------------------------------------------------------- Llama 3.1 / 3.3
    (
        "llama3-tool-call",
        "llama3",
        LLAMA3_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": "3"}}<|eot_id|>',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris", "days": 3})]},
    ),
    (
        "llama3-python-tag-eom",
        "llama3",
        LLAMA3_PROMPT,
        '<|python_tag|>{"name": "search", "parameters": {"query": "Paris events", "options": {"lang": "fr"}}}<|eom_id|>',
        {
            "role": "assistant",
            "tool_calls": [call("search", {"query": "Paris events", "options": {"lang": "fr"}})],
        },
    ),
    (
        "llama3-tool-call-with-type-key",
        "llama3",
        LLAMA3_PROMPT,
        '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris"})]},
    ),
    (
        "llama3-tool-call-eos-skipped",
        "llama3",
        LLAMA3_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris"})]},
    ),
    (
        "llama3-content",
        "llama3",
        LLAMA3_PROMPT,
        "Paris is usually mild in spring, around 15 °C.<|eot_id|>",
        {"role": "assistant", "content": "Paris is usually mild in spring, around 15 °C."},
    ),
    (
        "llama3-json-content-is-not-a-tool-call",
        "llama3",
        LLAMA3_PROMPT,
        '{"city": "Paris"} is the JSON you asked for; {"name": "x"} is another.<|eot_id|>',
        {"role": "assistant", "content": '{"city": "Paris"} is the JSON you asked for; {"name": "x"} is another.'},
    ),
    (
        "llama3-after-tool-result",
        "llama3",
        LLAMA3_PROMPT
        + '{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>'
        '<|start_header_id|>ipython<|end_header_id|>\n\n{"temperature": 21}<|eot_id|>'
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "It is 21 °C in Paris right now.<|eot_id|>",
        {"role": "assistant", "content": "It is 21 °C in Paris right now."},
    ),
    # ---------------------------------------------------------------- Granite 3.3
    (
        "granite-think-response",
        "granite-3.3",
        GRANITE_PROMPT,
        "<think>The user asks about the weather. I have no live data.</think>"
        "<response>I can't check live weather, but Paris is mild in spring.</response><|end_of_text|>",
        {
            "role": "assistant",
            "reasoning_content": "The user asks about the weather. I have no live data.",
            "content": "I can't check live weather, but Paris is mild in spring.",
        },
    ),
    (
        "granite-think-response-newlines",
        "granite-3.3",
        GRANITE_PROMPT,
        "<think>\nStep 1: weather.\nStep 2: answer.\n</think>\n<response>\nMild, about 15 °C.\n</response><|end_of_text|>",
        {"role": "assistant", "reasoning_content": "Step 1: weather.\nStep 2: answer.", "content": "Mild, about 15 °C."},
    ),
    (
        "granite-tool-calls",
        "granite-3.3",
        GRANITE_PROMPT,
        '<|tool_call|>[{"arguments": {"city": "Paris", "days": "2"}, "name": "get_weather"}, '
        '{"arguments": {"query": "Louvre hours"}, "name": "search"}]<|end_of_text|>',
        {
            "role": "assistant",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2}), call("search", {"query": "Louvre hours"})],
        },
    ),
    (
        "granite-content",
        "granite-3.3",
        GRANITE_PROMPT,
        "Bonjour! How can I help?<|end_of_text|>",
        {"role": "assistant", "content": "Bonjour! How can I help?"},
    ),
    # ---------------------------------------------------------------- DeepSeek-R1 distills
    (
        "deepseek-r1-think-answer",
        "deepseek-r1",
        DEEPSEEK_R1_PROMPT,
        "Okay, the user asks about Paris weather.\nI can't look it up.\n</think>\n\n"
        "Paris is mild in spring.<｜end▁of▁sentence｜>",
        {
            "role": "assistant",
            "reasoning_content": "Okay, the user asks about Paris weather.\nI can't look it up.",
            "content": "Paris is mild in spring.",
        },
    ),
    (
        "deepseek-r1-tool-calls",
        "deepseek-r1",
        DEEPSEEK_R1_PROMPT,
        "Two lookups.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "days": 2}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n'
        '```json\n{"query": "x"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        {
            "role": "assistant",
            "reasoning_content": "Two lookups.",
            "tool_calls": [call("get_weather", {"city": "Paris", "days": 2}), call("search", {"query": "x"})],
        },
    ),
    (
        "deepseek-r1-after-tool-outputs",
        "deepseek-r1",
        "<｜begin▁of▁sentence｜><｜User｜>Weather in Paris?<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
        'function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>'
        '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"t": 21}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>',
        "<think>\nThe tool says 21.\n</think>\n\nIt is 21 °C.<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "The tool says 21.", "content": "It is 21 °C."},
    ),
    (
        "deepseek-r1-multi-turn-prefix",
        "deepseek-r1",
        "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>Hello!<｜end▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜><think>\n",
        "Weather question.\n</think>\n\nMild.<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "Weather question.", "content": "Mild."},
    ),
    (
        "deepseek-r1-old-prompt-model-opens-think",
        "deepseek-r1",
        "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>",
        "<think>\nWeather question.\n</think>\n\nMild.<｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "Weather question.", "content": "Mild."},
    ),
    # ---------------------------------------------------------------- Gemma 4
    (
        "gemma4-thinking-answer",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        "<|channel>thought\nThe user asks about the weather.\nNo tool needed.<channel|>Paris is mild in spring.<turn|>",
        {
            "role": "assistant",
            "reasoning_content": "The user asks about the weather.\nNo tool needed.",
            "content": "Paris is mild in spring.",
        },
    ),
    (
        "gemma4-thinking-tool-calls",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        "<|channel>thought\nNeed two lookups.<channel|><|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}"
        '<tool_call|><|tool_call>call:search{options:{lang:<|"|>fr<|"|>,safe:true},query:<|"|>Louvre "hours"<|"|>,'
        'tags:[<|"|>a<|"|>,<|"|>b<|"|>]}<tool_call|><|tool_response>',
        {
            "role": "assistant",
            "reasoning_content": "Need two lookups.",
            "tool_calls": [
                call("get_weather", {"city": "Paris", "days": 3}),
                call("search", {"options": {"lang": "fr", "safe": True}, "query": 'Louvre "hours"', "tags": ["a", "b"]}),
            ],
        },
    ),
    (
        "gemma4-no-thinking",
        "gemma4",
        GEMMA4_PROMPT + "<|channel>thought\n<channel|>",
        "Hello! How can I help?<turn|>\n",
        {"role": "assistant", "content": "Hello! How can I help?"},
    ),
    (
        "gemma4-after-tool-response",
        "gemma4",
        GEMMA4_PROMPT + '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>'
        'response:get_weather{value:<|"|>{"t": 21}<|"|>}<tool_response|>',
        "It is 21 °C in Paris.<turn|>",
        {"role": "assistant", "content": "It is 21 °C in Paris."},
    ),
]

QWEN3_THINKING_PROMPT = CHATML_PROMPT + "<|im_start|>assistant\n<think>\n"  # Qwen3-*-Thinking-2507 pre-opens reasoning
GLM_PROMPT = "[gMASK]<sop><|user|>\nWeather in Paris?<|assistant|>"
DEEPSEEK_V31_PROMPT = "<｜begin▁of▁sentence｜><｜User｜>Weather in Paris?<｜Assistant｜>"
KIMI_PROMPT = "<|im_user|>user<|im_middle|>Weather in Paris?<|im_end|><|im_assistant|>assistant<|im_middle|>"
MISTRAL_PROMPT = "<s>[INST]Weather in Paris?[/INST]"
DS_CALL = "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>"
DS_R1_CALL = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>"
PARIS = call("get_weather", {"city": "Paris"})

#: the cases above are written in the formats the chat templates themselves show; the variants below are not
ON_TEMPLATE_CASES = len(CASES)

# Variants seen in real outputs (tests/fixtures/real_outputs/, issue 15), and prose that merely mentions the
# tags those variants added: it must stay where it is.
CASES += [
    # ---------------------------------------------------------------- gpt-oss
    (
        "gpt-oss-tool-call-on-analysis-channel",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant to=functions.get_weather"
        '<|channel|>analysis <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        {"role": "assistant", "thinking": "Need the weather.", "tool_calls": [PARIS]},
    ),
    (
        "gpt-oss-channel-first-analysis-call-code-type",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>Search it.\n<|end|><|start|>assistant<|channel|>analysis to=functions.search code"
        '<|message|>\n{"query": "Paris"}<|call|>',
        {"role": "assistant", "thinking": "Search it.", "tool_calls": [call("search", {"query": "Paris"})]},
    ),
    (
        "gpt-oss-structured-final-answer",
        "gpt-oss",
        GPT_OSS_PROMPT,
        '<|channel|>analysis<|message|>Answer in JSON.<|end|><|start|>assistant<|channel|>final <|constrain|>json<|message|>{"answer": 42}<|return|>',
        {"role": "assistant", "thinking": "Answer in JSON.", "content": '{"answer": 42}'},
    ),
    (
        "gpt-oss-builtin-browser-tool",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>analysis to=browser.search "
        '<|constrain|>json<|message|>{"query": "Paris weather"}<|call|>',
        {"role": "assistant", "thinking": "Look it up.", "tool_calls": [call("browser.search", {"query": "Paris weather"})]},
    ),
    (
        "gpt-oss-builtin-python-tool-code-arguments",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|start|>assistant to=python<|channel|>analysis code<|message|>print(2 + 2)<|call|>",
        {"role": "assistant", "tool_calls": [call("python", "print(2 + 2)")]},
    ),
    (
        "gpt-oss-builtin-container-exec",
        "gpt-oss",
        GPT_OSS_PROMPT,
        '<|channel|>analysis to=container.exec <|constrain|>json<|message|>{"cmd": ["ls", "-la"]}<|call|>',
        {"role": "assistant", "tool_calls": [call("container.exec", {"cmd": ["ls", "-la"]})]},
    ),
    (
        "gpt-oss-call-closed-by-end",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary"
        '<|message|>{"city": "Paris"}<|end|>',
        {"role": "assistant", "content": "Checking.", "tool_calls": [PARIS]},
    ),
    (
        "gpt-oss-call-closed-by-return",
        "gpt-oss",
        GPT_OSS_PROMPT,
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|return|>',
        {"role": "assistant", "tool_calls": [PARIS]},
    ),
    (
        "gpt-oss-answer-mentions-recipients-and-constrain",
        "gpt-oss",
        GPT_OSS_PROMPT,
        "<|channel|>final<|message|>Write to=functions.get_weather and <|constrain|>json in the header.<|return|>",
        {"role": "assistant", "content": "Write to=functions.get_weather and <|constrain|>json in the header."},
    ),
    # ---------------------------------------------------------------- Qwen3 / GLM reasoning boundaries
    (
        "qwen3-tool-call-ends-unclosed-reasoning",
        "qwen3",
        QWEN3_THINKING_PROMPT,
        'I should look it up.\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
        {"role": "assistant", "reasoning_content": "I should look it up.", "tool_calls": [PARIS]},
    ),
    (
        "qwen3-tool-call-ends-reasoning-the-model-opened",
        "qwen3",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        '<think>\nI should look it up.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
        {"role": "assistant", "reasoning_content": "I should look it up.", "tool_calls": [PARIS]},
    ),
    (
        "qwen3-reasoning-mentions-the-tool-call-tag",
        "qwen3",
        QWEN3_THINKING_PROMPT,
        "A <tool_call> tag would be overkill here.\n</think>\n\nIt is mild.<|im_end|>",
        {"role": "assistant", "reasoning_content": "A <tool_call> tag would be overkill here.", "content": "It is mild."},
    ),
    (
        "qwen3-think-written-again-after-the-prompt-opened-it",
        "qwen3",
        QWEN3_THINKING_PROMPT,
        "<think>\nThe user asks about Paris.\n</think>\n\nIt is mild.<|im_end|>",
        {"role": "assistant", "reasoning_content": "The user asks about Paris.", "content": "It is mild."},
    ),
    (
        "glm-tool-call-ends-unclosed-reasoning",
        "glm-4.6",
        GLM_PROMPT,
        "\n<think>I need the weather.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
        "<|observation|>",
        {"role": "assistant", "reasoning_content": "I need the weather.", "tool_calls": [PARIS]},
    ),
    (
        "glm-reasoning-mentions-the-tool-call-tag",
        "glm-4.6",
        GLM_PROMPT,
        "\n<think>The format is <tool_call> and then a name.</think>\nNo tool needed.<|user|>",
        {"role": "assistant", "reasoning_content": "The format is <tool_call> and then a name.", "content": "No tool needed."},
    ),
    # ---------------------------------------------------------------- Qwen3-Coder
    (
        "qwen3-coder-function-without-tool-call-wrapper",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "I'll check.\n\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
        "</function>\n</tool_call><|im_end|>",
        {"role": "assistant", "content": "I'll check.", "tool_calls": [call("get_weather", {"city": "Paris", "days": 3})]},
    ),
    (
        "qwen3-coder-bare-function-then-prose",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\nDone.<|im_end|>",
        {"role": "assistant", "content": "Done.", "tool_calls": [PARIS]},
    ),
    (
        "qwen3-coder-blank-lines-before-tool-call-close",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n\n</tool_call><|im_end|>",
        {"role": "assistant", "tool_calls": [PARIS]},
    ),
    (
        "qwen3-coder-prose-mentions-function-syntax",
        "qwen3-coder",
        CHATML_PROMPT + "<|im_start|>assistant\n",
        "Write <function=NAME> and then the parameters.<|im_end|>",
        {"role": "assistant", "content": "Write <function=NAME> and then the parameters."},
    ),
    # ---------------------------------------------------------------- Gemma 4
    (
        "gemma4-bare-tool-call-opener",
        "gemma4",
        GEMMA4_PROMPT,
        '<|tool_call>:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
        {"role": "assistant", "tool_calls": [PARIS]},
    ),
    (
        "gemma4-channel-without-thought-label",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        "<|channel>The user wants the weather.<channel|>It is mild.<turn|>",
        {"role": "assistant", "reasoning_content": "The user wants the weather.", "content": "It is mild."},
    ),
    (
        "gemma4-tool-call-ends-unclosed-thought",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        '<|channel>thought\nI need the weather.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>',
        {"role": "assistant", "reasoning_content": "I need the weather.", "tool_calls": [PARIS]},
    ),
    (
        "gemma4-call-right-after-thought-without-tool-call-token",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        '<|channel>thought\nI need the weather.\n<channel|>call:get_weather{city:<|"|>Paris<|"|>}<|tool_response>',
        {"role": "assistant", "reasoning_content": "I need the weather.", "tool_calls": [PARIS]},
    ),
    (
        "gemma4-thought-and-answer-mention-the-call-syntax",
        "gemma4",
        GEMMA4_PROMPT_THINKING,
        "<|channel>thought\nShould I write <|tool_call>? No.<channel|>The syntax is call:NAME{...} after the marker.<turn|>",
        {"role": "assistant", "reasoning_content": "Should I write <|tool_call>? No.",
         "content": "The syntax is call:NAME{...} after the marker."},
    ),
    # ---------------------------------------------------------------- DeepSeek
    (
        "deepseek-v3.1-text-after-tool-calls-end",
        "deepseek-v3.1",
        DEEPSEEK_V31_PROMPT + "</think>",
        "Checking.<｜tool▁calls▁begin｜>" + DS_CALL + "<｜tool▁calls▁end｜>Done.<｜end▁of▁sentence｜>",
        {"role": "assistant", "content": "Checking.\nDone.", "tool_calls": [PARIS]},
    ),
    (
        "deepseek-v3.1-tool-call-ends-unclosed-reasoning",
        "deepseek-v3.1",
        DEEPSEEK_V31_PROMPT + "<think>",
        "Need the weather.<｜tool▁calls▁begin｜>" + DS_CALL + "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "Need the weather.", "tool_calls": [PARIS]},
    ),
    (
        "deepseek-r1-text-after-tool-calls-end",
        "deepseek-r1",
        DEEPSEEK_R1_PROMPT.removesuffix("<think>\n"),
        "Checking.<｜tool▁calls▁begin｜>" + DS_R1_CALL + "<｜tool▁calls▁end｜>It is 30 degrees.<｜end▁of▁sentence｜>",
        {"role": "assistant", "content": "Checking.\nIt is 30 degrees.", "tool_calls": [PARIS]},
    ),
    (
        "deepseek-r1-tool-call-ends-unclosed-reasoning",
        "deepseek-r1",
        DEEPSEEK_R1_PROMPT,
        "Need the weather.\n<｜tool▁calls▁begin｜>" + DS_R1_CALL + "\n<｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        {"role": "assistant", "reasoning_content": "Need the weather.", "tool_calls": [PARIS]},
    ),
    # ---------------------------------------------------------------- Kimi K2, Cohere, Llama 3, Mistral
    (
        "kimi-k2-empty-tool-section",
        "kimi-k2",
        KIMI_PROMPT,
        "Let me think.<|tool_calls_section_begin|><|tool_calls_section_end|>",
        {"role": "assistant", "content": "Let me think."},
    ),
    (
        "cohere-command-a-start-text-framing",
        "cohere-command-r7b",
        COHERE_PROMPT,
        "<|START_THINKING|>Greet back.<|END_THINKING|><|START_TEXT|>I'm doing well.<|END_TEXT|><|END_OF_TURN_TOKEN|>",
        {"role": "assistant", "tool_plan": "Greet back.", "content": "I'm doing well."},
    ),
    (
        "cohere-action-then-end-of-turn",
        "cohere-command-r7b",
        COHERE_PROMPT,
        '<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", '
        '"parameters": {"city": "Paris"}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>',
        {"role": "assistant", "tool_plan": "Look it up.", "tool_calls": [PARIS]},
    ),
    (
        "llama3-repeated-python-tag",
        "llama3",
        LLAMA3_PROMPT,
        '<|python_tag|><|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
        {"role": "assistant", "tool_calls": [PARIS]},
    ),
    (
        "mistral-call-without-args-separator",
        "mistral-small-3.2",
        MISTRAL_PROMPT,
        'Checking.[TOOL_CALLS]get_weather{"city": "Paris"}</s>',
        {"role": "assistant", "content": "Checking.", "tool_calls": [PARIS]},
    ),
    # ---------------------------------------------------------------- JSON bodies that end where the JSON ends
    (
        "mistral-prose-after-the-arguments",
        "mistral-small-3.2",
        MISTRAL_PROMPT,
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} I will check the weather.</s>',
        {"role": "assistant", "tool_calls": [PARIS], "content": "I will check the weather."},
    ),
    (
        "mistral-call-without-arguments",
        "mistral-small-3.2",
        MISTRAL_PROMPT,
        '[TOOL_CALLS]search[ARGS]{"query": "x"}[TOOL_CALLS]get_weather</s>',
        {"role": "assistant", "tool_calls": [call("search", {"query": "x"}), call("get_weather", {})]},
    ),
    (
        "granite-text-after-the-call-array",
        "granite-3.3",
        GRANITE_PROMPT,
        'Let me check.\n<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]\nOne moment.<|end_of_text|>',
        {"role": "assistant", "content": "Let me check.\nOne moment.", "tool_calls": [PARIS]},
    ),
    (
        "llama3-parallel-calls-and-arguments-key",
        "llama3",
        LLAMA3_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "search", "arguments": {"query": "x"}}'
        "<|eot_id|>",
        {"role": "assistant", "tool_calls": [PARIS, call("search", {"query": "x"})]},
    ),
    (
        "llama3-prose-after-a-call-quoting-json",
        "llama3",
        LLAMA3_PROMPT,
        '{"name": "get_weather", "parameters": {"city": "Paris"}} I called it with {"city": "Paris"}.<|eot_id|>',
        {"role": "assistant", "tool_calls": [PARIS], "content": 'I called it with {"city": "Paris"}.'},
    ),
]


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=[c[0] for c in CASES])
def test_raw_output(case_id: str, name: str, prefix: str, output: str, expected: dict) -> None:
    template = get_template(name)
    assert parse_response(output, template, prefix=prefix, tools=TOOLS) == expected


@pytest.mark.parametrize("case_id,name,prefix,output,expected", CASES, ids=[c[0] for c in CASES])
def test_raw_output_streamed_char_by_char(
    case_id: str, name: str, prefix: str, output: str, expected: dict
) -> None:
    parser = ResponseParser(get_template(name), prefix, tools=TOOLS)
    for char in output:
        parser.feed(char)
    message, _events = parser.finalize()
    assert message == expected


def test_gpt_oss_start_anchor_only_cuts_the_prefix() -> None:
    # the generation re-emits "<|start|>assistant" between channels: nothing may be cut from it
    out = parse_response(
        "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>analysis<|message|>b<|end|>"
        "<|start|>assistant<|channel|>final<|message|>c<|return|>",
        get_template("gpt-oss"),
        prefix=GPT_OSS_PROMPT,
    )
    assert out == {"role": "assistant", "thinking": "a\nb", "content": "c"}
