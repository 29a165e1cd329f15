"""SPEC "Content parsers": every built-in parser and argument, and the registry."""

from __future__ import annotations

import math

import pytest
from engine_helpers import QWEN_XML

from hf_response_templates import (
    ResponseParseError,
    TemplateError,
    content_parsers,
    load_template,
    parse_response,
    register_content_parser,
)


def one(field_spec, raw, **kwargs):
    """Parse `<x>raw</x>` with a single field `x` and return its value (or raise)."""
    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", **field_spec}}}
    message = parse_response(f"<x>{raw}</x>", spec, prefix="", **kwargs)
    return message.get("x", message)


# ---------------------------------------------------------------- basic types


def test_text_strips_by_default_and_strip_false_keeps_whitespace():
    assert one({}, "  hi \n") == "hi"
    assert one({"content": "text", "content_args": {"strip": False}}, "  hi \n") == "  hi \n"


def test_seed_int_example():
    spec = {"start_anchor": "<s>", "fields": {"count": {"open": "<n>", "close": "</n>", "content": "int"}}}
    assert parse_response("<n> 42 </n>", spec, prefix="") == {"count": 42}


@pytest.mark.parametrize("raw, value", [(" -7 ", -7), ("0", 0)])
def test_int(raw, value):
    assert one({"content": "int"}, raw) == value


@pytest.mark.parametrize("raw, value", [(" 1.5 ", 1.5), ("-2", -2.0), ("1e3", 1000.0)])
def test_float(raw, value):
    assert one({"content": "float"}, raw) == value


@pytest.mark.parametrize("raw, value", [("true", True), (" True ", True), ("1", True), ("false", False),
                                        ("FALSE", False), ("0", False)])
def test_bool(raw, value):
    assert one({"content": "bool"}, raw) is value


@pytest.mark.parametrize("content, raw", [("int", "4.5"), ("int", "four"), ("float", "x"), ("bool", "maybe")])
def test_basic_type_failures_are_malformed_regions(content, raw):
    with pytest.raises(ResponseParseError) as info:
        one({"content": content}, raw)
    assert info.value.field == "x" and info.value.text == raw


# ---------------------------------------------------------------- json


def test_json_plain():
    assert one({"content": "json"}, ' {"a": [1, 2.5, true, null, "é\\n"]} ') == {"a": [1, 2.5, True, None, "é\n"]}


def test_seed_unquoted_keys_example():
    spec = {"start_anchor": "<s>", "fields": {"args": {"open": "<args>", "close": "</args>", "content": "json",
                                                       "content_args": {"unquoted_keys": True}}}}
    assert parse_response('<args>{city: "London"}</args>', spec, prefix="") == {"args": {"city": "London"}}


def test_unquoted_keys_leave_key_like_text_inside_strings_alone():
    value = one({"content": "json", "content_args": {"unquoted_keys": True}},
                '{note: "a, b: c", nested: {"q": [1, {deep_key: "x:y"}]}}')
    assert value == {"note": "a, b: c", "nested": {"q": [1, {"deep_key": "x:y"}]}}


def test_string_delims_take_raw_text_between_custom_markers():
    args = {"string_delims": [["<|\"|>", "<|\"|>"], ["<<", ">>"]]}
    value = one({"content": "json", "content_args": args},
                '{"code": <|"|>print("hi")\n{x}<|"|>, "other": <<a "quoted" b>>, "n": 3}')
    assert value == {"code": 'print("hi")\n{x}', "other": 'a "quoted" b', "n": 3}


def test_string_delims_and_unquoted_keys_together():
    args = {"string_delims": [["<<", ">>"]], "unquoted_keys": True}
    assert one({"content": "json", "content_args": args}, "{city: <<Paris>>, n: 2}") == {"city": "Paris", "n": 2}


def test_allow_non_json_returns_stripped_text():
    assert one({"content": "json", "content_args": {"allow_non_json": True}}, "  just text ") == "just text"
    assert one({"content": "json", "content_args": {"allow_non_json": True}}, " 12 ") == 12


