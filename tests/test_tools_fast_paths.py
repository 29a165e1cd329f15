"""`tools.py`'s plain-dict fast paths (issue 19): a call dict and schemas that are plain dicts are typed
without `isinstance` checks against the `Mapping` ABC (each one a Python-level `ABCMeta.__instancecheck__`
call), and other mappings are typed exactly as before."""

from __future__ import annotations

import sys
from collections import UserDict
from types import MappingProxyType

from hf_response_templates.tools import ToolSchemas, cast_value, tool_schemas

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "n": {"type": "integer"}, "opt": {"type": ["integer", "null"]}, "obj": {"type": "object", "properties": {
        "k": {"type": "number"}}}, "xs": {"type": "array", "items": {"type": "integer"}}, "s": {"type": "string"}}}}}]


def _call() -> dict:
    return {"type": "function", "function": {"name": "f", "arguments": {
        "n": "3", "opt": "null", "obj": '{"k": "2.5"}', "xs": ["1", "2"], "s": "7"}}}


EXPECTED = {"n": 3, "opt": None, "obj": {"k": 2.5}, "xs": [1, 2], "s": "7"}


def _abc_checks(fn) -> int:
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code.co_name == "__instancecheck__":
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_plain_dicts_are_typed_without_abc_checks():
    schemas = tool_schemas(TOOLS)
    call = _call()
    assert _abc_checks(lambda: schemas.type_tool_calls(call)) == 0
    assert call["function"]["arguments"] == EXPECTED


def test_other_mappings_and_lists_are_typed_as_before():
    schemas = tool_schemas(TOOLS)
    calls = [_call(), _call()]
    assert schemas.type_tool_calls(calls) is calls
    assert [c["function"]["arguments"] for c in calls] == [EXPECTED, EXPECTED]
    # a schema given as another mapping: still read
    assert cast_value("4", MappingProxyType({"type": "integer"})) == 4
    assert cast_value({"k": "1"}, UserDict({"type": "object", "properties": UserDict({"k": {"type": "integer"}})})) == {"k": 1}
    # a bare call dict (no "function" wrapper), and values that are not calls
    bare = {"name": "f", "arguments": {"n": "5"}}
    assert ToolSchemas(schemas.by_name).type_tool_calls(bare) == {"name": "f", "arguments": {"n": 5}}
    assert schemas.type_tool_calls("text") == "text"
    assert schemas.type_tool_calls({"function": "x", "name": "f", "arguments": {"n": "1"}})["arguments"] == {"n": 1}
