"""Tool-argument typing: cast string arguments by the called tool's JSON schema.

`tools` are given as `apply_chat_template` takes them: JSON-schema dicts
(`{"type": "function", "function": {"name", "parameters"}}` or the bare `{"name", "parameters"}`),
or Python functions with type hints and a docstring (converted by Transformers' `get_json_schema`).

Only `str` values are cast, by the schema's non-string types in the order the schema lists them,
the rules Transformers' native parser and llama.cpp follow:

* `"null"` (or `"None"`) becomes `None` where the schema admits null (`"nullable": true`,
  `"type": [..., "null"]`, an `anyOf`/`oneOf` choice `{"type": "null"}`, a Python `Optional[X]` or
  `X | None` parameter);
* text that reads as an admitted non-string type becomes that value, even when the schema also admits
  a string: `"8"` is `8` for `"type": ["integer", "string"]`, `'{"a": 1}'` a dict for
  `anyOf: [string, object]`;
* an `object` or `array` parameter (one that does not admit a string) also reads Python's `str()` of
  the value (`{'lang': 'fr', 'safe': True}`), which chat templates that print arguments with
  `{{ value }}` or `|string` write; it is read strictly, never evaluated (`parse_python_literal`);
* anything else (a `string`-only parameter, no declared type, a failed cast) keeps the text.

Which values are typed depends on the field the call was parsed from (`FieldSpec.tool_typing`), as in
Transformers 5.25 but for one deliberate difference (`value_parser_by`):

* a `json` or `python-call-list` body (`TYPED_BODY`): its syntax already tells a quoted string from a typed
  literal, so an argument whose schema admits a string (`["integer", "string"]`, `["string", "null"]`, ...) is
  left as the model wrote it (`"8"` stays `"8"`, `"null"` stays `"null"`), at any depth; a quoted string for a
  parameter that admits no string is still cast (`"8"` is `8` for `"integer"`);
* an `xml-inline` field with `value_parser_by` (or its older spelling `value_parser_group`) is typed as such a
  body (`TYPED_BODY`), a deliberate difference from Transformers 5.25, which types nothing there: the model's
  tag already says how to read each value, so where the schema admits a string the value stays as the tag's
  parser gave it (DeepSeek V3.2's `string="true"` `"8"` stays `"8"` for `["integer", "string"]`), but a string
  for a parameter that admits no string is cast (`"42"` is `42` for `"integer"`, as vLLM's DeepSeek V3.2 parser
  does): a strict tool (OpenAI's `strict: true`) would reject it as written;
* any other body (`SCHEMA_TYPED`: `xml-inline`, `kv-lines`, text): the rules above.

An `enum` without a `type` casts only to one of its members (`"2"` is `2` for `{"enum": [1, 2]}`, `"7"`
stays `"7"`). Objects and arrays are typed recursively through `properties` and `items`.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import math
import types as _types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .content import parse_python_literal

__all__ = ["SCHEMA_TYPED", "TYPED_BODY", "ToolSchemas", "admits_string", "cast_value", "tool_schemas"]

#: `FieldSpec.tool_typing`: how the `tools=` schemas type the tool calls a field parses to (module docstring).
SCHEMA_TYPED, TYPED_BODY = 0, 1

#: The content parsers whose syntax tells strings from typed literals (Transformers 5.25's
#: `TYPED_STRUCTURED_PARSERS`): their fields are `TYPED_BODY` (as are the fields with `value_parser_by`).
TYPED_BODY_PARSERS = frozenset({"json", "python-call-list"})


class ToolSchemas:
    """Parameter schemas by tool name, built once per parser."""

    __slots__ = ("by_name", "_props", "_kept")

    def __init__(self, by_name: dict[str, dict[str, Any]]):
        self.by_name = by_name
        # tool name -> {parameter: (its schema, its types)}: the types of each parameter read once; a
        # parameter whose schema leaves every value as it is (`_inert`: a plain `string`) is left out
        self._props: dict[str, dict[str, tuple[Any, list[str]]]] = {}
        # the same for a `TYPED_BODY` field: without the parameters that admit a string (left as written there)
        self._kept: dict[str, dict[str, tuple[Any, list[str]]]] = {}
        for name, params in by_name.items():
            props = params.get("properties") if params else None
            if isinstance(props, dict):
                self._props[name] = {
                    k: (v, _schema_types(v)) for k, v in props.items() if isinstance(v, Mapping) and not _inert(v)
                }
                self._kept[name] = {k: t for k, t in self._props[name].items() if "string" not in t[1]}

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def type_tool_calls(self, value: Any, typing: int = SCHEMA_TYPED) -> Any:
        """Type the arguments of every tool call found in `value` (a call dict or a list of them), in place, as
        a field of `typing` (`FieldSpec.tool_typing`) has them typed: `SCHEMA_TYPED` or `TYPED_BODY` (arguments
        whose schema admits a string stay as written)."""
        if typing:
            kept = True
            by_tool = self._kept
        else:
            kept = False
            by_tool = self._props
        if value.__class__ is not dict:  # (the usual call dict: no isinstance checks)
            if isinstance(value, list):
                for item in value:
                    self.type_tool_calls(item, typing)
                return value
            if not isinstance(value, dict):
                return value
        fn = value.get("function")
        call = fn if fn.__class__ is dict or isinstance(fn, dict) else value
        name, arguments = call.get("name"), call.get("arguments")
        if name.__class__ is str and arguments.__class__ is dict or isinstance(name, str) and isinstance(arguments, dict):
            props = by_tool.get(name)
            if props:
                for key, arg in arguments.items():
                    typed = props.get(key)
                    # (a number, boolean or None is never cast: only strings, and what lists and dicts hold)
                    if typed is not None and arg.__class__ not in _KEPT_AS_IS:
                        arguments[key] = _cast(arg, typed[0], typed[1], kept)
        return value


#: The classes of argument values `_cast` returns unchanged whatever the schema.
_KEPT_AS_IS = frozenset({int, float, bool, type(None)})


def _inert(schema: Mapping[str, Any]) -> bool:
    """Whether `_cast(value, schema, ...)` is `value`, unchanged, for every value: the schema (and each of its
    `anyOf` / `oneOf` choices) admits strings only, or declares no type (and no `enum`), and types nothing
    nested (no `properties`, no `items`). The usual `{"type": "string", "description": ...}` parameter."""
    for sub in _subschemas(schema):
        if "properties" in sub or "items" in sub or "enum" in sub:
            return False
        if any(t != "string" for t in _schema_types(sub)):
            return False
    return True


#: `tool_schemas` results for lists/tuples of tools: id -> (the list, a deep copy of it, the schemas).
_CACHE: dict[int, tuple[Any, Any, ToolSchemas]] = {}
_CACHE_SIZE = 64


def tool_schemas(tools: Iterable[Any] | None) -> ToolSchemas:
    """Collect `{name: parameters_schema}` from `tools` (dicts or Python functions).

    A list or tuple passed again (the usual case: one `tools` list for every generation) is recognised by
    identity and `==` against a copy taken the first time (~1 µs), so its schemas are built once; a list
    changed in place since compares unequal and is read again. The result is shared: treat it as read-only.
    """
    if not isinstance(tools, (list, tuple)):
        return _collect(tools)
    hit = _CACHE.get(id(tools))
    try:
        if hit is not None and hit[0] is tools and hit[1] == tools:
            return hit[2]
        snapshot = copy.deepcopy(tools)
    except Exception:  # an uncopyable or uncomparable tool: no caching
        return _collect(tools)
    schemas = _collect(snapshot)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(tools)] = (tools, snapshot, schemas)
    return schemas


def _collect(tools: Iterable[Any] | None) -> ToolSchemas:
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
    try:
        return get_json_schema(fn)
    except Exception:
        # Transformers 4.x reads `X | None` (PEP 604) hints as an unknown class; the same function with
        # `Optional[X]` hints gives the schema Transformers 5.x gives for the original.
        shim = _with_typing_unions(fn)
        if shim is None:
            raise
        return get_json_schema(shim)


def _with_typing_unions(fn: Callable[..., Any]) -> Callable[..., Any] | None:
    """A copy of `fn` whose `X | Y` hints are `typing.Union[X, Y]`; None if it has none (or no hints)."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    converted = {name: _typing_union(hint) for name, hint in hints.items()}
    if all(converted[name] is hints[name] for name in hints):
        return None

    @functools.wraps(fn)
    def shim(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - only its signature is read
        return fn(*args, **kwargs)

    del shim.__wrapped__  # `inspect.signature` and `get_type_hints` read the shim's own annotations
    shim.__annotations__ = converted
    shim.__signature__ = inspect.signature(fn).replace(  # type: ignore[attr-defined]
        parameters=[p.replace(annotation=converted.get(p.name, p.annotation))
                    for p in inspect.signature(fn).parameters.values()],
        return_annotation=converted.get("return", inspect.Signature.empty),
    )
    return shim


def _typing_union(hint: Any) -> Any:
    """`hint` with every PEP 604 union (`int | None`, also nested: `list[int | None]`) as `typing.Union`."""
    args = typing.get_args(hint)
    if not args:
        return hint
    new_args = tuple(_typing_union(a) for a in args)
    if isinstance(hint, _types.UnionType):
        return typing.Union[new_args]  # noqa: UP007 (a Union built from runtime types: `|` cannot splat them)
    if all(a is b for a, b in zip(new_args, args, strict=True)):
        return hint
    origin = typing.get_origin(hint)
    try:
        return origin[new_args] if origin is not None else hint
    except TypeError:
        return hint


def _schema_types(schema: Any) -> list[str]:
    if schema.__class__ is not dict and not isinstance(schema, Mapping):
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
    return types


def admits_string(schema: Any) -> bool:
    """Whether every string argument stays a string under `schema`: no type declared, or `string` the only
    one (a union such as `["integer", "string"]` casts `"8"` to `8`, so its strings may not stay)."""
    types = _schema_types(schema)
    if not types:
        return not _enum_members(schema)
    return all(t == "string" for t in types)


def _enum_members(schema: Any) -> list[Any]:
    """The non-string members of a type-less `enum`: what a string argument may be cast to."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("enum"), list):
        return []
    return [v for v in schema["enum"] if not isinstance(v, str)]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else "object"


def _subschemas(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    subs = [schema]
    for union in ("anyOf", "oneOf"):
        subs.extend(s for s in schema.get(union) or () if isinstance(s, Mapping))
    return subs


def cast_value(value: Any, schema: Any, kept: bool = False) -> Any:
    """Cast `value` to what `schema` asks for, where it is a string that the schema does not accept. `kept`: as
    in a `TYPED_BODY` field (a value, or a value nested in it, whose schema admits a string stays as it is)."""
    if schema.__class__ is not dict and not isinstance(schema, Mapping):  # (a dict: no ABC check, a Python call)
        return value
    return _cast(value, schema, _schema_types(schema), kept)


def _cast(value: Any, schema: Any, types: list[str], kept: bool = False) -> Any:
    """`cast_value` with the schema's types already read (`_schema_types`)."""
    if schema.__class__ is not dict and not isinstance(schema, Mapping):
        return value
    if kept and "string" in types:
        return value  # (a `TYPED_BODY` argument whose schema admits a string: as the model wrote it)
    if isinstance(value, str):
        if not types:
            return _cast_to_member(value, _enum_members(schema)) if "enum" in schema else value
        if "string" in types:
            return _cast_json_text(value, types, schema)
        for t in types:
            ok, cast = _cast_str(value, t)
            if ok:
                return _cast_nested(cast, schema, kept)
        return value
    return _cast_nested(value, schema, kept)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN / Infinity are not JSON


#: `json.loads(text, parse_constant=_reject_constant)` without building a decoder per call (~1 µs).
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant).decode


