"""Targeted reliability and security tests (issue 7): one test or a few per requirement.

* regex time is bounded (catastrophic patterns in every place a template can put a regex);
* zero-width / non-advancing delimiters are rejected at load time or never loop;
* template limits and "templates are data only";
* hostile model output (controls, surrogates, deep nesting, huge numbers, delimiters split everywhere);
* concurrency and no shared mutable state between messages;
* the error hierarchy and its attributes.

Timing assertions exist only for the catastrophic-regex tests, with a generous bound.
Hangs are caught by running the parse in a daemon thread with a join timeout (`finishes`).
"""

from __future__ import annotations

import builtins
import copy
import json
import random
import threading
import time
from typing import Any

import pytest

from hf_response_templates import (
    RegexTimeoutError,
    ResponseParseError,
    ResponseParser,
    TemplateError,
    load_template,
    parse_response,
)
from hf_response_templates.template import MAX_FIELDS, MAX_LITERAL_LENGTH, MAX_LITERALS, MAX_PATTERN_LENGTH
from hf_response_templates.transform import MAX_TRANSFORM_DEPTH, MAX_TRANSFORM_NODES

SMOL = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}
SMOL_TEXT = (
    '<think>Check the weather.</think>Let me check both cities.\n'
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n'
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Lyon"}}</tool_call><|im_end|>'
)
SMOL_MESSAGE = {
    "role": "assistant",
    "reasoning_content": "Check the weather.",
    "content": "Let me check both cities.",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}},
    ],
}
BOUND = 5.0  # seconds: generous bound for a parse with regex_timeout=0.05
TIMEOUT = 0.05


def tpl(fields: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"start_anchor": "<|im_start|>assistant\n", "fields": fields, **top}


