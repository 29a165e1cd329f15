"""Round-trip verification of a response template against a real Jinja chat template.

A response template is correct for a model when it inverts that model's chat template: render a
conversation with the chat template, take the prompt (rendered with ``add_generation_prompt=True``)
as the prefix and the text the chat template writes for the final assistant message as the
generation, parse it, and you must get the original assistant message back.

This module does exactly that, using Transformers' own Jinja rendering (the code path of
``tokenizer.apply_chat_template``), so the check is as close as possible to what a model sees::

    from hf_response_templates import get_template
    from hf_response_templates.verify import verify_round_trip

    results = verify_round_trip(open("chat_template.jinja").read(), get_template("qwen3"))
    assert all(r.passed for r in results), [r.detail for r in results if not r.passed]

How the assistant turn is cut out of the render
-----------------------------------------------
``prefix = render(history, add_generation_prompt=True)`` and
``full = render(history + [assistant], add_generation_prompt=False)``. When ``full`` starts with
``prefix``, the generation is ``full[len(prefix):]``. This handles templates that render the last
assistant turn differently from earlier ones (Qwen3 only shows ``<think>`` for the current turn,
gpt-oss ends the last turn with ``<|return|>``), because the assistant message *is* the last one in
``full``. When ``full`` does not start with ``prefix``, the chat template renders the assistant turn
differently from the generation prompt it gives the model (for instance DeepSeek-R1 prompts with
``<think>`` and strips the reasoning from history), so no response template can round-trip it: the
case fails with a detail saying so.

Some templates always append their generation prompt (Command R7B). Pass ``stop=`` (the model's
end-of-turn strings, as generation would stop there) to cut the generation after the first stop
string; text after the stop string is what the next turn would start with, not model output.

Comparison rules
----------------
* Only ``role`` and the keys the response template can produce (its field names, plus its
  ``defaults``) and the keys of the original message that carry meaning (``content``, reasoning,
  ``tool_calls``, ...) are compared. A key of the original message that the response template has no
  field for is a failure (the format cannot carry it).
* ``None``, ``""``, ``[]`` and ``{}`` count as "absent" on both sides: the parser drops empty fields.
* Tool calls are compared as ``{"type": "function", "function": {"name", "arguments"}}``; arguments
  given as a JSON string in the original are decoded first. A tool-call ``id`` is compared only when the
  parsed call carries one (most chat templates never render ids).
* Pass ``tools=`` so that arguments are typed by the tools' JSON schemas, exactly as
  ``parse_response(..., tools=...)`` does. Everything else is plain ``==``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CaseResult",
    "render_chat",
    "split_assistant_turn",
    "expected_message",
    "normalize_message",
    "sample_conversations",
    "sample_tools",
    "verify_round_trip",
    "RoundTripRenderError",
]

#: Message keys that are bookkeeping, not content, and are never compared.
_IGNORED_KEYS = frozenset({"role", "name", "id", "tool_call_id"})
#: Keys a chat message uses for reasoning, the first being the standard one.
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")


class RoundTripRenderError(ValueError):
    """The chat template cannot produce a (prefix, generation) split for this conversation."""


@dataclass
class CaseResult:
    """The outcome of one round-trip case.

    Attributes:
        name: the case name (a key of the conversations mapping).
        passed: whether the parsed message equals the expected one.
        expected: the normalised original assistant message (``None`` if rendering failed).
        got: the normalised parsed message (``None`` if rendering or parsing failed).
        detail: empty when passed; otherwise what differs, or the error raised.
        prefix: the prompt passed as ``prefix=`` to the parser.
        generation: the text parsed as the model's output.
    """

    name: str
    passed: bool
    expected: dict | None
    got: dict | None
    detail: str = ""
    prefix: str = field(default="", repr=False)
    generation: str = field(default="", repr=False)


# --------------------------------------------------------------------------- rendering


def _tool_schemas(tools: Sequence[Any] | None) -> list[dict] | None:
    if tools is None:
        return None
    out = []
    for tool in tools:
        if isinstance(tool, Mapping):
            out.append(dict(tool))
        elif callable(tool):
            from transformers.utils import get_json_schema

            out.append(get_json_schema(tool))
        else:
            raise TypeError(f"tools must be JSON-schema dicts or functions, got {tool!r}")
    return out


def render_chat(
    chat_template: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Any] | None = None,
    add_generation_prompt: bool = False,
    special_tokens: Mapping[str, str] | None = None,
    **template_kwargs: Any,
) -> str:
    """Render ``messages`` with a Jinja chat template the way ``tokenizer.apply_chat_template`` does.

    Uses Transformers' own sandboxed environment (``raise_exception``, ``tojson``, ``strftime_now``,
    loop controls, ``trim_blocks``/``lstrip_blocks``) on every supported version: Transformers 5.x and
    late 4.x expose ``render_jinja_template``; 4.46 only has ``_compile_jinja_template``, which is then
    called the way 4.46's ``apply_chat_template`` did.

    Args:
        chat_template: the Jinja source.
        messages: the conversation (plain dicts).
        tools: JSON-schema dicts or Python functions, as ``apply_chat_template`` takes them.
        add_generation_prompt: render the assistant header after the last message.
        special_tokens: extra variables such as ``{"bos_token": "<s>", "eos_token": "</s>"}``
            (``apply_chat_template`` passes the tokenizer's special tokens map).
        **template_kwargs: further template variables (``enable_thinking=False``, ...).

    Returns:
        The rendered text.

    Example:
        >>> render_chat("{% for m in messages %}{{ m.content }}{% endfor %}", [{"role": "user", "content": "hi"}])
        'hi'
    """
    kwargs = {**(special_tokens or {}), **template_kwargs}
    messages = copy.deepcopy([dict(m) for m in messages])
    try:
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError:  # transformers < 4.48
        render_jinja_template = None
    if render_jinja_template is not None:
        rendered, _ = render_jinja_template(
            conversations=[messages],
            tools=tools,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            **kwargs,
        )
        return rendered[0]
    from transformers.utils.chat_template_utils import _compile_jinja_template

    compiled = _compile_jinja_template(chat_template)
    return compiled.render(
        messages=messages,
        tools=_tool_schemas(tools),
        documents=None,
        add_generation_prompt=add_generation_prompt,
        **kwargs,
    )


def split_assistant_turn(
    chat_template: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Any] | None = None,
    special_tokens: Mapping[str, str] | None = None,
    stop: Sequence[str] | None = None,
    **template_kwargs: Any,
) -> tuple[str, str]:
    """Split a conversation whose last message is the assistant's into ``(prefix, generation)``.

    ``prefix`` is the history rendered with ``add_generation_prompt=True`` (what the model is
    prompted with); ``generation`` is what the chat template writes after it for the final assistant
    message (what the model would have generated). With ``stop``, the generation is cut just after
    the first stop string it contains.

    Raises:
        RoundTripRenderError: the conversation does not end with an assistant message, or the chat
            template renders the assistant turn in a way that does not continue its own generation
            prompt (e.g. it drops the reasoning it prompted for).
    """
    if not messages or messages[-1].get("role") != "assistant":
        raise RoundTripRenderError("the conversation must end with an assistant message")
    render = dict(tools=tools, special_tokens=special_tokens, **template_kwargs)
    for _attempt in range(2):  # a second try covers a date change (strftime_now) between the renders
        prefix = render_chat(chat_template, messages[:-1], add_generation_prompt=True, **render)
        full = render_chat(chat_template, messages, add_generation_prompt=False, **render)
        if full.startswith(prefix):
            break
    else:
        common = 0
        for a, b in zip(prefix, full, strict=False):
            if a != b:
                break
            common += 1
        raise RoundTripRenderError(
            "the chat template renders this assistant turn differently from the generation prompt it "
            f"gives the model: after {common} common characters the prompt continues with "
            f"{prefix[common : common + 60]!r} but the rendered turn with {full[common : common + 60]!r}"
        )
    generation = full[len(prefix) :]
    if stop:
        cut = [generation.find(s) + len(s) for s in stop if s and s in generation]
        if cut:
            generation = generation[: min(cut)]
    return prefix, generation


# --------------------------------------------------------------------------- comparison


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict, tuple)) and len(value) == 0)


def _normalize_tool_call(call: Any, keep_id: bool) -> Any:
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function", call)
    if not isinstance(fn, Mapping):
        return dict(call)
    arguments = fn.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    out: dict[str, Any] = {"type": call.get("type", "function"), "function": {"name": fn.get("name")}}
    if "arguments" in fn:
        out["function"]["arguments"] = arguments
    if keep_id and "id" in call:
        out["id"] = call["id"]
    return out


def _field_names(response_template: Any) -> tuple[list[str], dict]:
    source = getattr(response_template, "source", response_template)
    if not isinstance(source, Mapping):
        raise TypeError(
            f"response_template must be a dict or a ResponseTemplate, got {type(response_template)}"
        )
    return list(source.get("fields", {})), dict(source.get("defaults", {}))


def normalize_message(message: Mapping[str, Any], *, keep_tool_call_ids: bool = False) -> dict:
    """Canonical form of a message for comparison (see the module docstring for the rules)."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key in _IGNORED_KEYS - {"role"} or _is_empty(value):
            continue
        if key == "tool_calls" and isinstance(value, list):
            value = [_normalize_tool_call(c, keep_tool_call_ids) for c in value]
        out[key] = copy.deepcopy(value)
    return out


def expected_message(
    message: Mapping[str, Any], response_template: Any = None, *, keep_tool_call_ids: bool = False
) -> dict:
    """The message a correct response template must parse back, in canonical form.

    ``role`` is always ``"assistant"`` (or the template's default role); keys in ``_IGNORED_KEYS``
    (ids, names) are dropped; empty values are dropped.
    """
    out = normalize_message(message, keep_tool_call_ids=keep_tool_call_ids)
    out.pop("role", None)
    role = "assistant"
    if response_template is not None:
        _fields, defaults = _field_names(response_template)
        role = defaults.get("role", role)
        for key, value in defaults.items():
            out.setdefault(key, value)
    out["role"] = role
    return out


def _diff(expected: Any, got: Any, path: str = "message") -> str:
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        for key in list(expected) + [k for k in got if k not in expected]:
            if key not in got:
                return f"{path}[{key!r}] missing (expected {expected[key]!r})"
            if key not in expected:
                return f"{path}[{key!r}] unexpected: {got[key]!r}"
            d = _diff(expected[key], got[key], f"{path}[{key!r}]")
            if d:
                return d
        return ""
    if isinstance(expected, list) and isinstance(got, list):
        for i, (e, g) in enumerate(zip(expected, got, strict=False)):
            d = _diff(e, g, f"{path}[{i}]")
            if d:
                return d
        if len(expected) != len(got):
            return f"{path}: expected {len(expected)} items, got {len(got)}"
        return ""
    if expected != got or type(expected) is not type(got):
        return f"{path}: expected {expected!r}, got {got!r}"
    return ""


# --------------------------------------------------------------------------- samples


def sample_tools() -> list[dict]:
    """JSON-schema tools matching the tool calls in :func:`sample_conversations`."""
    return [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "The city"},
                        "days": {"type": "integer", "description": "How many days"},
                    },
                    "required": ["city"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the web.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "The query"},
                        "options": {"type": "object", "description": "Search options"},
                    },
                    "required": ["query"],
                },
            },
        },
    ]


