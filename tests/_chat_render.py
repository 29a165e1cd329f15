"""Shared helpers for the ready-template tests: the fixture chat templates, what each family's chat
template can represent, and hypothesis strategies that build conversations within those limits.

Every restriction below is a property of the *chat template* (what it renders), written down so the
round-trip test can filter such inputs out with the reason attached; the equality check itself is
never relaxed. templates/README.md documents the same limits for users.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import regex
from hypothesis import strategies as st

FIXTURES = Path(__file__).parent / "fixtures" / "chat_templates"


def _examples() -> int:
    """Hypothesis examples per template: 40 under the default profile, scaled with the loaded profile
    (tests/conftest.py: dev 20% -> 8, ci 400% -> capped at 60, since CI runs the suite on two
    Transformers versions on 2 cores); ``HF_RT_EXAMPLES`` overrides it."""
    if os.environ.get("HF_RT_EXAMPLES"):
        return int(os.environ["HF_RT_EXAMPLES"])
    from hypothesis import settings

    return min(60, max(8, 40 * settings().max_examples // 100))


#: hypothesis examples per template
EXAMPLES = _examples()


def chat_template(filename: str) -> str:
    return (FIXTURES / filename).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Family:
    """What a family's chat template can carry through a round trip."""

    name: str
    fixture: str
    #: the key the chat template reads reasoning from (None: it renders no reasoning)
    reasoning_key: str | None = None
    #: the chat template renders assistant tool calls
    tool_calls: bool = True
    #: the chat template renders content next to tool calls (False: it drops or moves it)
    content_with_tool_calls: bool = True
    #: most tool calls one assistant message can render (None: unlimited)
    max_tool_calls: int | None = None
    #: reasoning is rendered only in messages that have tool calls (Command R7B's tool_plan)
    reasoning_only_with_tool_calls: bool = False
    #: chat-template variable that switches thinking, and the values to test
    thinking_kwarg: str | None = None
    thinking_values: tuple[Any, ...] = (None,)
    #: the chat template concatenates arguments as a string (DeepSeek): pass JSON text
    arguments_as_json_text: bool = False
    #: history may contain tool results before the final assistant message
    tool_history: bool = True
    special_tokens: dict[str, str] = field(default_factory=dict)
    #: strings argument values may not contain (they would end the argument region early)
    argument_delimiters: tuple[str, ...] = ()
    #: text the chat template itself rejects or rewrites inside content/reasoning
    content_forbidden: tuple[str, ...] = ()
    #: thinking values for which the checked assistant message must follow tool results: the chat
    #: template's normal generation prompt is something its history turns never render (DeepSeek-R1's
    #: "<think>\n", Gemma 4's empty thought channel with thinking off), but the prompt after tool
    #: results is continued by the rendered turn
    final_after_tool_results: tuple[Any, ...] = ()
    #: `content` of the assistant message that calls a tool in the history (DeepSeek-R1 renders tool
    #: calls only when content is None)
    tool_call_content: Any = ""
    #: the chat template renders nested argument objects with bare keys and None as `None` (Gemma 4):
    #: nested keys are identifiers and arguments hold no nulls
    bare_argument_keys: bool = False
    #: thinking values for which the checked assistant message must carry reasoning: the chat template
    #: renders a turn without reasoning differently from its thinking prompt (Nemotron 3 prompts with
    #: "<think>\n" but renders a turn without reasoning as "<think></think>")
    reasoning_required: tuple[Any, ...] = ()
    #: tool-call ids in the model's native form, e.g. "functions.{name}:{index}" (Kimi K2 Thinking renders
    #: the id as the call header, so the name is read back from it and the id is kept)
    call_id_format: str | None = None
    #: the tool-call turn right before the checked message carries reasoning (Command R7B needs a
    #: tool_plan there). False: the chat template drops that reasoning once a turn without tool calls
    #: follows, so the prompt (which keeps it) and the render would disagree (Kimi K2 Thinking)
    tool_loop_reasoning: bool = True
    #: the chat template renders object/array arguments with Python's str() (Seed-OSS: `{'a': 1}`), which
    #: no parser can tell from text: only scalar arguments are generated
    scalar_arguments: bool = False
    #: an assistant message without tool calls must have content (Seed-OSS renders an empty one without
    #: its newline and end token, which does not continue the prompt; Ministral 3 rejects it)
    content_required: bool = False
    #: the chat template needs an id on every tool call in history (the hypothesis strategies give them;
    #: verify.sample_conversations does not)
    call_ids_required: bool = False
    #: only an assistant turn with tool calls continues the generation prompt (vLLM's Llama 4 JSON template
    #: prompts with "\n<|header_start|>assistant..." but renders a plain turn without the newline)
    final_tool_calls_only: bool = False
    #: a system message every conversation starts with (Nemotron Nano v2 switches thinking off with
    #: "/no_think" there; it reads no template variable)
    system_prompt: str | None = None
    #: a predicate on a tool call's arguments dict: only arguments the chat template renders in a form
    #: that can be read back (pythonic chat templates print values with Python's `%s` / `|string`)
    arguments_ok: Callable[[dict], bool] | None = None
    #: the chat template reads tools in the flat form {"name", "description", "parameters"} and fails on
    #: OpenAI-style {"type": "function", "function": {...}} (Apertus's Hub template): tools are passed flat
    flat_tools: bool = False

    def tools_for(self, tools: list[dict]) -> list[dict]:
        """`tools` in the form this chat template reads (see `flat_tools`)."""
        return [t.get("function", t) for t in tools] if self.flat_tools else tools


