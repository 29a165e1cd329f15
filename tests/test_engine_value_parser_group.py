"""xml-inline `value_parser_group` / `value_parsers`: a named group of `tag_pattern` picks each value's
parser (DeepSeek V3.2's DSML `string="true|false"`). Load-time validation, the choice per match, and
chunking invariance of the streaming parser."""

from __future__ import annotations

import copy
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

PATTERN = r'<p name="(?P<key>[^"]+)"(?: string="(?P<string>[a-z]+)")?>(?P<value>.*?)</p>'


def template(**args) -> dict:
    content_args = {
        "tag_pattern": PATTERN,
        "value_parser_group": "string",
        "value_parsers": {"true": {"name": "text", "args": {"strip": False}}, "false": "json"},
        **args,
    }
    content_args = {k: v for k, v in content_args.items() if v is not None}
    return {
        "start_anchor": "A:",
        "fields": {
            "tool_calls": {
                "open_pattern": r'<call name="(?P<name>\w+)">',
                "close": "</call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": content_args,
                "transform": {"name": "{name}", "arguments": "{content}"},
            },
            "content": {},
        },
    }


def args_of(raw: str, tpl: dict | None = None, **kwargs):
    message = parse_response(f'<call name="f">{raw}</call>', tpl or template(), prefix="", **kwargs)
    return message["tool_calls"][0]["arguments"]


def test_the_group_text_picks_the_parser_per_match():
    raw = ('<p name="s" string="true"> 42 </p><p name="n" string="false">42</p>'
           '<p name="o" string="false">{"k": [1, true, null]}</p><p name="b" string="false">false</p>')
    assert args_of(raw) == {"s": " 42 ", "n": 42, "o": {"k": [1, True, None]}, "b": False}


def test_value_parser_is_the_default_for_other_texts_and_an_absent_group():
    tpl = template(value_parser={"name": "json", "args": {"allow_non_json": True}})
    raw = '<p name="a">[1, 2]</p><p name="b" string="maybe">7</p><p name="c">plain words</p>'
    assert args_of(raw, tpl) == {"a": [1, 2], "b": 7, "c": "plain words"}


def test_without_value_parser_other_texts_keep_the_raw_text():
    raw = '<p name="a">[1, 2]</p><p name="b" string="maybe"> 7 </p><p name="c" string="false">7</p>'
    assert args_of(raw) == {"a": "[1, 2]", "b": " 7 ", "c": 7}


def test_a_picked_parser_that_fails_makes_the_region_malformed():
    with pytest.raises(ResponseParseError, match="invalid JSON") as info:
        args_of('<p name="n" string="false">{bad</p>')
    assert info.value.field == "tool_calls"
    message = parse_response('<call name="f"><p name="n" string="false">{bad</p></call>', template(), prefix="",
                             strict=False)
    assert message["unparsed"][0]["text"] == '<p name="n" string="false">{bad</p>'


def test_merge_duplicates_collects_values_parsed_per_match():
    tpl = template(merge_duplicates=True)
    raw = '<p name="x" string="false">1</p><p name="x" string="true">1</p><p name="x" string="false">[1]</p>'
    assert args_of(raw, tpl) == {"x": [1, "1", [1]]}


def test_an_empty_group_text_is_a_key_of_its_own_not_an_absent_group():
    tpl = template(tag_pattern=r'<p name="(?P<key>[^"]+)"(?: string="(?P<string>[a-z]*)")?>(?P<value>.*?)</p>',
                   value_parsers={"": "json", "true": {"name": "text", "args": {"strip": False}}})
    raw = '<p name="e" string="">[1]</p><p name="a">[1]</p><p name="t" string="true">[1]</p>'
    assert args_of(raw, tpl) == {"e": [1], "a": "[1]", "t": "[1]"}


def test_falsy_parsed_values_are_kept_not_replaced_by_empty_text():
    raw = ('<p name="z" string="false">0</p><p name="f" string="false">false</p><p name="n" string="false">null'
           '</p><p name="l" string="false">[]</p><p name="e" string="true"></p>')
    assert args_of(raw) == {"z": 0, "f": False, "n": None, "l": [], "e": ""}


def test_a_match_without_key_is_still_an_error():
    tpl = template(tag_pattern=r'<p(?: name="(?P<key>\w+)")?(?: string="(?P<string>\w+)")?>(?P<value>.*?)</p>')
    with pytest.raises(ResponseParseError, match="has no 'key'"):
        args_of('<p string="false">1</p>', tpl)


def test_long_bodies_take_the_bounded_search_path_too():
    # bodies over 128 characters are searched between the pattern's fixed texts first
    raw = "".join(f'<p name="k{i}" string="{"false" if i % 2 else "true"}">{i}</p>' for i in range(40))
    assert args_of(raw) == {f"k{i}": (i if i % 2 else str(i)) for i in range(40)}


