"""Fast paths of the content parsers, transforms and tool typing (issue 19: one-shot fixed cost).

Each fast path is compared with the exact reader it short-cuts, kept as the reference: the same value, or
the same error (message included), on generated texts that mix what the fast path takes with what it must
leave to the reader (escapes, nesting, repeats, out-of-range numbers, junk). A second kind of test checks
that the fast path is taken on the usual input (the reference is made to fail, and the result still comes).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hf_response_templates import content as C
from hf_response_templates.content import json_values as CJ
from hf_response_templates.content import python_calls as CP
from hf_response_templates.content import value_parsers as CV

# ---------------------------------------------------------------- python-call-list

def _mostly(valid, other):
    """Mostly `valid` (what the fast path takes), sometimes `other` (what it must leave to the reader)."""
    return st.sampled_from(valid * 6 + other)


_NAMES = _mostly(["f", "get_weather", "a.b", "x-y", "_z9", "True"], ["1a", "f g", "", "a..b", "é"])
_SPACE = _mostly(["", "", " ", "\n", " \t\r\n "], ["\f", "\u00a0"])
_VALUES = st.one_of(
    _mostly(['"Paris"', "'Paris'", '""', "''", "'\"'", "\"'\"", '"a b"', '"(x=1)"', '"[f(a=1)]"'],
            ['"a\\"b"', "'it\\'s'", '"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '"\ud800"', '"a\nb"',
             '"a\\qb"', '"unterminated']),
    _mostly(["0", "-0", "3", "-12", "1.5", "1e3", "1E+3", "-2.5e-3", str(2**53 - 1), str(-(2**53 - 1))],
            ["01", "1.", ".5", "1e999", "-1e999", str(2**53), str(-(2**53)), "12345678901234567",
             "123456789012345678", "0x10", "--1", "+1", "Infinity", "NaN"]),
    _mostly(["True", "False", "None", "true", "false", "null"], ["Truex", "none", "TRUE"]),
    st.sampled_from(["[1, 2]", "[]", '{"k": 1}', "{}", "[[1]]", "{'a': [True, None]}", "(1)", "f(x=1)"]),
)


@st.composite
def _flat_values(draw):
    """A list or dict of scalars (what the fast path reads since issue 19's nested step), sometimes with what
    it must leave to the reader: an escape, a repeated key, a number out of range, a nested list, a bad key."""
    scalars = st.sampled_from(['"a"', "'b'", '""', "'x:y'", '"[1]"', "'}'", "0", "-3", "1.5", "1e3", "True", "None",
                               "null", "false", str(2**53 - 1)] * 4
                              + ['"a\\nb"', str(2**53), "1e999", "[1]", "{}", "x", "'\ud800'", ""])
    space = _SPACE
    items = [draw(scalars) for _ in range(draw(st.integers(0, 3)))]
    sep = draw(space) + draw(_mostly([","], [",,", ";"])) + draw(space)
    if draw(st.booleans()):
        return "[" + draw(space) + sep.join(items) + draw(space) + draw(_mostly(["]"], [",]", ""]))
    keys = draw(st.lists(st.sampled_from(['"k"', "'k'", '"j"', "'a b'", '"\\u00e9"'] * 3 + ["k", "1", "None"]),
                         min_size=len(items), max_size=len(items)))
    colon = draw(space) + draw(_mostly([":"], ["=", ""])) + draw(space)
    return "{" + draw(space) + sep.join(k + colon + v for k, v in zip(keys, items, strict=True)) + draw(space) + draw(
        _mostly(["}"], [",}", ""]))


_VALUES = st.one_of(_VALUES, _flat_values())
_VALUES = st.one_of(_VALUES, _VALUES, _VALUES, st.text(max_size=4))


@st.composite
def _call_lists(draw):
    def kwarg():
        return draw(_NAMES) + draw(_SPACE) + draw(_mostly(["="], [":", ""])) + draw(_SPACE) + draw(_VALUES)

    def call():
        args = [kwarg() for _ in range(draw(st.integers(0, 3)))]
        if args and draw(st.integers(0, 5)) == 0:
            args.append(args[0])  # a repeated name
        sep = draw(_mostly([",", ", ", " ,\n"], [",,", ";"]))
        return draw(_NAMES) + draw(_SPACE) + "(" + draw(_SPACE) + sep.join(args) + draw(_SPACE) + draw(
            _mostly([")"], [",)", ""]))

    calls = [call() for _ in range(draw(st.integers(0, 3)))]
    text = (draw(_SPACE) + draw(_mostly(["["], ["(", ""])) + draw(_SPACE) + ", ".join(calls) + draw(_SPACE)
            + draw(_mostly(["]"], [",]", "", "] x"])) + draw(_SPACE))
    if draw(st.integers(0, 9)) == 0:  # a random edit anywhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=3)) + text[at + draw(st.integers(0, 2)):]
    return text


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except ValueError as e:
        return "error", str(e)


def _reference_call_list(text):
    return CP._CallListReader(text).parse()


@given(_call_lists())
@example('[get_weather(city="Paris", days=3)]')
@example("[]")
@example(" [ f ( ) , g(a=1.5e3,b=None, c='x') ] ")
@example("[f(a=1, a=2)]")
@example(f"[f(a={2**53})]")
@example("[f(a=1e999)]")
@example('[f(a="\ud83d")]')
@example("[f(a=1),]")
def test_call_list_fast_path_equals_the_reader(text):
    fast = CP._simple_call_list(text)
    reference = _outcome(_reference_call_list, text)
    if fast is not None:
        assert reference == ("ok", fast)
        assert [type(v) for c in fast for v in c["arguments"].values()] == [
            type(v) for c in reference[1] for v in c["arguments"].values()]  # 3 stays int, 3.0 float
    assert _outcome(C.parse_python_call_list, text, {}) == reference


@pytest.mark.parametrize("text", [
    '[get_weather(city="Paris")]',
    '[get_weather(city="Paris", days=3), get_time(tz=\'UTC\', exact=True, offset=-1.5, at=None)]',
    " [ f() ] ",
    "[]",
    '[search(query="rain", tags=["a", \'b\', 3, -1.5, None], options={"x": null, \'y\': "1:2"}, none=[], nd={})]',
])
def test_call_list_fast_path_is_taken_on_scalar_arguments(text, monkeypatch):
    want = _reference_call_list(text)

    def refuse(self):
        raise AssertionError("the reader ran")

    monkeypatch.setattr(CP._CallListReader, "parse", refuse)
    assert C.parse_python_call_list(text, {}) == want


@pytest.mark.parametrize("text", ['[f(a="\\n")]', "[f(a=[[1, 2]])]", "[f(a=1, a=2)]", "[f(a=1e999)]", "[f(1)]",
                                  '[f(a={"k": 1, \'k\': 2})]', f"[f(a=[{2**53}])]", "[f(a=[1e999])]",
                                  '[f(a={"k": [1]})]', '[f(a=["\\u00e9"])]', "[f(a={k: 1})]"])
def test_call_list_fast_path_leaves_the_rest_to_the_reader(text):
    assert CP._simple_call_list(text) is None


def test_call_list_fast_path_on_long_whitespace_gives_the_reader_s_answer():
    # a failing match must backtrack linearly: 200k spaces where the grammar expects a ')' or ','
    text = "[f(a=1" + " " * 200_000 + "]"
    assert _outcome(C.parse_python_call_list, text, {}) == _outcome(_reference_call_list, text)
    text = "[" + "f(a=1), " * 5_000 + "f(a=1)" + " " * 100_000 + "]"
    assert CP._simple_call_list(text) == _reference_call_list(text)


# ---------------------------------------------------------------- json: the C scanner called directly

_JSON_PIECES = st.sampled_from(['{', '}', '[', ']', ',', ':', '"a"', '"\\u00e9"', '"\\ud800"', '1', '-0', '1.5e3', 'true',
                                'null', 'NaN', '-Infinity', ' ', '\n', '\t', '\r', '\u00a0', '\ufeff', 'x', '"', '\\',
                                '01', '1.', '"a\nb"'])


@given(st.one_of(
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                 max_leaves=8).map(json.dumps),
    st.lists(_JSON_PIECES, max_size=12).map("".join),
    st.text(max_size=12),
))
@example("")
@example(" ")
@example("\ufeff{}")
@example(' {"a": 1} \n')
@example('{"a": 1} x')
@example("[" * 100_000)
def test_loads_equals_json_loads(text):

    import math

    def outcome(fn):
        try:
            return "ok", fn(text)
        except RecursionError:
            return "recursion", None
        except ValueError as e:
            return "error", (type(e), str(e))

    got, want = outcome(CJ._loads), outcome(json.loads)
    if got[0] == "ok" and want[0] == "ok":  # NaN != NaN: compare the JSON texts
        assert json.dumps(got[1]) == json.dumps(want[1])
        assert not (isinstance(want[1], float) and math.isnan(want[1])) or math.isnan(got[1])
    else:
        assert got == want


def test_plain_json_takes_the_scanner(monkeypatch):


    def refuse(*args, **kwargs):
        raise AssertionError("json.loads ran")

    monkeypatch.setattr(json, "loads", refuse)
    assert C.parse_json(' [{"name": "f", "arguments": {"a": 1}}]\n', {}) == [{"name": "f", "arguments": {"a": 1}}]
    args = {"unquoted_keys": True, "string_delims": (('<|"|>', '<|"|>'),)}
    assert C.parse_json('{city:<|"|>Tokyo<|"|>,days:2}', args) == {"city": "Tokyo", "days": 2}


# ---------------------------------------------------------------- tools= typing: parameters that cast nothing

_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array", "weird", 3])
_schemas = st.recursive(
    st.fixed_dictionaries({}, optional={
        "type": st.one_of(_TYPES, st.lists(_TYPES, max_size=3)),
        "nullable": st.booleans(),
        "enum": st.lists(st.sampled_from([1, 2, "a", None, True, 1.5]), max_size=3),
        "description": st.just("d"),
    }),
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(
            st.sampled_from(["a", "b"]), inner, max_size=2)}),
        st.fixed_dictionaries({"type": st.sampled_from(["array", "string"])}, optional={"items": inner}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.one_of(st.lists(inner, max_size=2), st.just("x"))}),
    ),
    max_leaves=6,
)
_texts = st.sampled_from(["Paris", "8", " 8 ", "8.0", "1e3", "true", "True", "1", "null", "None", '{"a": "1"}',
                          "{'a': '1'}", '["1", 2]', "[]", "", "-", "NaN", "2"])
_values = st.recursive(
    st.one_of(_texts, st.integers(-3, 3), st.floats(allow_nan=False), st.booleans(), st.none()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=6,
)


def _reference_cast_nested(value, schema, kept=False):
    """`tools._cast_nested` as it was before its fast paths (list items cast one by one, numbers too); `kept`: a
    `TYPED_BODY` field's typing, passed down."""
    from hf_response_templates import tools as T

    if isinstance(value, dict):
        for sub in T._subschemas(schema):
            props = sub.get("properties")
            if isinstance(props, dict):
                for key in value:
                    if key in props:
                        value[key] = T.cast_value(value[key], props[key], kept)
                break
    elif isinstance(value, list):
        for sub in T._subschemas(schema):
            items = sub.get("items")
            if isinstance(items, dict):
                for i, item in enumerate(value):
                    value[i] = T.cast_value(item, items, kept)
                break
            if "array" not in T._schema_types(sub) and T._schema_types(sub):
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        value[i] = T.cast_value(item, sub, kept)
                break
    return value


def _reference_typing(by_name, call, typing=0):
    """What `ToolSchemas.type_tool_calls` did before its fast paths: `_cast` on every argument that has a
    schema, nested values cast by the old `_cast_nested` (patched in: `_cast` reads it at call time)."""
    from unittest import mock

    from hf_response_templates import tools as T

    props = (by_name.get(call["name"]) or {}).get("properties")
    with mock.patch.object(T, "_cast_nested", _reference_cast_nested):
        if isinstance(props, dict):
            for key, arg in call["arguments"].items():
                if key in props:
                    schema = props[key]
                    call["arguments"][key] = T._cast(arg, schema,
                                                     T._schema_types(schema) if isinstance(schema, dict) else [],
                                                     typing == T.TYPED_BODY)
    return call


@given(st.dictionaries(st.sampled_from(["p", "q", "r"]), _schemas, max_size=3),
       st.dictionaries(st.sampled_from(["p", "q", "r", "s"]), _values, max_size=4))
@example({"p": {"type": "string", "description": "d"}}, {"p": "8"})
@example({"p": {"type": "string", "items": {"type": "integer"}}}, {"p": ["8"]})
@example({"p": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}, {"p": "8"})
@example({"p": {"type": "string", "nullable": True}}, {"p": "None"})
@example({"p": {"enum": [1, 2]}}, {"p": "2"})
def test_typing_without_inert_parameters_equals_casting_every_one(properties, arguments):
    import copy

    from hf_response_templates import tools as T
    from hf_response_templates.tools import tool_schemas

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]
    schemas = tool_schemas(tools)
    for typing in (T.SCHEMA_TYPED, T.TYPED_BODY):  # (`FieldSpec.tool_typing`: schema-typed, a typed body)
        got = schemas.type_tool_calls({"name": "f", "arguments": copy.deepcopy(arguments)}, typing)
        want = _reference_typing(schemas.by_name, {"name": "f", "arguments": copy.deepcopy(arguments)}, typing)
        assert repr(got) == repr(want), typing  # repr: 8 and 8.0 and True differ