# --------------------------------------------------------------------------- pythonic chat templates


def _scalars_only(arguments: dict) -> bool:
    """Llama 4 (vLLM's pythonic template) prints every argument as `key="%s"`: a string, number or bool
    comes back through tools= typing; a list or dict would be its Python repr inside a string."""
    return all(isinstance(v, (str, int, float, bool)) for v in arguments.values())


def _printable_lists(arguments: dict) -> bool:
    """LFM2.5 prints lists with Jinja's `|string` (Python's repr): repr escapes non-printable characters
    as `\\xNN`, which no JSON-like reader takes back."""
    return all(
        all(isinstance(item, str) and item.isprintable() for item in v)
        for v in arguments.values()
        if isinstance(v, list)
    )


def _no_call_list_end(arguments: dict) -> bool:
    """vLLM's Gemma 3 pythonic template writes the calls as [f(k=JSON, ...)] and the content right after the
    "]": a call list ends at the first ")" followed by "]" (spaces between allowed), so argument text (as
    rendered with tojson) must not hold one. And the template's `{% set first = false %}` is scoped to its loop
    body (Jinja), so it never writes the ", " between two arguments (`f(a=1b=2)`, which no reader can split):
    only calls with at most one argument can be rendered readably."""
    return len(arguments) <= 1 and regex.search(r"\)\s*\]", json.dumps(arguments, ensure_ascii=False)) is None


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        # SmolLM3's chat template renders assistant history as `content` only: reasoning and tool calls
        # are not rendered (they are covered by tests/test_templates_raw_outputs.py).
        Family(
            "smollm3",
            "HuggingFaceTB-SmolLM3-3B.jinja",
            tool_calls=False,
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
            # the chat template rewrites "/think" and "/no_think" in the system prompt only; keep
            # them out of content anyway so the test does not depend on that
            content_forbidden=("/think", "/no_think"),
        ),
        Family(
            "qwen3",
            "Qwen-Qwen3-0.6B.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
        ),
        Family(
            "qwen3-coder",
            "Qwen3-Coder.jinja",
            argument_delimiters=("</parameter>", "</tool_call>", "<parameter="),
        ),
        # gpt-oss: one tool call per message; content given with tool calls is rendered in the analysis
        # channel (it comes back as `thinking`), so it is not generated together with tool calls.
        Family(
            "gpt-oss",
            "openai-gpt-oss-120b.jinja",
            reasoning_key="thinking",
            content_with_tool_calls=False,
            max_tool_calls=1,
        ),
        # Command R7B: tool_plan is rendered only with tool calls, content only without them.
        Family(
            "cohere-command-r7b",
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
            reasoning_key="tool_plan",
            content_with_tool_calls=False,
            reasoning_only_with_tool_calls=True,
            special_tokens={"bos_token": "<BOS_TOKEN>"},
        ),
        # Hermes 3: content is dropped when tool calls are present; after a tool result the chat template
        # ends the tool turn differently in the prompt ("</tool_response><|im_end|>") and in history
        # ("</tool_response>\n<|im_end|>"), so a turn after tool results cannot be split out.
        Family(
            "hermes3",
            "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
            content_with_tool_calls=False,
            tool_history=False,
        ),
        Family("kimi-k2", "moonshotai-Kimi-K2.jinja"),
        Family(
            "glm-4.6",
            "GLM-4.6.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
            argument_delimiters=("</arg_value>", "</arg_key>", "<arg_key>", "</tool_call>"),
        ),
        # DeepSeek-V3.1 renders every assistant history turn with "</think>" and no reasoning, so only
        # thinking=False (the prompt ends with "</think>" too) can round-trip; reasoning is not rendered.
        Family(
            "deepseek-v3.1",
            "deepseek-ai-DeepSeek-V3.1.jinja",
            thinking_kwarg="thinking",
            thinking_values=(False,),
            arguments_as_json_text=True,
            special_tokens={"bos_token": "<｜begin▁of▁sentence｜>"},
        ),
        # Llama 3.1/3.3: one tool call per message, rendered as the whole turn (bare JSON
        # {"name": ..., "parameters": ...}); content given with tool calls is dropped.
        Family(
            "llama3",
            "meta-llama-Llama-3.3-70B-Instruct.jinja",
            content_with_tool_calls=False,
            max_tool_calls=1,
            special_tokens={"bos_token": "<|begin_of_text|>"},
        ),
        # Granite 3.3 renders assistant history as `content` only (no tool calls, no reasoning): the
        # round trip proves content (thinking on and off); reasoning and tool calls are proven on raw
        # outputs. The chat template renders content untrimmed, so <think>/<response> tags written by
        # the model stay in history: they are delimiters, and `collides` keeps them out of content.
        Family(
            "granite-3.3",
            "ibm-granite-granite-3.3-2B-Instruct.jinja",
            tool_calls=False,
            thinking_kwarg="thinking",
            thinking_values=(True, False),
        ),
        # DeepSeek-R1 distills prompt with "<｜Assistant｜><think>\n" but render history turns as
        # "<｜Assistant｜>" + content (reasoning split off) and tool-call turns only when content is None,
        # so the only turn that continues its own prompt is the answer right after tool results
        # ("<｜tool▁outputs▁end｜>" + content). Content is proven there; reasoning and tool calls are
        # proven on raw outputs.
        Family(
            "deepseek-r1",
            "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
            tool_calls=False,
            arguments_as_json_text=True,
            final_after_tool_results=(None,),
            tool_call_content=None,
            special_tokens={"bos_token": "<｜begin▁of▁sentence｜>"},
        ),
        # Gemma 4 (the revised official template): reasoning is rendered only for a turn with tool calls
        # after the last user message; with thinking off the prompt ends with an empty thought channel
        # that history turns never render, so thinking-off turns are checked right after tool results.
        # Tool arguments use Gemma's own syntax (bare keys, <|"|>strings<|"|>, None rendered as `None`).
        Family(
            "gemma4",
            "google-gemma-4-31B-it.jinja",
            reasoning_key="reasoning_content",
            reasoning_only_with_tool_calls=True,
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
            final_after_tool_results=(False,),
            bare_argument_keys=True,
            argument_delimiters=('<|"|>', "<tool_call|>"),
            # strip_thinking() cuts content at "<|channel>" even without a closing "<channel|>"
            content_forbidden=("<|channel>",),
            special_tokens={"bos_token": "<bos>"},
        ),
        # Qwen3.5 / 3.6: reasoning plus Qwen3-Coder XML tool calls; scalar arguments are rendered with
        # |string (3.5) or as JSON (3.6), so arguments are typed from the tools' schemas.
        Family(
            "qwen3.5",
            "Qwen-Qwen3.5-4B.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
            argument_delimiters=("</parameter>", "</tool_call>", "<parameter="),
        ),
        # Qwen3 Thinking-2507 / Qwen3-Next Thinking: the generation prompt always opens "<think>\n", so the
        # model writes only "...</think>"; Hermes-style JSON tool calls.
        Family(
            "qwen3-thinking-2507",
            "Qwen-Qwen3-235B-A22B-Thinking-2507.jinja",
            reasoning_key="reasoning_content",
        ),
        # GLM-4.7 / GLM-5: the prompt ends with "<think>" (thinking on) or "</think>" (off); a turn is rendered
        # "<think>R</think>" only when it has reasoning, else "</think>", so with thinking on the checked
        # message always carries reasoning. Calls without newlines: <tool_call>NAME<arg_key>K</arg_key>...
        Family(
            "glm-4.7",
            "zai-org-GLM-4.7-Flash.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="enable_thinking",
            thinking_values=(True, False),
            reasoning_required=(True,),
            argument_delimiters=("</arg_value>", "</arg_key>", "<arg_key>", "</tool_call>"),
        ),
        # MiniMax M2: the generation prompt always opens "<think>\n", but a turn is rendered with
        # "<think>...</think>" only when it has reasoning, so the checked message always carries reasoning.
        # Calls: <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke>...
        Family(
            "minimax-m2",
            "MiniMaxAI-MiniMax-M2.jinja",
            reasoning_key="reasoning_content",
            reasoning_required=(None,),
            argument_delimiters=("</parameter>", "</invoke>", "<parameter name=", "</minimax:tool_call>"),
        ),
        # Kimi K2 Thinking: the chat template renders each call as <|tool_call_begin|>ID<|tool_call_argument_begin|>,
        # the id being the model's own functions.NAME:IDX (kept as the call id); reasoning is rendered only
        # for turns after the last assistant turn without tool calls, so only with tool calls.
        Family(
            "kimi-k2-thinking",
            "moonshotai-Kimi-K2-Thinking.jinja",
            reasoning_key="reasoning_content",
            reasoning_only_with_tool_calls=True,
            call_id_format="functions.{name}:{index}",
            tool_loop_reasoning=False,
        ),
        # DeepSeek-V3.2 (llama.cpp's community template): with thinking off the prompt ends "<think></think>"
        # but history turns are rendered "</think>", so only thinking=True round-trips. DSML calls
        # <｜DSML｜invoke name="N"><｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>: values are kept
        # as text and typed from the tools' schemas (string="false" values are JSON).
        Family(
            "deepseek-v3.2",
            "deepseek-ai-DeepSeek-V3.2.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="thinking",
            thinking_values=(True,),
            argument_delimiters=("</｜DSML｜parameter>", "</｜DSML｜invoke>", "<｜DSML｜parameter"),
            special_tokens={"bos_token": "<｜begin▁of▁sentence｜>"},
        ),
        # Seed-OSS: <seed:think> reasoning, <seed:tool_call><function=N><parameter=K>V</parameter></function>
        # calls with values rendered by |string (Python repr for objects/lists: scalar arguments only, typed
        # from the tools' schemas); an empty turn is rendered without newline or <seed:eos>.
        Family(
            "seed-oss",
            "ByteDance-Seed-Seed-OSS-36B-Instruct.jinja",
            reasoning_key="reasoning_content",
            scalar_arguments=True,
            content_required=True,
            argument_delimiters=("</parameter>", "</function>", "</seed:tool_call>", "<parameter="),
        ),
        # Hunyuan-A13B (vLLM's example template): no generation prompt (the turn follows the user's
        # "<|extra_0|>"); with tools, a plain answer is rendered "助手：" + content, a tool-call turn
        # content + "<tool_calls>[...]</tool_calls>". No reasoning is rendered, and enable_thinking=False
        # appends "<think>\n\n</think>\n" after the whole conversation, which history never contains.
        Family(
            "hunyuan-a13b",
            "vllm-tencent-Hunyuan-A13B-Instruct.jinja",
            content_forbidden=("助手：",),
        ),
        # Mistral Small 3.2: content is dropped when tool calls are present.
        Family(
            "mistral-small-3.2",
            "Mistral-Small-3.2-24B-Instruct-2506.jinja",
            content_with_tool_calls=False,
            argument_delimiters=("</s>",),  # (the EOS: a real generation stops at it, so no argument holds its text)
            special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
        ),
        # Llama 4 (vLLM's pythonic chat template): the whole turn is a call list, so content given with
        # tool calls is written right before "[" and the model is told never to do that; the chat template
        # prints each argument as key="%s" (unescaped), so arguments are scalars without quotes, backslashes
        # or newlines (the typed values come back through tools=).
        Family(
            "llama4-pythonic",
            "vllm-meta-llama-Llama-4-pythonic.jinja",
            content_with_tool_calls=False,
            argument_delimiters=('"', "\\", "\n", "\r", "<|eot|>", "<|python_end|>"),
            arguments_ok=_scalars_only,
            special_tokens={"bos_token": "<|begin_of_text|>"},
        ),
        # Llama 4 (vLLM's JSON chat template): calls are written one after another right after the content,
        # so content given with tool calls cannot be told from a call's start (the model writes none).
        # A plain content turn is rendered without the newline the generation prompt starts with, so only
        # tool-call turns continue the prompt: content is proven on raw outputs.
        Family(
            "llama4-json",
            "vllm-meta-llama-Llama-4-json.jinja",
            content_with_tool_calls=False,
            final_tool_calls_only=True,
            # (the end tokens: a real generation stops at them, so no argument holds their text; a key or value
            # holding one (Hypothesis draws the test modules' string constants) is closed there by the template)
            argument_delimiters=("<|eot|>", "<|eom|>", "<|python_end|>"),
            special_tokens={"bos_token": "<|begin_of_text|>"},
        ),
        # Ministral 3 reasoning: the chat template reads reasoning only from "thinking" content blocks (not a
        # message key), so reasoning is proven on raw outputs; it raises for an assistant message with
        # neither content nor tool calls.
        Family(
            "ministral-3",
            "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
            content_required=True,
            argument_delimiters=("</s>",),  # (the EOS: a real generation stops at it, so no argument holds its text)
            special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
        ),
        # Mistral Small 3.1 (vLLM's template): the older array form; content is dropped when tool calls are
        # present; call ids must have 9 characters (the strategies' ids do).
        Family(
            "mistral-small-3.1",
            "vllm-mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja",
            content_with_tool_calls=False,
            call_ids_required=True,
            argument_delimiters=("</s>",),  # (the EOS: a real generation stops at it, so no argument holds its text)
            special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
        ),
        Family(
            "granite-4",
            "ibm-granite-granite-4.0.jinja",
            argument_delimiters=("</tool_call>",),
        ),
        # Phi-4-mini's chat template renders assistant history as content only (no tool calls): the round
        # trip proves content; functools[...] tool calls are proven on raw outputs.
        Family(
            "phi-4-mini",
            "microsoft-Phi-4-mini-instruct.jinja",
            tool_calls=False,
            special_tokens={"eos_token": "<|endoftext|>"},
        ),
        # LFM2.5-8B-A1B: reasoning from `thinking`; calls printed as name(k='v', ...) with strings in bare
        # single quotes (no escaping: no ' \ or newlines in them), dicts as JSON, lists with |string.
        Family(
            "lfm2",
            "LiquidAI-LFM2.5-8B-A1B.jinja",
            reasoning_key="thinking",
            argument_delimiters=("'", "\\", "\n", "\r", "<|tool_call_end|>"),
            arguments_ok=_printable_lists,
            content_forbidden=("CONTINUE_FINAL_MESSAGE_TAG",),
        ),
        # xLAM-2 (vLLM's templates): a tool-call turn is the bare JSON array; content is dropped with it.
        Family(
            "xlam-llama",
            "vllm-Salesforce-Llama-xLAM-2-fc-r.jinja",
            content_with_tool_calls=False,
            special_tokens={"bos_token": "<|begin_of_text|>"},
        ),
        Family(
            "xlam-qwen",
            "vllm-Salesforce-Qwen-xLAM-fc-r.jinja",
            content_with_tool_calls=False,
        ),
        # Apriel 1.5 (unsloth's template): history holds the final response only (no reasoning key is read);
        # arguments are concatenated with |string, so they are passed as JSON text.
        Family(
            "apriel-1.5",
            "unsloth-Apriel-1.5.jinja",
            arguments_as_json_text=True,
            call_ids_required=True,
            argument_delimiters=("</tool_calls>",),
            special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
        ),
        # Nemotron Nano v2: with thinking on the prompt opens "<think>\n" and the rendered turn continues it
        # without "</think>" (content would read as reasoning), so conversations switch thinking off with
        # "/no_think"; history drops reasoning, and the last turn's tool calls are rendered as a turn of their
        # own that does not continue the prompt: content is proven here, reasoning and tool calls on raw outputs.
        Family(
            "nemotron-nano-v2",
            "nvidia-NVIDIA-Nemotron-Nano-9B-v2.jinja",
            tool_calls=False,
            content_required=True,  # an empty last turn is not rendered at all
            system_prompt="You are helpful. /no_think",
        ),
        # GigaChat 3: one call per message (the chat template renders only tool_calls[0]), as its own
        # "function call" role turn after the assistant turn.
        Family(
            "gigachat3",
            "ai-sage-GigaChat3-10B-A1.8B.jinja",
            max_tool_calls=1,
            special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
        ),
        # group g3 -----------------------------------------------------------------------------------
        # InternLM2.5 (vLLM's tool template): content, then each call as
        # <|action_start|><|plugin|>\n{"name": ..., "arguments": ...}<|action_end|>, then <|im_end|>
        Family(
            "internlm2",
            "vllm-internlm-internlm2_5-7b-chat.jinja",
            argument_delimiters=("<|action_end|>",),
            special_tokens={"bos_token": "<s>"},
        ),
        # FunctionGemma (vLLM's template): <start_function_call>call:NAME{k:<escape>V<escape>,...}<end_function_call>,
        # every value printed with {{ value }} inside <escape> (Python's str(): scalars only, typed back from
        # the tools' schemas); content is dropped from a tool-call turn.
        Family(
            "functiongemma",
            "vllm-google-functiongemma-270m-it.jinja",
            content_with_tool_calls=False,
            scalar_arguments=True,
            argument_delimiters=("<escape>", "<end_function_call>"),
        ),
        # Llama 3.2 (vLLM's pythonic template): the chat template prints every argument with "%s" | format(value),
        # so a string comes out as a bare word (city=Paris), which no parser can read back: the round trip proves
        # content; pythonic tool calls (which the model writes with quoted strings) are proven on raw outputs.
        Family(
            "llama3.2-pythonic",
            "vllm-meta-llama-Llama-3.2-pythonic.jinja",
            tool_calls=False,
            special_tokens={"bos_token": "<|begin_of_text|>"},
        ),
        # DeepSeek V4 (llama.cpp's community template, setar/llama.cpp's copy): the prompt ends "<think>" (thinking on)
        # or "</think>" (off), and every turn renders "<think>R</think>" or "</think>" the same way; DSML calls in a
        # <｜DSML｜tool_calls> block, string="true" values as is, others as JSON (kept as text, typed from the tools'
        # schemas).
        Family(
            "deepseek-v4",
            "deepseek-ai-DeepSeek-V4.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="thinking",
            thinking_values=(True,),  # thinking off (the template's default): EXTRA_FIXTURES
            argument_delimiters=("</｜DSML｜parameter>", "</｜DSML｜invoke>", "<｜DSML｜parameter"),
            special_tokens={"bos_token": "<｜begin▁of▁sentence｜>"},
        ),
        # Kimi K3 (llama.cpp's XTML template): <|open|>think<|sep|>R<|close|>think<|sep|>, then the response channel, then
        # <|open|>tools<|sep|><|open|>call tool="N" index="I"<|sep|><|open|>argument key="K" type="T"<|sep|>V<|close|>argument
        # <|sep|>...; string values raw, others JSON (kept as text, typed from the tools' schemas). The prompt opens the
        # think channel (thinking on, the default) or the response channel (off).
        Family(
            "kimi-k3",
            "moonshotai-Kimi-K3.jinja",
            reasoning_key="reasoning_content",
            thinking_kwarg="thinking",
            thinking_values=(True, False),
            argument_delimiters=("<|close|>argument<|sep|>", "<|open|>", "<|close|>", "<|sep|>"),
            content_forbidden=("<|open|>", "<|close|>", "<|sep|>"),
        ),
        # Gemma 3 (vLLM's pythonic template): the turn starts with the call list [f(k=JSON, ...)], arguments written
        # with tojson, the content right after the "]"; only one-argument calls are readable (see _no_call_list_end)
        Family(
            "gemma3-pythonic",
            "vllm-google-gemma-3-it-pythonic.jinja",
            arguments_ok=_no_call_list_end,
            argument_delimiters=("<end_of_turn>",),
            special_tokens={"bos_token": "<bos>"},
        ),
        # Apertus (vLLM's variant of the Hub chat template, which also reads OpenAI-style tools): calls
        # <|tools_prefix|>[{"NAME": ARGS}, ...]<|tools_suffix|>; reasoning is rendered only from content
        # "blocks", not from reasoning_content; tool results are rendered inside the assistant turn, and the
        # turn after them does not repeat the <|assistant_start|> the prompt ends with.
        Family(
            "apertus",
            "vllm-swiss-ai-Apertus.jinja",
            tool_history=False,
        ),
    ]
}

