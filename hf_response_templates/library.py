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
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "TEMPLATE_INFO",
    "UnknownTemplateError",
    "NoTemplateDetectedError",
    "attach",
    "detect_template",
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
        "models": ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-*B (original 2025-04 releases)", "Qwen/QwQ-32B"],
        "chat_template": "Qwen-Qwen3-0.6B.jinja",
        "doc": "ChatML, reasoning_content in <think>...</think>, tool calls as "
        '<tool_call>{"name": ..., "arguments": ...}</tool_call> (JSON). Earlier assistant turns lose their '
        "reasoning in the chat template (only turns after the last user query keep it).",
    },
    "qwen3-coder": {
        "models": ["Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-480B-A35B-Instruct"],
        "chat_template": "Qwen3-Coder.jinja",
        "doc": "ChatML with XML tool calls <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function>"
        "</tool_call>. Parameter values are kept as raw text: the chat template renders scalars with |string, so "
        "7, '7' and True/'True' look alike; pass tools= to type them from the JSON schema (objects/arrays are "
        "decoded, integers cast, strings kept). No reasoning field: the chat template renders none.",
    },
    "gpt-oss": {
        "models": ["openai/gpt-oss-20b", "openai/gpt-oss-120b"],
        "chat_template": "openai-gpt-oss-120b.jinja",
        "doc": "Harmony channels. analysis -> thinking (the key this chat template reads), final (and commentary "
        "preambles) -> content, tool calls from both '<|start|>assistant to=functions.NAME<|channel|>commentary "
        "json<|message|>{...}<|call|>' (the chat template's form) and '<|channel|>commentary to=functions.NAME "
        "<|constrain|>json<|message|>{...}<|call|>' (the model's form). start_anchor '<|start|>assistant' cuts the "
        "prefix only. The chat template renders one tool call per message, renders content given with tool calls "
        "as analysis, and drops analysis from earlier turns.",
    },
    "cohere-command-r7b": {
        "models": ["CohereLabs/c4ai-command-r7b-12-2024"],
        "chat_template": "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        "doc": "<|START_THINKING|> plan -> tool_plan (the key the chat template reads back), "
        "<|START_ACTION|>[{tool_name, parameters}, ...]<|END_ACTION|> -> tool_calls (transform_each), "
        "<|START_RESPONSE|>...<|END_RESPONSE|> -> content. The chat template renders tool_plan only with tool calls, "
        "and drops content when tool calls are present; tool_call_id is a renumbered counter and is not kept.",
    },
    "hermes3": {
        "models": ["NousResearch/Hermes-3-Llama-3.1-8B", "NousResearch/Hermes-3-Llama-3.1-70B"],
        "chat_template": "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        "doc": 'ChatML with <tool_call>{"name": ..., "arguments": ...}</tool_call>; no reasoning. The chat template '
        "drops content when an assistant message has tool calls.",
    },
    "deepseek-v3.1": {
        "models": ["deepseek-ai/DeepSeek-V3.1"],
        "chat_template": "deepseek-ai-DeepSeek-V3.1.jinja",
        "doc": "<think>...</think> reasoning, tool calls as <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}"
        "<｜tool▁call▁end｜> inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜>, content up to "
        "<｜end▁of▁sentence｜>.",
    },
    "mistral-small-3.2": {
        "models": ["mistralai/Mistral-Small-3.2-24B-Instruct-2506"],
        "chat_template": "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        "doc": "[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json} per call (id kept), content up to </s>.",
    },
    "glm-4.6": {
        "models": ["zai-org/GLM-4.5", "zai-org/GLM-4.6"],
        "chat_template": "GLM-4.6.jinja",
        "doc": "<think>...</think> reasoning_content, tool calls <tool_call>NAME<arg_key>K</arg_key>"
        "<arg_value>V</arg_value>...</tool_call>, content up to <|user|>/<|observation|>/<|endoftext|>.",
    },
    "llama3": {
        "models": ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
                   "meta-llama/Llama-3.3-70B-Instruct"],
        "chat_template": "meta-llama-Llama-3.3-70B-Instruct.jinja",
        "doc": 'A tool call is the whole turn: bare JSON {"name": ..., "parameters": ...} (optionally after '
        "<|python_tag|>), ended by <|eom_id|> or <|eot_id|>; it is recognised only at the start of the "
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
        "(closed by </think>); content up to <｜end▁of▁sentence｜>; tool calls "
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
        "identifiers cannot be read back.",
    },
    "kimi-k2": {
        "models": ["moonshotai/Kimi-K2-Instruct"],
        "chat_template": "moonshotai-Kimi-K2.jinja",
        "doc": "<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|> inside "
        "<|tool_calls_section_begin|>...<|tool_calls_section_end|>, content up to <|im_end|>.",
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


def template_info(name: str) -> dict[str, Any]:
    """Documentation of a shipped template: ``{"models": [...], "chat_template": ..., "doc": ...}``."""
    get_template(name)  # validates the name
    return copy.deepcopy(TEMPLATE_INFO.get(name, {"models": [], "doc": ""}))


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
    ),
    _Rule(
        "qwen3",
        all_of=("<|im_start|>", "<tool_call>", "<think>", "reasoning_content"),
        none_of=("<function=", "/no_think", "<arg_key>"),
    ),
    _Rule(
        "hermes3",
        all_of=("<|im_start|>", "<tool_call>", "<tool_response>"),
        none_of=("<think>", "<function=", "reasoning_content", "/no_think"),
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


def detect_template(tokenizer_or_chat_template: Any) -> str | None:
    """Name of the shipped response template that fits a tokenizer's chat template, or ``None``.

    Accepts a chat template string, a dict of named chat templates, or any object with a
    ``chat_template`` attribute (a tokenizer or processor). When the object also exposes its
    vocabulary (``get_vocab()``, ``added_tokens_decoder``, ``all_special_tokens``), the family's
    delimiter tokens must be in it.

    Detection never guesses: a template that matches no family (e.g. plain ChatML without tools), or
    named templates that point to different families, give ``None``.

    Example:
        >>> detect_template("{{ '<|im_start|>' + message.role }}") is None
        True
    """
    texts = _template_texts(tokenizer_or_chat_template)
    vocab = _vocabulary(tokenizer_or_chat_template)
    available = set(list_templates())
    found: set[str] = set()
    for text in texts:
        names = {rule.name for rule in _RULES if rule.name in available and rule.matches(text, vocab)}
        if len(names) > 1:
            return None  # ambiguous: never guess between two formats
        found |= names
    return found.pop() if len(found) == 1 else None


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