def test_string_parameters_and_numbers_are_not_cast(monkeypatch):
    from hf_response_templates import tools as T

    schemas = T.tool_schemas([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "description": "City"},
                                         "days": {"type": "integer"}, "note": {}}}}}])

    def refuse(*args):
        raise AssertionError("_cast ran")

    monkeypatch.setattr(T, "_cast", refuse)
    call = {"name": "get_weather", "arguments": {"city": "8", "days": 3, "note": "1"}}
    assert schemas.type_tool_calls(call) == {"name": "get_weather", "arguments": {"city": "8", "days": 3, "note": "1"}}
    monkeypatch.undo()
    assert schemas.type_tool_calls({"name": "get_weather", "arguments": {"days": "3"}})["arguments"] == {"days": 3}


# ---------------------------------------------------------------- transforms: one-key steps


def _reference_lookup_steps(path, root, steps):
    """`transform._lookup_steps` as it was before its one-key fast path (the reference)."""
    from hf_response_templates.transform import ONE_KEY_STEPS, TransformError, _only, _undefined

    def where(i):
        if root is None:
            return ".".join(steps[:i]) if i else "the element"
        return ".".join([root, *steps[:i]])

    def apply(scope):
        if root is None:
            value = scope
        elif root in scope:
            value = scope[root]
        else:
            raise _undefined(path, scope)
        for i, step in enumerate(steps):
            if step in ONE_KEY_STEPS:
                value = _only(value, step, path, where(i))
            elif not isinstance(value, dict):
                raise TransformError(
                    f"transform placeholder '{{{path}}}' cannot look up {step!r} in {where(i)}, which is a "
                    f"{type(value).__name__}, not a dict"
                )
            elif step not in value:
                raise TransformError(
                    f"transform placeholder '{{{path}}}': {where(i)} has no key {step!r} (keys: {sorted(value)})"
                )
            else:
                value = value[step]
        return value

    return apply