#: Further chat templates a shipped template is proven against (same response template, that chat
#: template's own limits). Each runs the same round-trip tests as FAMILIES.
EXTRA_FIXTURES: list[Family] = [
    # GLM-4.5 (llama.cpp's copy): same format as GLM-4.6
    Family(
        "glm-4.6",
        "glm_4_5.jinja",
        reasoning_key="reasoning_content",
        thinking_kwarg="enable_thinking",
        thinking_values=(True, False),
        argument_delimiters=("</arg_value>", "</arg_key>", "<arg_key>", "</tool_call>"),
    ),
    # the first upstream Gemma 4 template: it renders no reasoning at all, and renders tool results as
    # a "<|turn>tool" turn followed by the normal generation prompt, so with thinking off (an empty
    # thought channel in the prompt) no turn continues its prompt: thinking on only
    Family(
        "gemma4",
        "gemma4.jinja",
        thinking_kwarg="enable_thinking",
        thinking_values=(True,),
        bare_argument_keys=True,
        argument_delimiters=('<|"|>', "<tool_call|>"),
        content_forbidden=("<|channel>",),
        special_tokens={"bos_token": "<bos>"},
    ),
    # Devstral Small 2507 (unsloth's chat template): the Ministral 3 format without reasoning
    Family(
        "ministral-3",
        "unsloth-mistral-Devstral-Small-2507.jinja",
        argument_delimiters=("</s>",),  # (the EOS: a real generation stops at it, so no argument holds its text)
        special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
    ),
    # Granite 4.1: the Granite 4.0 chat template without the default system prompt
    Family("granite-4", "ibm-granite-granite-4.1.jinja", argument_delimiters=("</tool_call>",)),
    # LFM2-8B-A1B and LFM2.5 instruct: assistant history is rendered as content only
    Family("lfm2", "LiquidAI-LFM2-8B-A1B.jinja", tool_calls=False),
    Family("lfm2", "LiquidAI-LFM2.5-Instruct.jinja", tool_calls=False),
    # Apertus's Hub chat template (llama.cpp's copy): as vLLM's variant, but it reads flat tools only and
    # concatenates the arguments as text
    Family("apertus", "swiss-ai-Apertus-8B-Instruct-2509.jinja", tool_history=False, flat_tools=True,
           arguments_as_json_text=True),
]

