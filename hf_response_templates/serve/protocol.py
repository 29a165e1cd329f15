"""Request bodies of the three APIs, validated and converted to one `GenerationRequest`.

Each ``parse_*`` function takes the decoded JSON body and returns ``(GenerationRequest, options)`` or raises
`RequestError`, whose ``param`` names the offending field with its position (``messages[2].content``), as
OpenAI's 400 errors do. Conversations become what chat templates read: ``{"role", "content"}`` messages, the
assistant's ``tool_calls`` with ``arguments`` as dicts, ``reasoning_content``, and ``{"role": "tool",
"tool_call_id", "content"}`` results. Fields a client commonly sends but the server does not act on
(``user``, ``metadata``, ``seed``, ...) are accepted and ignored; what it cannot honour (images, ``stop``
sequences) is refused with a 400 rather than silently ignored.

No Transformers here: this module only reads JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hf_response_templates.blocks import function_tools

__all__ = ["ApiOptions", "GenerationRequest", "RequestError", "parse_chat_completions", "parse_messages", "parse_responses"]

#: the most choices one chat completion request may ask for (``n``)
MAX_CHOICES = 8


class RequestError(ValueError):
    """A request the server refuses (HTTP 400): ``param`` is the field, e.g. ``messages[0].role``."""

    def __init__(self, param: str | None, message: str):
        super().__init__(f"{param}: {message}" if param else message)
        self.param = param
        self.message = message


@dataclass
class GenerationRequest:
    """One generation, whatever API asked for it (the request modules convert to this)."""

    #: the conversation, as ``apply_chat_template`` takes it (tool-call arguments as dicts)
    messages: list[dict[str, Any]]
    #: Chat Completions function tools: rendered into the prompt and used to type arguments
    tools: list[Any] | None = None
    #: "auto", "none", "required" or ``{"type": "function", "function": {"name": ...}}``: passed to the chat
    #: template as ``tool_choice`` ("none": no tools are rendered)
    tool_choice: Any = None
    max_new_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    #: more chat template variables (e.g. ``{"enable_thinking": False}``)
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class ApiOptions:
    """What the API adapters need besides the generation itself."""

    model: str = ""
    stream: bool = False
    include_usage: bool = False
    n: int = 1


# ------------------------------------------------------------------------------------------- helpers


def _object(value: Any, param: str | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RequestError(param, f"expected a JSON object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _string(body: Mapping[str, Any], key: str, param: str, *, required: bool = False, default: Any = None) -> Any:
    value = body.get(key, default)
    if value is None:
        if required:
            raise RequestError(param, "is required")
        return default
    if not isinstance(value, str):
        raise RequestError(param, f"expected a string, got {_kind(value)}")
    return value


def _bool(body: Mapping[str, Any], key: str) -> bool:
    value = body.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise RequestError(key, f"expected true or false, got {_kind(value)}")
    return value


def _int(body: Mapping[str, Any], key: str, *, low: int, high: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(key, f"expected an integer, got {_kind(value)}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise RequestError(key, f"must be {bound}, got {value}")
    return value


def _number(body: Mapping[str, Any], key: str, *, low: float, high: float, low_open: bool = False) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(key, f"expected a number, got {_kind(value)}")
    if value > high or value < low or (low_open and value == low):
        bound = f"in ({low}, {high}]" if low_open else f"between {low} and {high}"
        raise RequestError(key, f"must be {bound}, got {value}")
    return float(value)


def _no_stop(body: Mapping[str, Any], key: str) -> None:
    if body.get(key) not in (None, [], ""):
        raise RequestError(key, "stop sequences are not supported by this server")


def _text_parts(value: Any, param: str, kinds: tuple[str, ...]) -> str:
    """A content value: a string, or a list of text parts (joined)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise RequestError(param, f"expected a string or an array of content parts, got {_kind(value)}")
    texts = []
    for i, part in enumerate(value):
        part = _object(part, f"{param}[{i}]")
        if part.get("type") not in kinds:
            raise RequestError(
                f"{param}[{i}].type", f"unsupported content part {part.get('type')!r} (this server takes text: {kinds[0]!r})"
            )
        texts.append(_string(part, "text", f"{param}[{i}].text", required=True))
    return "".join(texts)