def finishes(fn: Any, seconds: float = 20.0) -> Any:
    """Run `fn` in a daemon thread; fail (instead of hanging the suite) if it does not return in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the caller
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not finish within {seconds} s (an infinite loop or a hang)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def stream(template: Any, chunks: list[str], prefix: str = "", **kw: Any) -> tuple[dict, list[dict], ResponseParser]:
    parser = ResponseParser(template, prefix, **kw)
    events = list(parser.initial_events)
    for c in chunks:
        events += parser.feed(c)
    message, final = parser.finalize()
    return message, events + final, parser


# =========================================================================== catastrophic regex

KILLER = "a" * 30 + "b"  # `(a|aa)+$` on this takes seconds in `regex` (it defuses `(a+)+$`, not this one)


@pytest.mark.parametrize(
    "fields, key, field",
    [
        ({"x": {"open_pattern": "(a|aa)+$", "close": "</x>"}, "content": {}}, "open_pattern", "x"),
        ({"content": {"close_pattern": "(a|aa)+$"}}, "close_pattern", "content"),
        ({"x": {"open": "<x>", "close_pattern": "(a|aa)+$"}}, "close_pattern", "x"),
    ],
    ids=["open_pattern", "implicit-close_pattern", "explicit-close_pattern"],
)
@pytest.mark.parametrize("chunked", [False, True], ids=["one-feed", "char-by-char"])
def test_catastrophic_delimiter_regex_is_bounded_and_keeps_the_text(fields, key, field, chunked):
    template = tpl(fields)
    text = ("<x>" if "x" in fields and "open" in fields["x"] else "") + KILLER
    chunks = list(text) if chunked else [text]
    start = time.monotonic()
    message, events, parser = finishes(lambda: stream(template, chunks, regex_timeout=TIMEOUT))
    assert time.monotonic() - start < BOUND
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["field"] == field and errors[0]["key"] == key
    assert "(a|aa)+$" in errors[0]["error"]
    timeouts = [e for e in parser.errors if isinstance(e, RegexTimeoutError)]
    assert timeouts and timeouts[0].field == field and timeouts[0].key == key and timeouts[0].pattern == "(a|aa)+$"
    assert timeouts[0].timeout == TIMEOUT
    # the text is kept: every character is in some region's chunks
    chunked_text = "".join(e["text"] for e in events if e["type"] == "region_chunk")
    assert KILLER in chunked_text
    assert KILLER in json.dumps(message)


def test_catastrophic_regex_in_parse_response_strict_and_lenient():
    template = tpl({"x": {"open_pattern": "(a|aa)+$", "close": "</x>"}, "content": {}})
    start = time.monotonic()
    with pytest.raises(RegexTimeoutError) as info:
        finishes(lambda: parse_response(KILLER, template, prefix="", regex_timeout=TIMEOUT))
    assert info.value.field == "x" and info.value.key == "open_pattern" and info.value.pattern == "(a|aa)+$"
    assert info.value.text == KILLER and info.value.position == 0
    assert "(a|aa)+$" in str(info.value) and "'x'" in str(info.value)
    message = finishes(lambda: parse_response(KILLER, template, prefix="", regex_timeout=TIMEOUT, strict=False))
    assert message["content"] == KILLER
    assert time.monotonic() - start < 2 * BOUND


def test_a_timed_out_delimiter_is_disabled_but_the_others_keep_working():
    template = tpl({"x": {"open_pattern": "(a|aa)+$", "close": "</x>"}, "t": {"open": "<t>", "close": "</t>"},
                    "content": {"close": "<end>"}})
    message, events, parser = finishes(
        lambda: stream(template, [KILLER, "<t>tool</t>", "after<end>"], regex_timeout=TIMEOUT, regex_budget=BOUND)
    )
    assert message["t"] == "tool"
    assert message["content"].startswith(KILLER)
    assert len([e for e in events if e["type"] == "error"]) == 1


#: Distinct catastrophic open patterns (each its own regex, so each would time out on its own).
MANY_KILLERS = tpl({**{f"x{i}": {"open_pattern": f"(a|aa)+{'b' * i}$", "close": "</x>"} for i in range(2, 12)},
                    "content": {}})


@pytest.mark.parametrize("one_shot", [False, True], ids=["streamed", "parse_response"])
def test_the_total_regex_time_of_a_stream_is_bounded(one_shot):
    # Issue 14 item 2: ten catastrophic patterns cost the stream's budget (4 x regex_timeout by default), not
    # ten timeouts; then every regex is disabled, the text is kept and parsing goes on with the literals.
    text = "a" * 30 + "c"
    start = time.monotonic()
    if one_shot:
        message = finishes(lambda: parse_response(text, MANY_KILLERS, prefix="", regex_timeout=0.2, strict=False))
        with pytest.raises(RegexTimeoutError):
            finishes(lambda: parse_response(text, MANY_KILLERS, prefix="", regex_timeout=0.2))
        elapsed = (time.monotonic() - start) / 2
    else:
        message, events, parser = finishes(lambda: stream(MANY_KILLERS, [text, "</x>more"], regex_timeout=0.2))
        elapsed = time.monotonic() - start
        errors = [e for e in events if e["type"] == "error"]
        assert errors[-1]["key"] == "regex_budget" and errors[-1]["field"] is None
        assert 1 <= len(errors) - 1 < 10  # some patterns timed out, the rest were disabled without a search
        assert "regex budget" in str(parser.errors[-1])
    assert message["content"].startswith(text)
    # 0.8 s of budget; `regex` overshoots its own timeout (up to ~3x on a loaded machine): far below 10 x 0.2 x 3
    assert elapsed < 0.8 * 4 + 1.5, elapsed


def test_a_tag_pattern_that_times_out_is_disabled_for_the_rest_of_the_stream():
    template = tpl({"t": {"open": "<t>", "close": "</t>", "repeats": True, "content": "xml-inline",
                          "content_args": {"tag_pattern": "(?P<key>k)(?P<value>(a|aa)+$)"}}})
    regions = ["<t>k" + KILLER + "</t>"] * 5 + ["<t>kaa</t>"]
    start = time.monotonic()
    message, events, parser = finishes(lambda: stream(template, regions, regex_timeout=TIMEOUT, regex_budget=BOUND))
    elapsed = time.monotonic() - start
    timeouts = [e for e in parser.errors if isinstance(e, RegexTimeoutError)]
    assert len(timeouts) == 1  # searched once; then disabled
    malformed = [e for e in events if e["type"] == "region_malformed"]
    assert len(malformed) == 6 and all("disabled" in e["error"] for e in malformed[1:])
    assert [r["text"] for r in message["unparsed"]] == ["k" + KILLER] * 5 + ["kaa"]  # the text is kept
    assert elapsed < BOUND


def test_catastrophic_start_anchor_pattern_is_bounded():
    """The prefix holds user text: the anchor search must be bounded too."""
    template = {"start_anchor_pattern": "(a|aa)+$", "fields": {"content": {}}}
    start = time.monotonic()
    try:
        finishes(lambda: ResponseParser(template, prefix="a" * 33 + "b", regex_timeout=TIMEOUT),
                 seconds=60)
    except RegexTimeoutError as e:  # an acceptable outcome: a clear error naming the key and pattern
        assert e.key == "start_anchor_pattern" and e.pattern == "(a|aa)+$"
    assert time.monotonic() - start < BOUND



def test_catastrophic_tag_pattern_honours_regex_timeout():
    """xml-inline's tag_pattern runs on model output: bounded by regex_timeout."""
    template = tpl({"t": {"open": "<t>", "close": "</t>", "content": "xml-inline",
                          "content_args": {"tag_pattern": "(?P<key>k)(?P<value>(a|aa)+$)"}}})
    start = time.monotonic()
    message, events, parser = finishes(lambda: stream(template, ["<t>k" + KILLER + "</t>"], regex_timeout=TIMEOUT,
                                                      regex_budget=BOUND))
    elapsed = time.monotonic() - start
    (error,) = parser.errors
    assert isinstance(error, RegexTimeoutError)
    assert error.field == "t" and error.key == "content_args.tag_pattern" and error.text == "k" + KILLER
    assert message["unparsed"][0]["text"] == "k" + KILLER
    assert [e["type"] for e in events][-1] == "region_malformed"
    assert error.timeout == TIMEOUT and elapsed < BOUND