class _Dict(dict):
    pass


_scopes = st.recursive(
    st.one_of(st.integers(0, 2), st.text(max_size=2), st.none()),
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(["a", "b", "content"]), inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(_Dict),
        st.lists(inner, max_size=2),
    ),
    max_leaves=8,
)


@given(st.one_of(st.just(None), st.sampled_from(["content", "a"])),
       st.lists(st.sampled_from(["$key", "$value", "a", "b"]), min_size=1, max_size=4), _scopes)
@example(None, ["$key"], {"get_weather": {"city": "Paris"}})
@example(None, ["$value", "city"], {"get_weather": {"city": "Paris"}})
@example("content", ["$value"], {"content": _Dict(x=1)})
@example("content", ["$value"], {"content": {}})
@example("content", ["a"], {"content": {"a": 1}})  # plain keys: the dict fast path
@example("content", ["a", "b"], {"content": {"a": {"b": None}}})
@example("content", ["a", "b"], {"content": {"a": _Dict(b=1)}})
@example("content", ["a"], {"content": _Dict(a=1)})
@example("content", ["a"], {"content": [1]})
@example("a", ["b"], {"content": {"b": 1}})
@example("content", ["a", "b"], {"content": {"a": 3}})
def test_one_key_steps_equal_the_reference(root, steps, scope):
    from hf_response_templates.transform import TransformError, _lookup_steps

    if "$key" in steps[:-1]:
        steps = steps[: steps.index("$key") + 1]  # nothing after $key (rejected when a template loads)
    path = ".".join(steps if root is None else [root, *steps])
    if not isinstance(scope, dict):
        scope = {"content": scope}

    def outcome(make):
        try:
            return "ok", make(path, root, list(steps))(scope)
        except TransformError as e:
            return "error", str(e)

    got, want = outcome(_lookup_steps), outcome(_reference_lookup_steps)
    assert got == want
    if got[0] == "ok":
        assert got[1] is want[1]