def _call(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def sample_conversations(
    response_template: Any = None,
    *,
    reasoning_key: str | None = None,
    max_tool_calls: int | None = None,
) -> dict[str, list[dict]]:
    """A default set of conversations: plain content, reasoning, one and several tool calls, multi-turn.

    Args:
        response_template: when given, cases are adapted to it: reasoning is written under the
            template's reasoning field (``reasoning_content``, ``thinking``, ``reasoning`` or
            ``tool_plan``, whichever it has) and cases needing a field it lacks are left out.
        reasoning_key: force the key used for reasoning.
        max_tool_calls: leave out cases with more tool calls in the final turn than this
            (gpt-oss renders one call per assistant message).

    Returns:
        ``{case name: messages}``; every conversation ends with the assistant message to check.
    """
    fields: list[str] | None = None
    if response_template is not None:
        fields, _ = _field_names(response_template)
    if reasoning_key is None:
        candidates = [k for k in (*REASONING_KEYS, "tool_plan") if fields is None or k in fields]
        reasoning_key = candidates[0] if candidates else None
    has_tools = fields is None or "tool_calls" in fields
    has_content = fields is None or "content" in fields

    weather = _call("get_weather", {"city": "Paris", "days": 3})
    search = _call("search", {"query": 'say "hi" {not json} <b>', "options": {"lang": "fr", "safe": True}})
    user = {"role": "user", "content": "What's the weather in Paris?"}
    cases: dict[str, list[dict]] = {}
    if has_content:
        cases["content"] = [user, {"role": "assistant", "content": "It is sunny in Paris."}]
        cases["content_unicode"] = [
            user,
            {"role": "assistant", "content": 'Ça va: 東京 🌧️, "quotes", {braces}\nand a second line.'},
        ]
        if reasoning_key and reasoning_key != "tool_plan":
            cases["reasoning"] = [
                user,
                {
                    "role": "assistant",
                    reasoning_key: "The user wants the weather.\nI know it.",
                    "content": "Sunny.",
                },
            ]
        cases["multi_turn"] = [
            {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            user,
            {"role": "assistant", "content": "Sunny, 24 degrees."},
        ]
    if has_tools:
        # content "" rather than absent: several chat templates (Qwen3) test `message.content` unguarded
        one = {"role": "assistant", "content": "", "tool_calls": [weather]}
        if reasoning_key:
            one_r = {
                "role": "assistant",
                "content": "",
                reasoning_key: "I should call get_weather.",
                "tool_calls": [weather],
            }
            cases["tool_call_with_reasoning"] = [user, one_r]
        cases["tool_call"] = [user, one]
        cases["tool_call_nested_arguments"] = [
            user,
            {"role": "assistant", "content": "", "tool_calls": [search]},
        ]
        if max_tool_calls is None or max_tool_calls >= 2:
            cases["parallel_tool_calls"] = [
                user,
                {"role": "assistant", "content": "", "tool_calls": [weather, search]},
            ]
        if has_content:
            cases["tool_result_then_answer"] = [
                user,
                {"role": "assistant", "content": "", "tool_calls": [weather]},
                {"role": "tool", "name": "get_weather", "content": '{"temperature": 24}'},
                {"role": "assistant", "content": "It is 24 degrees in Paris."},
            ]
    return cases


# --------------------------------------------------------------------------- the check


def _default_parse(text: str, template: Any, *, prefix: str, tools: Any = None) -> dict:
    from . import parse_response

    return parse_response(text, template, prefix=prefix, tools=tools)


def verify_round_trip(
    chat_template: str,
    response_template: Any,
    conversations: Mapping[str, Sequence[Mapping[str, Any]]]
    | Iterable[Sequence[Mapping[str, Any]]]
    | None = None,
    *,
    tools: Sequence[Any] | None = None,
    special_tokens: Mapping[str, str] | None = None,
    stop: Sequence[str] | None = None,
    parse: Callable[..., dict] | None = None,
    **template_kwargs: Any,
) -> list[CaseResult]:
    """Check that ``response_template`` parses back what ``chat_template`` renders.

    Args:
        chat_template: the model's Jinja chat template.
        response_template: the response template (dict or ``ResponseTemplate``).
        conversations: ``{name: messages}`` or a list of message lists (named ``case0``, ...), each
            ending with the assistant message to check. Default: :func:`sample_conversations`
            adapted to ``response_template``, with :func:`sample_tools` as ``tools``.
        tools: tools passed both to the chat template and to the parser (argument typing).
        special_tokens: e.g. ``{"bos_token": "<s>", "eos_token": "</s>"}``.
        stop: end-of-turn strings; the generation is cut after the first one (see module docs).
        parse: the parse function, ``parse(text, template, prefix=..., tools=...)``; default:
            this package's :func:`~hf_response_templates.parse_response`.
        **template_kwargs: chat-template variables such as ``enable_thinking=False``.

    Returns:
        One :class:`CaseResult` per conversation. Never raises for a failing case.

    Example:
        >>> results = verify_round_trip(chat_template, get_template("qwen3"))  # doctest: +SKIP
        >>> [r.name for r in results if not r.passed]  # doctest: +SKIP
        []
    """
    if conversations is None:
        conversations = sample_conversations(response_template)
        if tools is None:
            tools = sample_tools()
    if not isinstance(conversations, Mapping):
        conversations = {f"case{i}": conv for i, conv in enumerate(conversations)}
    parse = parse or _default_parse
    results: list[CaseResult] = []
    for name, messages in conversations.items():
        expected = expected_message(messages[-1], response_template)
        try:
            prefix, generation = split_assistant_turn(
                chat_template,
                messages,
                tools=tools,
                special_tokens=special_tokens,
                stop=stop,
                **template_kwargs,
            )
        except ImportError:  # a missing dependency (jinja2, Transformers) is not a property of the case
            raise
        except Exception as exc:  # noqa: BLE001 - reported in the result
            results.append(
                CaseResult(name, False, expected, None, f"render failed: {type(exc).__name__}: {exc}")
            )
            continue
        try:
            parsed = parse(generation, response_template, prefix=prefix, tools=tools)
        except Exception as exc:  # noqa: BLE001 - reported in the result
            results.append(
                CaseResult(
                    name,
                    False,
                    expected,
                    None,
                    f"parse failed: {type(exc).__name__}: {exc}",
                    prefix,
                    generation,
                )
            )
            continue
        keep_ids = any(isinstance(c, Mapping) and "id" in c for c in parsed.get("tool_calls") or [])
        got = normalize_message(parsed, keep_tool_call_ids=keep_ids)
        if keep_ids:
            expected = expected_message(messages[-1], response_template, keep_tool_call_ids=True)
        detail = _diff(expected, got)
        results.append(CaseResult(name, not detail, expected, got, detail, prefix, generation))
    return results