# =========================================================================== zero-width delimiters


@pytest.mark.parametrize("pattern", ["", "a*", "(?:)", "x?", "(?=)", "\\b|", "(a|)", "\\s*", "(?!<)", "\\G"])
@pytest.mark.parametrize("key", ["open_pattern", "close_pattern", "start_anchor_pattern"])
def test_patterns_matching_the_empty_string_are_rejected_at_load_time(pattern, key):
    """Patterns that match the empty string between any two characters would fire everywhere (anchored
    zero-width delimiters, `^`, `$`, lookaheads, are accepted: tests/test_engine_zero_width.py)."""
    if key == "start_anchor_pattern":
        template = {"start_anchor_pattern": pattern, "fields": {"content": {}}}
        field = None
    else:
        template = tpl({"f": {key: pattern, "open": "<f>"} if key == "close_pattern" else {key: pattern}})
        field = "f"
    with pytest.raises(TemplateError) as info:
        load_template(template)
    assert info.value.key == key and info.value.field == field
    assert "empty" in str(info.value)


@pytest.mark.parametrize("pattern", ["^", "$", "\\A", "\\Z"])
def test_a_start_anchor_pattern_must_consume_text(pattern):
    with pytest.raises(TemplateError, match="empty string") as info:
        load_template({"start_anchor_pattern": pattern, "fields": {"content": {}}})
    assert info.value.key == "start_anchor_pattern" and info.value.field is None


def test_tag_pattern_matching_the_empty_string_is_rejected():
    with pytest.raises(TemplateError) as info:
        load_template(tpl({"t": {"open": "<t>", "content": "xml-inline",
                                 "content_args": {"tag_pattern": "(?P<key>\\w*)(?P<value>\\w*)"}}}))
    assert info.value.field == "t" and info.value.key == "content_args.tag_pattern"


ZERO_WIDTH_TEMPLATES = {
    "lookahead implicit close": tpl({
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True},
        "content": {"close_pattern": "(?=<tool_call>)"},
    }),
    "lookahead explicit close": tpl({
        "r": {"open": "<r>", "close_pattern": "(?=<)", "repeats": True}, "content": {},
    }),
    "lookahead open": tpl({
        "tool_calls": {"open_pattern": "(?=<tool_call>)", "close": "</tool_call>", "repeats": True},
        "content": {},
    }),
    "word boundary open and close": tpl({
        "w": {"open_pattern": "\\b", "close_pattern": "\\b", "repeats": True},
    }),
    "lookbehind open, lookahead close": tpl({
        "w": {"open_pattern": "(?<=>)", "close_pattern": "(?=<)", "repeats": True}, "content": {},
    }),
}
ZERO_WIDTH_TEXTS = ["hi<tool_call>x</tool_call>yo<tool_call>z</tool_call>", "<r>a<b<<<", "word word, w0rd.",
                    "<<<>>>" * 5, "", "<", "<tool_call>"]


@pytest.mark.parametrize("name", sorted(ZERO_WIDTH_TEMPLATES))
def test_zero_width_delimiters_never_loop(name):
    template = ZERO_WIDTH_TEMPLATES[name]
    for text in ZERO_WIDTH_TEXTS:
        for chunks in ([text], list(text)):
            message, events, _ = finishes(lambda c=chunks: stream(template, c, trace=True), seconds=10)
            assert len(events) <= 6 * len(text) + 10
            pieces = [e["text"] for e in events if e["type"] in ("region_chunk", "delimiter", "text_dropped")]
            assert "".join(pieces) == text


def test_lookahead_close_splits_content_from_tool_calls():
    template = ZERO_WIDTH_TEMPLATES["lookahead implicit close"]
    text = "Let me check.<tool_call>x</tool_call><tool_call>z</tool_call>"
    one = parse_response(text, template, prefix="")
    assert one == {"content": "Let me check.", "tool_calls": ["x", "z"]}
    message, _, _ = stream(template, list(text))
    assert message == one


# =========================================================================== template limits, data only


def _error(template: Any) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        load_template(template)
    return info.value


def test_too_many_fields():
    e = _error(tpl({f"f{i}": {"open": f"<{i}>"} for i in range(MAX_FIELDS + 1)}))
    assert e.key == "fields" and str(MAX_FIELDS) in str(e)
    load_template(tpl({f"f{i}": {"open": f"<{i}>"} for i in range(MAX_FIELDS)}))  # the limit itself is fine


@pytest.mark.parametrize("key", ["open_pattern", "close_pattern"])
def test_pattern_too_long(key):
    long = "a" * (MAX_PATTERN_LENGTH + 1)
    e = _error(tpl({"f": {"open": "<f>", key: long} if key == "close_pattern" else {key: long}}))
    assert e.field == "f" and e.key == key


