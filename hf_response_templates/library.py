"""Ready response templates for real model families, and detection of the family from a tokenizer.

Every shipped template is plain JSON (``templates/<name>.json``) that round-trips the family's real
chat template (see ``tests/test_templates_roundtrip.py`` and ``templates/README.md``)::

    >>> from hf_response_templates import get_template, list_templates
    >>> "qwen3" in list_templates()
    True
    >>> template = get_template("qwen3")          # a fresh deep copy: edit it freely
    >>> detect_template(tokenizer)                # doctest: +SKIP
    'qwen3'
    >>> attach(tokenizer)                         # doctest: +SKIP  (sets tokenizer.response_template)
    'qwen3'

Where the JSON files live: inside the wheel they are package data
(``hf_response_templates/templates/``); in a source checkout or editable install they are the
repository's top-level ``templates/`` directory. Both are checked, package data first.

This module never imports Transformers.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "TEMPLATE_INFO",
    "POLICY_SOURCES",
    "UnknownTemplateError",
    "NoTemplateDetectedError",
    "attach",
    "build_fingerprint_table",
    "chat_template_fingerprint",
    "detect_template",
    "exact_match",
    "fingerprint_match",
    "get_template",
    "list_templates",
    "template_info",
    "templates_dir",
]


class UnknownTemplateError(KeyError, ValueError):
    """``get_template``/``attach`` was given a name that is not a shipped template."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class NoTemplateDetectedError(ValueError):
    """``attach(tokenizer, "auto")`` could not recognise the tokenizer's chat template."""


