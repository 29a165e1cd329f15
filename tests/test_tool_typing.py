"""Tool-argument typing agrees with Transformers' native parser (and llama.cpp) on both Transformers majors.

The rules (`hf_response_templates.tools`), for a text body (`xml-inline`: Qwen3-Coder's parameters): `"null"` is
`None` where the schema admits null; text that reads as an admitted non-string type becomes that value even when
a string is admitted too; anything else keeps the text. For a `json` or `python-call-list` body (Transformers
5.25): an argument whose schema admits a string stays as the model wrote it; a quoted string for a parameter that
admits none is cast as above. The expected values below are written out (they hold on Transformers 4.46 too);
on 5.x every case is also run through native itself (5.24 casts a JSON body's argument where a string is
admitted as well: `_native_typing.py`).
"""

from __future__ import annotations

import json
from typing import Any, Optional, Union

import pytest
from _native_typing import NATIVE_KEEPS_JSON_STRINGS, native_argument
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import canon

from hf_response_templates import ResponseParser, get_template, parse_response
from hf_response_templates.tools import admits_string, cast_value, tool_schemas

try:
    from transformers.utils import chat_parsing as native
except ImportError:  # Transformers 4.x: no native parser, the expected values still hold
    native = None

TEMPLATE = get_template("smollm3")  # tool calls as JSON in <tool_call>, wrapped as {"type", "function"}
XML_TEMPLATE = get_template("qwen3-coder")  # tool calls as <function=f><parameter=p>\nvalue\n</parameter>


def _call(arguments: dict[str, Any], name: str = "f") -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call><|im_end|>"


def _xml_call(arguments: dict[str, str], name: str = "f") -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call><|im_end|>"


def _arguments(text: str, tools: list[Any], parse: Any = parse_response, template: Any = TEMPLATE) -> dict[str, Any]:
    return parse(text, template, prefix="", tools=tools)["tool_calls"][0]["function"]["arguments"]


def _admits_string(schema: dict[str, Any]) -> bool:
    """Whether a schema names "string" among its types (`type`, `anyOf` / `oneOf` choices), read here
    independently of tools.py: a JSON body's argument is then left as written."""
    declared = schema.get("type", [])
    types = [declared] if isinstance(declared, str) else list(declared)
    return "string" in types or any(_admits_string(c) for c in schema.get("anyOf", []) + schema.get("oneOf", []))


def _tool(properties: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]


SCHEMA_CASES = [
    # "null" -> None wherever null is admitted
    ({"type": "string", "nullable": True}, "null", None),
    ({"type": ["string", "null"]}, "null", None),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "null", None),
    ({"type": ["string", "null"]}, "None", None),
    ({"type": "string"}, "null", "null"),
    ({"type": ["integer", "null"]}, "null", None),
    # valid JSON of an admitted non-string type wins over the string reading
    ({"anyOf": [{"type": "string"}, {"type": "object"}]}, '{"a": 1}', {"a": 1}),
    ({"type": ["integer", "string"]}, "8", 8),
    ({"type": ["string", "integer"]}, "8", 8),
    ({"anyOf": [{"type": "string"}, {"type": "array"}]}, "[1, 2]", [1, 2]),
    ({"anyOf": [{"type": "string"}, {"type": "number"}]}, "2.5", 2.5),
    ({"type": ["string", "boolean"]}, "true", True),
    # otherwise the text stays
    ({"type": ["integer", "string"]}, "eight", "eight"),
    ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "[1]", "[1]"),
    ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "{not json", "{not json"),
    ({"type": ["string", "boolean"]}, "yes", "yes"),
    ({"type": "string"}, "8", "8"),
    ({}, "8", "8"),
]


@pytest.mark.parametrize("schema, raw, expected", SCHEMA_CASES)
def test_json_schema_tools(schema: dict[str, Any], raw: str, expected: Any) -> None:
    # `expected`: the text-body rule, what an xml-inline parameter gets
    tools = _tool({"p": schema})
    got = _arguments(_xml_call({"p": raw}), tools, template=XML_TEMPLATE)["p"]
    assert canon(got) == canon(expected) and type(got) is type(expected)
    # a JSON body: the argument as written wherever the schema admits a string (Transformers 5.25)
    in_json = raw if _admits_string(schema) else expected
    got = _arguments(_call({"p": raw}), tools)["p"]
    assert canon(got) == canon(in_json) and type(got) is type(in_json)
    if native is not None:  # (Transformers 5.24 casts a JSON body's argument where a string is admitted too)
        want = native_argument(in_json, raw, schema)
        assert canon(_arguments(_call({"p": raw}), tools, native.parse_response)["p"]) == canon(want)
        theirs = _arguments(_xml_call({"p": raw}), tools, native.parse_response, XML_TEMPLATE)["p"]
        assert canon(theirs) == canon(expected)