def test_anchor_and_tag_patterns_too_long():
    e = _error({"start_anchor_pattern": "a" * (MAX_PATTERN_LENGTH + 1), "fields": {"c": {}}})
    assert e.key == "start_anchor_pattern"
    e = _error(tpl({"t": {"open": "<t>", "content": "xml-inline", "content_args": {
        "tag_pattern": "(?P<key>a)(?P<value>b)" + "c" * MAX_PATTERN_LENGTH}}}))
    assert e.field == "t" and e.key == "content_args.tag_pattern"


def test_literal_limits():
    e = _error(tpl({"f": {"open": "<" * (MAX_LITERAL_LENGTH + 1)}}))
    assert e.field == "f" and e.key == "open"
    e = _error(tpl({"f": {"open": "<f>", "close": [f"</{i}>" for i in range(MAX_LITERALS + 1)]}}))
    assert e.field == "f" and e.key == "close"


def test_transform_too_deep_or_too_big():
    deep: Any = "{content}"
    for _ in range(MAX_TRANSFORM_DEPTH + 1):
        deep = {"a": deep}
    e = _error(tpl({"f": {"open": "<f>", "transform": deep}}))
    assert e.field == "f" and e.key == "transform" and "deep" in str(e)
    big = {f"k{i}": "x" for i in range(MAX_TRANSFORM_NODES + 1)}
    e = _error(tpl({"f": {"open": "<f>", "transform": big}}))
    assert e.field == "f" and e.key == "transform"


def test_deeply_nested_template_data_is_a_template_error():
    """Template data nested too deeply for the interpreter is a TemplateError, not a RecursionError."""
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(100_000):
        cur["a"] = {}
        cur = cur["a"]
    for template in (
        tpl({"c": {}}, defaults=deep),
        tpl({"c": {"transform": deep}}),
        tpl({"c": {"content": "json", "content_args": {"unquoted_keys": deep}}}),
    ):
        with pytest.raises(TemplateError):
            load_template(template)


@pytest.mark.parametrize(
    "template, field, key",
    [
        (tpl({"f": {"open": "<f>", "content": "__import__('os').system('true')"}}), "f", "content"),
        (tpl({"f": {"open": "<f>", "content": "eval"}}), "f", "content"),
        (tpl({"f": {"open": "<f>", "transform": {"x": "{__class__}"}}}), "f", "transform"),
        (tpl({"f": {"open": "<f>", "transform": {"x": "{__import__}"}}}), "f", "transform"),
        (tpl({"f": {"open": "<f>", "transform": {"x": "{content} {content}"}}}), "f", "transform"),
        (tpl({"f": {"open": "<f>", "content": "kv-lines",
                    "content_args": {"value_parser": {"name": "exec"}}}}), "f", "content_args.value_parser.name"),
        (tpl({"f": {"open": "<f>", "content": "json", "content_args": {"object_hook": "os.system"}}}), "f",
         "content_args"),
        (tpl({"f": {"open_pattern": "(?P<content>x)", "transform": "{content}"}}), "f", "open_pattern"),
    ],
)
def test_templates_are_data_only(template, field, key):
    e = _error(template)
    assert e.field == field and e.key == key


@pytest.mark.parametrize("value", [print, {1, 2}, object(), b"bytes", float("nan"), (lambda: 0)])
def test_non_json_template_values_are_rejected(value):
    _error(tpl({"c": {}}, defaults={"x": value}))