#: Per-template documentation: which models it is for, the fixture it is proven against, and what it
#: cannot represent. ``templates/README.md`` carries the same information as a table.
TEMPLATE_INFO: dict[str, dict[str, Any]] = {
    "smollm3": {
        "models": ["HuggingFaceTB/SmolLM3-3B"],
        "chat_template": "HuggingFaceTB-SmolLM3-3B.jinja",
        "doc": "ChatML with <think>...</think> and <tool_call>{json}</tool_call>; content is the implicit field "
        "closed by <|im_end|>. The chat template renders assistant history as content only (no reasoning, no "
        "tool_calls), so the round trip proves content; reasoning and tool calls are proven on raw outputs. "
        "Reasoning is named reasoning_content (the standard key; this chat template reads no reasoning key).",
    },
    "qwen3": {
        "models": ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-*B (original 2025-04 releases)", "Qwen/QwQ-32B",
                   "Qwen/Qwen3-235B-A22B-Instruct-2507, Qwen3-30B-A3B-Instruct-2507, Qwen3-4B-Instruct-2507",
                   "XiaomiMiMo MiMo models whose chat template is llama.cpp's MiMo-VL copy"],
        "chat_template": "Qwen-Qwen3-0.6B.jinja",
        "doc": "ChatML, reasoning_content in <think>...</think>, tool calls as "
        '<tool_call>{"name": ..., "arguments": ...}</tool_call> (JSON). Earlier assistant turns lose their '
        "reasoning in the chat template (only turns after the last user query keep it). Reasoning also ends where a JSON tool call starts, "
        "and a <think> written again right after the prompt opened it is not text.",
    },
    "qwen3-coder": {
        "models": ["Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-480B-A35B-Instruct"],
        "chat_template": "Qwen3-Coder.jinja",
        "doc": "ChatML with XML tool calls <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function>"
        "</tool_call>. Parameter values are kept as raw text: the chat template renders scalars with |string, so "
        "7, '7' and True/'True' look alike; pass tools= to type them from the JSON schema (objects/arrays are "
        "decoded, integers cast, strings kept). No reasoning field: the chat template renders none. Also read: "
        "<function=NAME> without <tool_call>, and a value without </parameter> (it ends at the next <parameter= or "
        "at the end of the call).",
    },
    "gpt-oss": {
        "models": ["openai/gpt-oss-20b", "openai/gpt-oss-120b"],
        "chat_template": "openai-gpt-oss-120b.jinja",
        "doc": "Harmony channels. analysis -> thinking (the key this chat template reads), final (and commentary "
        "preambles) -> content, tool calls from both '<|start|>assistant to=functions.NAME<|channel|>commentary "
        "json<|message|>{...}<|call|>' (the chat template's form) and '<|channel|>commentary to=functions.NAME "
        "<|constrain|>json<|message|>{...}<|call|>' (the model's form). start_anchor '<|start|>assistant' cuts the "
        "prefix only. The chat template renders one tool call per message, renders content given with tool calls "
        "as analysis, and drops analysis from earlier turns. Also read (seen in real outputs): tool calls on the "
        "analysis channel, built-in recipients (to=browser.search, to=python, to=container.exec: named as written, "
        "non-JSON arguments kept as text), calls closed by <|end|> or <|return|>, final <|constrain|>json answers.",
    },
    "cohere-command-r7b": {
        "models": ["CohereLabs/c4ai-command-r7b-12-2024"],
        "chat_template": "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        "doc": "<|START_THINKING|> plan -> tool_plan (the key the chat template reads back), "
        "<|START_ACTION|>[{tool_name, parameters}, ...]<|END_ACTION|> -> tool_calls (transform_each), "
        "<|START_RESPONSE|>...<|END_RESPONSE|> -> content. The chat template renders tool_plan only with tool calls, "
        "and drops content when tool calls are present; tool_call_id is a renumbered counter and is not kept. "
        "Command A's <|START_TEXT|>...<|END_TEXT|> framing is read as content; text outside the regions is "
        "unmarked_text, up to <|END_OF_TURN_TOKEN|>. Citation markup <co>span</co: 0:[1,2],1:[0]> is taken out of "
        "the text (the span stays) and listed in message['citations'] as {field, start, end, text, sources} "
        "(text remove_pattern / report_as).",
    },
    "hermes3": {
        "models": ["NousResearch/Hermes-3-Llama-3.1-8B", "NousResearch/Hermes-3-Llama-3.1-70B",
                   "Qwen/Qwen3-Next-80B-A3B-Instruct"],
        "chat_template": "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        "doc": 'ChatML with <tool_call>{"name": ..., "arguments": ...}</tool_call>; no reasoning. The chat template '
        "drops content when an assistant message has tool calls.",
    },
    "deepseek-v3.1": {
        "models": ["deepseek-ai/DeepSeek-V3.1"],
        "chat_template": "deepseek-ai-DeepSeek-V3.1.jinja",
        "doc": "<think>...</think> reasoning, tool calls as <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}"
        "<｜tool▁call▁end｜> inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>, content up to "
        "<｜end▁of▁sentence｜> (text after <｜tool▁calls▁end｜> is content). A tool call that starts inside "
        "unclosed reasoning ends it.",
    },
    "mistral-small-3.2": {
        "models": ["mistralai/Mistral-Small-3.2-24B-Instruct-2506"],
        "chat_template": "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        "doc": "[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json} per call (also without [CALL_ID] or [ARGS]; the id is not "
        "kept), content up to </s>.",
    },
    "glm-4.6": {
        "models": ["zai-org/GLM-4.5", "zai-org/GLM-4.6"],
        "chat_template": "GLM-4.6.jinja",
        "doc": "<think>...</think> reasoning_content, tool calls <tool_call>NAME<arg_key>K</arg_key>"
        "<arg_value>V</arg_value>...</tool_call>, content up to <|user|>/<|observation|>/<|endoftext|>. A tool "
        "call that starts inside unclosed reasoning ends it.",
    },
    "llama3": {
        "models": ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
                   "meta-llama/Llama-3.3-70B-Instruct"],
        "chat_template": "meta-llama-Llama-3.3-70B-Instruct.jinja",
        "doc": 'A tool call is the whole turn: bare JSON {"name": ..., "parameters": ...} (optionally after '
        "<|python_tag|>, also repeated), ended by <|eom_id|> or <|eot_id|>; it is recognised only at the start of the "
        "generation (open_pattern anchored with ^; a leading \"type\": \"function\" key is accepted), so "
        "content that merely contains a JSON object stays content. Content ends at <|eot_id|>. One tool call per message (the chat template raises "
        "for more); content given with a tool call is dropped by the chat template. The built-in tool form "
        "<|python_tag|>brave_search.call(query=...) is not parsed (it would stay content). No reasoning.",
    },
    "granite-3.3": {
        "models": ["ibm-granite/granite-3.3-2b-instruct", "ibm-granite/granite-3.3-8b-instruct"],
        "chat_template": "ibm-granite-granite-3.3-2B-Instruct.jinja",
        "doc": "<think>...</think> -> reasoning_content, <response>...</response> (or plain text) -> content, "
        '<|tool_call|>[{"name": ..., "arguments": ...}, ...] -> tool_calls (transform_each), all up to '
        "<|end_of_text|>. The chat template renders assistant history as content only, so the round trip proves "
        "content (thinking on and off); reasoning and tool calls are proven on raw outputs.",
    },
    "deepseek-r1": {
        "models": ["deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B/7B/14B/32B", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B/70B"],
        "chat_template": "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        "doc": "The prompt ends with <｜Assistant｜><think>\n, so the generation starts inside reasoning_content "
        "(closed by </think>, or where a tool call starts); content up to <｜end▁of▁sentence｜> (text after "
        "<｜tool▁calls▁end｜> is content); tool calls "
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>. The chat "
        "template strips reasoning from history and renders tool-call turns only with content None, so only "
        "the answer right after tool results continues its own prompt: the round trip proves content there; "
        "reasoning and tool calls are proven on raw outputs.",
    },
    "gemma4": {
        "models": ["google/gemma-4-31B-it (and the other Gemma 4 instruction-tuned models)"],
        "chat_template": "google-gemma-4-31B-it.jinja",
        "doc": "<|channel>thought ...<channel|> -> reasoning_content, <|tool_call>call:NAME{key:value,...}"
        '<tool_call|> -> tool_calls (Gemma\'s argument syntax: bare keys, <|"|>strings<|"|>; read with the json '
        "parser's unquoted_keys and string_delims), content up to <turn|> or <|tool_response>. Reasoning is "
        "rendered by the chat template only for tool-call turns after the last user message; with thinking off "
        "the prompt holds an empty thought channel history never renders, so thinking-off turns round-trip only "
        "after tool results. Arguments holding null (rendered as Python 'None') or nested keys that are not "
        "identifiers cannot be read back. Also read: <|channel> without 'thought', the bare <|tool_call>:NAME{...}, "
        "call:NAME{...} right after <channel|> without <|tool_call>, a tool call that ends unclosed reasoning, and stray "
        "channel markers (a channel opened again inside the open one, a <channel|> with none open), which are removed.",
    },
    "glm-4.7": {
        "models": ["zai-org/GLM-4.7", "zai-org/GLM-4.7-Flash", "zai-org/GLM-5"],
        "chat_template": "zai-org-GLM-4.7-Flash.jinja",
        "doc": "The generation prompt ends with <|assistant|><think> (thinking on; the model writes only ...</think>) or "
        "<|assistant|></think> (off; cut with the start anchor). Tool calls without newlines <tool_call>NAME"
        "<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call> (values kept as text and typed from the tools' "
        "schemas; zero-argument calls give {}), content up to <|user|>/<|observation|>/<|endoftext|>. Reasoning also "
        "ends where a <tool_call> starts without </think>. The chat template renders a turn without reasoning as "
        "</think>, which continues only the thinking-off prompt.",
    },
    "deepseek-v3.2": {
        "models": ["deepseek-ai/DeepSeek-V3.2 (chat template: llama.cpp's community one; DeepSeek ships encoder code)"],
        "chat_template": "deepseek-ai-DeepSeek-V3.2.jinja",
        "doc": "<think>...</think> reasoning_content (the thinking prompt ends with <think>, or <think></think> with "
        "thinking off), DSML tool calls <｜DSML｜function_calls><｜DSML｜invoke name=\"N\"><｜DSML｜parameter name=\"K\" "
        'string="true|false">V</｜DSML｜parameter>...</｜DSML｜invoke>...</｜DSML｜function_calls>, one call per invoke, '
        "content up to <｜end▁of▁sentence｜>. The string attribute picks each value's parser (xml-inline "
        'value_parser_by): string="true" values are raw text, string="false" or absent ones JSON (objects, '
        "arrays, numbers, booleans, null; text that is not JSON is kept), so arguments are typed without tools=, "
        "and tools= retypes only a string for a parameter that admits no string (string=\"true\" 42 for an "
        "integer is 42, as vLLM gives; Transformers 5.25 leaves it \"42\"). "
        "The chat template renders history turns with </think> only, so thinking-off turns do not continue the "
        "<think></think> prompt: the round trip checks thinking mode.",
    },
    "seed-oss": {
        "models": ["ByteDance-Seed/Seed-OSS-36B-Instruct"],
        "chat_template": "ByteDance-Seed-Seed-OSS-36B-Instruct.jinja",
        "doc": "Turns <seed:bos>ROLE\\n...<seed:eos>; <seed:think>...</seed:think> reasoning_content (thinking-budget "
        "reflections <seed:cot_budget_reflect>...</seed:cot_budget_reflect> stay in the reasoning text, as the model "
        "wrote them; reasoning also ends where <seed:tool_call> starts), tool calls <seed:tool_call><function=NAME>"
        "<parameter=KEY>VALUE</parameter></function></seed:tool_call> (values kept verbatim and typed from the tools' "
        "schemas), content up to <seed:eos>. The chat template renders object and array arguments with Python's "
        "str() ({'a': 1}, True), which cannot be read back: only scalar arguments round-trip (the model itself "
        "writes JSON there, as in the Qwen3-Coder format).",
    },
    "hunyuan-a13b": {
        "models": ["tencent/Hunyuan-A13B-Instruct (chat template: vLLM's example, not compared with the Hub one)"],
        "chat_template": "vllm-tencent-Hunyuan-A13B-Instruct.jinja",
        "doc": "The turn follows the user's <|extra_0|> (no generation prompt); <think>\\n...\\n</think>\\n<answer>\\n"
        "...\\n</answer> -> reasoning_content and content (the <answer> tag is dropped, also right after the "
        "thinking-off prompt's <think>\\n\\n</think>\\n), or plain content (a leading 助手： that the tool "
        'system prompt asks for is dropped, as the chat template adds it back), tool calls <tool_calls>[{"name": '
        '..., "arguments": ...}, ...]</tool_calls> (transform_each), content up to </answer> or <|eos|>. The '
        "answer_marker field only swallows <answer> / the leading 助手： (it always closes empty and never "
        "reaches the message). Text after </tool_calls> stays content (vLLM drops it).",
    },
    "kimi-k2-thinking": {
        "models": ["moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2.5"],
        "chat_template": "moonshotai-Kimi-K2-Thinking.jinja",
        "doc": "<think>...</think> reasoning_content (K2.5's prompt opens <think> itself, or closes it with thinking=False; "
        "reasoning also ends where <|tool_calls_section_begin|> starts), tool calls "
        "<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|> inside "
        "<|tool_calls_section_begin|>...<|tool_calls_section_end|>; the native id functions.NAME:IDX is kept as the "
        "call's id (these chat templates render the id back as the call header, so the model must see its own ids "
        "again), content up to <|im_end|>. The chat template renders reasoning only for turns after the last "
        "assistant turn without tool calls (so a plain answer's reasoning is dropped from history).",
    },
    "minimax-m2": {
        "models": ["MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.7 (Xinference: the M2.5 "
                   "chat template with another model name)"],
        "chat_template": "MiniMaxAI-MiniMax-M2.jinja",
        "doc": "Turns ]~b]ai\\n ... [e~[; the generation prompt opens <think>\\n, so the model writes only "
        "...</think> (reasoning also ends where <minimax:tool_call> starts); tool calls "
        '<minimax:tool_call><invoke name="N"><parameter name="K">V</parameter>...</invoke>...</minimax:tool_call>, '
        "one call per <invoke> (values kept as text and typed from the tools' schemas: the chat template renders "
        "strings raw and other values as JSON), content up to [e~[. The chat template renders a turn without "
        "reasoning with no <think>, which does not continue its prompt: the round trip checks turns with reasoning.",
    },
    "qwen3-thinking-2507": {
        "models": ["Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen/Qwen3-30B-A3B-Thinking-2507",
                   "Qwen/Qwen3-4B-Thinking-2507", "Qwen/Qwen3-Next-80B-A3B-Thinking"],
        "chat_template": "Qwen-Qwen3-235B-A22B-Thinking-2507.jinja",
        "doc": "ChatML; the generation prompt always opens <think>\\n, so the output has only ...</think> and the "
        "reasoning region is already open when the model starts (prefix= is what tells the parser). Reasoning also "
        "ends where a <tool_call> starts without </think>, and a <think> written again right after the prompt's is "
        'absorbed. Tool calls <tool_call>{"name": ..., "arguments": ...}</tool_call> (JSON), content up to <|im_end|>.',
    },
    "qwen3.5": {
        "models": ["Qwen/Qwen3.5-0.8B ... Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3.6-35B-A3B", "Qwen/Qwen3.6-27B",
                   "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"],
        "chat_template": "Qwen-Qwen3.5-4B.jinja",
        "doc": "ChatML; reasoning_content in <think>...</think> (the prompt opens <think>\\n, so the output usually "
        "has only </think>; reasoning also ends where a <tool_call> starts without </think>, and a <think> the "
        "model writes again right after the prompt's is absorbed), tool calls in the Qwen3-Coder XML form "
        "<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call> (values kept as "
        "text and typed from the tools' schemas), content up to <|im_end|>. Proven on Qwen3.5-4B, Qwen3.5-0.8B, "
        "Qwen3.6-35B-A3B and Nemotron 3 Nano, which emits the same format.",
    },
    "kimi-k2": {
        "models": ["moonshotai/Kimi-K2-Instruct"],
        "chat_template": "moonshotai-Kimi-K2.jinja",
        "doc": "<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|> inside "
        "<|tool_calls_section_begin|>...<|tool_calls_section_end|>, content up to <|im_end|> (or an empty tool section).",
    },
    "llama4-pythonic": {
        "models": ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"],
        "chat_template": "vllm-meta-llama-Llama-4-pythonic.jinja",
        "doc": "Llama 4 with pythonic tool calls: the whole turn is a call list [get_weather(city='Paris'), ...] "
        "(optionally inside <|python_start|>...<|python_end|>), read by the python-call-list parser (never "
        "evaluated); recognised only at the start of the generation, so text that merely contains brackets stays "
        "content. Content ends at <|eot|> or <|eom|>. Proven against vLLM's pythonic chat template (the official "
        "Hub template prompts for JSON calls and is not in the fixtures). The chat template renders every argument "
        "as a double-quoted %s string (typed back with tools=), so only scalar arguments without quotes, "
        "backslashes or newlines round-trip. No reasoning.",
    },
    "llama4-json": {
        "models": ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"],
        "chat_template": "vllm-meta-llama-Llama-4-json.jinja",
        "doc": 'Llama 4 with JSON tool calls: the turn starts with {"name": ..., "parameters": {...}} (optionally '
        'after <|python_start|>), further calls follow directly or after "; "; recognised only at the start of the '
        "generation. Content ends at <|eot|> or <|eom|>. Proven against vLLM's JSON chat template for Llama 4. "
        'Calls written with "arguments" instead of "parameters" are kept under unparsed. No reasoning.',
    },
    "ministral-3": {
        "models": ["mistralai/Ministral-3-14B-Reasoning-2512 (and the other Ministral 3 reasoning sizes)",
                   "mistralai/Devstral-Small-2507"],
        "chat_template": "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
        "doc": "[THINK]...[/THINK] -> reasoning_content, [TOOL_CALLS]NAME[ARGS]{json} per call (no [CALL_ID]), content "
        "up to </s>. Devstral Small 2507 emits the same format without [THINK] (its unsloth chat template "
        "round-trips too). The Ministral 3 chat template reads reasoning only from 'thinking' content blocks, so "
        "reasoning is proven on raw outputs.",
    },
    "mistral-small-3.1": {
        "models": ["mistralai/Mistral-Small-3.1-24B-Instruct-2503"],
        "chat_template": "vllm-mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja",
        "doc": '[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...] (the older array form, one array per turn) up '
        "to </s>; content up to </s>. The chat template renders 9-character call ids inside the array; they are "
        "not kept (the model does not always write them). Content given with tool calls is dropped by the chat "
        "template. No reasoning.",
    },
    "granite-4": {
        "models": ["ibm-granite/granite-4.0-h-small, -h-tiny, -h-micro, -micro", "ibm-granite/granite-4.1-3b"],
        "chat_template": "ibm-granite-granite-4.0.jinja",
        "doc": '<tool_call>{"name": ..., "arguments": ...}</tool_call> (one per call) -> tool_calls, content up to '
        "<|end_of_text|>. Granite 4.0 and 4.1 chat templates differ only in the default system prompt; both "
        "round-trip. No reasoning.",
    },
    "phi-4-mini": {
        "models": ["microsoft/Phi-4-mini-instruct"],
        "chat_template": "microsoft-Phi-4-mini-instruct.jinja",
        "doc": 'functools[{"name": ..., "arguments": {...}}, ...] -> tool_calls (up to <|end|>), content up to '
        "<|end|>. The chat template renders assistant history as content only (no tool calls), so the round "
        "trip proves content; tool calls are proven on raw outputs. Text after the call list in the same turn "
        "is not split off (it makes the list malformed: kept under unparsed). No reasoning.",
    },
    "lfm2": {
        "models": ["LiquidAI/LFM2-8B-A1B", "LiquidAI/LFM2.5-8B-A1B",
                   "LiquidAI/LFM2.5-1.2B-Instruct (LFM2.5 instruct models)"],
        "chat_template": "LiquidAI-LFM2.5-8B-A1B.jinja",
        "doc": "ChatML; <think>...</think> -> thinking (the key the LFM2.5-8B-A1B chat template reads), pythonic "
        "calls <|tool_call_start|>[name(k='v', ...)]<|tool_call_end|> -> tool_calls (python-call-list, never "
        "evaluated), content up to <|im_end|> (also text after the calls). LFM2-8B-A1B and LFM2.5-Instruct "
        "chat templates render assistant history as content only. One call block per turn.",
    },
    "xlam-llama": {
        "models": ["Salesforce/Llama-xLAM-2-8B-fc-r", "Salesforce/Llama-xLAM-2-70B-fc-r"],
        "chat_template": "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja",
        "doc": 'Llama 3 headers; a tool-call turn is a bare JSON array [{"name": ..., "arguments": {...}}, ...] '
        "recognised only at the start of the generation (open_pattern anchored with ^), up to <|eot_id|>; "
        "content up to <|eot_id|>. Content given with tool calls is dropped by the chat template. No reasoning.",
    },
    "xlam-qwen": {
        "models": ["Salesforce/xLAM-1B-fc-r", "Salesforce/xLAM-3B-fc-r",
                   "Salesforce/Qwen-xLAM-32B-fc-r (Qwen-based xLAM, per vLLM docs)"],
        "chat_template": "vllm-Salesforce-Qwen-xLAM-fc-r.jinja",
        "doc": 'ChatML; a tool-call turn is a bare JSON array [{"name": ..., "arguments": {...}}, ...] recognised '
        "only at the start of the generation, up to <|im_end|>; content up to <|im_end|>. Content given with "
        "tool calls is dropped by the chat template. No reasoning.",
    },
    "apriel-1.5": {
        "models": ["ServiceNow-AI/Apriel-1.5-15b-Thinker"],
        "chat_template": "unsloth-Apriel-1.5.jinja",
        "doc": "The model reasons first ('Here are my reasoning steps:' ... up to [BEGIN FINAL RESPONSE]) -> "
        "reasoning_content, then the final response -> content (up to [END FINAL RESPONSE] or <|end|>), with tool "
        'calls as <tool_calls>[{"name": ..., "arguments": ...}, ...]</tool_calls> -> tool_calls (ids in the array '
        "are read, not kept). Reasoning is recognised only when the generation starts with that header (the model "
        "card: the model always starts so; a prompt that already ends with it works too). Proven against unsloth's "
        "fixed chat template, which renders history as the final response only (no reasoning) and concatenates "
        "arguments with |string (pass JSON text).",
    },
    "nemotron-nano-v2": {
        "models": ["nvidia/NVIDIA-Nemotron-Nano-9B-v2"],
        "chat_template": "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja",
        "doc": "<think>...</think> -> reasoning_content (the generation prompt opens <think>, or closes an empty one "
        'when /no_think is in the system or user text), <TOOLCALL>[{"name": ..., "arguments": ...}, ...]</TOOLCALL> '
        "-> tool_calls, content up to <SPECIAL_12>. The chat template strips reasoning from history and renders "
        "the last assistant turn's tool calls as a turn of their own, so the round trip proves content with "
        "/no_think; reasoning and tool calls are proven on raw outputs.",
    },
    "apertus": {
        "models": ["swiss-ai/Apertus-8B-Instruct-2509", "swiss-ai/Apertus-70B-Instruct-2509"],
        "chat_template": "vllm-swiss-ai-Apertus.jinja",
        "doc": "The turn follows <|assistant_start|>; <|inner_prefix|>...<|inner_suffix|> -> reasoning_content (written "
        "with Deliberation: enabled), calls <|tools_prefix|>[{\"NAME\": {ARGS}}, ...]<|tools_suffix|>: each call is a "
        "one-key object read with the transform steps {$key} / {$value} (transform_each), content up to "
        "<|assistant_end|>. Proven against vLLM's variant of the chat template (OpenAI-style tools) and the Hub one "
        "(llama.cpp's copy, which reads flat tools only and needs arguments as JSON text). Neither renders "
        "reasoning_content (only content 'blocks'), and both render tool results inside the assistant turn, so the "
        "round trip has no tool results in history; reasoning is proven on raw outputs.",
    },
    "gigachat3": {
        "models": ["ai-sage/GigaChat3-10B-A1.8B"],
        "chat_template": "ai-sage-GigaChat3-10B-A1.8B.jinja",
        "doc": "Roles end with <|role_sep|>\n and turns with <|message_sep|>\n\n; a call is its own 'function call' "
        'role turn holding {"name": ..., "arguments": ...} -> tool_calls (one per message: the chat template renders '
        "only the first), content up to <|message_sep|> (unless a function call follows) or </s>. No reasoning.",
    },
    # group g3 (2025-2026 families)
    "internlm2": {
        "models": ["internlm/internlm2_5-7b-chat (and the other InternLM2.5 function-calling models)"],
        "chat_template": "vllm-internlm-internlm2_5-7b-chat.jinja",
        "doc": 'ChatML; a call is <|action_start|><|plugin|>{"name": NAME, "parameters": {...}}<|action_end|> (the '
        'model writes "parameters"; vLLM\'s chat template renders "arguments": both are read). The name is captured '
        "by the open pattern and the argument object is the region's JSON body, so calls must write name first "
        "(both the model and the chat template do). Content up to <|im_end|>. Proven against vLLM's InternLM2 tool "
        "template. No reasoning.",
    },
    "functiongemma": {
        "models": ["google/functiongemma-270m-it (and fine-tunes that keep its format)"],
        "chat_template": "vllm-google-functiongemma-270m-it.jinja",
        "doc": "<start_function_call>call:NAME{key:<escape>VALUE<escape>,...}<end_function_call> per call -> tool_calls "
        "(values are the text between the <escape> markers, kept verbatim and typed from the tools' schemas: pass "
        "tools= to get 42 and True instead of '42' and 'true'), content up to <end_of_turn>. Proven against vLLM's "
        "FunctionGemma template, a short rewrite of the Hub one; it prints every value with {{ value }} (Python's "
        "str(): objects and lists come out as Python text, so only scalar arguments round-trip) and drops content "
        "from a tool-call turn. No reasoning.",
    },
    "llama3.2-pythonic": {
        "models": ["meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"],
        "chat_template": "vllm-meta-llama-Llama-3.2-pythonic.jinja",
        "doc": "Llama 3.2 with pythonic tool calls (Meta's Llama 3.2 prompt format): the whole turn is a call list "
        "[get_weather(city='San Francisco'), ...] (optionally after <|python_tag|>), read by the python-call-list "
        "parser (never evaluated) and recognised only at the start of the generation; content ends at <|eot_id|> "
        "or <|eom_id|>. Proven against vLLM's Llama 3.2 pythonic chat template, which prints every argument with "
        "'%s' (strings as bare words, city=San Francisco), so its tool-call turns cannot be read back: the round "
        "trip proves content, tool calls are proven on raw outputs. No reasoning.",
    },
    "deepseek-v4": {
        "models": ["deepseek-ai/DeepSeek-V4 (and DeepSeek-V4-Flash, with the same DSML format)"],
        "chat_template": "deepseek-ai-DeepSeek-V4.jinja",
        "doc": "<think>...</think> -> reasoning_content (the prompt ends with <think> when thinking is on, with </think> "
        'when off; reasoning also ends where a call block starts), DSML calls <｜DSML｜invoke name="N"><｜DSML｜parameter '
        'name="K" string="true|false">V</｜DSML｜parameter></｜DSML｜invoke> inside <｜DSML｜tool_calls>...</｜DSML｜tool_calls> '
        "(the wrapper may be missing) -> tool_calls, values kept as text and typed from the tools' schemas "
        '(string="false" values are JSON), content up to <｜end▁of▁sentence｜> or the end of the call block. Proven '
        "against llama.cpp's community template (not DeepSeek's own), with thinking on and off.",
    },
    "kimi-k3": {
        "models": ["moonshotai/Kimi-K3"],
        "chat_template": "moonshotai-Kimi-K3.jinja",
        "doc": "XTML channels: <|open|>think<|sep|>...<|close|>think<|sep|> -> reasoning_content (the generation prompt "
        "opens it; with thinking=False it opens the response channel instead), <|open|>response<|sep|>...<|close|>"
        'response<|sep|> -> content, <|open|>call tool="NAME" index="I"<|sep|><|open|>argument key="K" type="T"<|sep|>'
        "V<|close|>argument<|sep|>...<|close|>call<|sep|> inside <|open|>tools<|sep|> -> tool_calls (type=\"string\" "
        "values are raw text, others JSON: all kept as text and typed from the tools' schemas). The markup outside "
        "the channels (the tools wrapper, <|close|>message<|sep|>) is consumed by three helper fields (tool_section, "
        "tool_section_end, message_end) that close empty and so never appear in a message; anything else there is "
        "kept in unparsed. Proven against "
        "llama.cpp's Kimi K3 template (a port: a comment in it refers to a reference implementation). Tool and key "
        "attributes are read as written (&amp;/&quot; escapes are not undone).",
    },
    "gemma3-pythonic": {
        "models": ["google/gemma-3-4b-it, gemma-3-12b-it, gemma-3-27b-it (with vLLM's pythonic tool template)"],
        "chat_template": "vllm-google-gemma-3-it-pythonic.jinja",
        "doc": "Gemma 3 with pythonic tool calls: the turn starts with a call list [get_weather(city='Paris'), ...] "
        "(python-call-list, never evaluated; recognised only at the start of the generation; it ends at the first ')' "
        "followed by ']'), then optional content, up to <end_of_turn>. Proven against vLLM's Gemma 3 pythonic "
        "template (Gemma 3's own template has no tools), which writes a call's arguments with no separator between "
        "them (Jinja scoping drops its separator flag): only one-argument calls round-trip through it; calls with "
        "several arguments, as the model writes them, are proven on raw outputs. No reasoning.",
    },
}