def weather(city: str, days: Optional[int] = None, unit: str | None = None,  # noqa: UP045 (old-style hints on purpose)
            limit: int | None = None, extra: Union[int, str] = 0,  # noqa: UP007 (the typing.Union form on purpose)
            tags: Optional[list[str]] = None) -> str:  # noqa: UP045
    """Get the weather.

    Args:
        city: the city
        days: how many days
        unit: the unit
        limit: at most this many
        extra: an int or a string
        tags: labels
    """
    return city


FUNCTION_CASES = [  # (in a JSON body: `unit` (str | None) and `extra` (int | str) admit a string, kept as written)
    ({"days": "null"}, {"days": None}),
    ({"days": "3"}, {"days": 3}),
    ({"unit": "null"}, {"unit": "null"}),
    ({"unit": "7"}, {"unit": "7"}),
    ({"limit": "None"}, {"limit": None}),
    ({"limit": "5"}, {"limit": 5}),
    ({"extra": "8"}, {"extra": "8"}),
    ({"extra": "eight"}, {"extra": "eight"}),
    ({"tags": "null"}, {"tags": None}),
    ({"tags": '["a", "b"]'}, {"tags": ["a", "b"]}),
    ({"city": "null"}, {"city": "null"}),
]


@pytest.mark.parametrize("arguments, expected", FUNCTION_CASES)
def test_python_function_tools_with_optional_and_pep604_hints(arguments: dict[str, Any], expected: Any) -> None:
    # `X | None` hints: Transformers 4.46's get_json_schema cannot read them; ours gives 5.x's schema.
    got = _arguments(_call(arguments, "weather"), [weather])
    assert canon(got) == canon(expected)
    if native is not None:  # (as `test_json_schema_tools`: each argument as native's version types it)
        schemas = tool_schemas([weather]).by_name["weather"]["properties"]
        want = {k: native_argument(v, arguments[k], schemas[k]) for k, v in expected.items()}
        assert canon(_arguments(_call(arguments, "weather"), [weather], native.parse_response)) == canon(want)


def test_streamed_string_arguments_only_where_every_string_stays() -> None:
    assert admits_string({"type": "string"}) and admits_string({}) and admits_string({"enum": ["a", "b"]})
    assert not admits_string({"type": ["string", "integer"]})
    assert not admits_string({"type": "string", "nullable": True})
    assert not admits_string({"enum": [1, 2]})


def test_enum_without_type_casts_only_to_a_member() -> None:
    # Native leaves type-less enums alone ("2" stays "2"); we cast to a member only (README differences).
    schema = {"enum": [1, 2, "x"]}
    assert cast_value("2", schema) == 2 and type(cast_value("2", schema)) is int
    assert cast_value("7", schema) == "7"
    assert cast_value("x", schema) == "x"
    assert cast_value("true", {"enum": [True]}) is True
    assert cast_value("1", {"enum": [True]}) == "1"  # 1 is not the member True
    assert cast_value("null", {"enum": [None, "a"]}) is None
    assert cast_value("[1]", {"enum": [[1], [2]]}) == [1]


SCHEMAS = st.sampled_from([
    {"type": ["string", "integer"]}, {"type": ["integer", "string"]}, {"anyOf": [{"type": "string"}, {"type": "number"}]},
    {"anyOf": [{"type": "string"}, {"type": "object"}]}, {"type": ["string", "null"]}, {"type": "string", "nullable": True},
    {"oneOf": [{"type": "string"}, {"type": "boolean"}, {"type": "null"}]}, {"type": ["string", "array"]},
    {"type": "string"}, {"type": ["boolean", "string", "integer"]}, {"enum": ["a", "b"]},
])
VALUES = st.one_of(
    st.sampled_from(["7", "-3", "3.0", "1e3", "true", "False", "1", "0", "null", "None", '{"a": 1}', "[1, 2]",
                     "x", " 7 ", "nan", "", "007", "1_000"]),
    st.text(alphabet='0123456789.-e"{}[]:, naultrsfxNo', max_size=8),
)