EXTRA_FIXTURES += [
    # Qwen3.5-0.8B thinks only with enable_thinking=True (its default prompt is the thinking-off one,
    # the same text as Qwen3.5-4B's, proven there): checked with thinking on
    replace(FAMILIES["qwen3.5"], fixture="Qwen-Qwen3.5-0.8B.jinja", thinking_values=(True,)),
    # Qwen3.6: preserve_thinking, scalars rendered as JSON
    replace(FAMILIES["qwen3.5"], fixture="Qwen-Qwen3.6-35B-A3B.jinja"),
    # Qwen3 Instruct-2507 emits the original Qwen3 format (the chat template still renders an empty
    # "<think>\n\n</think>\n\n" before the last turn's content and splits reasoning out of history)
    replace(FAMILIES["qwen3"], fixture="Qwen-Qwen3-235B-A22B-Instruct-2507.jinja", thinking_kwarg=None,
            thinking_values=(None,)),
    # Xiaomi MiMo (llama.cpp's "MiMo-VL" copy): Hermes-style JSON calls; the model reasons in <think> (the
    # qwen3 template reads it), but this chat template renders no reasoning, and content with `+`
    # (content is never None here)
    Family("qwen3", "XiaomiMiMo-MiMo-VL.jinja"),
    # Qwen3-Next-80B-A3B-Instruct: Hermes-style JSON calls, no reasoning; unlike Hermes 3 its chat
    # template keeps content next to tool calls and renders turns after tool results as prompted
    Family("hermes3", "Qwen-Qwen3-Next-80B-A3B-Instruct.jinja"),
    # MiniMax M2.5 (Xinference's copy): reads the call name as tool_calls[-1].name (set at the top level too)
    replace(FAMILIES["minimax-m2"], fixture="MiniMaxAI-MiniMax-M2.5.jinja"),
    # Kimi K2.5: as K2 Thinking, plus `thinking` (the prompt ends with "<think>" or "<think></think>")
    replace(FAMILIES["kimi-k2-thinking"], fixture="moonshotai-Kimi-K2.5.jinja", thinking_kwarg="thinking",
            thinking_values=(True, False)),
    # Nemotron 3 Nano emits the same format. Its chat template renders a final turn without reasoning
    # as "<think></think>", which continues only the thinking-off prompt: with thinking on the checked
    # message always carries reasoning.
    replace(FAMILIES["qwen3.5"], fixture="nvidia-NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja", reasoning_required=(True,)),
]