# --------------------------------------------------------------------------- files


def _candidate_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here / "templates", here.parent / "templates"]


def templates_dir() -> Path:
    """The directory the shipped ``*.json`` templates are read from.

    Package data (``hf_response_templates/templates``, present in an installed wheel) wins; a source
    checkout or editable install falls back to the repository's top-level ``templates/``.
    """
    for candidate in _candidate_dirs():
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    raise FileNotFoundError(
        "no response templates found; looked in " + ", ".join(str(p) for p in _candidate_dirs())
    )


@lru_cache(maxsize=1)
def _index() -> dict[str, Path]:
    return {path.stem: path for path in sorted(templates_dir().glob("*.json"))}


@cache
def _load(name: str) -> dict:
    with open(_index()[name], encoding="utf-8") as f:
        return json.load(f)


def list_templates() -> list[str]:
    """Names of the shipped response templates, sorted.

    Example:
        >>> "gpt-oss" in list_templates()
        True
    """
    return sorted(_index())


def get_template(name: str) -> dict:
    """Return the shipped response template ``name`` as a fresh deep copy (plain JSON data).

    Raises:
        UnknownTemplateError: (a ``KeyError`` and ``ValueError``) for an unknown name; the message lists
            the available names.

    Example:
        >>> get_template("qwen3")["start_anchor"]
        '<|im_start|>assistant\\n'
    """
    if not isinstance(name, str) or name not in _index():
        raise UnknownTemplateError(
            f"unknown response template {name!r}; available: {', '.join(list_templates())}"
        )
    return copy.deepcopy(_load(name))