def test_nothing_is_evaluated_when_loading_and_parsing(monkeypatch):
    def forbidden(*args: Any, **kw: Any) -> Any:
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    template = tpl({
        "calls": {"open": "<c>", "close": "</c>", "content": "python-call-list", "transform_each": True,
                  "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}},
        "j": {"open": "<j>", "close": "</j>", "content": "json", "content_args": {"unquoted_keys": True}},
        "content": {},
    })
    text = '<c>[os.system(cmd="rm -rf /"), __import__(x=1)]</c><j>{__class__: "x"}</j>__import__("os")'
    message = parse_response(text, template, prefix="")
    assert message["calls"][0]["function"] == {"name": "os.system", "arguments": {"cmd": "rm -rf /"}}
    assert message["j"] == {"__class__": "x"}


def test_format_syntax_in_transforms_is_plain_text():
    template = tpl({"f": {"open": "<f>", "close": "</f>",
                          "transform": {"x": "{content!r}", "y": "{0:>3}", "z": "{content.__class__.__name__:>10}"}}})
    assert parse_response("<f>v</f>", template, prefix="")["f"] == {
        "x": "{content!r}", "y": "{0:>3}", "z": "{content.__class__.__name__:>10}"}


def test_dotted_placeholders_look_up_keys_never_attributes():
    template = tpl({"f": {"open": "<f>", "close": "</f>", "content": "json",
                          "transform": {"x": "{content.__class__}"}}})
    message = parse_response('<f>{"a": 1}</f>', template, prefix="", strict=False)
    assert "f" not in message and message["unparsed"][0]["field"] == "f"
    assert parse_response('<f>{"__class__": 7}</f>', template, prefix="") == {"f": {"x": 7}}


def test_loaded_template_is_isolated_from_the_callers_dict():
    raw = copy.deepcopy(SMOL)
    compiled = load_template(raw)
    raw["fields"]["content"]["close"] = "CHANGED"
    raw["defaults"]["role"] = "system"
    assert parse_response(SMOL_TEXT, compiled, prefix="") == SMOL_MESSAGE
    source = compiled.source
    source["defaults"]["role"] = "x"
    assert compiled.source["defaults"]["role"] == "assistant"


# =========================================================================== hostile model output


HOSTILE_BODIES = [
    "\x00", "a\x00b", "\x01\x02\x03\x1b[2J\x7f", "\ud800", "x\udfffy", "\udcff\udcfe", "\u2028\u2029\x85",
    "[" * 100_000, "{" * 100_000, '{"a":' * 50_000, "]" * 1000, "1e999999", "-1e999999", "9" * 100_000,
    '{"n": ' + "9" * 100_000 + "}", '{"n": 1e400}', '"\\ud800"', '{"a": "\\u0000"}', "(" * 50_000,
    "[f(a=" + "[" * 10_000 + ")]", "[f(a='" + "\\" * 10_001 + "')]", "<" * 10_000,
]
PARSER_FIELDS = {
    "text": {},
    "int": {"content": "int"},
    "float": {"content": "float"},
    "bool": {"content": "bool"},
    "json": {"content": "json"},
    "json-lax": {"content": "json", "content_args": {"unquoted_keys": True, "string_delims": [["<<", ">>"]]}},
    "json-non-json": {"content": "json", "content_args": {"allow_non_json": True}},
    "python-call-list": {"content": "python-call-list"},
    "kv-lines": {"content": "kv-lines", "content_args": {"value_parser": {"name": "json", "args": {}}}},
    "xml-inline": {"content": "xml-inline", "content_args": {
        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "json"}}},
}


@pytest.mark.parametrize("parser", sorted(PARSER_FIELDS))
def test_hostile_bodies_never_escape_as_other_exceptions(parser):
    template = tpl({"tool": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, **PARSER_FIELDS[parser]},
                    "content": {"close": "<|im_end|>"}})
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": "integer"}, "n": {"type": "number"}, "o": {"type": "object"}}}}}]
    for body in HOSTILE_BODIES:
        text = "hi\x00<tool_call>" + body + "</tool_call>tail<|im_end|>"
        for chunks in ([text], [text[i : i + 997] for i in range(0, len(text), 997)]):
            parser_ = ResponseParser(template, "", tools=tools)
            for c in chunks:
                parser_.feed(c)
            message, _ = parser_.finalize()
            json.dumps(message)
            for e in parser_.errors:
                assert isinstance(e, ResponseParseError) and e.field == "tool"
                assert e.text == body and e.position == len("hi\x00<tool_call>")
        # the implicit field reopens after the tool call: its text is appended with "\n"
        assert parse_response(text, template, prefix="", strict=False, tools=tools)["content"] == "hi\x00\ntail"
        try:
            parse_response(text, template, prefix="", tools=tools)
        except ResponseParseError as e:
            assert e.field == "tool" and e.text == body


def test_deep_json_gives_a_clear_error():
    template = tpl({"tool": {"open": "<t>", "close": "</t>", "content": "json"}})
    for args in ({}, {"unquoted_keys": True}):
        template["fields"]["tool"]["content_args"] = args
        with pytest.raises(ResponseParseError) as info:
            parse_response("<t>" + "[" * 100_000 + "</t>", template, prefix="")
        assert info.value.field == "tool" and "nest" in info.value.error.lower()


def test_huge_numbers_in_tool_arguments_are_kept_or_typed_never_crash():
    template = SMOL
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}}}}}]
    big = "9" * 5000
    text = ('<tool_call>{"name": "f", "arguments": {"i": "' + big + '", "n": "1e999", "b": "maybe"}}</tool_call>'
            "<|im_end|>")
    message = parse_response(text, template, prefix="", tools=tools)
    args = message["tool_calls"][0]["function"]["arguments"]
    assert args["n"] == "1e999" and args["b"] == "maybe"  # failed casts keep the text
    assert args["i"] == big or isinstance(args["i"], int)


def test_delimiters_split_at_every_boundary():
    reference = parse_response(SMOL_TEXT, SMOL, prefix="")
    assert reference == SMOL_MESSAGE
    n = len(SMOL_TEXT)
    for i in range(n + 1):
        message, _, _ = stream(SMOL, [SMOL_TEXT[:i], SMOL_TEXT[i:]])
        assert message == reference, i
    rng = random.Random(7)
    for _ in range(300):
        i, j = sorted(rng.sample(range(n + 1), 2))
        message, _, _ = stream(SMOL, [SMOL_TEXT[:i], SMOL_TEXT[i:j], SMOL_TEXT[j:]])
        assert message == reference, (i, j)
    assert stream(SMOL, list(SMOL_TEXT))[0] == reference


