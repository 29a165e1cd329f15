"""Every bad template gives a `TemplateError` (naming field and key) before anything expensive runs: long
literals compile, counted repeats and template sizes are checked before compiling, deeply nested data is
rejected without recursion (issue: RecursionError at 495-character literals and depth 500-950,
MemoryError after ~30 s for `a{100000000}`, 12-51 s for 63 fields x 64 literals)."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, TemplateError, load_template, parse_response
from hf_response_templates import delimiters as _delimiters
from hf_response_templates import template as _template
from hf_response_templates.delimiters import MAX_REGEX_EXPANSION, compile_regex, regex_expansion
from hf_response_templates.regex_leads import _nested_prefixes


def tpl(fields, **top):
    return {"start_anchor": "<s>", "fields": fields, **top}


def _error(spec) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    return info.value


def nested_list(depth: int) -> object:
    value: object = "v"
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int) -> object:
    value: object = "v"
    for _ in range(depth):
        value = {"k": value}
    return value


# --------------------------------------------------------------------------- long literals


@pytest.mark.parametrize("length", [495, 700, 1024])
def test_literals_up_to_the_limit_load_and_are_held_back_while_incomplete(length):
    literal = "<" + "x" * (length - 2) + ">"
    spec = tpl({"t": {"open": literal, "close": "</t>"}, "content": {}})
    raw = "hi " + literal + "tool</t> bye"
    assert parse_response(raw, spec, prefix="") == {"content": "hi\nbye", "t": "tool"}
    parser = ResponseParser(spec, "")
    events = []
    for i in range(0, len(raw), 7):  # the literal arrives in pieces: held back, never streamed as content
        events += parser.feed(raw[i : i + 7])
    message, final = parser.finalize()
    assert message == {"content": "hi\nbye", "t": "tool"}
    streamed = "".join(e.get("text", "") for e in events + final if e["type"] == "region_chunk" and e["field"] == "content")
    assert "x" not in streamed


@given(st.text(alphabet="abc", min_size=2, max_size=12), st.text(alphabet="abc", max_size=14))
def test_flat_prefix_regex_matches_exactly_the_proper_prefixes_at_the_end(literal, text):
    search = re.compile("(?:" + _nested_prefixes(literal) + r")\Z").search
    expected = next((i for i in range(len(text)) if literal.startswith(text[i:]) and len(text) - i < len(literal)), None)
    m = search(text)
    assert (m.start() if m else None) == expected


# --------------------------------------------------------------------------- counted repeats


@pytest.mark.parametrize("source, size", [
    ("a{1000}", 1000), ("a{100000000}", 100_000_000), ("(?:a{100}){100}", 10_100), ("a{0,500}", 500),
    ("a{7,}", 7), ("a{,7}", 7), (r"\{3\}", 3), (r"\p{L}{5}", 5), ("[]a]{10}", 10), ("x{e<=1}", 7),
    ("<tool_call>\\s*<function=(?P<name>[^>\\s]+)>", 31),
])
def test_regex_expansion_bounds_what_counted_repeats_write_out(source, size):
    assert regex_expansion(source) == size


@pytest.mark.parametrize("source, longest", [
    ("(?:ab|cd){50}", "ab" * 50), ("(a(b{3}){4}){5}", ("a" + "bbb" * 4) * 5), ("[a-z]{20}x?", "q" * 20 + "x"),
    ("(?P<n>\\d{3})-\\d{4}", "123-4567"),
])
def test_regex_expansion_is_at_least_the_longest_match(source, longest):
    assert regex.fullmatch(source, longest)
    assert regex_expansion(source) >= len(longest)


@pytest.mark.parametrize("source", ["a{100000000}", "(?:a{1000}){1000}", "(?:(?:a{100}){100}){100}", "a{1000000,}"])
def test_huge_counted_repeats_are_rejected_before_compiling(source, monkeypatch):
    calls = []
    real = regex.compile
    monkeypatch.setattr(_delimiters.regex, "compile", lambda *a, **k: calls.append(a) or real(*a, **k))
    with pytest.raises(regex.error, match="counted repeats expand"):
        compile_regex(source)
    err = _error(tpl({"t": {"open_pattern": source, "close": "</t>"}}))
    assert err.field == "t" and err.key == "open_pattern"
    err = _error(tpl({"t": {"open": "<t>", "content": "xml-inline",
                            "content_args": {"tag_pattern": "<(?P<key>a)>(?P<value>" + source + ")"}}}))
    assert err.field == "t" and err.key == "content_args.tag_pattern"
    assert not [a for a in calls if source in a[0]]  # never handed to the compiler


def test_a_repeat_within_the_limit_still_compiles():
    assert compile_regex(f"a{{{MAX_REGEX_EXPANSION}}}").match("a" * MAX_REGEX_EXPANSION)


# --------------------------------------------------------------------------- template size


def test_many_literals_are_rejected_before_compiling(monkeypatch):
    built = []
    monkeypatch.setattr(_template, "Watch", lambda ds: built.append(ds))
    spec = tpl({f"f{i}": {"open": [f"<t{i}_{j}_" + "x" * 20 for j in range(64)], "close": "</t>"} for i in range(63)})
    err = _error(spec)
    assert err.key == "open" and err.field is not None and "literal delimiters" in str(err)
    assert built == []


def test_total_regex_text_is_bounded():
    spec = tpl({f"f{i}": {"open_pattern": f"<t{i}>" + "(?:ab|c)" * 500, "close": "</t>"} for i in range(10)})
    err = _error(spec)
    assert err.key == "open_pattern" and "regexes" in str(err)
    spec = tpl({f"f{i}": {"open_pattern": f"<t{i}>a{{60000}}", "close": "</t>"} for i in range(4)})
    assert "counted repeats" in str(_error(spec))
    spec = tpl({f"f{i}": {"open_pattern": f"<t{i}>a{{60000}}", "close": "</t>"} for i in range(3)})
    assert len(load_template(spec).fields) == 3


def test_templates_at_the_bounds_load():
    per_field = _template.MAX_DELIMITER_LITERALS // 64 - 1  # the close is a literal too
    fields = {f"f{i}": {"open": [f"<{i}_{j}>" for j in range(per_field)], "close": "</t>"} for i in range(63)}
    assert len(load_template(tpl({**fields, "content": {}})).fields) == 64
    one_more = {**fields, "content": {"close": "<end>"}, "f0": {"open": [f"<0_{j}>" for j in range(20)], "close": "</t>"}}
    assert "literal delimiters" in str(_error(tpl(one_more)))


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [65, 500, 700, 950, 5000])
@pytest.mark.parametrize("where", ["defaults", "transform", "content_args", "field", "fields"])
def test_deeply_nested_data_is_a_template_error(depth, where):
    deep_list, deep_dict = nested_list(depth), nested_dict(depth)
    spec = {
        "defaults": tpl({"c": {}}, defaults={"x": deep_list}),
        "transform": tpl({"a": {"open": "<a>", "transform": deep_dict}}),
        "content_args": tpl({"a": {"open": "<a>", "content": "json", "content_args": {"unquoted_keys": deep_list}}}),
        "field": tpl({"a": deep_list}),
        "fields": {"start_anchor": "<s>", "fields": deep_dict},
    }[where]
    err = _error(spec)
    assert "nested more than" in str(err)
    if where in ("defaults", "transform", "content_args"):
        assert err.key == where and err.field == (None if where == "defaults" else "a")


def test_nesting_within_the_limit_loads():
    spec = tpl({"c": {}}, defaults={"x": nested_list(_template.MAX_DEPTH - 3)})
    assert load_template(spec).defaults["x"] == nested_list(_template.MAX_DEPTH - 3)


def test_too_many_values_is_a_template_error():
    err = _error(tpl({"c": {}}, defaults={"x": list(range(_template.MAX_NODES + 1))}))
    assert "more than" in str(err) and "values" in str(err)