_VLLM = "vLLM 0.33.0 "
_EXTRACT_QWEN3 = (_VLLM + "vllm/parser/qwen3.py: (REASONING, TOOL_START) ends the reasoning and starts a call; "
                  "tests/reasoning/test_qwen3_reasoning_parser.py tool_call_no_think_end expects the call")
_KEEP_UNKNOWN = (_VLLM + "keeps calls to any function (ParserEngineConfig.validate_tool_names defaults to False; "
                 "vllm/tool_parsers/hermes_tool_parser.py never checks names); SGLang's JSON detectors drop them "
                 "(python/sglang/srt/function_call/base_format_detector.py parse_base_json): 'unparsed' gives that")
_REJECT_UNKNOWN = ("rejects calls to functions not in the request's tools (ParserEngineConfig validate_tool_names=True): "
                   "'unparsed' gives that. The default stays 'keep': a shipped template carries no 'policy' key, which "
                   "Transformers' native parser refuses (unknown top-level key)")
_CONTENT_AFTER_HERMES = (
    "content (nothing is lost). vLLM's and SGLang's hermes parsers keep only the text before the first "
    "<tool_call> (vllm/tool_parsers/hermes_tool_parser.py extract_tool_calls; sglang hermes_detector.py "
    "detect_and_parse): 'unparsed' gives their message for text after the last call, without deleting it")