@given(st.lists(st.lists(st.sampled_from(["content", "a", "b", "$value"]), min_size=1, max_size=3), min_size=2,
                max_size=3, unique_by=tuple), _scopes)
@example([["content", "parameters"], ["content", "arguments"]], {"content": {"name": "f", "arguments": {}}})
@example([["content", "a"], ["b"]], {"content": {}})
def test_placeholder_alternatives_equal_the_reference(paths, scope):
    # `"{a|b.c}"`: the first alternative that resolves, else one error naming every alternative's failure
    from hf_response_templates.transform import TransformError, compile_transform

    paths = [p for p in paths if p[0] != "$value"] or [["content"]]
    paths = list(dict.fromkeys(map(tuple, paths)))
    if len(paths) < 2:
        paths.append(("zz",))
    text = "|".join(".".join(p) for p in paths)
    if not isinstance(scope, dict):
        scope = {"content": scope}

    def reference():
        errors = []
        for p in paths:
            try:
                return "ok", _reference_lookup_steps(".".join(p), p[0], list(p[1:]))(scope) if len(p) > 1 else (
                    scope[p[0]] if p[0] in scope else _raise(p[0], scope))
            except TransformError as e:
                errors.append(str(e))
        return "error", f"transform placeholder '{{{text}}}': no alternative resolves ({'; '.join(errors)})"

    def _raise(name, scope):
        from hf_response_templates.transform import _undefined
        raise _undefined(name, scope)

    try:
        got = "ok", compile_transform("{" + text + "}", field="f")(scope)
    except TransformError as e:
        got = "error", str(e)
    assert got == reference()