@pytest.mark.parametrize("raw", ['{"a": 1', "{a: 1}", '{"a": 1} trailing', ""])
def test_invalid_json_is_malformed(raw):
    with pytest.raises(ResponseParseError, match="invalid JSON"):
        one({"content": "json"}, raw)


def test_lax_json_errors_name_the_position():
    with pytest.raises(ResponseParseError, match="character 6"):
        one({"content": "json", "content_args": {"unquoted_keys": True}}, "{a: 1 b: 2}")


def test_deeply_nested_json_is_a_clear_error_not_a_crash():
    for args in ({}, {"unquoted_keys": True}):
        with pytest.raises(ResponseParseError, match="nested|recursion|deep"):
            one({"content": "json", "content_args": args}, "[" * 100_000 + "]" * 100_000)


def test_huge_numbers_do_not_crash():
    assert math.isinf(one({"content": "json"}, "1e999"))
    with pytest.raises(ResponseParseError):
        one({"content": "json"}, "1" * 10_000)  # more digits than int() accepts


# ---------------------------------------------------------------- xml-inline


def test_seed_xml_inline_example():
    raw = ("<tool_call><function=get_weather><parameter=city>London</parameter>"
           "<parameter=units>celsius</parameter></function></tool_call>")
    assert parse_response(raw, QWEN_XML, prefix="") == {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "London", "units": "celsius"}}}]}


def test_xml_inline_value_parser_and_multiline_values():
    raw = "<tool_call>\n<function=f>\n<parameter=obj>\n{\"a\": [1, 2]}\n</parameter>\n<parameter=n>\n7\n</parameter>\n" \
          "<parameter=text>\nline one\nline two\n</parameter>\n</function>\n</tool_call>"
    call = parse_response(raw, QWEN_XML, prefix="")["tool_calls"][0]
    assert call["function"]["arguments"] == {"obj": {"a": [1, 2]}, "n": 7, "text": "line one\nline two"}


def test_xml_inline_without_value_parser_keeps_strings_and_last_duplicate_wins():
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"}
    assert one({"content": "xml-inline", "content_args": args}, "<a>1</a><b>x</b><a>2</a>") == {"a": "2", "b": "x"}


def test_xml_inline_merge_duplicates():
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True,
            "value_parser": {"name": "int"}}
    assert one({"content": "xml-inline", "content_args": args}, "<a>1</a><b>5</b><a>2</a><a>3</a>") == {
        "a": [1, 2, 3], "b": 5}


def test_xml_inline_value_parser_failure_is_malformed():
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "int"}}
    with pytest.raises(ResponseParseError, match="not an integer"):
        one({"content": "xml-inline", "content_args": args}, "<a>x</a>")


# ---------------------------------------------------------------- kv-lines


def test_seed_kv_lines_example():
    spec = {"start_anchor": "<s>", "fields": {"metadata": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"}}}
    assert parse_response("<meta>name: alice\nage: 30</meta>", spec, prefix="") == {
        "metadata": {"name": "alice", "age": "30"}}
    spec["fields"]["metadata"]["content_args"] = {"value_parser": {"name": "int"}}
    assert parse_response("<meta>age: 30\n\nnot a pair\nscore:  7 </meta>", spec, prefix="") == {
        "metadata": {"age": 30, "score": 7}}


def test_kv_lines_separators_strip_and_first_split():
    args = {"line_sep": ";", "kv_sep": "=", "strip": False}
    assert one({"content": "kv-lines", "content_args": args}, "a=1; b = x=y;;c") == {"a": "1", " b ": " x=y"}
    assert one({"content": "kv-lines"}, "url: http://x:80\n  k :v  ") == {"url": "http://x:80", "k": "v"}


# ---------------------------------------------------------------- python-call-list


def test_python_call_list():
    value = one({"content": "python-call-list"},
                '[get_weather(city="Paris", days=3), search(q=\'a "b"\', opts={"deep": [1, 2.5, None]}, on=True)]')
    assert value == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
        {"name": "search", "arguments": {"q": 'a "b"', "opts": {"deep": [1, 2.5, None]}, "on": True}},
    ]


@pytest.mark.parametrize("raw, value", [
    ("[f()]", [{"name": "f", "arguments": {}}]),
    ("[f(x=1), g(y='\\n\\u00e9')]", [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {"y": "\né"}}]),
    ("[ns.tool-name(a=-1.5e2, c=null, d=false)]",
     [{"name": "ns.tool-name", "arguments": {"a": -150.0, "c": None, "d": False}}]),
])
def test_python_call_list_forms(raw, value):
    assert one({"content": "python-call-list"}, raw) == value