_FAILED_CALL = ("unparsed (neutral): a call whose body does not parse is a failed call, visible as one (strict "
                "parsing raises). ")
_MALFORMED_HERMES = (
    _FAILED_CALL + _VLLM + "vllm/tool_parsers/hermes_tool_parser.py extract_tool_calls returns the model output as "
    "content when a call's JSON does not load (tests/tool_parsers/test_hermes_tool_parser.py "
    "test_hermes_parser_non_streaming_tool_call_invalid_json): 'content' gives that for the failed region (vLLM "
    "makes the whole output content, the well-formed calls too)")

#: Where each family's parse-policy defaults come from, and where a vendor's server reads a case differently
#: (`policy.ParsePolicy`; the values themselves are the template's ``"policy"`` key, neutral where it has none:
#: no shipped template has one, so that Transformers' native parser still reads them). Families not listed use the neutral defaults
#: (extract, keep, content, unparsed): see `NEUTRAL_POLICY_SOURCE`.
POLICY_SOURCES: dict[str, dict[str, str]] = {
    "qwen3": {"tool_calls_in_reasoning": _EXTRACT_QWEN3, "unknown_tools": _KEEP_UNKNOWN,
              "text_after_tool_calls": _CONTENT_AFTER_HERMES, "malformed_tool_calls": _MALFORMED_HERMES},
    "qwen3.5": {"tool_calls_in_reasoning": _EXTRACT_QWEN3, "unknown_tools": _KEEP_UNKNOWN,
                "text_after_tool_calls": "content; " + _VLLM + "tests/tool_parsers/test_qwen3coder_tool_parser.py "
                "expects content around XML calls"},
    "qwen3-thinking-2507": {"tool_calls_in_reasoning": _EXTRACT_QWEN3, "unknown_tools": _KEEP_UNKNOWN,
                            "malformed_tool_calls": _MALFORMED_HERMES},
    "qwen3-coder": {"unknown_tools": _KEEP_UNKNOWN},
    "hermes3": {"unknown_tools": _KEEP_UNKNOWN, "text_after_tool_calls": _CONTENT_AFTER_HERMES,
                "malformed_tool_calls": _MALFORMED_HERMES},
    "smollm3": {"unknown_tools": _KEEP_UNKNOWN + " (vLLM serves SmolLM3 with the hermes parser)",
                "text_after_tool_calls": _CONTENT_AFTER_HERMES, "malformed_tool_calls": _MALFORMED_HERMES},
    "llama3": {"malformed_tool_calls": _FAILED_CALL + _VLLM + "vllm/tool_parsers/llama_tool_parser.py "
               "extract_tool_calls returns the model output as content when the JSON does not load or has neither "
               "parameters nor arguments (tests/tool_parsers/test_llama3_json_tool_parser.py "
               "test_extract_tool_calls_invalid_json, ..._missing_parameters_and_arguments_key): 'content' gives that"},
    "glm-4.6": {"tool_calls_in_reasoning": _VLLM + "vllm/parser/glm47_moe.py (the glm45 tool parser): "
                "(REASONING, TOOL_START) ends the reasoning and starts a call",
                "unknown_tools": "keep; " + _VLLM + "vllm/parser/glm47_moe.py, used for GLM-4.5/4.6 too ("
                "vllm/tool_parsers/__init__.py glm45 -> glm47_moe_tool_parser), " + _REJECT_UNKNOWN},
    "glm-4.7": {"tool_calls_in_reasoning": _VLLM + "vllm/parser/glm47_moe.py: (REASONING, TOOL_START) ends the "
                "reasoning and starts a call",
                "unknown_tools": "keep; " + _VLLM + "vllm/parser/glm47_moe.py " + _REJECT_UNKNOWN},
    "minimax-m2": {"tool_calls_in_reasoning": _VLLM + "vllm/parser/minimax_m2.py: (REASONING, TOOL_START) ends "
                   "the reasoning and starts a call",
                   "unknown_tools": "keep; " + _VLLM + "vllm/parser/minimax_m2.py " + _REJECT_UNKNOWN},
    "gemma4": {"tool_calls_in_reasoning": _VLLM + "vllm/parser/gemma4.py: (REASONING, TOOL_START) ends the "
               "reasoning and starts a call; Ollama left such a call in the thinking (ollama/ollama#18307): "
               "'reasoning' gives that",
               "malformed_tool_calls": _FAILED_CALL + _VLLM + "vllm/parser/gemma4.py makes a call "
               "cut off mid-arguments a call with the arguments written so far (tests/tool_parsers/"
               "test_gemma4_tool_parser.py test_incomplete_tool_call); neither value gives that"},
    "kimi-k2": {"unknown_tools": _VLLM + "vllm/parser/kimi_k2.py: validate_tool_names=False (calls kept)"},
    "kimi-k2-thinking": {"tool_calls_in_reasoning": _VLLM + "vllm/parser/kimi_k2.py: (REASONING, "
                         "TOOL_SECTION_START) ends the reasoning",
                         "unknown_tools": _VLLM + "vllm/parser/kimi_k2.py: validate_tool_names=False (calls kept)"},
    "deepseek-v3.1": {"tool_calls_in_reasoning": "extract: the template's rule (DeepSeek-V3.1 calls tools in "
                      "non-thinking mode); " + _VLLM + "vllm/reasoning/deepseek_r1_reasoning_parser.py keeps "
                      "everything before </think> as reasoning: 'reasoning' gives that",
                      "text_after_tool_calls": "content: " + _VLLM + "vllm/tool_parsers/deepseekv3_tool_parser.py "
                      "keeps it; its deepseekv31_tool_parser.py keeps only the text before the calls "
                      "(model_output[:find(tool_calls_begin)]): 'unparsed' gives that"},
    "deepseek-r1": {"tool_calls_in_reasoning": "extract: the template's rule; " + _VLLM
                    + "vllm/reasoning/deepseek_r1_reasoning_parser.py keeps everything before </think> as "
                    "reasoning: 'reasoning' gives that"},
    "gpt-oss": {"tool_calls_in_reasoning": "not applicable: a harmony tool call is a message of its own with a "
                "recipient (to=...), on the analysis or commentary channel, never text inside the analysis "
                "message; the template has no reasoning rule, so the key changes nothing"},
}

