"""`tool_schemas` builds the schemas of a `tools` list once: passed again (identity and `==`), the same
result comes back; a list changed in place is read again (issue 19: `tools=` cost 6-10 µs per call)."""

from __future__ import annotations

from hf_response_templates import parse_response
from hf_response_templates.library import get_template
from hf_response_templates.tools import tool_schemas


def _tools():
    return [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}]


def test_the_same_list_gives_the_same_schemas():
    tools = _tools()
    first = tool_schemas(tools)
    assert tool_schemas(tools) is first
    assert tool_schemas(tuple(tools)) is not first  # another object: built (and cached) on its own
    assert tool_schemas(iter(tools)).by_name == first.by_name  # not a list: built, not cached


def test_a_list_changed_in_place_is_read_again():
    tools = _tools()
    first = tool_schemas(tools)
    tools[0]["function"]["parameters"]["properties"]["n"]["type"] = "string"
    second = tool_schemas(tools)
    assert second is not first
    assert second.by_name["f"]["properties"]["n"]["type"] == "string"
    assert first.by_name["f"]["properties"]["n"]["type"] == "integer"  # built from a copy: not changed


def test_parse_response_types_arguments_with_a_reused_and_a_changed_list():
    tpl = get_template("qwen3-coder")
    text = "<tool_call>\n<function=f>\n<parameter=n>\n8\n</parameter>\n</function>\n</tool_call>"
    tools = _tools()
    for _ in range(2):
        call = parse_response(text, tpl, prefix="", tools=tools)["tool_calls"][0]
        assert call["function"]["arguments"] == {"n": 8}
    tools[0]["function"]["parameters"]["properties"]["n"]["type"] = "string"
    call = parse_response(text, tpl, prefix="", tools=tools)["tool_calls"][0]
    assert call["function"]["arguments"] == {"n": "8"}
