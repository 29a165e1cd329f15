"""xml-inline `value_parser_by` (Transformers 5.25's spelling of `value_parser_group` / `value_parsers`).

`{"group": NAME, "parsers": {capture: value parser}}`: the text the named group of `tag_pattern` captures picks
each value's parser; a capture with no entry, or a group that took no part in the match, falls back to
`value_parser`. Both spellings compile to the same arguments (every fast path reads those), the template dict
given is never changed, both at once is an error, and mistakes are `TemplateError`s at load time (native reports
some only while parsing). On Transformers with a native `value_parser_by`, native parses what we parse without
`tools=`, and with `tools=` up to the one deliberate difference (`_native_typing`): native types nothing in such a
field, we type it as a JSON body's, so a value whose schema admits a string stays as the tag's parser gave it (as
native) but a string for a parameter that admits no string is cast (`"42"` is `42` for `integer`, as vLLM gives).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from _native_typing import native_value_parser_by_argument, ours_value_parser_by_argument
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_response_templates import (
    ResponseParser,
    TemplateError,
    get_template,
    load_template,
    parse_response,
)
from hf_response_templates.content import get_content_parser

try:
    from transformers.utils.chat_parsing import content_parsers as _native_content
    from transformers.utils.chat_parsing import parse_response as native_parse_response
except ImportError:  # Transformers 4.x: no native parser
    _native_content = native_parse_response = None

PATTERN = r'<p name="(?P<key>[^"]+)"(?: string="(?P<string>[a-z]*)")?>(?P<value>.*?)</p>'
TRUE_TEXT = {"name": "text", "args": {"strip": False}}
JSON = {"name": "json"}


def _native_has_value_parser_by() -> bool:
    """Whether the installed native parser reads `value_parser_by` (Transformers >= 5.25), asked of it directly."""
    if _native_content is None:
        return False
    args = {"tag_pattern": r"<(?P<key>a)(?P<g>!?)>(?P<value>.*?)</a>",
            "value_parser_by": {"group": "g", "parsers": {"!": {"name": "int"}}}}
    try:
        return _native_content.parse_content("<a!>1</a>", "xml-inline", args) == {"a": 1}
    except Exception:  # noqa: BLE001 - an older native: unknown argument ignored, or rejected
        return False


NATIVE_BY = _native_has_value_parser_by()
needs_native_by = pytest.mark.skipif(not NATIVE_BY, reason="the installed native parser has no value_parser_by")


def content_args(spelling: str, parsers: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    parsers = {"true": TRUE_TEXT, "false": JSON} if parsers is None else parsers
    if spelling == "by":
        args = {"tag_pattern": PATTERN, "value_parser_by": {"group": "string", "parsers": parsers}}
    else:
        args = {"tag_pattern": PATTERN, "value_parser_group": "string", "value_parsers": parsers}
    return {**args, **more}


def template(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "start_anchor": "A:",
        "fields": {
            "tool_calls": {
                "open_pattern": r'<call name="(?P<name>\w+)">',
                "close": "</call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": args,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {},
        },
    }


def arguments(message: dict[str, Any]) -> list[Any]:
    return [call["function"]["arguments"] for call in message.get("tool_calls", [])]


BODY = ('<p name="s" string="true"> 42 </p><p name="n" string="false">42</p><p name="o" string="false">{"k": [1]}'
        '</p><p name="d">[1, 2]</p><p name="e" string="">7</p><p name="m" string="maybe">null</p>')


@pytest.mark.parametrize("default", [None, {"name": "json", "args": {"allow_non_json": True}}])
def test_both_spellings_compile_to_the_same_arguments_and_parse_the_same(default):
    xml = get_content_parser("xml-inline")
    more = {} if default is None else {"value_parser": default}
    by = xml.compile_args(content_args("by", **more), "f")
    old = xml.compile_args(content_args("old", **more), "f")
    # one compiled form: the older keys are gone, the fast paths' entries are built alike
    assert "value_parser_group" not in by and "value_parsers" not in by
    assert "value_parser_group" not in old and "value_parsers" not in old
    assert by["value_parser_by"][0] == old["value_parser_by"][0] == "string"
    assert by["_select"][0] == old["_select"][0] and by["_select"][2] == old["_select"][2] is not None
    assert set(by["_select"][1]) == set(old["_select"][1]) == {"true", "false"}
    assert ("_select_small" in by) == ("_select_small" in old)
    text = f'<call name="f">{BODY}</call>'
    got_by = parse_response(text, template(content_args("by", **more)), prefix="")
    got_old = parse_response(text, template(content_args("old", **more)), prefix="")
    assert got_by == got_old
    d = [1, 2] if default else "[1, 2]"
    assert arguments(got_by) == [{"s": " 42 ", "n": 42, "o": {"k": [1]}, "d": d, "e": 7 if default else "7",
                                  "m": None if default else "null"}]
    # the long path (a body past `_select_small`'s length, and past the bounded search's threshold) too
    long = "".join(f'<p name="k{i}" string="{"false" if i % 2 else "true"}">{i}</p>' for i in range(60))
    for spelling in ("by", "old"):
        message = parse_response(f'<call name="f">{long}</call>', template(content_args(spelling, **more)), prefix="")
        assert arguments(message) == [{f"k{i}": (i if i % 2 else str(i)) for i in range(60)}]


def test_the_template_dict_given_is_not_changed():
    tpl = template(content_args("by"))
    snapshot = copy.deepcopy(tpl)
    load_template(tpl)
    parse_response(f'<call name="f">{BODY}</call>', tpl, prefix="")
    parse_response(f'<call name="f">{BODY}</call>', tpl, prefix="", tools=[{"name": "f", "parameters": {}}])
    assert tpl == snapshot
    # and a second load of the same (unchanged) dict reads it the same way
    assert arguments(parse_response('<call name="f"><p name="n" string="false">1</p></call>', tpl, prefix="")) == [
        {"n": 1}]


def test_the_shipped_deepseek_template_uses_transformers_spelling():
    args = get_template("deepseek-v3.2")["fields"]["tool_calls"]["content_args"]
    assert "value_parser_by" in args and "value_parser_group" not in args and "value_parsers" not in args


DSML = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
        '<｜DSML｜parameter name="n" string="false">42</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="s" string="true">42</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="t" string="true">null</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="o" string="false">{"a": [1]}</｜DSML｜parameter>\n'
        '</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>')
DSML_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "n": {"type": "string"}, "s": {"type": "integer"}, "t": {"type": ["string", "null"]}, "o": {"type": "string"}}}}}]


@pytest.mark.parametrize("tools", [None, DSML_TOOLS])
def test_the_shipped_deepseek_template_parses_as_native_does(tools):
    # with tools=: the schemas do not retype a value whose schema admits a string ("n", "t", "o": as the tag's
    # parser gave them, as native); the string="true" "42" of the integer "s" is cast (the one difference)
    tpl = get_template("deepseek-v3.2")
    prefix = "<｜Assistant｜><think></think>"
    ours = parse_response(DSML, tpl, prefix=prefix, tools=tools)
    assert arguments(ours) == [{"n": 42, "s": "42" if tools is None else 42, "t": "null", "o": {"a": [1]}}]
    if NATIVE_BY:
        theirs = native_parse_response(DSML, tpl, prefix=prefix, tools=tools)
        if tools is not None:
            ours["tool_calls"][0]["function"]["arguments"]["s"] = "42"
        assert theirs == ours


SCORE_TOOLS = [{"type": "function", "function": {"name": "score", "strict": True, "parameters": {
    "type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"],
    "additionalProperties": False}}}]
SCORE = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="score">\n'
         '<｜DSML｜parameter name="value" string="true">42</｜DSML｜parameter>\n'
         '</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>')
SCORE_PREFIX = "<｜Assistant｜><think></think>"


def test_value_parser_by_string_for_a_non_string_parameter_is_cast_unlike_native():
    """The deliberate difference from native (README): a `value_parser_by` field is typed as a JSON body is, so
    DeepSeek V3.2's `string="true"` `42` for an `integer` parameter (of a strict tool, which would reject `"42"`)
    is `42`, as vLLM's parser gives (its test_string_attr_true_coerced_by_schema); native 5.25 types nothing in
    such a field and gives `"42"`. Every place that types tool calls does it: the one-shot plan (both loops),
    the streaming parser, DeltaStream's deltas and the tokenizer's parse_response, for both spellings."""
    from hf_response_templates.openai import DeltaStream, accumulate_deltas
    from hf_response_templates.plan import plan_for
    from hf_response_templates.tools import tool_schemas

    want = {"value": 42}

    def args(message: dict[str, Any]) -> Any:
        return message["tool_calls"][0]["function"]["arguments"]

    tpl = get_template("deepseek-v3.2")
    assert args(parse_response(SCORE, tpl, prefix=SCORE_PREFIX)) == {"value": "42"}  # (without tools=: the word)
    assert args(parse_response(SCORE, tpl, prefix=SCORE_PREFIX, tools=SCORE_TOOLS)) == want
    plan, schemas = plan_for(load_template(tpl)), tool_schemas(SCORE_TOOLS)
    assert args(plan.run(SCORE, SCORE_PREFIX, schemas)) == want
    assert args(plan._general(SCORE, SCORE_PREFIX, schemas)) == want
    parser = ResponseParser(tpl, SCORE_PREFIX, tools=SCORE_TOOLS)
    for ch in SCORE:  # (piece by piece: the state machine)
        parser.feed(ch)
    assert args(parser.finalize()[0]) == want
    for mode in ("incremental", "validated"):
        stream = DeltaStream(tpl, prefix=SCORE_PREFIX, tools=SCORE_TOOLS, tool_call_streaming=mode)
        deltas = [d for ch in SCORE for d in stream.feed(ch)] + stream.finish()
        assert not [c for d in deltas for c in d.get("tool_calls", []) if c.get("error")], mode
        assert json.loads(args(accumulate_deltas(deltas))) == want, mode
    # the older spelling (value_parser_group / value_parsers) types alike
    for spelling in ("by", "old"):
        tools = [{"type": "function", "function": {"name": "f", "parameters": SCORE_TOOLS[0]["function"]["parameters"]}}]
        text = '<call name="f"><p name="value" string="true">42</p></call>'
        assert args(parse_response(text, template(content_args(spelling)), prefix="", tools=tools)) == want, spelling
    _tokenizers = pytest.importorskip("_tokenizers")
    from hf_response_templates.tokenizer import install

    install()
    tok = _tokenizers.byte_level_tokenizer()
    tok.response_template = tpl
    for response, prefix in ((SCORE, SCORE_PREFIX), (tok.encode(SCORE, add_special_tokens=False),
                                                     tok.encode(SCORE_PREFIX, add_special_tokens=False))):
        assert args(tok.parse_response(response, prefix=prefix, tools=SCORE_TOOLS)) == want
    if NATIVE_BY:  # native (>= 5.25) leaves it as the tag's parser gave it: the README's row stays true
        assert args(native_parse_response(SCORE, tpl, prefix=SCORE_PREFIX, tools=SCORE_TOOLS)) == {"value": "42"}


def test_a_group_named_key_picks_a_parser_per_parameter():
    # native reads any named group, `key` included: a parser per parameter name
    args = {"tag_pattern": PATTERN, "value_parser_by": {"group": "key", "parsers": {"n": {"name": "int"}}}}
    text = '<call name="f"><p name="n">42</p><p name="s">42</p></call>'
    message = parse_response(text, template(args), prefix="")
    assert arguments(message) == [{"n": 42, "s": "42"}]
    if NATIVE_BY:
        assert native_parse_response(text, template(args), prefix="") == message


def test_empty_parsers_and_a_null_value_parser_by_read_every_value_with_value_parser():
    default = {"name": "json", "args": {"allow_non_json": True}}
    text = '<call name="f"><p name="n" string="true">42</p></call>'
    empty = {"tag_pattern": PATTERN, "value_parser_by": {"group": "string", "parsers": {}}, "value_parser": default}
    null = {"tag_pattern": PATTERN, "value_parser_by": None, "value_parser": default}
    for args in (empty, null):
        message = parse_response(text, template(args), prefix="")
        assert arguments(message) == [{"n": 42}]
        if NATIVE_BY:
            assert native_parse_response(text, template(args), prefix="") == message


@pytest.mark.parametrize(
    "by, key, message",
    [
        ({"group": "nope", "parsers": {}}, "content_args.value_parser_by.group", "tag_pattern does not define"),
        ({"group": 3, "parsers": {}}, "content_args.value_parser_by.group", "non-empty string"),
        ({"group": "", "parsers": {}}, "content_args.value_parser_by.group", "non-empty string"),
        ({"parsers": {}}, "content_args.value_parser_by.group", "non-empty string"),
        ({"group": "string"}, "content_args.value_parser_by.parsers", "must be a dict"),
        ({"group": "string", "parsers": ["json"]}, "content_args.value_parser_by.parsers", "must be a dict"),
        ({"group": "string", "parsers": {"true": "json"}}, "content_args.value_parser_by.parsers.true",
         '{"name": "json"'),
        ({"group": "string", "parsers": {"true": {"name": "nah"}}}, "content_args.value_parser_by.parsers.true.name",
         "unknown content parser 'nah'"),
        ({"group": "string", "parsers": {"true": {"name": "json", "args": {"nope": 1}}}},
         "content_args.value_parser_by.parsers.true.args", "unknown argument"),
        ({"group": "string", "parsers": {}, "extra": 1}, "content_args.value_parser_by", "unknown keys ['extra']"),
        ("string", "content_args.value_parser_by", "must be a dict like"),
    ],
)
def test_bad_value_parser_by_is_a_template_error_at_load_naming_the_key(by, key, message):
    with pytest.raises(TemplateError, match=re.escape(message)) as info:
        load_template(template({"tag_pattern": PATTERN, "value_parser_by": by}))
    assert info.value.field == "tool_calls"
    assert info.value.key == key


@pytest.mark.parametrize("older", [{"value_parser_group": "string", "value_parsers": {"true": "json"}},
                                   {"value_parser_group": "string"}, {"value_parsers": {"true": "json"}}])
def test_both_spellings_at_once_is_a_template_error(older):
    args = {**content_args("by"), **older}
    with pytest.raises(TemplateError, match="older spelling") as info:
        load_template(template(args))
    assert info.value.key == "content_args.value_parser_by"


def test_a_nested_xml_inline_value_parser_takes_value_parser_by_too():
    inner = {"name": "xml-inline", "args": {"tag_pattern": r"<(?P<key>\w+)(?P<t>#?)>(?P<value>.*?)</(?P=key)>",
                                            "value_parser_by": {"group": "t", "parsers": {"#": {"name": "int"}}}}}
    args = {"tag_pattern": PATTERN, "value_parser": inner}
    message = parse_response('<call name="f"><p name="x"><a#>1</a><b>2</b></p></call>', template(args), prefix="")
    assert arguments(message) == [{"x": {"a": 1, "b": "2"}}]
    bad = copy.deepcopy(inner)
    bad["args"]["value_parser_by"]["group"] = "zz"
    with pytest.raises(TemplateError) as info:
        load_template(template({"tag_pattern": PATTERN, "value_parser": bad}))
    assert info.value.key == "content_args.value_parser.args.value_parser_by.group"


# --------------------------------------------------------------------------- streaming and deltas


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_equals_one_shot_for_any_chunking(data: st.DataObject) -> None:
    tpl = template(content_args("by", value_parser={"name": "json", "args": {"allow_non_json": True}}))
    body = BODY if data.draw(st.booleans()) else BODY.replace("</p>", "</p>\n")
    output = f'text <call name="f">{body}</call> end'
    expected = parse_response(output, tpl, prefix="")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(output)), max_size=12), label="cuts"))
    parser = ResponseParser(tpl, "")
    for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True):
        parser.feed(output[a:b])
    message, _ = parser.finalize()
    assert message == expected


def test_openai_deltas_of_the_shipped_deepseek_template_with_tools():
    from hf_response_templates.openai import DeltaStream, accumulate_deltas

    ds = DeltaStream(get_template("deepseek-v3.2"), prefix="<｜Assistant｜><think></think>", tools=DSML_TOOLS)
    deltas = [d for ch in DSML for d in ds.feed(ch)] + ds.finish()
    message = accumulate_deltas(deltas)
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"n": 42, "s": 42, "t": "null",
                                                                            "o": {"a": [1]}}
    assert not any(c.get("error") for d in deltas for c in d.get("tool_calls", []))


# --------------------------------------------------------------------------- against native (>= 5.25)

PARSER_POOL = {
    "true": TRUE_TEXT,
    "false": JSON,
    "": {"name": "int"},
    "raw": {"name": "json", "args": {"allow_non_json": True}},
    "t": {"name": "text"},
}
DEFAULTS = [None, {"name": "json", "args": {"allow_non_json": True}}, {"name": "text"}, {"name": "int"}]
VALUES = ["1", " 2 ", "-2.5", "true", "null", '["x", 2]', '{"k": {"j": []}}', "abc", "", "{bad", " x\n", "0", "7 8"]
ATTRS = [None, "true", "false", "", "raw", "t", "other"]
PROPERTIES = {"a": {"type": "integer"}, "b": {"type": ["string", "null"]}, "c": {"type": "object"},
              "d": {"type": "boolean"}}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": PROPERTIES}}}]


@st.composite
def value_parser_by_cases(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    chosen = draw(st.sets(st.sampled_from(sorted(PARSER_POOL))))
    args: dict[str, Any] = {"tag_pattern": PATTERN,
                            "value_parser_by": {"group": "string", "parsers": {k: PARSER_POOL[k] for k in chosen}}}
    default = draw(st.sampled_from(DEFAULTS))
    if default is not None:
        args["value_parser"] = default
    if draw(st.booleans()):
        args["merge_duplicates"] = True
    calls = []
    for _ in range(draw(st.integers(1, 2))):
        params = draw(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(ATTRS), st.sampled_from(VALUES)),
                               max_size=5))
        body = "".join(f'<p name="{k}"{"" if a is None else f" string={chr(34)}{a}{chr(34)}"}>{v}</p>'
                       for k, a, v in params)
        calls.append(f'<call name="f">{body}</call>')
    return args, "".join(calls)


def _outcome(parse: Any, text: str, tpl: dict[str, Any], tools: Any) -> Any:
    try:
        return parse(text, tpl, prefix="", tools=tools)
    except Exception:  # noqa: BLE001 - a value that its parser refuses: both must fail
        return "raised"


@needs_native_by
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value_parser_by_cases(), st.booleans())
def test_value_parser_by_parses_as_native(case: tuple[dict[str, Any], str], with_tools: bool) -> None:
    # without tools=: exactly native. With tools=: ours is what both give without tools= (`written`), typed as a
    # JSON body's (a string for a parameter that admits no string cast); native is `written` (it types nothing
    # in a value_parser_by field): they differ there and only there
    args, text = case
    tpl = template(args)
    tools = TOOLS if with_tools else None
    ours = _outcome(parse_response, text, tpl, tools)
    theirs = _outcome(native_parse_response, text, tpl, tools)
    if with_tools and ours != "raised":
        written = _outcome(parse_response, text, tpl, None)
        assert written != "raised", (args, text)
        modeled = copy.deepcopy(ours)
        for call, plain, native_call in zip(ours["tool_calls"], written["tool_calls"], modeled["tool_calls"],
                                            strict=True):
            got, raw = call["function"]["arguments"], plain["function"]["arguments"]
            assert got.keys() == raw.keys(), (args, text)
            for key, value in raw.items():
                schema = PROPERTIES.get(key)
                assert got[key] == ours_value_parser_by_argument(value, schema), (args, text, key)
                native_call["function"]["arguments"][key] = native_value_parser_by_argument(got[key], value, schema)
        assert modeled == theirs, (args, text)
    else:
        assert ours == theirs, (args, text)
    if ours != "raised":  # the older spelling reads the same
        old = {k: v for k, v in args.items() if k != "value_parser_by"}
        old["value_parser_group"] = "string"
        old["value_parsers"] = args["value_parser_by"]["parsers"]
        if old["value_parsers"]:  # (the older spelling wants a non-empty dict)
            assert _outcome(parse_response, text, template(old), tools) == ours
