"""Values where the differential fuzz found this package and Transformers' native parser apart, and the
template checks that keep values from being lost (issue 14 items 6, 7, 8, 10).

Each case is asserted with its expected value; on Transformers 5.x the same input also runs through
native (`transformers.utils.chat_parsing`) where the two are meant to agree.
"""

from __future__ import annotations

import pytest

from hf_response_templates import ResponseParseError, TemplateError, load_template, parse_response
from hf_response_templates.template import RESERVED_KEYS

try:
    from transformers.utils import chat_parsing as native
except ImportError:  # Transformers 4.x
    native = None


def tpl(fields, **top):
    return {"start_anchor": "<s>", "fields": fields, **top}


def native_or_error(text, template, **kw):
    try:
        return native.parse_response(text, template, prefix="", **kw)
    except Exception as e:
        return e


# --------------------------------------------------------------------------- item 6: reserved keys


def test_unparsed_is_a_reserved_field_name():
    assert "unparsed" in RESERVED_KEYS
    with pytest.raises(TemplateError) as info:
        load_template(tpl({"unparsed": {"open": "<u>", "close": "</u>"}, "content": {}}))
    assert info.value.field == "unparsed" and "reserved" in str(info.value)
    with pytest.raises(TemplateError) as info:
        load_template(tpl({"content": {}}, defaults={"unparsed": []}))
    assert info.value.key == "defaults" and "reserved" in str(info.value)


def test_unparsed_records_are_never_mixed_with_a_field_value():
    spec = tpl({"n": {"open": "<n>", "close": "</n>", "content": "int"}, "content": {}})
    message = parse_response("<n>x</n>hi", spec, prefix="", strict=False)
    assert message["content"] == "hi"
    assert [r["field"] for r in message["unparsed"]] == ["n"]


# --------------------------------------------------------------------------- item 7: cache keys


@pytest.mark.parametrize("order", [(1, "1"), ("1", 1)])
def test_defaults_with_int_and_str_keys_are_different_templates(order):
    first, second = ({"start_anchor": "<s>", "defaults": {k: "x"}, "fields": {"content": {}}} for k in order)
    assert list(parse_response("hi", first, prefix=""))[0] == order[0]
    message = parse_response("hi", second, prefix="")
    assert message == {order[1]: "x", "content": "hi"}
    assert type(next(iter(message))) is type(order[1])


def test_tuple_and_list_values_are_different_templates():
    as_list = tpl({"a": {"open": ["<a>", "<A>"], "close": "</a>"}})
    assert parse_response("<A>v</a>", as_list, prefix="") == {"a": "v"}
    with pytest.raises(TemplateError, match="list of strings"):  # a tuple is not JSON: not the list's entry
        load_template(tpl({"a": {"open": ("<a>", "<A>"), "close": "</a>"}}))


def test_mixed_key_types_in_defaults_load():
    spec = {"start_anchor": "<s>", "defaults": {1: "x", "role": "assistant"}, "fields": {"content": {}}}
    assert parse_response("hi", spec, prefix="") == {1: "x", "role": "assistant", "content": "hi"}


# --------------------------------------------------------------------------- item 8: JSON digits


@pytest.mark.parametrize("body", ["1\u0663", "{a: 1\u0663}", "{a: \u0661}", "[\u0661]", '{"a": 2\uff11}'])
@pytest.mark.parametrize("args", [{}, {"unquoted_keys": True}, {"string_delims": [["<<", ">>"]]}])
def test_json_numbers_are_ascii_digits_only(body, args):
    spec = tpl({"j": {"open": "<j>", "close": "</j>", "content": "json", "content_args": args}})
    with pytest.raises(ResponseParseError):
        parse_response(f"<j>{body}</j>", spec, prefix="")


def test_ascii_json_numbers_still_parse_with_dialect_options():
    spec = tpl({"j": {"open": "<j>", "close": "</j>", "content": "json", "content_args": {"unquoted_keys": True}}})
    assert parse_response("<j>{a: 13, b: -1.5e3}</j>", spec, prefix="") == {"j": {"a": 13, "b": -1500.0}}


# --------------------------------------------------------------------------- item 10: native parity

CALL_LIST = tpl({"c": {"open": "<c>", "close": "</c>", "content": "python-call-list"}})