def test_unbalanced_delimiters():
    for text in ["</think></think><|im_end|>", "<think><think><think>", "<tool_call><tool_call>{}</tool_call>",
                 "</tool_call>" * 5 + "<|im_end|>", "<think>" * 1000, "<|im_end|>" * 1000, "<tool_call" * 1000]:
        for chunks in ([text], list(text)):
            message, events, parser = stream(SMOL, chunks, trace=True)
            pieces = [e["text"] for e in events if e["type"] in ("region_chunk", "delimiter", "text_dropped")]
            assert "".join(pieces) == text
            json.dumps(message)


def test_a_long_region_streams_without_growing_hold_back():
    parser = ResponseParser(SMOL, "")
    total = 0
    for _ in range(2000):
        events = parser.feed("word <think not a tag " * 5)
        total += sum(len(e["text"]) for e in events if e["type"] == "region_chunk")
    assert total >= 2000 * len("word <think not a tag " * 5) - len("<tool_call>")
    message, _ = parser.finalize()
    assert len(message["content"]) > 200_000


# =========================================================================== concurrency, isolation


CONCURRENCY_TEXTS = [
    SMOL_TEXT,
    "<think>a</think>b<|im_end|>",
    "<tool_call>{bad json</tool_call>rest<|im_end|>",
    "plain",
    "<tool_call>" + '{"name": "f", "arguments": {"x": [1, 2, {"y": null}]}}' + "</tool_call>",
    "x" * 500 + "<think>" + "y" * 500,
]


def _parse_all(template: Any, texts: list[str], seed: int) -> list[Any]:
    rng = random.Random(seed)
    out = []
    for k in range(200):
        text = texts[(seed + k) % len(texts)]
        cut = rng.randrange(len(text) + 1)
        parser = ResponseParser(template, "<|im_start|>assistant\n")
        parser.feed(text[:cut])
        parser.feed(text[cut:])
        message, _ = parser.finalize()
        out.append(json.dumps([message, [str(e) for e in parser.errors]], sort_keys=True))
        message.setdefault("role", "x")
        message["role"] += "!"  # mutate the result: must not leak into later messages
    return out


def test_one_compiled_template_shared_by_many_threads():
    template = load_template({**SMOL, "defaults": {"role": "assistant", "meta": {"a": [1]}}})
    serial = [_parse_all(template, CONCURRENCY_TEXTS, seed) for seed in range(8)]
    results: dict[int, list[Any]] = {}
    barrier = threading.Barrier(8)

    def worker(seed: int) -> None:
        barrier.wait()
        results[seed] = _parse_all(template, CONCURRENCY_TEXTS, seed)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [results.get(s) for s in range(8)] == serial


def test_mutating_a_message_never_affects_the_next():
    template = tpl({"content": {}, "calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": True}},
                   defaults={"role": "assistant", "meta": {"a": [1]}, "tags": []})
    first = parse_response('hi<c>{"x": [1]}</c>', template, prefix="")
    first["meta"]["a"].append(2)
    first["meta"]["b"] = 1
    first["tags"].append("t")
    first["role"] = "user"
    first["calls"][0]["x"].append(9)
    second = parse_response('hi<c>{"x": [1]}</c>', template, prefix="")
    assert second == {"role": "assistant", "meta": {"a": [1]}, "tags": [], "content": "hi", "calls": [{"x": [1]}]}
    assert load_template(template).defaults == {"role": "assistant", "meta": {"a": [1]}, "tags": []}
    parser = ResponseParser(template, "")
    parser.feed("x")
    msg, _ = parser.finalize()
    msg["meta"]["a"].clear()
    assert parse_response("x", template, prefix="")["meta"] == {"a": [1]}


def test_event_values_and_message_values_do_not_alias_across_parsers():
    template = load_template(SMOL)
    p1, p2 = ResponseParser(template, ""), ResponseParser(template, "")
    e1 = p1.feed(SMOL_TEXT)
    p2.feed(SMOL_TEXT)
    for e in e1:
        if e["type"] == "region_close" and isinstance(e["value"], dict):
            e["value"]["function"]["arguments"]["city"] = "MUTATED"
    m2, _ = p2.finalize()
    assert m2 == SMOL_MESSAGE


# =========================================================================== error hierarchy


def test_error_hierarchy():
    assert issubclass(TemplateError, ValueError)
    assert issubclass(ResponseParseError, ValueError)
    assert issubclass(RegexTimeoutError, ResponseParseError)
    assert not issubclass(TemplateError, ResponseParseError)
    import hf_response_templates

    for name in ("TemplateError", "ResponseParseError", "RegexTimeoutError"):
        assert name in hf_response_templates.__all__


def test_template_error_attributes():
    e = _error(tpl({"f": {"open": "<f>", "open_pattern": "<f>"}}))
    assert e.field == "f" and e.key == "open_pattern" and "'f'" in str(e) and "open_pattern" in str(e)
    e = _error({"fields": {"c": {}}})
    assert e.field is None and e.key == "start_anchor"


