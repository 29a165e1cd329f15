"""`\\d` on the `re` route (`regex_leads.regex_digits`, `stdlib_equivalent(digits=True)`, issue 19): a delimiter
regex with `\\d` (Kimi K2's and K2 Thinking's call open, `functions.NAME:IDX`) gets an `re` twin in which `\\d` is
written out as the code points `regex` reads as digits (its own Unicode tables: `re`'s `\\d` follows Python's, which
differ), so the one-shot plan matches it with `re` (~2x cheaper a match, ~4x a `groupdict`). The class is every
digit `regex` matches and nothing else, the twins match what `regex` does, and the messages are those of a template
compiled without the twin."""

from __future__ import annotations

import json
import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oneshot_equals_streaming import TEMPLATES
from test_regex_safety import SHIPPED

from hf_response_templates import delimiters, parse_response
from hf_response_templates.delimiters import compile_regex
from hf_response_templates.regex_leads import regex_digits, stdlib_equivalent
from hf_response_templates.template import _compile

#: Digits of several scripts: ASCII, Arabic-Indic, Devanagari, fullwidth, Chakma, and Garay (U+10D40, Unicode 16:
#: a digit for `regex` that Python 3.11's `re` does not read as one), with look-alikes that are not digits
#: (superscript two, a circled one, a Roman numeral, a fraction).
_DIGITS = ["0", "7", "٣", "३", "７", "\U00011136", "\U00010d40"]
_NOT_DIGITS = ["²", "①", "Ⅻ", "½", "a", "_", ":", " "]


def test_the_class_is_every_digit_regex_reads_and_nothing_else():
    every = "".join(map(chr, range(0x110000)))  # (made otherwise than `regex_digits` makes its text)
    ours = re.compile(f"[{regex_digits()}]")
    assert [m.start() for m in ours.finditer(every)] == [m.start() for m in regex.finditer(r"\d", every)]
    assert len(regex_digits()) > 100  # (not only 0-9)


def test_digits_take_the_re_route_only_when_asked_and_not_under_an_ascii_flag():
    assert stdlib_equivalent(r"\d+") is None  # (the default: `regex`'s)
    for source in (r"\d+", r"[\d,\s]*x", r"[^\d]+", r"a(?::\d+)?b"):
        assert stdlib_equivalent(source, digits=True) is not None, source
    for source in (r"(?a)\d+", r"(?a:\d)+", r"(?ai)\d", r"\D", r"\w\d", r"[\D]"):
        assert stdlib_equivalent(source, digits=True) is None, source


_WITH_DIGITS = [(w, s) for w, s in SHIPPED if "\\d" in s and stdlib_equivalent(s, digits=True) is not None]
_OWN = [
    ("class", r"[\d,\s]+:\d"),
    ("negated", r"x[^\d\s]+\d*y"),
    ("counted", r"\d{2}-\d{1,3}"),
    ("opt", r"a\d?\d?b"),
]


def test_the_kimi_call_opens_have_a_twin():
    wheres = [w for w, _ in _WITH_DIGITS]
    assert any(w.startswith("kimi-k2.") for w in wheres) and any(
        w.startswith("kimi-k2-thinking.") for w in wheres
    )
    for name in ("kimi-k2", "kimi-k2-thinking"):
        (d,) = [d for d in delimiters_of(name) if "\\d" in d.source]
        assert d.fast is not d.pattern and d.fast.__class__ is re.Pattern


def delimiters_of(name: str) -> list:
    from hf_response_templates import load_template

    tpl = load_template(TEMPLATES[name])
    return [d for f in tpl.fields for d in (f.open, f.close) if d is not None and d.literals is None]


def _fragments(source: str) -> list[str]:
    pieces = [p for p in regex.split(r"[\\()\[\]|?*+{}^$.=!<>:]+", source) if p and p not in ("d", "s")]
    return [*pieces, *_DIGITS, *_DIGITS, *_NOT_DIGITS, ":", ",", "-", "\n", "\xa0", "\x1c", "x", "y", "b"]


@pytest.mark.parametrize("where, source", [*_WITH_DIGITS, *_OWN], ids=[w for w, _ in [*_WITH_DIGITS, *_OWN]])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_digit_twin_matches_what_regex_does(where, source, data):
    fast, slow = stdlib_equivalent(source, digits=True), compile_regex(source)
    text = "".join(data.draw(st.lists(st.sampled_from(_fragments(source)), max_size=30)))
    for pos in range(len(text) + 1):
        a, b = fast.search(text, pos), slow.search(text, pos)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
        a, b = fast.match(text, pos), slow.match(text, pos)
        assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict()))


# ------------------------------------------------------------------ the messages: as without the twin

_ANCHOR = "<|im_assistant|>assistant<|im_middle|>"


@pytest.fixture(scope="module")
def without_twin():
    """Each Kimi K2 template compiled with no `\\d` twin (its call open matched by `regex`, as before)."""
    real = delimiters.stdlib_equivalent
    mp = pytest.MonkeyPatch()
    mp.setattr(delimiters, "stdlib_equivalent", lambda source, digits=False: real(source))
    try:
        out = {
            name: _compile(json.loads(json.dumps(TEMPLATES[name])))
            for name in ("kimi-k2", "kimi-k2-thinking")
        }
    finally:
        mp.undo()
    for tpl in out.values():
        (d,) = [d for f in tpl.fields for d in (f.open, f.close) if d is not None and "\\d" in d.source]
        assert d.fast is d.pattern
    return out


def _call(name: str, idx: str, args: str) -> str:
    return f"<|tool_call_begin|>functions.{name}:{idx}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


@pytest.mark.parametrize("name", ["kimi-k2", "kimi-k2-thinking"])
@pytest.mark.parametrize("idx", ["0", "12", "٣", "\U00010d40", "7٣", "²", "", "1 ", "①"])
def test_a_call_index_of_any_digits_gives_the_message_regex_gives(name, idx, without_twin):
    text = (
        "Hi<|tool_calls_section_begin|>"
        + _call("f", idx, '{"a": 1}')
        + _call("g", "1", "{}")
        + ("<|tool_calls_section_end|><|im_end|>")
    )
    got = parse_response(text, TEMPLATES[name], prefix=_ANCHOR, strict=False)
    assert got == parse_response(text, without_twin[name], prefix=_ANCHOR, strict=False)
    if idx and all(c in _DIGITS for c in idx):  # (digits: the call is read)
        assert [c["function"]["name"] for c in got["tool_calls"]] == ["f", "g"]


_PIECES = [
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<|im_end|>",
    "functions.f",
    "functions.get_weather",
    "g",
    ":",
    *_DIGITS,
    *_NOT_DIGITS,
    '{"a": 1}',
    "{}",
    "[1]",
    "\n",
    "<think>",
    "</think>",
    *(f"<|tool_call_begin|>functions.f:{c}" for c in (*_DIGITS, *_NOT_DIGITS[:3])),
    *(f"{c}<|tool_call_argument_begin|>{{}}<|tool_call_end|>" for c in (*_DIGITS, *_NOT_DIGITS[:3])),
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["kimi-k2", "kimi-k2-thinking"]),
    st.lists(st.sampled_from(_PIECES), max_size=18).map("".join),
    st.sampled_from([_ANCHOR, ""]),
)
def test_messages_equal_those_without_the_twin(without_twin, name, text, prefix):
    got = parse_response(text, TEMPLATES[name], prefix=prefix, strict=False)
    assert got == parse_response(text, without_twin[name], prefix=prefix, strict=False)