EXTRA_FIXTURES += [
    # group g3: Llama 3.2 with JSON tool calls (vLLM's template): the Llama 3.1 format, one call per message
    # ({"name": ..., "parameters": ...} as the whole turn), content dropped with it
    replace(FAMILIES["llama3"], fixture="vllm-meta-llama-Llama-3.2-json.jinja"),
    # Llama 3.2 3B Instruct's own (Hub) template, llama.cpp's copy: the same format; tools go in the first user message
    replace(FAMILIES["llama3"], fixture="meta-llama-Llama-3.2-3B-Instruct.jinja"),
    # Step 3.5 Flash (setar/llama.cpp's copy): the Qwen3.5 format (the prompt opens "<think>\n", Qwen3-Coder XML
    # calls, scalars rendered with |string and typed from the tools' schemas); tool results in a "tool_response" turn
    replace(FAMILIES["qwen3.5"], fixture="stepfun-ai-Step-3.5-Flash.jinja"),
    # DeepSeek V4 with thinking off (the chat template's default): the prompt ends "</think>", as every turn does, and
    # no reasoning is rendered
    replace(FAMILIES["deepseek-v4"], thinking_values=(False,), reasoning_key=None),
]

#: every Family (shipped template x chat template) the round-trip tests run
ALL_FAMILIES: list[Family] = [*FAMILIES.values(), *EXTRA_FIXTURES]