#: The source of the neutral defaults, for families `POLICY_SOURCES` does not list.
NEUTRAL_POLICY_SOURCE = (
    "neutral defaults: extract (the template's own rule, if it has one), keep, content, unparsed: nothing the "
    "model wrote is moved out of the message unless a vendor's server is known to do so, and a call that does "
    "not parse is a failed call, not prose")


def template_info(name: str) -> dict[str, Any]:
    """Documentation of a shipped template: ``{"models": [...], "chat_template": ..., "doc": ..., "policy": ...}``.

    ``policy`` holds the family's parse-policy defaults (``"defaults"``, the template's ``"policy"`` key with
    every key filled in) and where each comes from (``"sources"``, see `POLICY_SOURCES`).
    """
    from .policy import DEFAULT_POLICY, policy_from_template

    template = get_template(name)  # validates the name
    info = copy.deepcopy(TEMPLATE_INFO.get(name, {"models": [], "doc": ""}))
    defaults = (policy_from_template(template.get("policy")) or DEFAULT_POLICY).as_dict()
    sources = POLICY_SOURCES.get(name, {})
    info["policy"] = {"defaults": defaults, "sources": {key: sources.get(key, NEUTRAL_POLICY_SOURCE) for key in defaults}}
    return info


# --------------------------------------------------------------------------- detection


@dataclass(frozen=True)
class _Rule:
    name: str
    #: every one of these must appear in the chat template
    all_of: tuple[str, ...] = ()
    #: at least one of these must appear (if non-empty)
    any_of: tuple[str, ...] = ()
    #: none of these may appear
    none_of: tuple[str, ...] = ()
    #: when the tokenizer's vocabulary is known, at least one of these must be a token in it
    tokens: tuple[str, ...] = ()

    def matches(self, text: str, vocab: frozenset[str] | None) -> bool:
        if not all(marker in text for marker in self.all_of):
            return False
        if self.any_of and not any(marker in text for marker in self.any_of):
            return False
        if any(marker in text for marker in self.none_of):
            return False
        if vocab and self.tokens and not any(token in vocab for token in self.tokens):
            return False
        return True


#: the generation prompt of Qwen3 Thinking-2507 as written in its chat template source ("\n" escaped)
_QWEN3_THINKING_PROMPT = "'<|im_start|>assistant\\n<think>\\n'"

