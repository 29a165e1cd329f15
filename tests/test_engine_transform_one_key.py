"""Transform steps `$key` / `$value`: read the only key and value of a one-key object (Apertus writes each
call as `{"NAME": {args}}`). Resolution, runtime errors (malformed regions), load-time validation, and
chunking invariance of the streaming parser."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_response_templates import (
    ResponseParseError,
    ResponseParser,
    TemplateError,
    load_template,
    parse_response,
)
from hf_response_templates.transform import TransformError, compile_transform

CALLS = {
    "start_anchor": "A:",
    "fields": {
        "tool_calls": {
            "open": "<calls>",
            "close": "</calls>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{$key}", "arguments": "{$value}"}},
        },
        "content": {},
    },
}


def one(transform, raw: str, **field):
    spec = {"start_anchor": "A:", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json",
                                                   "transform": transform, **field}}}
    return parse_response(f"<x>{raw}</x>", spec, prefix="")["x"]


def test_key_and_value_of_each_element():
    out = parse_response('Hi <calls>[{"get_weather": {"city": "Paris"}}, {"ping": {}}]</calls>', CALLS, prefix="")
    assert out == {
        "content": "Hi",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"type": "function", "function": {"name": "ping", "arguments": {}}},
        ],
    }


def test_steps_on_content_and_after_value():
    transform = {"name": "{content.$key}", "args": "{content.$value}", "city": "{content.$value.city}",
                 "deep": "{content.$value.nested.$key}", "deeper": "{content.$value.nested.$value}"}
    raw = '{"f": {"city": "Paris", "nested": {"k": [1, 2]}}}'
    assert one(transform, raw) == {"name": "f", "args": {"city": "Paris", "nested": {"k": [1, 2]}}, "city": "Paris",
                                   "deep": "k", "deeper": [1, 2]}


def test_value_keeps_its_type():
    assert one({"v": "{content.$value}"}, '{"n": null}') == {"v": None}
    assert one({"v": "{content.$value}"}, '{"n": [0, false]}') == {"v": [0, False]}


def test_steps_inside_lists_and_next_to_ordinary_placeholders():
    spec = {"start_anchor": "A:", "fields": {"x": {
        "open_pattern": r"<x id=(?P<id>\d+)>", "close": "</x>", "content": "json",
        "transform": ["{content.$key}", {"id": "{id}", "all": "{content}"}]}}}
    assert parse_response('<x id=7>{"k": 1}</x>', spec, prefix="")["x"] == ["k", {"id": "7", "all": {"k": 1}}]


@pytest.mark.parametrize(
    "raw, message",
    [
        ('[{"a": {}, "b": {}}]', "$key needs a one-key object, but the element has 2 keys ['a', 'b']"),
        ("[{}]", "$key needs a one-key object, but the element has 0 keys"),
    ],
)
def test_elements_that_are_not_one_key_objects_are_malformed(raw, message):
    out = parse_response(f"<calls>{raw}</calls>", CALLS, prefix="", strict=False)
    assert "tool_calls" not in out
    [unparsed] = out["unparsed"]
    assert unparsed["text"] == raw and message in unparsed["error"]
    with pytest.raises(ResponseParseError, match=re.escape(message)):
        parse_response(f"<calls>{raw}</calls>", CALLS, prefix="")


@pytest.mark.parametrize(
    "transform, raw, message",
    [
        ({"n": "{content.$key}"}, "[1]", "but content is a list, not a dict"),
        ({"n": "{content.$key}"}, '"s"', "but content is a str, not a dict"),
        ({"n": "{content.$value.city}"}, '{"f": 3}', "cannot look up 'city' in content.$value, which is a int"),
        ({"n": "{content.$value.city}"}, '{"f": {"town": 1}}', "content.$value has no key 'city' (keys: ['town'])"),
        ({"n": "{content.a.$key}"}, '{"b": 1}', "content has no key 'a'"),
        ({"n": "{content.a.$value}"}, '{"a": {"x": 1, "y": 2}}', "but content.a has 2 keys ['x', 'y']"),
    ],
)
def test_runtime_errors_name_the_placeholder_and_the_step(transform, raw, message):
    with pytest.raises(ResponseParseError, match=re.escape(message)) as info:
        one(transform, raw)
    assert info.value.field == "x"
    assert f"'{{{transform['n'][1:-1]}}}'" in str(info.value)


def test_compiled_transform_raises_transform_error():
    apply = compile_transform({"n": "{content.$key}"}, field="x")
    assert apply({"content": {"only": 1}}) == {"n": "only"}
    with pytest.raises(TransformError, match="is not defined"):
        apply({})


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "transform, each, message",
    [
        ({"n": "{content.$keys}"}, False, "has the unknown step '$keys'"),
        ({"n": "{$foo}"}, True, "has the unknown step '$foo'"),
        ({"n": ["{content.$value.$nope}"]}, False, "has the unknown step '$nope'"),
        ({"n": "{content.$key.x}"}, False, "goes on after $key"),
        ({"n": "{$key.x}"}, True, "goes on after $key"),
        ({"n": "{$key}"}, False, "without transform_each write {content.$key}"),
        ({"n": "{$value.city}"}, False, "without transform_each write {content.$key}"),
    ],
)
def test_bad_steps_are_rejected_at_load(transform, each, message):
    spec = {"start_anchor": "A:", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json",
                                                   "transform": transform, "transform_each": each}}}
    with pytest.raises(TemplateError, match=re.escape(message)) as info:
        load_template(spec)
    assert info.value.field == "x" and info.value.key == "transform"


def test_element_steps_with_captures_are_rejected_at_load():
    spec = {"start_anchor": "A:", "fields": {"x": {"open_pattern": r"<x id=(?P<id>\d+)>", "close": "</x>",
                                                   "content": "json", "transform_each": True,
                                                   "transform": {"name": "{$key}", "id": "{id}"}}}}
    with pytest.raises(TemplateError, match=re.escape("capture named group(s) ['id']")) as info:
        load_template(spec)
    assert info.value.key == "transform"


def test_element_steps_are_not_mistaken_for_undefined_roots():
    # "{$key}" with transform_each loads (the element's keys are not known in advance)
    load_template(CALLS)


# --------------------------------------------------------------------------- streaming

NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet='ab "}{[],:\\', max_size=5),
                      lambda kids: st.lists(kids, max_size=3) | st.dictionaries(NAMES, kids, max_size=3),
                      max_leaves=6)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_equals_one_shot_for_any_chunking(data: st.DataObject) -> None:
    calls = data.draw(st.lists(st.tuples(NAMES, st.dictionaries(NAMES, VALUES, max_size=3)), max_size=3), label="calls")
    body = json.dumps([{name: args} for name, args in calls])
    output = f"Sure. <calls>{body}</calls>"
    expected = parse_response(output, CALLS, prefix="")
    assert [c["function"]["name"] for c in expected.get("tool_calls", [])] == [n for n, _ in calls]
    assert [c["function"]["arguments"] for c in expected.get("tool_calls", [])] == [a for _, a in calls]
    cuts = sorted(data.draw(st.sets(st.integers(0, len(output)), max_size=12), label="cuts"))
    parser = ResponseParser(CALLS, "")
    for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True):
        parser.feed(output[a:b])
    message, _events = parser.finalize()
    assert message == expected