# --------------------------------------------------------------------------- tools

TOOLS: list[dict] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "description": "Days ahead"},
                    "metric": {"type": "boolean", "description": "Metric units"},
                    "ratio": {"type": "number", "description": "A ratio"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search documents.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The query"},
                    "options": {"type": "object", "description": "Nested options"},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags"},
                },
                "required": ["query"],
            },
        },
    },
]


# --------------------------------------------------------------------------- collisions


def _delimiter_regexes(template: dict) -> list[tuple[Any, bool]]:
    """Every delimiter of a response template as (compiled regex, whether a zero-width match counts)."""
    pats: list[tuple[str, bool]] = []
    if "start_anchor" in template:
        pats.append((regex.escape(template["start_anchor"]), False))
    if "start_anchor_pattern" in template:
        pats.append((template["start_anchor_pattern"], False))
    for spec in template["fields"].values():
        for key in ("open", "close"):
            if key in spec:
                values = spec[key] if isinstance(spec[key], list) else [spec[key]]
                pats.extend((regex.escape(v), False) for v in values)
            if key + "_pattern" in spec:
                # a zero-width alternative of a close (a lookahead close) cannot collide by itself: the
                # text it looks at is another delimiter. A zero-width *open* match does open a region
                # (Llama 3's `^(?=\{"name":)`: content that starts like a tool call is one).
                pats.append((spec[key + "_pattern"], key == "open"))
    # cache_pattern=False: the `regex` module trims its full cache with the global `random` (which
    # Hypothesis forbids inside strategies, and which a library must not disturb)
    return [(regex.compile(p, regex.DOTALL, cache_pattern=False), zero_ok) for p, zero_ok in pats]