def _arguments(value: Any, param: str) -> Any:
    """Tool-call arguments for the chat template: a JSON string decoded (chat templates read a dict)."""
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as e:
            raise RequestError(param, f"not valid JSON ({e.msg} at position {e.pos})") from None
    if isinstance(value, dict):
        return value
    raise RequestError(param, f"expected a JSON string, got {_kind(value)}")


def _function_tools(value: Any, param: str, shape: str) -> list[dict[str, Any]] | None:
    """Tools in any of the three shapes, checked, as Chat Completions function tools."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise RequestError(param, f"expected an array of tools, got {_kind(value)}")
    for i, tool in enumerate(value):
        tool = _object(tool, f"{param}[{i}]")
        if shape == "anthropic":
            _string(tool, "name", f"{param}[{i}].name", required=True)
            _object(tool.get("input_schema"), f"{param}[{i}].input_schema")
            continue
        if tool.get("type") != "function":
            raise RequestError(f"{param}[{i}].type", f"only function tools are supported, got {tool.get('type')!r}")
        fn = tool if shape == "responses" else _object(tool.get("function"), f"{param}[{i}].function")
        where = f"{param}[{i}]" if shape == "responses" else f"{param}[{i}].function"
        _string(fn, "name", f"{where}.name", required=True)
        if fn.get("parameters") is not None:
            _object(fn["parameters"], f"{where}.parameters")
    return function_tools(value)


def _check_tool_choice(choice: Any, tools: list[dict] | None, param: str) -> None:
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise RequestError(param, f"expected 'none', 'auto', 'required' or a function, got {choice!r}")
        if choice == "required" and not tools:
            raise RequestError(param, "'required' needs tools")
        return
    choice = _object(choice, param)
    fn = choice.get("function") if isinstance(choice.get("function"), dict) else choice
    name = fn.get("name")
    names = [t["function"]["name"] for t in tools or []]
    if name not in names:
        raise RequestError(param, f"names a function that is not among the tools: {name!r} (tools: {names})")


def _request(
    body: Mapping[str, Any],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tool_choice: Any,
    max_tokens: int | None,
    high_temperature: float,
) -> GenerationRequest:
    """The `GenerationRequest`, with the fields every API shares: sampling and ``chat_template_kwargs`` (a
    vLLM extension: more chat template variables)."""
    kwargs = body.get("chat_template_kwargs")
    return GenerationRequest(
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        max_new_tokens=max_tokens,
        temperature=_number(body, "temperature", low=0.0, high=high_temperature),
        top_p=_number(body, "top_p", low=0.0, high=1.0, low_open=True),
        chat_template_kwargs=dict(_object(kwargs, "chat_template_kwargs")) if kwargs is not None else {},
    )


# ------------------------------------------------------------------------------------- Chat Completions

_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")


def parse_chat_completions(body: Any) -> tuple[Any, ApiOptions]:
    """``POST /v1/chat/completions``."""
    body = _object(body, None)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages", "expected a non-empty array of messages")
    out = [_chat_message(m, f"messages[{i}]") for i, m in enumerate(messages)]
    tools = _function_tools(body.get("tools"), "tools", "chat")
    choice = body.get("tool_choice")
    if choice is not None:
        _check_tool_choice(choice, tools, "tool_choice")
    _no_stop(body, "stop")
    stream = _bool(body, "stream")
    stream_options = body.get("stream_options")
    include_usage = False
    if stream_options is not None:
        if not stream:
            raise RequestError("stream_options", "is only allowed with stream: true")
        include_usage = _bool(_object(stream_options, "stream_options"), "include_usage")
    max_tokens = _int(body, "max_completion_tokens", low=1)
    if max_tokens is None:
        max_tokens = _int(body, "max_tokens", low=1)
    request = _request(body, out, tools, choice, max_tokens, 2.0)
    n = _int(body, "n", low=1, high=MAX_CHOICES) or 1
    model = _string(body, "model", "model", default="")
    return request, ApiOptions(model=model, stream=stream, include_usage=include_usage, n=n)


def _chat_message(message: Any, param: str) -> dict[str, Any]:
    message = _object(message, param)
    role = message.get("role")
    if role not in _CHAT_ROLES:
        raise RequestError(f"{param}.role", f"expected one of {', '.join(_CHAT_ROLES)}, got {role!r}")
    out: dict[str, Any] = {"role": "system" if role == "developer" else role}
    content = message.get("content")
    if content is not None:
        out["content"] = _text_parts(content, f"{param}.content", ("text",))
    elif role != "assistant":
        raise RequestError(f"{param}.content", "is required")
    else:
        out["content"] = ""
    for key in ("reasoning_content", "reasoning"):
        if message.get(key) is not None:
            out["reasoning_content"] = _string(message, key, f"{param}.{key}")
    if role == "tool":
        out["tool_call_id"] = _string(message, "tool_call_id", f"{param}.tool_call_id", default="")
    if role == "assistant" and message.get("tool_calls"):
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            raise RequestError(f"{param}.tool_calls", f"expected an array, got {_kind(calls)}")
        out["tool_calls"] = []
        for j, call in enumerate(calls):
            where = f"{param}.tool_calls[{j}]"
            call = _object(call, where)
            fn = _object(call.get("function"), f"{where}.function")
            out["tool_calls"].append(
                {
                    "id": _string(call, "id", f"{where}.id", default=""),
                    "type": "function",
                    "function": {
                        "name": _string(fn, "name", f"{where}.function.name", required=True),
                        "arguments": _arguments(fn.get("arguments", "{}"), f"{where}.function.arguments"),
                    },
                }
            )
    if isinstance(message.get("name"), str):
        out["name"] = message["name"]
    return out


# ------------------------------------------------------------------------------------ Anthropic Messages


def parse_messages(body: Any) -> tuple[Any, ApiOptions]:
    """``POST /v1/messages`` (Anthropic)."""
    body = _object(body, None)
    max_tokens = _int(body, "max_tokens", low=1)
    if max_tokens is None:
        raise RequestError("max_tokens", "is required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages", "expected a non-empty array of messages")
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system is not None:
        out.append({"role": "system", "content": _text_parts(system, "system", ("text",))})
    for i, message in enumerate(messages):
        out.extend(_anthropic_message(message, f"messages[{i}]"))
    tools = _function_tools(body.get("tools"), "tools", "anthropic")
    choice = _anthropic_tool_choice(body.get("tool_choice"), tools)
    _no_stop(body, "stop_sequences")
    request = _request(body, out, tools, choice, max_tokens, 1.0)
    return request, ApiOptions(model=_string(body, "model", "model", default=""), stream=_bool(body, "stream"))


def _anthropic_message(message: Any, param: str) -> list[dict[str, Any]]:
    message = _object(message, param)
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise RequestError(f"{param}.role", f"expected 'user' or 'assistant', got {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        raise RequestError(f"{param}.content", f"expected a string or an array of content blocks, got {_kind(content)}")
    text, reasoning, calls, results = [], [], [], []
    for j, block in enumerate(content):
        where = f"{param}.content[{j}]"
        block = _object(block, where)
        kind = block.get("type")
        if kind == "text":
            text.append(_string(block, "text", f"{where}.text", required=True))
        elif kind == "thinking" and role == "assistant":
            reasoning.append(_string(block, "thinking", f"{where}.thinking", required=True))
        elif kind == "tool_use" and role == "assistant":
            calls.append(
                {
                    "id": _string(block, "id", f"{where}.id", default=""),
                    "type": "function",
                    "function": {
                        "name": _string(block, "name", f"{where}.name", required=True),
                        "arguments": _object(block.get("input", {}), f"{where}.input"),
                    },
                }
            )
        elif kind == "tool_result" and role == "user":
            result = block.get("content", "")
            results.append(
                {
                    "role": "tool",
                    "tool_call_id": _string(block, "tool_use_id", f"{where}.tool_use_id", required=True),
                    "content": _text_parts(result, f"{where}.content", ("text",)),
                }
            )
        else:
            raise RequestError(f"{where}.type", f"unsupported content block {kind!r} in a {role} message")
    if role == "user":
        return results + ([{"role": "user", "content": "".join(text)}] if text or not results else [])
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if reasoning:
        out["reasoning_content"] = "".join(reasoning)
    if calls:
        out["tool_calls"] = calls
    return [out]


def _anthropic_tool_choice(value: Any, tools: list[dict] | None) -> Any:
    if value is None:
        return None
    value = _object(value, "tool_choice")
    kind = value.get("type")
    if kind in ("auto", "none"):
        return kind
    if kind == "any":
        _check_tool_choice("required", tools, "tool_choice")
        return "required"
    if kind == "tool":
        choice = {"type": "function", "function": {"name": value.get("name")}}
        _check_tool_choice(choice, tools, "tool_choice.name")
        return choice
    raise RequestError("tool_choice.type", f"expected 'auto', 'any', 'tool' or 'none', got {kind!r}")


# ------------------------------------------------------------------------------------- OpenAI Responses


def parse_responses(body: Any) -> tuple[Any, ApiOptions]:
    """``POST /v1/responses``."""
    body = _object(body, None)
    out: list[dict[str, Any]] = []
    instructions = _string(body, "instructions", "instructions")
    if instructions:
        out.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        out.append({"role": "user", "content": items})
    elif isinstance(items, list) and items:
        for i, item in enumerate(items):
            _responses_item(item, f"input[{i}]", out)
    else:
        raise RequestError("input", "expected a string or a non-empty array of input items")
    tools = _function_tools(body.get("tools"), "tools", "responses")
    choice = body.get("tool_choice")
    if choice is not None:
        _check_tool_choice(choice, tools, "tool_choice")
    request = _request(body, out, tools, choice, _int(body, "max_output_tokens", low=1), 2.0)
    return request, ApiOptions(model=_string(body, "model", "model", default=""), stream=_bool(body, "stream"))


def _responses_item(item: Any, param: str, out: list[dict[str, Any]]) -> None:
    item = _object(item, param)
    kind = item.get("type", "message")
    last = out[-1] if out and out[-1]["role"] == "assistant" else None
    if kind == "message":
        role = item.get("role")
        if role not in ("system", "developer", "user", "assistant"):
            raise RequestError(f"{param}.role", f"expected system, developer, user or assistant, got {role!r}")
        text = _text_parts(item.get("content"), f"{param}.content", ("input_text", "output_text", "text"))
        if role == "assistant" and last is not None and not last.get("tool_calls") and not last["content"]:
            last["content"] = text  # after a reasoning item: the same assistant turn
        else:
            out.append({"role": "system" if role == "developer" else role, "content": text})
    elif kind == "function_call":
        call = {
            "id": _string(item, "call_id", f"{param}.call_id", default=""),
            "type": "function",
            "function": {
                "name": _string(item, "name", f"{param}.name", required=True),
                "arguments": _arguments(item.get("arguments", "{}"), f"{param}.arguments"),
            },
        }
        if last is None:
            last = {"role": "assistant", "content": ""}
            out.append(last)
        last.setdefault("tool_calls", []).append(call)
    elif kind == "function_call_output":
        output = item.get("output", "")
        out.append(
            {
                "role": "tool",
                "tool_call_id": _string(item, "call_id", f"{param}.call_id", required=True),
                "content": output if isinstance(output, str) else json.dumps(output),
            }
        )
    elif kind == "reasoning":
        parts = item.get("content") or []
        text = _text_parts(parts, f"{param}.content", ("reasoning_text",)) if parts else ""
        out.append({"role": "assistant", "content": "", "reasoning_content": text})
    else:
        raise RequestError(f"{param}.type", f"unsupported input item {kind!r}")