@pytest.mark.skipif(native is None, reason="needs the native parser (Transformers 5.x)")
@given(st.lists(st.tuples(SCHEMAS, VALUES), min_size=1, max_size=4), st.booleans())
def test_string_admitting_unions_type_like_native(params: list[tuple[dict[str, Any], str]], xml: bool) -> None:
    # an xml-inline body (`xml`) types by the union rule; a JSON body keeps each of these arguments as written
    # (every schema here admits a string, or declares no type)
    tools = _tool({f"p{i}": schema for i, (schema, _) in enumerate(params)})
    arguments = {f"p{i}": value for i, (_, value) in enumerate(params)}
    template = XML_TEMPLATE if xml else TEMPLATE
    text = _xml_call(arguments) if xml else _call(arguments)
    parser = ResponseParser(template, "", tools=tools)
    parser.feed(text)
    ours, _ = parser.finalize()
    theirs = native.parse_response(text, template, prefix="", tools=tools)
    ours_args = ours["tool_calls"][0]["function"]["arguments"]
    theirs_args = theirs["tool_calls"][0]["function"]["arguments"]
    for i, (schema, value) in enumerate(params):
        got = ours_args[f"p{i}"]
        assert canon(got) == canon(_json_rule(value, schema) if xml else value), (schema, value)
        if not xml and NATIVE_KEEPS_JSON_STRINGS:  # (Transformers >= 5.25: the same rule)
            assert canon(got) == canon(theirs_args[f"p{i}"]), (schema, value)
        elif canon(_json_rule(value, schema)) != canon(theirs_args[f"p{i}"]):
            # the one deliberate difference (README): when the schema admits a string, native also casts
            # text that is not JSON of the type it becomes ("True", "007", "1" -> True); we cast only JSON
            # text of an admitted type, to exactly that JSON value
            decoded = _json_or_none(value)
            assert decoded is _NOT_JSON or canon(theirs_args[f"p{i}"]) != canon(decoded), (schema, value, theirs_args)


_NOT_JSON = object()


def _json_or_none(value: str) -> Any:
    try:
        return json.loads(value, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError:
        return _NOT_JSON


def _json_rule(value: str, schema: dict[str, Any]) -> Any:
    """Issue 12's rules for a string argument, written independently of tools.py: valid JSON of an admitted
    non-string type becomes that value (3.0 counts as an integer), anything else stays the string."""
    types = set(_types_of(schema))
    if "string" not in types:  # only type-less enums of strings here: nothing to cast
        return value
    if "null" in types and value.strip() == "None":
        return None
    decoded = _json_or_none(value)
    if decoded is _NOT_JSON or isinstance(decoded, str):
        return value
    if isinstance(decoded, bool):
        return decoded if "boolean" in types else value
    if isinstance(decoded, int | float):
        whole = float(decoded).is_integer()
        if "number" in types:  # a whole number written without a point is an int ("1e3" -> 1000)
            return int(decoded) if whole and "." not in value else decoded
        return int(decoded) if "integer" in types and whole else value
    kind = {type(None): "null", list: "array", dict: "object"}[type(decoded)]
    return decoded if kind in types else value


def _types_of(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type", [])
    out = [declared] if isinstance(declared, str) else list(declared)
    for choice in schema.get("anyOf", []) + schema.get("oneOf", []):
        out += _types_of(choice)
    if schema.get("nullable"):
        out.append("null")
    return out or ["string"]


UNION_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "n": {"type": ["string", "integer"]}, "o": {"anyOf": [{"type": "string"}, {"type": "object"}]},
    "s": {"type": "string", "nullable": True}, "t": {"type": "string"}, "i": {"type": "integer"}}}}}]


@pytest.mark.parametrize("name, text, arguments", [
    # a JSON body: the arguments whose schema admits a string stay as written, the integer one is cast
    ("smollm3", '<tool_call>{"name": "f", "arguments": {"n": "8", "o": "{\\"a\\": 1}", "s": "null", "t": "8", '
                '"i": "8"}}</tool_call><|im_end|>', {"n": "8", "o": '{"a": 1}', "s": "null", "t": "8", "i": 8}),
    ("qwen3-coder", "<tool_call>\n<function=f>\n<parameter=n>\n8\n</parameter>\n<parameter=o>\n{\"a\": 1}\n"
                    "</parameter>\n<parameter=s>\nnull\n</parameter>\n<parameter=t>\n8\n</parameter>\n"
                    "<parameter=i>\n8\n</parameter>\n</function>\n</tool_call><|im_end|>",
     {"n": 8, "o": {"a": 1}, "s": None, "t": "8", "i": 8}),
])
def test_openai_argument_deltas_stream_only_strings_that_stay_strings(name, text, arguments):
    # a string union may end up an int, a dict or None: its text must not be streamed as a JSON string
    from test_openai_deltas import check_text

    template = get_template(name)
    expected = parse_response(text, template, prefix="", tools=UNION_TOOLS)
    assert expected["tool_calls"][0]["function"]["arguments"] == arguments
    check_text(template, "", text, list(text), tools=UNION_TOOLS)