def collides(text: str, template: dict, extra: tuple[str, ...] = ()) -> bool:
    """Whether ``text`` contains one of the response template's delimiters (or an ``extra`` string).

    Such text cannot round-trip through any parser: the model's own delimiter inside the content is
    indistinguishable from the real one.
    """
    if any(e in text for e in extra):
        return True
    for pattern, zero_width_counts in _delimiter_regexes(template):
        for m in pattern.finditer(text, overlapped=True):
            if zero_width_counts or m.end() > m.start():
                return True
    return False


# --------------------------------------------------------------------------- strategies

# Text made of tricky fragments and arbitrary characters: unicode, quotes, newlines, braces and
# tag-like text. Stripped, because text fields are stripped by the `text` content parser.
_FRAGMENTS = [
    '"',
    "'",
    "\n",
    "\n\n",
    "{",
    "}",
    '{"a": 1}',
    "[1, 2]",
    "<b>",
    "</b>",
    "<tool>",
    "<|x|>",
    "\\",
    "\\n",
    "東京",
    "ü",
    "🌧️",
    "null",
    "true",
    "7",
    " ",
    "\t",
    "<",
    ">",
    "&amp;",
]
_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))


def texts(min_size: int = 0) -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(_FRAGMENTS), st.text(_CHARS, min_size=1, max_size=8))
    return (
        st.lists(piece, min_size=min_size, max_size=8)
        .map(lambda parts: "".join(parts).strip())
        .filter(lambda s: len(s) >= min_size)
    )


_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    texts(),
)
json_values = st.recursive(
    _json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(texts(min_size=1), children, max_size=3),
    ),
    max_leaves=8,
)


