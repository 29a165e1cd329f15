"""xml-inline bodies parse in linear time (issue: a tool call full of unclosed `<parameter=x>` tags was
quadratic with the shipped qwen3-coder `tag_pattern`), with exactly the matches of `finditer`."""

from __future__ import annotations

import time

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from hf_response_templates import get_template, parse_response
from hf_response_templates.content import get_content_parser
from hf_response_templates.content.xml_inline import _bounded_matches, _literal_chain, _search_bounds

QWEN_TAG = get_template("qwen3-coder")["fields"]["tool_calls"]["content_args"]["tag_pattern"]
GLM_TAG = get_template("glm-4.6")["fields"]["tool_calls"]["content_args"]["tag_pattern"]
#: the Qwen tag pattern without the ends a model may leave out (a value closed by `</parameter>` only)
CLOSED_TAG = r"<parameter=(?P<key>[^>\s]+)>\n?(?P<value>.*?)\n?</parameter>"
PATTERNS = [QWEN_TAG, GLM_TAG, r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", r"(?P<key>\w+)=(?P<value>[^;]*);",
            r"<p (?P<key>\w+)>(?P<value>.*?)(?:</p>|<end>)", CLOSED_TAG,
            r"<p (?P<key>\w+)>(?P<value>.*?)(?:</p>|(?=<p )|(?=<end>))"]


def test_literal_chains_of_the_shipped_patterns():
    # a value ends at `</parameter>`, or where the next tag or the call's body begins or ends (`\Z`)
    assert _literal_chain(regex.compile(QWEN_TAG, regex.DOTALL)) == (("<parameter=", ">"), True, False)
    assert _literal_chain(regex.compile(CLOSED_TAG, regex.DOTALL)) == (("<parameter=", ">", "</parameter>"), True, True)
    # ends that are fixed texts or lookaheads at one: matches end at or before one of them
    assert _literal_chain(regex.compile(PATTERNS[-1], regex.DOTALL)) == (("<p ", ">"), True, ("</p>", "<p ", "<end>"))
    assert _literal_chain(regex.compile(GLM_TAG, regex.DOTALL)) == (
        ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"), True, True)
    # assertions may look past a match's end: no bounds for them
    for source in (r"<a>(?P<key>x)(?P<value>.*?)</a>$", r"(?<=;)<a>(?P<key>x)(?P<value>.*?)</a>",
                   r"<a>(?P<key>\w+)(?=!)(?P<value>.*?)</a>", r"(?i)<a>(?P<key>x)(?P<value>.*?)</a>",
                   # only lookaheads at fixed text and \Z may end a match
                   r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|(?<=!))", r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|\b)",
                   r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|(?!b))", r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|(?=b+))",
                   r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|$)", r"<a>(?P<key>x)(?P<value>.*?)(?:</a>|(?=<a>))x"):
        assert _literal_chain(regex.compile(source, regex.DOTALL)) is None, source


PIECES = ["<parameter=", "x>", "a", "\n", "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
          " ", "<k>", "</k>", "<", ">", "</", "k=", "v;", "<p ", "<end>", "</p>"]


@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(PATTERNS))
def test_bounded_matches_are_the_finditer_matches(pieces: list[str], source: str) -> None:
    pattern = regex.compile(source, regex.DOTALL)
    text = "".join(pieces)
    expected = [(m.span(), m.groups()) for m in pattern.finditer(text)]
    chain = _literal_chain(pattern)
    assert chain is not None
    bounds = _search_bounds(text, chain)
    if bounds is None:
        assert expected == []
        return
    last_start, end = bounds
    assert [(m.span(), m.groups()) for m in pattern.finditer(text, 0, end)] == expected
    if chain[1]:
        got = _bounded_matches(pattern, text, chain[0][0], last_start, end, 1.0)
        assert [(m.span(), m.groups()) for m in got] == expected
    assert all(m.start() <= last_start for m in pattern.finditer(text))


def _parse_seconds(template: dict, text: str) -> float:
    best = float("inf")
    for _ in range(5):  # CPU time, best of 5: other processes on a shared machine do not count
        start = time.process_time()
        parse_response(text, template, prefix="", strict=False)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("name, call", [
    # unclosed tags only; unclosed tags after a closed one; glm keys that never close before a value
    ("qwen3-coder", lambda n: "<tool_call><function=f>" + "<parameter=x>1\n" * n + "</function></tool_call>"),
    ("qwen3-coder", lambda n: "<tool_call><function=f><parameter=a>1</parameter>" + "<parameter=x>1\n" * n
     + "</function></tool_call>"),
    ("glm-4.6", lambda n: "<tool_call>f\n<arg_key>a</arg_key> " + "<arg_key>k\n" * n
     + "<arg_value>v</arg_value></tool_call>"),
])
def test_xml_inline_scales_linearly_on_unclosed_tags(name, call):
    template = get_template(name)
    costs = {}
    for n in (100, 1_000, 10_000):
        text = call(n) * 10 + "<|im_end|>"
        costs[n] = _parse_seconds(template, text) / len(text)
    # cost per character may not grow more than 2x from 1k to 10k tags (it was ~n: 30 s for 3,000 x 10). 100 tags
    # only warms up: short bodies take a cheaper path (a stdlib `re` twin of the tag pattern), so the step from
    # 100 to 1k is a one-time change of path, not growth
    assert costs[10_000] < 2 * costs[1_000] + 1e-7, costs