#: The characters a JSON text of each type can start with (strings start with `"`).
_JSON_STARTS = {"integer": "-0123456789", "number": "-0123456789", "boolean": "tf", "null": "n", "array": "[",
                "object": "{"}


def _cast_json_text(value: str, types: list[str], schema: Mapping[str, Any]) -> Any:
    """A string for a schema that also admits strings: it becomes another admitted type only when it is
    valid JSON of that type (`"8"` -> `8` for `["string", "integer"]`), or `"None"` where null is admitted;
    `"True"`, `"007"`, `"x"` stay strings."""
    if "null" in types and value.strip() == "None":
        return None  # Python's None, as chat templates that render arguments with |string write it
    # JSON of an admitted type other than string starts (after JSON whitespace) with one of its characters:
    # a text that does not ("Paris") stays a string without a decode attempt (a failed one, which raises,
    # costs ~2 µs; the usual case for a `["string", "null"]` parameter)
    first = value.lstrip(" \t\n\r")[:1]
    for t in types:
        if first and first in _JSON_STARTS.get(t, ""):
            break
    else:
        return value
    try:
        decoded = _STRICT_JSON(value)
    except (ValueError, RecursionError):
        return value
    kind = _json_type(decoded)
    if kind == "number" and decoded.is_integer() and ("number" not in types or "." not in value):
        decoded = int(decoded)  # 3.0 is an integer in JSON Schema; "1e3" is 1000 as a number too
        kind = "integer" if "integer" in types else "number"
    if kind == "integer" and "integer" not in types and "number" in types:
        kind = "number"
    if kind == "string" or kind not in types:
        return value
    return _cast_nested(decoded, schema)