def test_object_and_array_parameters_read_pythons_str_of_the_value() -> None:
    """Chat templates that print arguments with {{ value }} write {'a': True}: read strictly, never evaluated."""
    from hf_response_templates.content import parse_python_literal

    assert cast_value("{'lang': 'fr', 'safe': True, 'n': None}", {"type": "object"}) == {
        "lang": "fr", "safe": True, "n": None}
    assert cast_value("[1, 'a', [False]]", {"type": "array"}) == [1, "a", [False]]
    assert cast_value("{'a': [1]}", {"type": "object", "properties": {"a": {"type": "array"}}}) == {"a": [1]}
    # not a literal, the wrong kind, or something to evaluate: the text stays
    for text, schema in [("{'a': x}", {"type": "object"}), ("[1]", {"type": "object"}),
                         ("__import__('os')", {"type": "object"}), ("{'a': 1} tail", {"type": "object"})]:
        assert cast_value(text, schema) == text
    # a schema that admits a string keeps the JSON-only rule: Python's str() stays text there
    assert cast_value("{'a': 1}", {"type": ["string", "object"]}) == "{'a': 1}"
    with pytest.raises(ValueError, match="after the value"):
        parse_python_literal("1 2")
    # end to end, and the deliberate difference from the native parser (README), which keeps the text
    tools = _tool({"o": {"type": "object"}, "a": {"type": "array"}})
    text = _call({"o": "{'lang': 'fr', 'safe': True}", "a": "[1, 'x']"})
    assert _arguments(text, tools) == {"o": {"lang": "fr", "safe": True}, "a": [1, "x"]}
    if native is not None:
        assert _arguments(text, tools, native.parse_response) == {"o": "{'lang': 'fr', 'safe': True}", "a": "[1, 'x']"}


_TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]


def _reject(constant: str) -> Any:
    raise ValueError(constant)


def _decoded_cast(value: str, types: list[str]) -> Any:
    """What a string-admitting union makes of `value` by decoding it first, whatever it starts with."""
    if "null" in types and value.strip() == "None":
        return None
    try:
        decoded = json.loads(value, parse_constant=_reject)
    except (ValueError, RecursionError):
        return value
    kind = {bool: "boolean", int: "integer", float: "number", type(None): "null", list: "array", dict: "object",
            str: "string"}[type(decoded)]
    if kind == "number" and decoded.is_integer() and ("number" not in types or "." not in value):
        decoded, kind = int(decoded), "integer" if "integer" in types else "number"
    if kind == "integer" and "integer" not in types and "number" in types:
        kind = "number"
    return value if kind == "string" or kind not in types else decoded


@example(" 8", ["integer"])
@example("\n[1]", ["array"])
@example("\x0c1", ["integer"])
@example("nul", ["null"])
@given(st.one_of(st.text(max_size=8), st.sampled_from([" 8", "\n-1", "true", " null", "[1]", '{"a": 1}', '"x"', "1e3",
                                                       "\t3.0 ", "None", "NaN", "-Infinity", "\x0c1", " f", "nul"])),
       st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True))
def test_a_string_is_cast_without_a_json_decode_only_where_a_decode_would_keep_it(raw, types):
    # `_cast_json_text` skips decoding a text whose first character (after JSON whitespace) no JSON value of an
    # admitted non-string type starts with: it must give what decoding it first gives, on any text
    schema = {"type": ["string", *[t for t in types if t != "string"]]}
    assert canon(cast_value(raw, schema)) == canon(_decoded_cast(raw, schema["type"]))


# --------------------------------------------------------------------------- every typing place, one rule

EVERY_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "u": {"type": ["integer", "string"]}, "n": {"type": ["string", "null"]}, "i": {"type": "integer"},
    "o": {"type": "object", "properties": {"k": {"type": ["integer", "string"]}, "j": {"type": "integer"}}},
    "s": {"type": "string"}}}}}]
