"""A tool call of the usual transform (`{"type": "function", "function": {"name": "{name}", "arguments":
"{content}"}}`) whose arguments are `xml-inline` tags of the plain shape (`_plain_small`: FunctionGemma's,
Qwen3-Coder's, GLM's, ...; or DeepSeek V3.2's typed tags, `_select_small`) is parsed by `FieldSpec.parse` in one
frame: `parse_xml_inline`'s first test (a body up to the untimed length read as `dict(findall(body))`, or as
`dict(read(body))` by `xml_inline._select_reader`) is made in the field's parse itself
(`template._compile_field`). The value must be the one `parse_xml_inline` gives, then the transform's: compared
here with the same field compiled without its transform (whose parse is `parse_xml_inline` itself), on short and
long bodies, and with every kind of captures.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates import load_template
from hf_response_templates.library import get_template

_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
_NAMES = ["functiongemma", "qwen3-coder", "glm-4.7", "minimax-m2", "seed-oss", "kimi-k3", "deepseek-v3.2"]


def _pair(name: str):
    """`name`'s tool-call field, and the same field without its transform (nor the groups it reads)."""
    raw = get_template(name)
    spec = raw["fields"]["tool_calls"]
    bare = {k: v for k, v in spec.items() if k not in ("transform", "open_pattern", "close_pattern", "open", "close")}
    fields = {"t": {**bare, "open": "<t>", "close": "</t>"}, "content": {"close": "<e>"}}
    plain = load_template({"start_anchor": "<s>", "fields": fields}).by_name["t"]
    return load_template(raw).by_name["tool_calls"], plain


def _limit(field) -> int:
    cells = dict(zip(field.parse.__code__.co_freevars, (c.cell_contents for c in field.parse.__closure__), strict=True))
    return cells["limit"]


@pytest.mark.parametrize("name", _NAMES)
def test_these_calls_read_the_small_bodies_in_their_parse(name):
    # (fails on the code before: the parse called `parse_xml_inline`, and had no `limit`)
    field, _ = _pair(name)
    assert field.parse.__code__.co_freevars.count("limit") == 1 and _limit(field) > 0


_GEMMA = ["k:<escape>v<escape>", "city:<escape>New York<escape>", ",", "a:<escape>", "<escape>", "x", ":", " ",
          "\n", "<", "é"]
_TAGS = ["<parameter=a>1</parameter>", "<parameter=b>\nx\n</parameter>", "<arg_key>k</arg_key>",
         "<arg_value>v</arg_value>", '<parameter name="p">q</parameter>', "<parameter=", "</parameter>", "x", " ",
         "\n", "<", ">"]
#: DeepSeek V3.2's typed tags (`_select_small`: the value parser picked by the `string` group)
_DSML = ['<｜DSML｜parameter name="a" string="true">', '<｜DSML｜parameter name="b" string="false">',
         '<｜DSML｜parameter name="a">', "</｜DSML｜parameter>", " 3 ", '"s"', "[1, 2]", "{bad", "null", ' string="x"']
_CAPTURES = [None, {}, {"name": "f"}, {"name": "f", "other": "o"}, {"other": "o"}]


def _same(field, plain, body: str, captures: dict | None) -> None:
    try:
        want = field.reshape(plain.parse(body, None), captures)
    except Exception as e:  # (the same error, raised by the field's parse too)
        with pytest.raises(type(e)):
            field.parse(body, captures)
        return
    assert field.parse(body, captures) == want


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_NAMES), st.lists(st.sampled_from(_GEMMA + _TAGS + _DSML), max_size=16).map("".join),
       st.sampled_from(_CAPTURES), st.sampled_from([0, 1]))
def test_the_call_parse_equals_parse_xml_inline_then_the_transform(name, body, captures, long):
    field, plain = _pair(name)
    if long:  # (past the untimed length: `parse_xml_inline`'s general path, from the field's parse)
        body = body + " " * (_limit(field) + 1 - len(body)) + body
    _same(field, plain, body, captures)


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("body", ["", "k:<escape>v<escape>,days:<escape>3<escape>", "<parameter=a>1</parameter>",
                                  "<arg_key>k</arg_key><arg_value>v</arg_value>", "k:<escape>v<escape>" * 40,
                                  '<｜DSML｜parameter name="a" string="true"> x </｜DSML｜parameter>'
                                  '<｜DSML｜parameter name="b" string="false"> [1] </｜DSML｜parameter>'
                                  '<｜DSML｜parameter name="c">{bad </｜DSML｜parameter>'])
@pytest.mark.parametrize("captures", _CAPTURES)
def test_the_call_parse_of_each_shape(name, body, captures):
    field, plain = _pair(name)
    _same(field, plain, body, captures)