def test_response_parse_error_attributes():
    template = tpl({"t": {"open": "<t>", "close": "</t>", "content": "json"}, "content": {}})
    text = 'before<t>{"a": </t>after'
    with pytest.raises(ResponseParseError) as info:
        parse_response(text, template, prefix="")
    e = info.value
    assert type(e) is ResponseParseError
    assert e.field == "t" and e.text == '{"a": ' and e.position == text.index("{") and e.error
    assert text[e.position : e.position + len(e.text)] == e.text
    assert "'t'" in str(e) and repr('{"a": ') in str(e)
    message = parse_response(text, template, prefix="", strict=False)
    assert message["unparsed"] == [e.as_dict()]
    assert message["content"] == "before\nafter"


def test_missing_required_field_error():
    template = tpl({"t": {"open": "<t>", "close": "</t>", "optional": False}, "content": {}})
    with pytest.raises(ResponseParseError) as info:
        parse_response("no tool", template, prefix="")
    assert info.value.field == "t" and info.value.text is None and info.value.position is None
    assert parse_response("no tool", template, prefix="", strict=False) == {"content": "no tool"}


def test_region_closed_in_the_prefix_reports_no_generation_position():
    """A region begun in the prefix reports position None (not an offset into the cut prefix)."""
    template = tpl({"tool": {"open": "<t>", "close": "</t>", "content": "json"}, "content": {}})
    parser = ResponseParser(template, prefix="<|im_start|>assistant\n<t>{bad</t>")
    parser.feed("ok")
    message, _ = parser.finalize()
    (error,) = parser.errors
    assert error.field == "tool" and error.text == "{bad"
    assert error.position is None
    assert message["unparsed"][0]["position"] is None


def test_prefix_is_required():
    with pytest.raises(ValueError, match="prefix"):
        ResponseParser(SMOL)
    with pytest.raises(ValueError, match="prefix"):
        parse_response("x", SMOL)


# =========================================================================== memory held while streaming


def test_a_long_region_streamed_in_small_chunks_is_held_compactly():
    """The open region's body is joined every `_COMPACT_EVERY` chunks: what the parser holds grows with
    the text, not with the number of chunks (~57 bytes each), and the value is the same."""
    from hf_response_templates.parser import _COMPACT_EVERY

    rng = random.Random(7)
    chunks = ["".join(rng.choice("ab c\n") for _ in range(rng.randint(1, 4))) for _ in range(20 * _COMPACT_EVERY)]
    template = tpl({"r": {"open": "<r>", "close": "</r>"}, "content": {}})
    parser = ResponseParser(template, prefix="")
    events = parser.feed("<r>")
    for c in chunks:
        events += parser.feed(c)
    assert len(parser._body) <= 20 + _COMPACT_EVERY  # blocks of joined chunks, plus the newest chunks
    assert "".join(e["text"] for e in events if e["type"] == "region_chunk") == "".join(chunks)
    events += parser.feed("</r>")
    message, _ = parser.finalize()
    assert message["r"] == "".join(chunks).strip()


@pytest.mark.parametrize("then", ["text", "delimiter"])
def test_a_long_run_of_whitespace_before_the_implicit_field_is_held_compactly(then):
    """Degenerate generations emit long runs of newlines: they are held (they open the implicit field
    only if text follows) without quadratic copying and without one object per chunk."""
    from hf_response_templates.parser import _COMPACT_EVERY

    run = ["\n", " ", "\n\n"] * (10 * _COMPACT_EVERY)
    template = tpl({"t": {"open": "<t>", "close": "</t>"}, "content": {"content_args": {"strip": True}}})
    parser = ResponseParser(template, prefix="", trace=True)
    for c in run:
        assert parser.feed(c) == []
    assert len(parser._body) <= 30 + _COMPACT_EVERY
    if then == "text":
        events = parser.feed("Hi")
        assert events[1] == {"type": "region_chunk", "field": "content", "text": "".join(run) + "Hi", "dirty": False}
        assert parser.finalize()[0]["content"] == "Hi"
    else:
        events = parser.feed("<t>x</t>")
        assert events[0] == {"type": "text_dropped", "text": "".join(run), "reason": "whitespace"}
        assert parser.finalize()[0] == {"t": "x"}


def test_loading_templates_leaves_the_global_random_state_alone():
    """The `regex` module trims its full pattern cache with the global `random`: template regexes are
    compiled outside that cache, so loading many templates never disturbs a seeded program."""
    random.seed(1234)
    state = random.getstate()
    for i in range(600):  # more than `regex`'s cache holds (500)
        load_template(tpl({f"f{i}": {"open_pattern": f"<t{i}>\\d?", "close": "</t>", "content": "xml-inline",
                                     "content_args": {"tag_pattern": f"<k{i}=(?P<key>\\w+)>(?P<value>.*?)</k>"}}}))
    assert random.getstate() == state


# =========================================================================== linear streaming (issue 14 item 1)