def test_the_shipped_deepseek_template_types_string_false_values_without_tools():
    from hf_response_templates.library import get_template

    out = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
           '<｜DSML｜parameter name="n" string="false">42</｜DSML｜parameter>\n'
           '<｜DSML｜parameter name="s" string="true">42</｜DSML｜parameter>\n'
           '</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>')
    message = parse_response(out, get_template("deepseek-v3.2"), prefix="<｜Assistant｜><think></think>")
    assert message["tool_calls"][0]["function"]["arguments"] == {"n": 42, "s": "42"}


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "args, key, message",
    [
        ({"value_parser_group": "nope"}, "content_args.value_parser_group", "tag_pattern's other groups: ['string']"),
        ({"value_parser_group": "key"}, "content_args.value_parser_group", "other than key and value"),
        ({"value_parser_group": "value"}, "content_args.value_parser_group", "other than key and value"),
        ({"value_parser_group": ""}, "content_args.value_parser_group", "non-empty string"),
        ({"value_parser_group": 3}, "content_args.value_parser_group", "non-empty string"),
        ({"value_parsers": None}, "content_args.value_parser_group", "needs value_parsers too"),
        ({"value_parser_group": None}, "content_args.value_parsers", "needs value_parser_group too"),
        ({"value_parsers": {}}, "content_args.value_parsers", "non-empty dict"),
        ({"value_parsers": ["json"]}, "content_args.value_parsers", "non-empty dict"),
        ({"value_parsers": {"true": "nah"}}, "content_args.value_parsers.true.name", "unknown content parser 'nah'"),
        ({"value_parsers": {"true": 5}}, "content_args.value_parsers.true", '{"name": "json"'),
        ({"value_parsers": {"true": {"name": "json", "extra": 1}}}, "content_args.value_parsers.true", "unknown keys"),
        ({"value_parsers": {"true": {"name": "json", "args": {"nope": 1}}}}, "content_args.value_parsers.true.args",
         "unknown argument"),
        ({"value_parsers": {"true": {"name": "json", "args": {"allow_non_json": 1}}}},
         "content_args.value_parsers.true.args.allow_non_json", "must be bool"),
        ({"value_parser": {"name": "json", "args": {"nope": 1}}}, "content_args.value_parser.args", "unknown argument"),
        ({"value_parsers": {"true": {"name": "xml-inline", "args": {"tag_pattern": PATTERN, "value_parser_group": "x",
                                                                    "value_parsers": {"a": "json"}}}}},
         "content_args.value_parsers.true.args.value_parser_group", "tag_pattern's other groups: ['string']"),
    ],
)
def test_bad_arguments_are_template_errors_naming_field_and_key(args, key, message):
    tpl = copy.deepcopy(template())
    content_args = tpl["fields"]["tool_calls"]["content_args"]
    for name, value in args.items():  # None: leave the argument out
        if value is None:
            del content_args[name]
        else:
            content_args[name] = value
    with pytest.raises(TemplateError, match=re.escape(message)) as info:
        load_template(tpl)
    assert info.value.field == "tool_calls"
    assert info.value.key == key


# --------------------------------------------------------------------------- streaming


def _value(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["true", "false", None, "other"]))
    if kind == "true":
        return ' string="true"', draw(st.text(alphabet="ab 1{}\n", max_size=6))
    value = draw(st.sampled_from(["1", "-2.5", "true", "null", '["x", 2]', '{"k": {"j": []}}']))
    return ("" if kind is None else f' string="{kind}"'), value


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_equals_one_shot_for_any_chunking(data: st.DataObject) -> None:
    tpl = template(value_parser={"name": "json", "args": {"allow_non_json": True}})
    calls = []
    for c in range(data.draw(st.integers(1, 3), label="calls")):
        params = [_value(data.draw) for _ in range(data.draw(st.integers(0, 3), label="params"))]
        body = "".join(f'<p name="k{i}"{attr}>{v}</p>' for i, (attr, v) in enumerate(params))
        calls.append(f'<call name="f{c}">{body}</call>')
    output = "text " + " ".join(calls) + " end"
    expected = parse_response(output, tpl, prefix="")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(output)), max_size=12), label="cuts"))
    parser = ResponseParser(tpl, "")
    for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True):
        parser.feed(output[a:b])
    message, _events = parser.finalize()
    assert message == expected
    assert len(message["tool_calls"]) == len(calls)


def test_openai_deltas_stream_the_per_match_typed_values():
    # DeltaStream reads partial xml-inline bodies through the parser, so string="false" values stream typed
    from hf_response_templates.library import get_template
    from hf_response_templates.openai import DeltaStream, accumulate_deltas

    out = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
           '<｜DSML｜parameter name="n" string="false">42</｜DSML｜parameter>\n'
           '<｜DSML｜parameter name="s" string="true">42</｜DSML｜parameter>\n'
           '<｜DSML｜parameter name="o" string="false">{"a": [1]}</｜DSML｜parameter>\n'
           '</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>')
    ds = DeltaStream(get_template("deepseek-v3.2"), prefix="<｜Assistant｜><think></think>")
    deltas = [d for ch in out for d in ds.feed(ch)] + ds.finish()
    message = accumulate_deltas(deltas)
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"n": 42, "s": "42", "o": {"a": [1]}}