def test_python_call_list_empty():
    from hf_response_templates.content import parse_python_call_list

    assert parse_python_call_list(" [ ] ", {}) == []


@pytest.mark.parametrize("raw, error", [
    ("[f(1)]", "keyword argument"),
    ("[f(x=1, x=2)]", "repeated"),
    ("[f(x=__import__('os'))]", "expected a value"),
    ("[f(x=open)]", "expected a value"),
    ("[f(x='unterminated)]", "unterminated"),
    ("[f(x=1)] extra", "unexpected text"),
    ("f(x=1)", "a list of calls"),
    ("[f(x=1),]", "function name"),
    ("[f(x=(1, 2))]", "expected a value"),
    ("[f(x=+5)]", "expected a value"),
    ("[f(x=99999999999999999999)]", "integer outside the range"),
    ("[f(x=1e999)]", "too large"),
    ("[f(x='a\nb')]", "one line"),
    ("[f(x='\\ud800')]", "surrogate"),
    ("[f(x='\\q')]", "unsupported escape"),
    ("[f(x=[" + "[" * 120 + "]" * 120 + "])]", "nested"),
    ("[f(x={1: 2})]", "dict keys must be strings"),
])
def test_python_call_list_is_strict_and_never_evaluates(raw, error):
    with pytest.raises(ResponseParseError, match=error):
        one({"content": "python-call-list"}, raw)


# ---------------------------------------------------------------- registry


def test_registry_lists_builtins():
    assert {"text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list"} <= set(
        content_parsers())


def test_register_a_custom_parser_with_checked_args():
    register_content_parser("csv-test", lambda text, args: [c.strip() for c in text.split(args.get("sep", ","))],
                            args={"sep": str}, overwrite=True)
    assert one({"content": "csv-test", "content_args": {"sep": ";"}}, "a; b;c") == ["a", "b", "c"]
    with pytest.raises(TemplateError) as info:
        load_template({"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "csv-test",
                                                              "content_args": {"sep": 1}}}})
    assert info.value.key == "content_args.sep"
    with pytest.raises(ValueError, match="already registered"):
        register_content_parser("csv-test", lambda text, args: text)


def test_custom_streamable_parser_streams_clean_chunks():
    register_content_parser("upper-test", lambda text, args: text.strip().upper(), streamable=True, overwrite=True)
    from engine_helpers import stream

    spec = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "upper-test"}}}
    message, events = stream(spec, ["<x>ab", "c</x>"])
    assert message == {"x": "ABC"}
    assert {e["dirty"] for e in events if e["type"] == "region_chunk"} == {False}


def test_custom_parser_raising_anything_is_a_malformed_region():
    def boom(text, args):
        raise KeyError("bad")

    register_content_parser("boom-test", boom, overwrite=True)
    message = one({"content": "boom-test"}, "x", strict=False)
    assert message["unparsed"][0]["error"].startswith("KeyError")


def test_string_delims_leave_ordinary_strings_alone():
    args = {"string_delims": [["<<", ">>"]]}
    assert one({"content": "json", "content_args": args}, '{"a": "x<<y>>", "b": <<z\x01>>}') == {
        "a": "x<<y>>", "b": "z\x01"}


def test_unquoted_keys_are_word_characters():
    args = {"unquoted_keys": True}
    assert one({"content": "json", "content_args": args}, '{1: 2, é_x: 3}') == {"1": 2, "é_x": 3}
    with pytest.raises(ResponseParseError):
        one({"content": "json", "content_args": args}, "{a-b: 2}")


def test_allow_non_json_also_covers_numbers_too_long_for_int():
    # json.loads raises a plain ValueError (not JSONDecodeError) past Python's 4300-digit limit
    assert one({"content": "json", "content_args": {"allow_non_json": True}}, "1" * 5000) == "1" * 5000
