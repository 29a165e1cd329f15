"""xml-inline with `value_parser_group`: the tuples of `findall` read in place (`xml_inline._select_rows`) give
what the general reading gives (each match's key, value and group by `finditer`, then `_select_values`),
values, duplicate keys (`merge_duplicates`) and parser errors alike, on DeepSeek V3.2's DSML pattern and a
pattern whose group text may name no parser. `_select_small` (`xml_inline._select_reader`, the reading a field's
parse makes of a short body whose value parsers are the usual ones: DeepSeek V3.2's) gives what `parse_xml_inline`
gives, and is set only where it may be."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates.content import get_content_parser
from hf_response_templates.content.xml_inline import _select_values, parse_xml_inline

DSML = ('<｜DSML｜parameter name="(?P<key>[^"]+)"(?: string="(?P<string>true|false)")?>(?P<value>.*?)'
        "</｜DSML｜parameter>")
OTHER = r'<p name="(?P<key>[^"]+)"(?: string="(?P<string>[a-z]*)")?>(?P<value>.*?)</p>'


def _args(pattern: str, merge: bool) -> dict:
    raw = {
        "tag_pattern": pattern,
        "value_parser_group": "string",
        "value_parsers": {"true": {"name": "text", "args": {"strip": False}}, "false": "json"},
        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
    }
    if merge:
        raw["merge_duplicates"] = True
    return dict(get_content_parser("xml-inline").compile_args(raw, "tool_calls"))


def _reference(text: str, args: dict) -> object:
    """The general reading: every match by `finditer`, then `_select_values`."""
    group, parsers, _ = args["_select"]
    matches = list(args["tag_pattern"].finditer(text))
    found = [m.group("key", "value", group) for m in matches]
    try:
        return _select_values(found, matches, parsers, args.get("value_parser"), args.get("merge_duplicates", False))
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc), str(exc)


def _ours(text: str, args: dict) -> object:
    try:
        return parse_xml_inline(text, args)
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc), str(exc)


def _tags(pattern: str, open_: str, close: str, params: list, pad: int) -> str:
    """The tags of `params` ((key, group text or None, value) each), one a line, then `pad` spaces."""
    parts = []
    for key, string, value in params:
        if pattern is DSML and string not in (None, "true", "false"):
            string = None
        attr = "" if string is None else f' string="{string}"'
        parts.append(f'{open_} name="{key}"{attr}>{value}{close}')
    return "\n".join(parts) + " " * pad


_value = st.sampled_from(["Paris", "3", " 3 ", "", "[1, 2]", '{"a": 1}', "true", "x\ny", '"q"', "{bad", "null"])
_string = st.sampled_from([None, "true", "false", "", "other"])
_key = st.sampled_from(["city", "days", "a", "city"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_key, _string, _value), max_size=8), st.booleans(), st.booleans(), st.integers(0, 300))
def test_select_rows_equal_general_reading(params, merge, dsml, pad):
    for pattern, open_, close in ((DSML, "<｜DSML｜parameter", "</｜DSML｜parameter>"), (OTHER, "<p", "</p>")):
        if pattern is DSML and not dsml:
            continue
        args = _args(pattern, merge)
        text = _tags(pattern, open_, close, params, pad)  # (past 256 characters: the bounded search first)
        assert _ours(text, args) == _reference(text, args), text


def test_select_rows_is_taken_for_dsml():
    args = _args(DSML, False)
    assert args["_select"][2] is not None  # (the group's column: the in-place reading)
    text = ('<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>')
    assert parse_xml_inline(text, args) == {"city": "Paris", "days": 3}


def _shipped_args(pattern: str, parsers: dict | None = None, default: object = "json-or-text", merge: bool = False) -> dict:
    """DeepSeek V3.2's value parsers (text as it is, else JSON or text), or others."""
    raw = {
        "tag_pattern": pattern,
        "value_parser_group": "string",
        "value_parsers": parsers or {"true": {"name": "text", "args": {"strip": False}}},
    }
    if default == "json-or-text":
        raw["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    elif default is not None:
        raw["value_parser"] = default
    if merge:
        raw["merge_duplicates"] = True
    return dict(get_content_parser("xml-inline").compile_args(raw, "tool_calls"))


_SURE = [  # (value_parsers, value_parser) of the parsers `_select_reader` reads with
    (None, "json-or-text"),
    ({"true": {"name": "text", "args": {"strip": False}}}, None),
    ({"true": "text", "false": {"name": "json", "args": {"allow_non_json": True}}}, {"name": "text", "args": {"strip": False}}),
    ({"other": "text"}, "json-or-text"),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_key, _string, _value), max_size=8), st.sampled_from(_SURE), st.booleans(),
       st.integers(0, 300))
def test_select_small_equals_parse_xml_inline(params, sure, dsml, pad):
    parsers, default = sure
    for pattern, open_, close in ((DSML, "<｜DSML｜parameter", "</｜DSML｜parameter>"), (OTHER, "<p", "</p>")):
        if pattern is DSML and not dsml:
            continue
        args = _shipped_args(pattern, parsers, default)
        limit, read = args["_select_small"]
        text = _tags(pattern, open_, close, params, pad)
        if len(text) > limit:  # (the field's parse reads only the bodies up to `limit` so)
            text = text[:limit]
        try:
            got = dict(read(text))
        except Exception as exc:  # noqa: BLE001 - compared
            got = type(exc), str(exc)
        assert got == _ours(text, args) == _reference(text, args), text


def test_select_small_is_set_only_for_sure_parsers_without_merge():
    assert "_select_small" in _shipped_args(DSML)
    from hf_response_templates.library import get_template

    spec = get_template("deepseek-v3.2")["fields"]["tool_calls"]
    shipped = dict(get_content_parser("xml-inline").compile_args(spec["content_args"], "tool_calls"))
    assert "_select_small" in shipped and shipped["_select_small"][0] > 0
    assert "_select_small" not in _shipped_args(DSML, merge=True)  # (merged values: `_select_rows`)
    assert "_select_small" not in _args(DSML, False)  # ("json" without allow_non_json: a parser of its own)
    assert "_select_small" not in _shipped_args(DSML, {"true": {"name": "text", "args": {"remove_pattern": "x"}}})
    # a group text that names a parser when it is "": no column, no in-place reading
    assert "_select_small" not in _shipped_args(OTHER, {"": "text"})