DSML_CALL = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
             '<｜DSML｜parameter name="u" string="true">8</｜DSML｜parameter>\n'
             '<｜DSML｜parameter name="n" string="true">null</｜DSML｜parameter>\n'
             '<｜DSML｜parameter name="i" string="true">8</｜DSML｜parameter>\n'
             '<｜DSML｜parameter name="s" string="false">8</｜DSML｜parameter>\n'
             '</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>')
#: (template, prompt, response, the arguments every typing place must give)
EVERY_CASES = {
    # a JSON body: "u", "n" and nested "k" admit a string (kept as written); "i" and nested "j" do not (cast)
    "json": ("smollm3", "", _call({"u": "8", "n": "null", "i": "8", "o": {"k": "1", "j": "2"}, "s": "x"}),
             {"u": "8", "n": "null", "i": 8, "o": {"k": "1", "j": 2}, "s": "x"}),
    # a text body (xml-inline): every value is text, typed by the schema
    "xml": ("qwen3-coder", "", _xml_call({"u": "8", "n": "null", "i": "8", "o": '{"k": "1", "j": "2"}', "s": "x"}),
            {"u": 8, "n": None, "i": 8, "o": {"k": 1, "j": 2}, "s": "x"}),
    # value_parser_by: the model's string="true|false" says how to read each value, typed as a JSON body is:
    # "u", "n" and "s" admit a string (kept as the tag's parser gave them, "s" the string="false" 8); "i" admits
    # none, so its string="true" "8" is cast (unlike native 5.25, which types nothing in such a field)
    "value_parser_by": ("deepseek-v3.2", "<｜Assistant｜><think></think>", DSML_CALL,
                        {"u": "8", "n": "null", "i": 8, "s": 8}),
}


@pytest.mark.parametrize("case", sorted(EVERY_CASES))
def test_every_typing_place_follows_the_fields_rule(case: str) -> None:
    """The one-shot plan (both loops), the streaming parser, DeltaStream's streamed deltas and the tokenizer's
    parse_response all type a field's calls by its rule (`FieldSpec.tool_typing`): any one of them keeping another
    rule fails here."""
    from hf_response_templates import load_template
    from hf_response_templates.openai import DeltaStream, accumulate_deltas
    from hf_response_templates.plan import plan_for

    name, prompt, text, want = EVERY_CASES[case]
    template = get_template(name)
    tpl = load_template(template)

    def args(message: dict[str, Any]) -> Any:
        return message["tool_calls"][0]["function"]["arguments"]

    assert args(parse_response(text, template, prefix=prompt, tools=EVERY_TOOLS)) == want
    plan = plan_for(tpl)
    schemas = tool_schemas(EVERY_TOOLS)
    assert args(plan.run(text, prompt, schemas)) == want  # (the plan's own answer, not the state machine's)
    assert args(plan._general(text, prompt, schemas)) == want  # (the general loop, whichever `run` is)
    parser = ResponseParser(template, prompt, tools=EVERY_TOOLS)
    for ch in text:  # (piece by piece: the state machine, never the plan)
        parser.feed(ch)
    message, _ = parser.finalize()
    assert args(message) == want
    for mode in ("incremental", "validated"):
        stream = DeltaStream(template, prefix=prompt, tools=EVERY_TOOLS, tool_call_streaming=mode)
        deltas = [d for ch in text for d in stream.feed(ch)] + stream.finish()
        assert not [c for d in deltas for c in d.get("tool_calls", []) if c.get("error")], mode
        assert json.loads(accumulate_deltas(deltas)["tool_calls"][0]["function"]["arguments"]) == want, mode


@pytest.mark.parametrize("case", sorted(EVERY_CASES))
def test_tokenizer_parse_response_with_tools_follows_the_fields_rule(case: str) -> None:
    _tokenizers = pytest.importorskip("_tokenizers")
    from hf_response_templates.tokenizer import install

    install()
    name, prompt, text, want = EVERY_CASES[case]
    tok = _tokenizers.byte_level_tokenizer()
    tok.response_template = get_template(name)
    ids = tok.encode(text, add_special_tokens=False)
    prefix = tok.encode(prompt, add_special_tokens=False)
    for response in (text, ids):
        message = tok.parse_response(response, prefix=prefix if response is ids else prompt, tools=EVERY_TOOLS)
        assert message["tool_calls"][0]["function"]["arguments"] == want
