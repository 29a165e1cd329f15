"""Tool-argument typing: cast string arguments by the called tool's JSON schema.

`tools` are given as `apply_chat_template` takes them: JSON-schema dicts
(`{"type": "function", "function": {"name", "parameters"}}` or the bare `{"name", "parameters"}`),
or Python functions with type hints and a docstring (converted by Transformers' `get_json_schema`).

Only `str` values are cast, and only when the schema allows no string: `"7"` becomes `7` for an
`integer` parameter and stays `"7"` for a `string` one (or for a union that admits strings). A cast
that fails leaves the text as it is. Objects and arrays are typed recursively through `properties`
and `items`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["ToolSchemas", "admits_string", "cast_value", "tool_schemas"]


class ToolSchemas:
    """Parameter schemas by tool name, built once per parser."""

    __slots__ = ("by_name",)

    def __init__(self, by_name: dict[str, dict[str, Any]]):
        self.by_name = by_name

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def type_tool_calls(self, value: Any) -> Any:
        """Type the arguments of every tool call found in `value` (a call dict or a list of them), in place."""
        if isinstance(value, list):
            for item in value:
                self.type_tool_calls(item)
            return value
        if not isinstance(value, dict):
            return value
        call = value.get("function") if isinstance(value.get("function"), dict) else value
        name, arguments = call.get("name"), call.get("arguments")
        if isinstance(name, str) and isinstance(arguments, dict):
            params = self.by_name.get(name)
            if params:
                props = params.get("properties")
                if isinstance(props, dict):
                    for key, arg in arguments.items():
                        if key in props:
                            arguments[key] = cast_value(arg, props[key])
        return value


def tool_schemas(tools: Iterable[Any] | None) -> ToolSchemas:
    """Collect `{name: parameters_schema}` from `tools` (dicts or Python functions)."""
    by_name: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        if callable(tool) and not isinstance(tool, Mapping):
            tool = _function_schema(tool)
        if not isinstance(tool, Mapping):
            raise TypeError(f"tools must be JSON-schema dicts or Python functions, got {type(tool).__name__}")
        fn = tool.get("function", tool)
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            by_name[fn["name"]] = dict(params) if isinstance(params, Mapping) else {}
    return ToolSchemas(by_name)


def _function_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        from transformers.utils import get_json_schema
    except ImportError as e:  # pragma: no cover - transformers is a dependency
        raise TypeError("Python functions as tools need transformers' get_json_schema") from e
    return get_json_schema(fn)


def _schema_types(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    declared = schema.get("type")
    types: list[str] = []
    if isinstance(declared, str):
        types.append(declared)
    elif isinstance(declared, list):
        types.extend(t for t in declared if isinstance(t, str))
    for union in ("anyOf", "oneOf"):
        for choice in schema.get(union) or ():
            types.extend(_schema_types(choice))
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    if not types and "enum" in schema:
        types.extend(sorted({_json_type(v) for v in schema["enum"]}))
    return types


def admits_string(schema: Any) -> bool:
    """Whether a string argument stays a string under `schema` (no type declared, or `string` allowed)."""
    types = _schema_types(schema)
    return not types or "string" in types


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string" if isinstance(value, str) else "object"


def _subschemas(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    subs = [schema]
    for union in ("anyOf", "oneOf"):
        subs.extend(s for s in schema.get(union) or () if isinstance(s, Mapping))
    return subs


def cast_value(value: Any, schema: Any) -> Any:
    """Cast `value` to what `schema` asks for, where it is a string that the schema does not accept."""
    if not isinstance(schema, Mapping):
        return value
    types = _schema_types(schema)
    if isinstance(value, str):
        if not types or "string" in types:
            return value
        for t in types:
            ok, cast = _cast_str(value, t)
            if ok:
                return _cast_nested(cast, schema)
        return value
    return _cast_nested(value, schema)


def _cast_nested(value: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(value, dict):
        for sub in _subschemas(schema):
            props = sub.get("properties")
            if isinstance(props, Mapping):
                for key in value:
                    if key in props:
                        value[key] = cast_value(value[key], props[key])
                break
    elif isinstance(value, list):
        for sub in _subschemas(schema):
            items = sub.get("items")
            if isinstance(items, Mapping):
                for i, item in enumerate(value):
                    value[i] = cast_value(item, items)
                break
            if "array" not in _schema_types(sub) and _schema_types(sub):
                # a list collected by `merge_duplicates` for a scalar parameter: type each item
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        value[i] = cast_value(item, sub)
                break
    return value


def _cast_str(raw: str, type_name: str) -> tuple[bool, Any]:
    text = raw.strip()
    try:
        if type_name == "integer":
            try:
                return True, int(text)
            except ValueError:
                number = float(text)
                if number.is_integer():
                    return True, int(number)
                return False, None
        if type_name == "number":
            number = float(text)
            if math.isnan(number) or math.isinf(number):
                return False, None
            is_int = number.is_integer() and "." not in text  # "1e3" -> 1000, "1.0" -> 1.0
            return True, int(number) if is_int else number
        if type_name == "boolean":
            low = text.lower()
            if low in ("true", "1"):
                return True, True
            if low in ("false", "0"):
                return True, False
            return False, None
        if type_name == "null":
            return (True, None) if text in ("null", "None") else (False, None)
        if type_name in ("object", "array"):
            decoded = json.loads(text)
            if isinstance(decoded, dict if type_name == "object" else list):
                return True, decoded
    except (ValueError, OverflowError, RecursionError):
        pass
    return False, None