def _cast_to_member(value: str, members: list[Any]) -> Any:
    """The non-string enum member whose JSON text `value` is (`"2"` -> `2`), else `value` itself."""
    if not members:
        return value
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    for member in members:
        if _json_type(decoded) == _json_type(member) and decoded == member:
            return decoded
    return value


def _cast_nested(value: Any, schema: Mapping[str, Any], kept: bool = False) -> Any:
    if isinstance(value, dict):
        for sub in _subschemas(schema):
            props = sub.get("properties")
            if props.__class__ is dict or isinstance(props, Mapping):
                for key in value:
                    if key in props:
                        value[key] = cast_value(value[key], props[key], kept)
                break
    elif isinstance(value, list):
        for sub in _subschemas(schema):
            items = sub.get("items")
            if items.__class__ is dict or isinstance(items, Mapping):
                types = _schema_types(items)  # (read once for the list, not per item)
                for i, item in enumerate(value):
                    if item.__class__ not in _KEPT_AS_IS:
                        value[i] = _cast(item, items, types, kept)
                break
            if "array" not in _schema_types(sub) and _schema_types(sub):
                # a list collected by `merge_duplicates` for a scalar parameter: type each item
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        value[i] = cast_value(item, sub, kept)
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
            try:
                decoded = json.loads(text)
            except ValueError:
                # Python's str() of the value, as chat templates that print it with {{ value }} write it
                decoded = parse_python_literal(text)
            if isinstance(decoded, dict if type_name == "object" else list):
                return True, decoded
    except (ValueError, OverflowError, RecursionError):
        pass
    return False, None