#: A delimiter that starts but never completes, in the nine shipped templates the audit named: the text
#: after the start of the delimiter, n characters of it.
NEVER_COMPLETES = {
    "qwen3-coder": ("<|im_start|>assistant\n", "Hi <tool_call>", "\n"),
    "deepseek-v3.1": ("", "Hi<｜tool▁call▁begin｜>", "some prose "),
    "deepseek-r1": ("", "Hi<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function", "some prose "),
    "gpt-oss": ("<|start|>assistant", "", " "),
    "kimi-k2": ("", "Hi<|tool_call_begin|>", " "),
    "mistral-small-3.2": ("", "[TOOL_CALLS]", "text "),
    "glm-4.6": ("", "Hi<tool_call>", "name "),
    "llama3": ("", "", " "),
    "gemma4": ("", "Hi<|tool_call>call:", "text "),
}


def _hostile_text(name: str, n: int) -> str:
    _, start, unit = NEVER_COMPLETES[name]
    return start + (unit * (n // len(unit) + 1))[:n]


def _scan_cost(name: str, n: int, monkeypatch: Any) -> tuple[int, ResponseParser, int]:
    """Characters of window handed to the delimiter scanner while streaming `n` hostile characters in
    4-character feeds (the regex work is proportional to it), the parser, and the text streamed out."""
    from hf_response_templates import get_template
    from hf_response_templates.delimiters import Watch

    seen = [0]
    scan = Watch.scan

    def counting(self: Any, window: str, *args: Any, **kw: Any) -> Any:
        seen[0] += len(window)
        return scan(self, window, *args, **kw)

    monkeypatch.setattr(Watch, "scan", counting)
    parser = ResponseParser(get_template(name), NEVER_COMPLETES[name][0], trace=True)
    text = _hostile_text(name, n)
    out = 0
    for i in range(0, len(text), 4):
        for e in parser.feed(text[i : i + 4]):
            if e["type"] in ("region_chunk", "delimiter", "text_dropped"):
                out += len(e["text"])
    monkeypatch.setattr(Watch, "scan", scan)
    return seen[0], parser, out


@pytest.mark.parametrize("name", sorted(NEVER_COMPLETES))
def test_a_delimiter_that_never_completes_streams_in_linear_time(name, monkeypatch):
    from hf_response_templates.delimiters import MAX_DELIMITER_LENGTH

    per_char = {}
    for n in (1_000, 10_000, 100_000):
        cost, parser, out = _scan_cost(name, n, monkeypatch)
        per_char[n] = cost / n
        # memory stays bounded and the text keeps streaming: at most one delimiter's worth is held back
        assert len(parser._buf) <= MAX_DELIMITER_LENGTH
        # (whitespace before the implicit field opens is streamed with its first other character)
        waiting = sum(map(len, parser._body)) if parser._pending_ws else 0
        assert out + waiting >= len(_hostile_text(name, n)) - MAX_DELIMITER_LENGTH
    # linear: at most one window of a delimiter's length (plus the feed) per 4-character feed, at any length,
    # and no growth from 10k to 100k (the 1k figure is only a warm-up: the held window is still growing
    # there, and a scan skipped while held text only grows (`held.still_held`) makes it cheaper still)
    bound = (MAX_DELIMITER_LENGTH + 4) / 4 + 1
    assert all(v <= bound for v in per_char.values()), (per_char, bound)
    assert per_char[100_000] <= 2 * per_char[10_000] + 1, per_char
    assert per_char[10_000] <= 2 * per_char[1_000] + 1, per_char


@pytest.mark.parametrize("name", sorted(NEVER_COMPLETES))
def test_a_delimiter_that_never_completes_streams_like_one_shot(name):
    from hf_response_templates import get_template

    template, prefix = get_template(name), NEVER_COMPLETES[name][0]
    for n in (100, 2_000):
        text = _hostile_text(name, n) + "<|im_end|>"
        one = parse_response(text, template, prefix=prefix, strict=False)
        for size in (1, 4, 7, 4096):
            message, _, _ = stream(template, [text[i : i + size] for i in range(0, len(text), size)], prefix)
            assert message == one, (name, n, size)


def test_a_regex_match_longer_than_the_limit_is_not_a_delimiter():
    from hf_response_templates.delimiters import MAX_DELIMITER_LENGTH

    template = tpl({"tool_calls": {"open_pattern": r"<tool_call>\s*<function=\w+>", "close": "</tool_call>",
                                   "repeats": True},
                    "content": {"close": "<|im_end|>"}})
    for gap, is_call in ((MAX_DELIMITER_LENGTH - len("<tool_call><function=f>"), True), (MAX_DELIMITER_LENGTH, False)):
        text = "<tool_call>" + "\n" * gap + "<function=f>x</tool_call><|im_end|>"
        one = parse_response(text, template, prefix="")
        assert ("tool_calls" in one) is is_call, gap
        for size in (1, 5, len(text)):
            message, _, _ = stream(template, [text[i : i + size] for i in range(0, len(text), size)])
            assert message == one
