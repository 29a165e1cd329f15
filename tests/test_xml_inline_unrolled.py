"""The `re` twin that reads the short bodies (`_plain_small`) of a tag pattern whose lazy value is followed by an optional newline, lookaheads or several ends
(`xml_inline._unrolled`: Qwen3.5's and Qwen3-Coder's arguments) has its value written out as ``[^S]*(?:(?!TAIL)[S]
[^S]*)*``: `findall` and `finditer` must give what the pattern gives by `regex` (the lazy value), on texts made of the
tails' pieces, for the shipped patterns and made-up ones (ends and lookaheads sharing first characters, a lookahead
starting with a newline, no `\\Z`); and the twin is the written-out one only for those shapes."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_response_templates.content import get_content_parser
from hf_response_templates.library import get_template

_HEAD = r"<parameter=(?P<key>[^>\s]+)>"
_PATTERNS = [
    get_template("qwen3.5")["fields"]["tool_calls"]["content_args"]["tag_pattern"],
    get_template("qwen3-coder")["fields"]["tool_calls"]["content_args"]["tag_pattern"],
    _HEAD
    + r"\n?(?P<value>.*?)\n?(?:</parameter>|(?=<parameter=))",  # (no \Z: an unclosed value matches nothing)
    _HEAD + r"(?P<value>.*?)(?:</parameter>|</p>|(?=<p>))",  # (ends and a lookahead of one first character)
    _HEAD
    + r"(?P<value>.*?)(?:</parameter>|(?=\n<parameter=)|(?=;)|\Z)",  # (a lookahead starting with a newline)
    _HEAD + r"\n?(?P<value>.*?)\n?</parameter>",  # (one end after the optional newline)
]
_PIECES = st.sampled_from(
    [
        "<parameter=",
        "<parameter=a>",
        "<parameter=b>\n",
        "</parameter>",
        "</p>",
        "<p>",
        "\n",
        "</function>",
        "<",
        ">",
        "a",
        " ",
        ";",
        "é",
        "\n\n",
        "x\ny",
        "</",
        "=",
        "\u2028",
    ]
)


def _twin(pattern: str):
    """The compiled `re` pattern of the field's `_plain_small` reading."""
    args = get_content_parser("xml-inline").compile_args({"tag_pattern": pattern}, "tool_calls")
    return args["_plain_small"][1].__self__


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_these_shapes_get_the_written_out_twin(pattern):
    twin = _twin(pattern)
    assert "(?P<value>.*?)" not in twin.pattern and "(?!" in twin.pattern


@pytest.mark.parametrize(
    "pattern",
    [
        get_template(n)["fields"]["tool_calls"]["content_args"]["tag_pattern"]
        for n in ("minimax-m2", "glm-4.7", "deepseek-v4", "seed-oss")
    ],
)
def test_a_single_fixed_end_keeps_the_lazy_twin(pattern):
    assert "(?P<value>.*?)" in _twin(pattern).pattern


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(_PATTERNS), st.lists(_PIECES, max_size=24).map("".join))
def test_the_written_out_twin_matches_what_regex_matches(pattern, text):
    twin = _twin(pattern)
    lazy = regex.compile(pattern, regex.DOTALL)
    assert twin.findall(text) == lazy.findall(text), text
    assert [m.span() for m in twin.finditer(text)] == [m.span() for m in lazy.finditer(text)], text