# ---------------------------------------------------------------- xml-inline: the `re` twin of the tag pattern


def _xml_fields():
    """(template name, the xml-inline field's compiled content args) for every shipped template with one."""
    from hf_response_templates.library import get_template, list_templates

    out = []
    for name in list_templates():
        for field, spec in get_template(name)["fields"].items():
            if spec.get("content") == "xml-inline":
                args = C.get_content_parser("xml-inline").compile_args(spec.get("content_args"), field)
                out.append((f"{name}.{field}", args))
    return out


_XML_FIELDS = _xml_fields()
_XML_PIECES = st.sampled_from([
    "<parameter=", "<parameter name=\"", "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
    "<escape>", "city", "days", "\"", ">", "<", "\n", " ", ":", ",", "=", "{", "}", "Paris", "8", "</function>",
    "<|open|>argument key=\"", "\" type=\"string\"", "<|sep|>", "<|close|>argument<|sep|>",
    "<\uff5cDSML\uff5cparameter name=\"", "\" string=\"true\"", "</\uff5cDSML\uff5cparameter>", "é", "\u00a0",
])


@pytest.mark.parametrize("name,args", _XML_FIELDS, ids=[n for n, _ in _XML_FIELDS])
@given(st.lists(_XML_PIECES, max_size=30).map("".join))
def test_xml_inline_stdlib_twin_equals_regex(name, args, text):
    reference = {k: v for k, v in args.items() if k not in ("_stdlib", "_plain_small")}
    assert _outcome(C.parse_xml_inline, text, args) == _outcome(C.parse_xml_inline, text, reference)


@pytest.mark.parametrize("name,args", _XML_FIELDS, ids=[n for n, _ in _XML_FIELDS])
@given(st.lists(_XML_PIECES, max_size=60).map("".join))
def test_xml_inline_plain_small_bodies_equal_the_general_path(name, args, text):
    # `_plain_small`: a short body of a plain two-group pattern read first, as `dict(findall(text))`
    reference = {k: v for k, v in args.items() if k != "_plain_small"}
    assert _outcome(C.parse_xml_inline, text, args) == _outcome(C.parse_xml_inline, text, reference)