# The rules are written to be mutually exclusive on the real chat templates: each names markers that
# only its family's template contains (the delimiters its assistant turns are rendered with), and the
# ChatML families exclude each other's markers explicitly. If two rules still match, detection
# returns None rather than guess.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "gpt-oss",
        all_of=("<|start|>", "<|channel|>", "<|message|>", "<|call|>"),
        tokens=("<|channel|>",),
    ),
    _Rule(
        "cohere-command-r7b",
        all_of=("<|START_THINKING|>", "<|START_ACTION|>", "<|START_RESPONSE|>", "<|CHATBOT_TOKEN|>"),
        tokens=("<|START_ACTION|>",),
    ),
    _Rule(
        "smollm3",
        all_of=("<|im_start|>", "/no_think", "<think>"),
        none_of=("<function=", "reasoning_content"),
    ),
    _Rule(
        "qwen3-coder",
        all_of=("<|im_start|>", "<tool_call>", "<function=", "<parameter="),
        none_of=("<think>",),
    ),
    # Qwen3.5 / 3.6 and Nemotron 3 Nano: the Qwen3-Coder XML calls plus <think> reasoning
    _Rule(
        "qwen3.5",
        all_of=("<|im_start|>", "<tool_call>", "<function=", "<parameter=", "<think>"),
    ),
    _Rule(
        "qwen3",
        all_of=("<|im_start|>", "<tool_call>", "<think>", "reasoning_content"),
        none_of=("<function=", "/no_think", "<arg_key>", _QWEN3_THINKING_PROMPT),
    ),
    _Rule(
        "deepseek-v3.2",
        all_of=("<｜Assistant｜>", "｜DSML｜", "function_calls>", "invoke name=", "parameter name="),
    ),
    _Rule(
        "seed-oss",
        all_of=("<seed:bos>", "<seed:eos>", "<seed:think>", "<seed:tool_call>", "<function="),
    ),
    _Rule(
        "hunyuan-a13b",
        all_of=("<|startoftext|>", "<|extra_0|>", "<|extra_4|>", "<tool_calls>"),
    ),
    _Rule(
        "minimax-m2",
        all_of=("]~b]ai", "<minimax:tool_call>", "<invoke name="),
    ),
    # Qwen3 Thinking-2507 / Qwen3-Next Thinking: the generation prompt itself opens <think>
    _Rule(
        "qwen3-thinking-2507",
        all_of=("<|im_start|>", "<tool_call>", "reasoning_content", _QWEN3_THINKING_PROMPT),
        none_of=("<function=", "/no_think", "<arg_key>"),
    ),
    # Xiaomi MiMo: the Qwen3 format (a reasoning model) with a chat template that renders no <think>
    _Rule(
        "qwen3",
        all_of=("<|im_start|>", "<tool_call>", "You are MiMo, an AI assistant developed by Xiaomi."),
        none_of=("<function=",),
    ),
    _Rule(
        "hermes3",
        all_of=("<|im_start|>", "<tool_call>", "<tool_response>"),
        none_of=("<think>", "<function=", "reasoning_content", "/no_think", "You are MiMo"),
    ),
    _Rule(
        "deepseek-v3.1",
        all_of=("<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>", "<｜Assistant｜></think>"),
        none_of=("```json",),
    ),
    _Rule(
        "mistral-small-3.2",
        all_of=("[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"),
    ),
    _Rule(
        "glm-4.6",
        all_of=("<|assistant|>", "<arg_key>", "<arg_value>", "<think>"),
        none_of=("<|assistant|>{{- '</think>'",),
    ),
    # GLM-4.7 / GLM-5: the thinking-off generation prompt is "<|assistant|></think>" (no "/nothink")
    _Rule(
        "glm-4.7",
        all_of=("<|assistant|>", "<arg_key>", "<arg_value>", "<think>", "<|assistant|>{{- '</think>'"),
        none_of=("/nothink",),
    ),
    _Rule(
        "llama3",
        all_of=("<|start_header_id|>", "<|eot_id|>", "<|python_tag|>", '"parameters": '),
        none_of=("<|im_start|>", "<tool_call>"),
        tokens=("<|eot_id|>",),
    ),
    _Rule(
        "granite-3.3",
        all_of=("<|start_of_role|>", "<|end_of_role|>", "<|tool_call|>", "<think></think>", "<response></response>"),
        tokens=("<|start_of_role|>",),
    ),
    _Rule(
        "deepseek-r1",
        all_of=("<｜Assistant｜><think>", "<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>", "```json"),
        none_of=("<｜Assistant｜></think>",),
        tokens=("<｜Assistant｜>",),
    ),
    _Rule(
        "gemma4",
        all_of=("<|turn>", "<turn|>", "<|tool_call>", "<tool_call|>", '<|"|>'),
        tokens=("<|turn>",),
    ),
    _Rule(
        "kimi-k2",
        all_of=("<|im_assistant|>", "<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"),
        none_of=("<think>",),
    ),
    # Kimi K2 Thinking / K2.5: the same section plus <think> reasoning, the call id rendered as the header
    _Rule(
        "kimi-k2-thinking",
        all_of=("<|im_assistant|>", "<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>", "<think>"),
    ),
    _Rule(
        "llama4-pythonic",
        all_of=("<|header_start|>", "<|eot|>", "[func_name1(param1=value1, param2=value2)"),
        tokens=("<|header_start|>",),
    ),
    _Rule(
        "llama4-json",
        all_of=("<|header_start|>", "<|eot|>", '"parameters": dictionary of argument name and its value'),
        none_of=("[func_name1(",),
        tokens=("<|header_start|>",),
    ),
    _Rule(
        "ministral-3",
        all_of=("[TOOL_CALLS]", "[ARGS]"),
        none_of=("[CALL_ID]",),
    ),
    _Rule(
        "mistral-small-3.1",
        all_of=("[TOOL_CALLS] [", "[AVAILABLE_TOOLS]", '"call_id"'),
        none_of=("[ARGS]", "[CALL_ID]"),
    ),
    _Rule(
        "granite-4",
        all_of=("<|start_of_role|>", "<|end_of_role|>", "<tool_call>", "<tool_response>"),
        none_of=("<|tool_call|>",),
        tokens=("<|start_of_role|>",),
    ),
    _Rule(
        "phi-4-mini",
        all_of=("<|assistant|>", "<|tool|>", "<|/tool|>", "<|end|>"),
    ),
    _Rule(
        "lfm2",
        all_of=("<|im_start|>", "List of tools: "),
        none_of=("<tool_call>",),
    ),
    _Rule(
        "xlam-llama",
        all_of=("<|start_header_id|>", "<|eot_id|>", "developed by Salesforce xLAM team"),
    ),
    _Rule(
        "xlam-qwen",
        all_of=("<|im_start|>", "developed by Salesforce xLAM team"),
        none_of=("<|start_header_id|>",),
    ),
    _Rule(
        "apriel-1.5",
        all_of=("<|assistant|>", "<|end|>", "[BEGIN FINAL RESPONSE]", "<tool_calls>"),
    ),
    _Rule(
        "nemotron-nano-v2",
        all_of=("<SPECIAL_11>Assistant", "<SPECIAL_12>", "<TOOLCALL>", "</TOOLCALL>"),
    ),
    _Rule(
        "gigachat3",
        all_of=("<|role_sep|>", "<|message_sep|>", "function call"),
    ),
    _Rule(
        "internlm2",
        all_of=("<|im_start|>", "<|action_start|>", "<|plugin|>", "<|action_end|>"),
    ),
    _Rule(
        "functiongemma",
        all_of=("<start_of_turn>", "<start_function_call>", "<end_function_call>", "<escape>"),
    ),
    _Rule(
        "llama3.2-pythonic",
        all_of=("<|start_header_id|>", "<|eot_id|>", "[func_name1(params_name1=params_value1"),
        none_of=("<start_of_turn>",),
        tokens=("<|eot_id|>",),
    ),
    # Llama 3.2 JSON tool calls (its own chat template and vLLM's): the Llama 3.1 format, without <|python_tag|>
    _Rule(
        "llama3",
        all_of=("<|start_header_id|>", "<|eot_id|>", '"parameters": ',
                "please respond with JSON for a function call"),
        none_of=("<|im_start|>", "<tool_call>", "<|python_tag|>"),
        tokens=("<|eot_id|>",),
    ),
    _Rule(
        "deepseek-v4",
        all_of=("<｜Assistant｜>", "｜DSML｜", "tool_calls>", "invoke name=", "parameter name="),
        none_of=("function_calls>",),
    ),
    _Rule(
        "kimi-k3",
        all_of=("<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>", "'argument'", "'response'"),
    ),
    _Rule(
        "gemma3-pythonic",
        all_of=("<start_of_turn>", "<end_of_turn>", "[func_name1(params_name1=params_value1"),
        none_of=("<|start_header_id|>",),
    ),
    _Rule(
        "apertus",
        all_of=("<|assistant_start|>", "<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>"),
        tokens=("<|tools_prefix|>",),
    ),
)


def _template_texts(obj: Any) -> list[str]:
    """The chat template source(s) of a tokenizer-like object or a template given directly."""
    template = obj if isinstance(obj, (str, Mapping, list)) else getattr(obj, "chat_template", None)
    if template is None:
        return []
    if isinstance(template, str):
        return [template]
    if isinstance(template, Mapping):  # {"default": ..., "tool_use": ...}
        return [t for t in template.values() if isinstance(t, str)]
    if isinstance(template, list):  # [{"name": ..., "template": ...}] as in old tokenizer_config.json
        return [
            t["template"] for t in template if isinstance(t, Mapping) and isinstance(t.get("template"), str)
        ]
    return []


def _vocabulary(obj: Any) -> frozenset[str] | None:
    """Special/added tokens of a tokenizer, or None when the object exposes none."""
    if isinstance(obj, (str, Mapping, list)):
        return None
    tokens: set[str] = set()
    decoder = getattr(obj, "added_tokens_decoder", None)
    if isinstance(decoder, Mapping):
        tokens.update(str(getattr(t, "content", t)) for t in decoder.values())
    for attr in ("all_special_tokens", "additional_special_tokens"):
        value = getattr(obj, attr, None)
        if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
            tokens.update(str(t) for t in value)
    get_vocab: Callable[[], Mapping[str, int]] | None = getattr(obj, "get_vocab", None)
    if callable(get_vocab):
        try:
            vocab = get_vocab()
        except Exception:  # noqa: BLE001 - a tokenizer without a usable vocab just gives no evidence
            vocab = None
        if isinstance(vocab, Mapping):
            tokens.update(vocab)
    return frozenset(tokens) or None