def raw_strings(forbidden: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Argument strings: not stripped (argument values are kept verbatim)."""
    piece = st.one_of(st.sampled_from(_FRAGMENTS), st.text(_CHARS, min_size=1, max_size=6))
    return st.lists(piece, max_size=6).map("".join).filter(lambda s: not any(f in s for f in forbidden))


# Gemma 4 renders nested keys bare and None as the Python literal `None`
_bare_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True)
_json_values_bare = st.recursive(
    st.one_of(
        st.booleans(),
        st.integers(-(2**31), 2**31),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        texts(),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(_bare_keys, children, max_size=3),
    ),
    max_leaves=8,
)


def _strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings_in(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []


def tool_call_strategy(family: Family) -> st.SearchStrategy[dict]:
    s = raw_strings(family.argument_delimiters)

    def _nested_ok(value: Any) -> bool:
        text = json.dumps(value, ensure_ascii=False)
        raw = _strings_in(value)
        return not any(f in t for f in family.argument_delimiters for t in (text, *raw))

    keys, values = (_bare_keys, _json_values_bare) if family.bare_argument_keys else (texts(min_size=1), json_values)

    weather = st.fixed_dictionaries(
        {"city": s},
        optional={
            "days": st.integers(-1000, 10**6),
            "metric": st.booleans(),
            "ratio": st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda x: x == x),
        },
    ).map(lambda a: ("get_weather", a))
    search = st.fixed_dictionaries(
        {"query": s},
        optional={}
        if family.scalar_arguments
        else {
            "options": st.dictionaries(keys, values, max_size=3).filter(_nested_ok),
            "tags": st.lists(s, max_size=3),
        },
    ).map(lambda a: ("search", a))
    calls = st.one_of(weather, search)
    if family.arguments_ok is not None:
        calls = calls.filter(lambda na: family.arguments_ok(na[1]))
    return calls.map(
        lambda na: {
            "type": "function",
            "function": {
                "name": na[0],
                "arguments": json.dumps(na[1], ensure_ascii=False)
                if family.arguments_as_json_text
                else na[1],
            },
        }
    )


_ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _with_ids(calls: list[dict], start: int, family: Family | None = None) -> list[dict]:
    # Mistral requires 9-character alphanumeric ids; Command R7B maps tool results back through ids.
    if family is not None and family.call_id_format is not None:
        fmt = family.call_id_format
        return [{**c, "id": fmt.format(name=c["function"]["name"], index=start + i)} for i, c in enumerate(calls)]
    return [{**c, "id": f"call{start + i:05d}"} for i, c in enumerate(calls)]


@st.composite
def assistant_message(draw: st.DrawFn, family: Family, template: dict, thinking: Any, final: bool) -> dict:
    """An assistant message the family's chat template can carry (see the Family flags)."""
    forbidden = family.content_forbidden
    ok = lambda t: not collides(t, template, forbidden)  # noqa: E731
    use_tools = family.tool_calls and ((final and family.final_tool_calls_only) or draw(st.booleans()))
    msg: dict[str, Any] = {"role": "assistant"}
    if use_tools:
        max_calls = family.max_tool_calls or 3
        calls = draw(st.lists(tool_call_strategy(family), min_size=1, max_size=max_calls))
        msg["tool_calls"] = _with_ids(calls, draw(st.integers(0, 999)), family)
        # empty content with tool calls is a case of its own
        msg["content"] = draw(texts().filter(ok)) if family.content_with_tool_calls else ""
    else:
        msg["content"] = draw(texts(min_size=1 if family.content_required else 0).filter(ok))
    wants_reasoning = family.reasoning_key is not None and (
        use_tools or not family.reasoning_only_with_tool_calls
    )
    # With thinking switched off the prompt already closes an empty reasoning block, so the model
    # writes no reasoning: a reasoning text there cannot be rendered as a continuation of the prompt.
    if wants_reasoning and thinking is not False:
        reasoning = draw(texts(min_size=1 if final and thinking in family.reasoning_required else 0).filter(ok))
        if reasoning:
            msg[family.reasoning_key] = reasoning
    return msg


@st.composite
def conversations(draw: st.DrawFn, family: Family, template: dict) -> tuple[list[dict], dict]:
    """(messages ending with the assistant message to check, chat-template kwargs)."""
    thinking = draw(st.sampled_from(family.thinking_values))
    kwargs = {} if family.thinking_kwarg is None or thinking is None else {family.thinking_kwarg: thinking}
    user_text = st.text(st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=10)
    messages: list[dict] = []
    if family.system_prompt is not None:
        messages.append({"role": "system", "content": family.system_prompt})
    elif draw(st.booleans()):
        messages.append({"role": "system", "content": "Be brief. " + draw(user_text)})
    # earlier turns: their content, reasoning and tool calls must not leak into the parsed message
    for _ in range(draw(st.integers(0, 2))):
        messages.append({"role": "user", "content": draw(user_text)})
        earlier = draw(assistant_message(family, template, thinking, final=False))
        messages.append(earlier)
        if earlier.get("tool_calls"):
            if not family.tool_history:
                earlier.pop("tool_calls")
                earlier["content"] = earlier.get("content") or "ok"
            else:
                for call in earlier["tool_calls"]:
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call["id"],
                            "name": call["function"]["name"],
                            "content": json.dumps({"result": draw(user_text)}),
                        }
                    )
                messages.append({"role": "assistant", "content": "Done: " + draw(user_text)})
    messages.append({"role": "user", "content": draw(user_text)})
    final = draw(assistant_message(family, template, thinking, final=True))
    forced = thinking in family.final_after_tool_results
    if forced or (family.tool_history and family.tool_calls and draw(st.booleans())):
        # a tool loop right before the checked message: assistant calls a tool, gets the result
        call = draw(tool_call_strategy(family))
        loop_calls = _with_ids([call], 7, family)
        loop_msg = {"role": "assistant", "content": family.tool_call_content, "tool_calls": loop_calls}
        if family.reasoning_key and family.reasoning_only_with_tool_calls and family.tool_loop_reasoning:
            loop_msg[family.reasoning_key] = "plan"
        messages.append(loop_msg)
        messages.append(
            {
                "role": "tool",
                "tool_call_id": loop_calls[0]["id"],
                "name": call["function"]["name"],
                "content": json.dumps({"result": draw(user_text)}),
            }
        )
    messages.append(final)
    return messages, kwargs