@pytest.mark.parametrize("name", ["qwen3-coder", "qwen3.5"])
def test_shipped_qwen_xml_values_end_at_the_next_tag_when_the_model_left_out_the_close(name: str) -> None:
    text = "<tool_call><function=f>" + "".join(f"<parameter=x{i}>{i}\n" for i in range(3000)) + "</function></tool_call><|im_end|>"
    message = parse_response(text, get_template(name), prefix="")
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {f"x{i}": str(i) for i in range(3000)}}}]
    # a closed value keeps everything up to its close, and the last value ends with the call
    text = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx < y\n</function>\n</tool_call>"
    assert parse_response(text, get_template(name), prefix="")["tool_calls"][0]["function"]["arguments"] == {
        "a": "1", "b": "x < y"}


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_an_unclosed_value_is_scanned_once(n: int) -> None:
    # a 100k-character value without `</parameter>`, then unclosed tags, then a pattern whose ends never come:
    # cost per character stays flat (the matches are those of a plain finditer)
    parser = get_content_parser("xml-inline")
    bodies = ["<parameter=x>" + "a" * n + "<parameter=y>1</parameter>",
              "<parameter=x>1\n" * (n // 15)]
    costs = []
    # tags whose end (`</q>` or a lookahead at `<end>`) never comes after them: a plain finditer is quadratic
    never = r"<q (?P<key>\w+)>(?P<value>.*?)(?:</q>|(?=<end>))"
    assert not regex.findall(never, "<end>" + "<q k>v" * 50, flags=regex.DOTALL)
    for pattern, body in [(QWEN_TAG, bodies[0]), (QWEN_TAG, bodies[1]), (never, "<end>" + "<q k>v" * (n // 6))]:
        args = parser.compile_args({"tag_pattern": pattern}, "f")
        expected = {} if pattern is never else {
            m.group("key"): m.group("value") for m in regex.finditer(pattern, body, flags=regex.DOTALL)}
        assert parser.parse(body, args) == expected
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            parser.parse(body, args)
            best = min(best, time.process_time() - start)
        costs.append(best / len(body))
    _COSTS[n] = costs
    # cost per character at 100k at most 15x that at 1k and 5x that at 10k: a quadratic scan gives 100x / 10x,
    # while a linear one measured 1.8-3.8x at 100k on a loaded CI machine (cache effects of a 100k-character
    # body). 10k is compared with 10k's neighbour on the same path, not with 1k: a 1k body of short tags takes
    # the stdlib `re` twin, so 1k -> 10k is a one-time change of path (~50 -> ~190 ns a character, 3.7x), which
    # two suites running at once on two CPUs pushed past the old 5x bound once
    if len(_COSTS) == 3:
        for i in range(3):
            assert _COSTS[100_000][i] < 15 * _COSTS[1_000][i] + 2e-8, _COSTS
            assert _COSTS[100_000][i] < 5 * _COSTS[10_000][i] + 2e-8, _COSTS


_COSTS: dict[int, list[float]] = {}


def test_long_bodies_with_value_parsers_and_merging_use_the_same_matches():
    parser = get_content_parser("xml-inline")
    args = parser.compile_args({"tag_pattern": CLOSED_TAG, "merge_duplicates": True,
                                "value_parser": {"name": "json"}}, "f")
    body = "<parameter=n>1</parameter>" * 200 + "<parameter=n>2</parameter>" + "<parameter=m>" * 500
    assert parser.parse(body, args) == {"n": [1] * 200 + [2]}


@given(st.lists(st.sampled_from(PIECES), min_size=30, max_size=80), st.sampled_from(PATTERNS[:3]), st.booleans())
def test_parse_of_long_bodies_equals_a_plain_finditer(pieces: list[str], source: str, merge: bool) -> None:
    parser = get_content_parser("xml-inline")
    args = parser.compile_args({"tag_pattern": source, "merge_duplicates": merge}, "f")
    text = "".join(pieces) + " " * 130  # past the length from which the bounded search is used
    expected: dict = {}
    for m in regex.finditer(source, text, flags=regex.DOTALL):
        key, value = m.group("key"), m.group("value") or ""
        if merge and key in expected:
            expected[key] = (expected[key] if isinstance(expected[key], list) else [expected[key]]) + [value]
        else:
            expected[key] = value
    assert parser.parse(text, args) == expected


try:
    from transformers.utils import chat_parsing as native
except ImportError:  # Transformers 4.x
    native = None


@pytest.mark.skipif(native is None, reason="needs the native parser (Transformers 5.x)")
@given(st.lists(st.sampled_from([p for p in PIECES if p not in ("<end>", "<p ", "</p>")]), min_size=20, max_size=80),
       st.sampled_from(PATTERNS[:3]), st.booleans())
def test_long_xml_inline_bodies_parse_as_native(pieces: list[str], source: str, merge: bool) -> None:
    template = {"start_anchor": "<s>", "fields": {"x": {
        "open": "<|x|>", "close": "<|end|>", "content": "xml-inline",
        "content_args": {"tag_pattern": source, "merge_duplicates": merge}}}}
    text = "<|x|>" + "".join(pieces) + " " * 130 + "<|end|>"  # the pieces cannot spell either delimiter
    assert parse_response(text, template, prefix="") == native.parse_response(text, template, prefix="")
