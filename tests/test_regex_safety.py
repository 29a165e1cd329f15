"""The static regex-safety check (`regex_safety.backtracking_degree`) and what the engine does with it (issue 19):
hostile patterns are unbounded (so they keep `regex_timeout`), every shipped pattern is bounded (so it runs
without the timeout's clock calls on short texts), and the `re` route matches exactly what `regex` does."""

from __future__ import annotations

import json
import sys

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from strategies import CATASTROPHIC

from hf_response_templates import load_template
from hf_response_templates.delimiters import UNTIMED_WORK, compile_regex, untimed_spans
from hf_response_templates.library import templates_dir
from hf_response_templates.regex_leads import _REGEX_SPACE, stdlib_equivalent
from hf_response_templates.regex_safety import (
    _SPACE,
    MAX_DEGREE,
    backtracking_degree,
    bare_braces,
    tolerant_parse,
    unsafe_reason,
)


def _patterns(node: object, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and k.endswith("pattern"):
                out.append((f"{path}.{k}", v))
            else:
                _patterns(v, f"{path}.{k}", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _patterns(v, f"{path}[{i}]", out)


def shipped_patterns() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(templates_dir().glob("*.json")):
        _patterns(json.loads(path.read_text(encoding="utf-8")), path.stem, out)
    return out


SHIPPED = shipped_patterns()


def test_the_shipped_templates_have_patterns():
    assert len(SHIPPED) > 60  # the walk finds delimiter, anchor and tag patterns


@pytest.mark.parametrize("where, source", SHIPPED, ids=[w for w, _ in SHIPPED])
def test_every_shipped_pattern_is_proven_bounded(where, source):
    degree = backtracking_degree(source)
    assert degree is not None, unsafe_reason(source)
    assert 0 <= degree <= MAX_DEGREE
    match_span, search_span = untimed_spans(source)
    assert match_span >= 4096 and search_span >= 255  # short responses run without the timeout's clock calls


def test_every_shipped_pattern_is_linear():
    """Issue 19: no shipped pattern has two loops that can compete for the same characters (degree 2:
    quadratic per match attempt). The six that had are rewritten (`test_linear_patterns.py`)."""
    assert [where for where, source in SHIPPED if backtracking_degree(source) not in (0, 1)] == []


HOSTILE = [
    r"(a+)+$",
    r"(a|a)*",
    r"(?:a|a){30}b",  # a counted repeat of overlapping alternatives: 2**30 ways to fail
    r"(\w+\s?)*$",
    r"(.*a){12}",
    r"(a*)*",
    r"^(\s*)*$",
    r"((ab)*)*",
    r"(a|ab)*c",
    r"(?:a+){2,}",
    r"(x+x+)+y",
    r"(\d+)*x",
    r"([a-z]+)*$",
    r"(a?){20}a{20}",
    r"(.*?,){11}P",
    r".*a.*b.*c",  # three loops over the same characters: cubic per attempt
    r"\s*\s*\s*x",
    r"(?:(?=\w+x)\w)*",  # a lookahead with a loop, run once per iteration
    r"(?=(a+)+)b",  # the nested loops inside a lookahead
    r"(?<=(a+)+)b",
    r"<x>(?:[^<]|<|<(?!/x>))*</x>",  # alternatives overlapping inside a repeat
    r"(?:\s+|\n)*x",
    r"(?P<x>a)(?P=x)*",  # back references: unknown
    r"(a)?(?(1)a|b)+",  # conditional group
    r"(?i)(?:a|A)+",  # case folding: unknown
    r"a{e<=1}+",  # fuzzy matching (`regex`-only): unknown
    r"[[:alpha:]]+",  # POSIX class: unknown
    r"\p{L}+\p{L}+",
    *(source for source, _ in CATASTROPHIC),
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_patterns_are_unbounded_and_stay_timed(source):
    assert backtracking_degree(source) is None
    assert unsafe_reason(source)  # a sentence saying why
    assert untimed_spans(source) == (-1, -1)


SAFE = [
    ("<tool_call>", 0),
    (r"</think>|(?=<tool_call>)", 0),
    (r"\s{0,2}x", 0),  # a small counted repeat is no loop
    (r"\s*x", 1),
    (r"<a>.*?</a>", 1),
    (r"(?P<value>.*?)\n?</parameter>", 1),  # `\n?` is no loop: no competition
    (r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*\s*\(", 1),  # separators keep the loops apart
    (r"(?:<\|python_tag\|>\s*)*(?=\{)", 1),
    (r"[\w.\-]+\s*(?:<arg_key>|</tool_call>)", 1),  # \w and \s never share a character
    (r"(?:ab)*c", 1),
    (r"(?>a+)b", 1),
    (r"(?:a|b)+", 1),  # disjoint alternatives inside a repeat
    (r"<x>(?:[^<]|<(?!/x>))*</x>", 1),
    (r"(?:\s|\n)*x", 1),  # one-character alternatives are one class for both engines
    (r".*a.*b", 2),
    (r"\s*\s*", 2),
    (r"[^<]+?\s*x", 2),
    (r"(.*a){2}", 2),
]


@pytest.mark.parametrize("source, degree", SAFE)
def test_bounded_patterns_and_their_degree(source, degree):
    assert backtracking_degree(source) == degree, unsafe_reason(source)
    match_span, search_span = untimed_spans(source)
    assert match_span ** max(degree, 1) <= UNTIMED_WORK and search_span ** (degree + 1) <= UNTIMED_WORK


def test_the_space_set_is_exactly_regex_s():
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    spaces = {ord(c) for c in regex.findall(r"\s", every)}
    assert {c for lo, hi in _SPACE for c in range(lo, hi + 1)} == spaces
    written = regex.compile(f"[{_REGEX_SPACE}]")
    assert {ord(c) for c in written.findall(every)} == spaces


@pytest.mark.parametrize(
    "source, bare",
    [
        (r"\{", False),
        (r"[^{<]+\{", False),
        (r"a{2,3}", False),
        (r"a{,3}", False),
        (r"[{]", False),
        (r"[]{]", False),
        (r"a{e<=1}", True),
        (r"{", True),
        (r"x|{", True),
        (r"(?:{)", True),
        (r"\p{L}", True),
        (r"[[:alpha:]]", True),
    ],
)
def test_bare_braces(source, bare):
    assert bare_braces(source) is bare


def test_tolerant_parse_takes_a_group_name_twice():
    assert tolerant_parse(r"(?P<name>a)|b(?P<name>c)") is not None
    assert tolerant_parse(r"(?P<name>a)(?P=name)") is None


# --------------------------------------------------------------------------- the `re` route


def _fragments(source: str) -> list[str]:
    """Pieces of text a pattern cares about: its literal runs, and characters where `re` and `regex` differ."""
    pieces = [p for p in regex.split(r"[\\()\[\]|?*+{}^$.=!<>:]+", source) if p]
    return [*pieces, *"<>/=|", "\n", " ", "\t", "\x1c", "\x1f", "\xa0", "\u2003", "\u3000", "a", "Z", "_", "1",
            "é", "\u0301", "٣", "\x00"]


EQUIVALENT = [(w, s) for w, s in SHIPPED if stdlib_equivalent(s) is not None]


def test_most_shipped_patterns_take_the_re_route():
    assert len(EQUIVALENT) >= len(SHIPPED) * 3 // 4


@pytest.mark.parametrize("where, source", EQUIVALENT, ids=[w for w, _ in EQUIVALENT])
@given(data=st.data())
def test_the_re_route_matches_what_regex_does(where, source, data):
    fast, slow = stdlib_equivalent(source), compile_regex(source)
    text = "".join(data.draw(st.lists(st.sampled_from(_fragments(source)), max_size=30)))
    for pos in range(len(text) + 1):
        a, b = fast.search(text, pos), slow.search(text, pos)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.span() == b.span() and a.groups() == b.groups()
        a, b = fast.match(text, pos), slow.match(text, pos)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))


@pytest.mark.parametrize("source", [r"\d+", r"\w+", r"\bx", r"[^\S\n]", r"(?P<a>x)|(?P<a>y)", r"(?<=a\s{0,2})b", r"a{e<=1}"])
def test_patterns_re_reads_otherwise_stay_with_regex(source):
    assert stdlib_equivalent(source) is None


def test_shipped_delimiters_run_untimed_on_short_texts_and_hostile_ones_do_not():
    tpl = load_template(json.loads((templates_dir() / "qwen3-coder.json").read_text(encoding="utf-8")))
    delims = [d for f in tpl.fields for d in (f.open, f.close) if d is not None and d.literals is None]
    assert delims and all(d.untimed_match > 0 and d.untimed_search > 0 for d in delims)
    assert all(d.fast is not d.pattern for d in delims)  # the `re` route
    hostile = load_template({"start_anchor": "<s>", "fields": {"x": {"open_pattern": "(a|aa)+$", "close": "</x>"},
                                                               "content": {}}})
    (d,) = [f.open for f in hostile.fields if f.open is not None]
    assert d.untimed_match == d.untimed_search == -1 and d.fast is d.pattern