def test_python_call_list_names_with_dots_and_hyphens_as_native():
    text = '<c>[web-search.v2(query.text="x", max-results=3)]</c>'
    expected = {"c": [{"name": "web-search.v2", "arguments": {"query.text": "x", "max-results": 3}}]}
    assert parse_response(text, CALL_LIST, prefix="") == expected
    if native is not None:
        assert native_or_error(text, CALL_LIST) == expected


@pytest.mark.parametrize("text", ["<c>[f(a-=1)]</c>", "<c>[f(-a=1)]</c>", "<c>[f(a..b=1)]</c>", "<c>[f(1a=1)]</c>"])
def test_python_call_list_rejects_malformed_names_as_native(text):
    with pytest.raises(ResponseParseError):
        parse_response(text, CALL_LIST, prefix="")
    if native is not None:
        assert isinstance(native_or_error(text, CALL_LIST), Exception)


XML_OPTIONAL_KEY = tpl({"x": {"open": "<x>", "close": "</x>", "content": "xml-inline",
                              "content_args": {"tag_pattern": "<(?:(?P<key>[a-z]+)|#)>(?P<value>.*?)</>"}}})


@pytest.mark.parametrize("long", [False, True])
def test_xml_inline_match_without_key_is_malformed_as_native(long):
    body = ("<a>1</>" * (300 if long else 1)) + "<#>lost?</>"  # long bodies take the bounded search
    text = f"<x>{body}</x>"
    with pytest.raises(ResponseParseError, match="has no 'key'") as info:
        parse_response(text, XML_OPTIONAL_KEY, prefix="")
    assert info.value.field == "x" and info.value.text == body
    message = parse_response(text, XML_OPTIONAL_KEY, prefix="", strict=False)
    assert message["unparsed"][0]["text"] == body  # kept, never dropped
    if native is not None:
        assert isinstance(native_or_error(text, XML_OPTIONAL_KEY), ValueError)
    assert parse_response("<x><a>1</><b>2</></x>", XML_OPTIONAL_KEY, prefix="") == {"x": {"a": "1", "b": "2"}}


def test_placeholders_may_start_with_a_digit_as_native():
    spec = tpl({"c": {"open": "<c>", "close": "</c>", "content": "json", "transform_each": True,
                      "transform": {"n": "{1}", "d": "{0x}", "e": "{é}"}}})
    text = '<c>[{"1": "a", "0x": 2, "é": 3}]</c>'
    expected = {"c": [{"n": "a", "d": 2, "e": 3}]}
    assert parse_response(text, spec, prefix="") == expected
    if native is not None:
        assert native_or_error(text, spec) == expected


def test_digit_placeholders_are_checked_at_load_time_like_any_other():
    with pytest.raises(TemplateError, match=r"\{1\}"):  # native: KeyError when the region closes
        load_template(tpl({"c": {"open": "<c>", "close": "</c>", "transform": {"n": "{1}"}}}))
    with pytest.raises(TemplateError, match="mixes"):  # native: the same error, at load time too
        load_template(tpl({"c": {"open": "<c>", "close": "</c>", "transform": {"n": "a {1} b"}}}))


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "n": {"type": "integer"}}}}}]


def test_bare_name_arguments_calls_are_typed():
    # native types only calls wrapped as {"function": {...}}; a template without that wrapper gets typed
    # arguments here too (README differences table)
    spec = tpl({"tool_calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": True}})
    text = '<c>{"name": "f", "arguments": {"n": "7"}}</c>'
    assert parse_response(text, spec, prefix="", tools=TOOLS) == {"tool_calls": [{"name": "f", "arguments": {"n": 7}}]}
    if native is not None:
        assert native_or_error(text, spec, tools=TOOLS) == {"tool_calls": [{"name": "f", "arguments": {"n": "7"}}]}


def test_enum_only_parameters_never_leave_the_enum():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "level": {"enum": [1, 2, 3]}, "mode": {"enum": ["7", "fast"]}}}}}]
    spec = tpl({"tool_calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": True,
                               "transform": {"type": "function", "function": "{content}"}}})
    text = '<c>{"name": "f", "arguments": {"level": "7", "mode": "7"}}</c>'
    args = parse_response(text, spec, prefix="", tools=tools)["tool_calls"][0]["function"]["arguments"]
    assert args == {"level": "7", "mode": "7"}  # "7" is not 7: outside the enum, the text stays
    text = '<c>{"name": "f", "arguments": {"level": "2"}}</c>'
    assert parse_response(text, spec, prefix="", tools=tools)["tool_calls"][0]["function"]["arguments"] == {"level": 2}