# --------------------------------------------------------------------------- fingerprints

#: The table of the exact chat templates each shipped template was proven against (generated from
#: ``tests/fixtures/chat_templates/`` by ``scripts/make_fingerprints.py``; a test checks it is current).
FINGERPRINTS_FILE = Path(__file__).resolve().parent / "fingerprints.json"


def chat_template_fingerprint(chat_template: str) -> str:
    """The normalised hash of a chat template: SHA-256 of its text with CRLF line endings made LF and
    surrounding whitespace removed (how saving and copying templates varies), nothing else.

    Example:
        >>> chat_template_fingerprint("{{ x }}\\r\\n") == chat_template_fingerprint("{{ x }}")
        True
    """
    text = chat_template.replace("\r\n", "\n").strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _fingerprints() -> dict[str, str]:
    """``{fingerprint: template name}`` of the shipped table (names not shipped are left out)."""
    try:
        data = json.loads(FINGERPRINTS_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    available = set(list_templates())
    return {fp: row["template"] for fp, row in data["fingerprints"].items() if row["template"] in available}


_MISSING = object()
_match_cache: dict[str, Any] = {}


def _fingerprint_of_text(text: str) -> str | None:
    hit = _match_cache.get(text, _MISSING)
    if hit is _MISSING:
        hit = _fingerprints().get(chat_template_fingerprint(text))
        if len(_match_cache) >= 64:
            _match_cache.clear()
        _match_cache[text] = hit
    return hit  # type: ignore[return-value]


def fingerprint_match(tokenizer_or_chat_template: Any) -> str | None:
    """The shipped template whose proven chat template is *exactly* this one (see
    :func:`chat_template_fingerprint`), or ``None``. With named chat templates (``default``, ``tool_use``),
    those that are known must all be of one family.

    Example:
        >>> fingerprint_match("{{ messages }}") is None
        True
    """
    names = {_fingerprint_of_text(text) for text in _template_texts(tokenizer_or_chat_template)}
    names.discard(None)
    return names.pop() if len(names) == 1 else None  # type: ignore[return-value]


def build_fingerprint_table(folder: str | os.PathLike[str], proven: Mapping[str, str]) -> dict[str, Any]:
    """The fingerprint table for the chat templates in ``folder`` that a shipped template was proven
    against: ``proven`` maps a file name there to that template's name (the round-trip matrix of the test
    suite, ``tests/_chat_render.py``). A fixture proven for two templates, or an unknown template name,
    raises ``ValueError``.

    ``scripts/make_fingerprints.py`` writes it to :data:`FINGERPRINTS_FILE`.
    """
    rows: dict[str, dict[str, str]] = {}
    available = set(list_templates())
    for file_name, name in sorted(proven.items()):
        if name not in available:
            raise ValueError(f"{file_name}: proven for {name!r}, which is not a shipped template")
        text = (Path(folder) / file_name).read_text(encoding="utf-8")
        key = chat_template_fingerprint(text)
        if key in rows and rows[key]["template"] != name:
            raise ValueError(f"{file_name}: the same chat template as {rows[key]['chat_template']} "
                             f"({rows[key]['template']}) but proven for {name!r}")
        rows.setdefault(key, {"template": name, "chat_template": file_name})
    return {
        "about": "sha256 of each chat template a shipped response template was proven against, CRLF -> LF and "
        "stripped (library.chat_template_fingerprint); generated by scripts/make_fingerprints.py",
        "fingerprints": dict(sorted(rows.items(), key=lambda kv: (kv[1]["template"], kv[1]["chat_template"]))),
    }


def _detect_by_markers(texts: list[str], vocab: frozenset[str] | None) -> str | None:
    available = set(list_templates())
    found: set[str] = set()
    for text in texts:
        names = {rule.name for rule in _RULES if rule.name in available and rule.matches(text, vocab)}
        if len(names) > 1:
            return None  # ambiguous: never guess between two formats
        found |= names
    return found.pop() if len(found) == 1 else None


def detect_template(tokenizer_or_chat_template: Any) -> str | None:
    """Name of the shipped response template that fits a tokenizer's chat template, or ``None``.

    Accepts a chat template string, a dict of named chat templates, or any object with a
    ``chat_template`` attribute (a tokenizer or processor). A chat template that is exactly one the
    library was proven against (:func:`fingerprint_match`) gives its family; otherwise each family's
    markers are looked for, and when the object also exposes its vocabulary (``get_vocab()``,
    ``added_tokens_decoder``, ``all_special_tokens``), the family's delimiter tokens must be in it.

    Detection never guesses: a template that matches no family (e.g. plain ChatML without tools), or
    named templates that point to different families, give ``None``.

    Example:
        >>> detect_template("{{ '<|im_start|>' + message.role }}") is None
        True
    """
    vocab = _vocabulary(tokenizer_or_chat_template)
    exact = fingerprint_match(tokenizer_or_chat_template)
    if exact is not None:
        return None if _contradicted(exact, vocab) else exact
    return _detect_by_markers(_template_texts(tokenizer_or_chat_template), vocab)


def exact_match(tokenizer: Any) -> str | None:
    """:func:`fingerprint_match`, unless the tokenizer's vocabulary lacks the family's delimiter tokens
    (what zero configuration relies on: an exact chat template, and no evidence against it)."""
    name = fingerprint_match(tokenizer)
    return None if name is None or _contradicted(name, _vocabulary(tokenizer)) else name


def _contradicted(name: str, vocab: frozenset[str] | None) -> bool:
    """The vocabulary is known and has none of the family's delimiter tokens."""
    rule = next((r for r in _RULES if r.name == name), None)
    return bool(vocab and rule and rule.tokens and not any(t in vocab for t in rule.tokens))


def attach(tokenizer: Any, name: str = "auto", *, derive: bool = False) -> str:
    """Set ``tokenizer.response_template`` to a shipped template and return its name.

    Args:
        tokenizer: any object accepting a ``response_template`` attribute.
        name: a name from :func:`list_templates`, or ``"auto"`` to use :func:`detect_template`.
        derive: with ``"auto"``, when no shipped family fits, derive the template from the tokenizer's
            chat template (:func:`hf_response_templates.derive.derive`) and attach it if its proof
            passes; returns ``"derived"``.

    Raises:
        UnknownTemplateError: ``name`` is not a shipped template.
        NoTemplateDetectedError: ``name="auto"`` and the chat template matches no shipped family.

    Example:
        >>> attach(tokenizer, "qwen3")  # doctest: +SKIP
        'qwen3'
    """
    if name == "auto":
        detected = detect_template(tokenizer)
        if detected is None and derive:
            return _attach_derived(tokenizer)
        if detected is None:
            raise NoTemplateDetectedError(
                "could not recognise this tokenizer's chat template as one of the shipped families "
                f"({', '.join(list_templates())}); pass name= explicitly, or write a response template "
                "for it and assign tokenizer.response_template yourself"
            )
        name = detected
    tokenizer.response_template = get_template(name)
    return name


def _attach_derived(tokenizer: Any) -> str:
    """``attach(..., derive=True)`` when no shipped family fits: a proven derived template, or an error."""
    from .derive import derive

    result = derive(tokenizer, use_library=False)
    if not result.ok:
        raise NoTemplateDetectedError(
            "no shipped family fits this chat template and the derived template is not proven: "
            + "; ".join(result.problems[:3])
        )
    tokenizer.response_template = result.template
    return "derived"
