"""SPEC "Transform" and "Tool-argument typing"."""

from __future__ import annotations

import pytest
from engine_helpers import GPT_OSS, QWEN_XML, SMOLLM3, stream, template

from hf_response_templates import ResponseParseError, parse_response


def test_whole_string_placeholder_keeps_the_type():
    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json",
                                                  "transform": {"wrapped": "{content}", "list": ["{content}", 1]}}}}
    assert parse_response('<x>{"a": [1]}</x>', spec, prefix="") == {"x": {"wrapped": {"a": [1]}, "list": [{"a": [1]}, 1]}}


def test_literal_strings_and_scalars_pass_through():
    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>",
                                                  "transform": {"type": "function", "n": 1, "ok": True, "none": None,
                                                                "braces": "{ not a placeholder }"}}}}
    assert parse_response("<x>v</x>", spec, prefix="")["x"] == {
        "type": "function", "n": 1, "ok": True, "none": None, "braces": "{ not a placeholder }"}


def test_dotted_path_descends_and_reports_missing_keys_and_non_dicts():
    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json",
                                                  "transform": {"v": "{content.a.b}"}}}}
    assert parse_response('<x>{"a": {"b": [3]}}</x>', spec, prefix="")["x"] == {"v": [3]}
    with pytest.raises(ResponseParseError, match="has no key 'b'"):
        parse_response('<x>{"a": {}}</x>', spec, prefix="")
    with pytest.raises(ResponseParseError, match="not a dict"):
        parse_response('<x>{"a": 5}</x>', spec, prefix="")


def test_transforms_apply_per_match_with_repeats():
    raw = ('<tool_call>{"name": "a", "arguments": {}}</tool_call>'
           '<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>')
    assert parse_response(raw, SMOLLM3, prefix="")["tool_calls"] == [
        {"type": "function", "function": {"name": "a", "arguments": {}}},
        {"type": "function", "function": {"name": "b", "arguments": {"x": 1}}}]


def test_transform_each_scope_includes_open_captures():
    spec = {"start_anchor": "<s>", "fields": {"calls": {
        "open_pattern": r"<calls server=(?P<server>\w+)>", "close": "</calls>", "content": "json",
        "transform_each": True, "transform": {"server": "{server}", "name": "{tool}"}}}}
    raw = '<calls server=s1>[{"tool": "a"}, {"tool": "b"}]</calls>'
    assert parse_response(raw, spec, prefix="") == {"calls": [{"server": "s1", "name": "a"}, {"server": "s1", "name": "b"}]}


def test_transform_results_are_fresh_objects_per_message():
    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", "transform": {"meta": {"k": [1]}}}}}
    first = parse_response("<x>a</x>", spec, prefix="")
    first["x"]["meta"]["k"].append(2)
    assert parse_response("<x>a</x>", spec, prefix="")["x"] == {"meta": {"k": [1]}}


def test_seed_gpt_oss_name_from_open_pattern():
    raw = ('<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>'
           '{"location": "San Francisco, CA"}<|call|>')
    assert parse_response(raw, GPT_OSS, prefix="")["tool_calls"] == [
        {"type": "function", "function": {"name": "get_current_weather", "arguments": {"location": "San Francisco, CA"}}}]


# ---------------------------------------------------------------- tool typing

ALARM_TOOLS = [{
    "type": "function",
    "function": {
        "name": "set_alarm",
        "parameters": {
            "type": "object",
            "properties": {
                "hour": {"type": "integer"},
                "enabled": {"type": "boolean"},
                "label": {"type": "string"},
                "ratio": {"type": "number"},
                "maybe": {"type": ["integer", "null"]},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "opt": {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
                "obj": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "arr": {"type": "array", "items": {"type": "number"}},
            },
        },
    },
}]


def _alarm(**params):
    body = "".join(f"<parameter={k}>{v}</parameter>" for k, v in params.items())
    return f"<tool_call><function=set_alarm>{body}</function></tool_call>"


def test_seed_tool_typing_example():
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["content_args"].pop("value_parser")  # every value stays a string
    message = parse_response(_alarm(hour="7", enabled="true", label="wake up"), spec, prefix="", tools=ALARM_TOOLS)
    assert message["tool_calls"][0]["function"]["arguments"] == {"hour": 7, "enabled": True, "label": "wake up"}


def test_string_parameters_and_unknown_tools_are_left_alone():
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["content_args"].pop("value_parser")
    args = parse_response(_alarm(label="7", hour="07"), spec, prefix="", tools=ALARM_TOOLS)["tool_calls"][0]
    assert args["function"]["arguments"] == {"label": "7", "hour": 7}
    other = "<tool_call><function=other><parameter=hour>7</parameter></function></tool_call>"
    assert parse_response(other, spec, prefix="", tools=ALARM_TOOLS)["tool_calls"][0]["function"]["arguments"] == {
        "hour": "7"}


@pytest.mark.parametrize("key, raw, value", [
    ("hour", "3.0", 3),
    ("hour", "3.5", "3.5"),
    ("hour", "seven", "seven"),
    ("ratio", "2", 2),
    ("ratio", "2.5", 2.5),
    ("ratio", "nan", "nan"),
    ("enabled", "False", False),
    ("enabled", "0", False),
    ("enabled", "yes", "yes"),
    ("maybe", "null", None),
    ("maybe", "4", 4),
    ("either", "4", 4),  # a string union casts by its non-string types too (as native and llama.cpp do)
    ("either", "four", "four"),
    ("opt", "None", None),
    ("opt", "true", True),
    ("obj", '{"n": "5"}', {"n": 5}),
    ("obj", "[1]", "[1]"),
    ("arr", '["1", 2]', [1, 2]),
])
def test_casts_by_schema(key, raw, value):
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["content_args"].pop("value_parser")
    args = parse_response(_alarm(**{key: raw}), spec, prefix="", tools=ALARM_TOOLS)["tool_calls"][0]["function"]
    assert args["arguments"] == {key: value}
    assert type(args["arguments"][key]) is type(value)


def test_python_functions_as_tools():
    def set_alarm(hour: int, label: str):
        """Set an alarm.

        Args:
            hour: the hour
            label: a label
        """

    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["content_args"].pop("value_parser")
    message = parse_response(_alarm(hour="7", label="8"), spec, prefix="", tools=[set_alarm])
    assert message["tool_calls"][0]["function"]["arguments"] == {"hour": 7, "label": "8"}


def test_typing_happens_at_region_close_while_streaming():
    spec = template(QWEN_XML)
    spec["fields"]["tool_calls"]["content_args"].pop("value_parser")
    _, events = stream(spec, [_alarm(hour="7"), "x"], tools=ALARM_TOOLS)
    close = next(e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls")
    assert close["value"]["function"]["arguments"] == {"hour": 7}


def test_merge_duplicates_lists_are_typed_per_item():
    spec = template(QWEN_XML)
    args = spec["fields"]["tool_calls"]["content_args"]
    args.pop("value_parser")
    args["merge_duplicates"] = True
    raw = "<tool_call><function=set_alarm><parameter=hour>1</parameter><parameter=hour>2</parameter></function></tool_call>"
    assert parse_response(raw, spec, prefix="", tools=ALARM_TOOLS)["tool_calls"][0]["function"]["arguments"] == {
        "hour": [1, 2]}


def test_bare_tool_schema_dicts_and_json_arguments():
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    raw = '<tool_call>{"name": "f", "arguments": {"n": "12"}}</tool_call>'
    assert parse_response(raw, SMOLLM3, prefix="", tools=tools)["tool_calls"][0]["function"]["arguments"] == {"n": 12}