def test_xml_inline_plain_small_is_set_for_the_plain_shipped_patterns():
    plain = [name for name, args in _XML_FIELDS if args["_plain"]]
    assert plain and all("_plain_small" in dict(_XML_FIELDS)[name] for name in plain)
    assert all("_plain_small" not in args for _, args in _XML_FIELDS if not args["_plain"])


def test_xml_inline_shipped_patterns_have_a_stdlib_twin(monkeypatch):
    assert _XML_FIELDS and all(args["_stdlib"] is not None for _, args in _XML_FIELDS)
    args = dict(dict(_XML_FIELDS)["qwen3-coder.tool_calls"])
    text = "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
    want = C.parse_xml_inline(text, args)
    monkeypatch.setitem(args, "tag_pattern", None)  # a body within `_untimed` never reaches the regex pattern
    assert C.parse_xml_inline(text, args) == want == {"city": "Paris", "days": "3"}


# ---------------------------------------------------------------- json dialect: the rewrite worked out once

_DIALECT_PIECES = st.sampled_from(['{', '}', '[', ']', ',', ':', 'city', 'days', '<|"|>', 'Tokyo', '"', '\\', '2',
                                   ' ', '\n', 'true', 'null', 'NaN', 'é', '<|', '|>', '{{', "'"])


@pytest.mark.parametrize("options", [
    {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
    {"unquoted_keys": True},
    {"string_delims": [["'", "'"]]},
    {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']], "allow_non_json": True},
    {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']], "empty": {}},
])
@given(st.lists(_DIALECT_PIECES, max_size=25).map("".join))
@example('{city:<|"|>Tokyo<|"|>,days:2}')
@example("")
def test_json_dialect_precomputed_rewrite_equals_the_general_path(options, text):
    args = C.get_content_parser("json").compile_args(options, "f")
    assert "_translate" in args
    reference = {k: v for k, v in args.items() if k != "_translate"}
    assert _outcome(C.parse_json, text, args) == _outcome(C.parse_json, text, reference)


@pytest.mark.parametrize("make", [
    lambda n: "[" + "f(a=1), " * (n // 8),  # no closing ']'
    lambda n: "[f(" + "a=1, " * (n // 5),  # no closing ')'
    lambda n: "[f(a=1" + " " * n + "x",
    lambda n: '[f(a="' + "x" * n,
    lambda n: "[f(a=[" + "1, " * (n // 3),  # a flat list without its ']'
    lambda n: '[f(a={"k": 1' + ', "k": 1' * (n // 8) + " " * 10 + "x",  # a flat dict, then junk
    lambda n: "[f(a=[" + " " * n + "1 x",
], ids=["calls-unclosed", "arguments-unclosed", "spaces-then-junk", "string-unclosed", "list-unclosed",
        "dict-then-junk", "list-spaces-then-junk"])
def test_call_list_fast_path_rejects_in_linear_time(make):
    import time

    def per_char(n):
        text, best = make(n), float("inf")
        for _ in range(3):
            t = time.process_time()
            CP._SIMPLE_CALLS.fullmatch(text)
            best = min(best, time.process_time() - t)
        return best / len(text)

    small, large = per_char(2_000), per_char(100_000)
    assert large < 8 * small + 1e-7  # quadratic would be ~50x per character


# ---------------------------------------------------------------- value parsers without option lookups


@given(st.one_of(st.text(max_size=8), st.lists(_JSON_PIECES, max_size=8).map("".join)),
       st.sampled_from([("text", {}), ("text", {"strip": False}), ("text", {"strip": True}),
                        ("json", {"allow_non_json": True})]))
@example(" [" * 3000, ("json", {"allow_non_json": True}))
@example(" 8 ", ("json", {"allow_non_json": True}))
def test_fast_value_parsers_equal_the_parser(text, spec):
    name, raw = spec
    fast = CV._value_parser({"name": name, "args": raw}, "f", "content_args.value_parser")
    parser = C.get_content_parser(name)
    args = parser.compile_args(raw, "f")
    assert fast is not None and CV._fast_value_parser(parser.parse, args) is not None
    got, want = _outcome(fast, text), _outcome(parser.parse, text, args)
    if got[0] == "ok" and want[0] == "ok":
        assert json.dumps(got[1]) == json.dumps(want[1])
    else:
        assert got == want
