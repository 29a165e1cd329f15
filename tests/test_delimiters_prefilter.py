"""The first-character prefilter (`regex_leads._start_chars`, `Watch.first_set`; issue 19): escaped and
in-class braces are literals, a group name used twice is fine, lookaheads give the characters where a
zero-width match can be, `\\s` counts as its 25 characters, and delimiters anchored at `^` / `\\A` are dead
once the stream has moved past offset 0 (the parser then watches without them)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import scaled

from hf_response_templates import ResponseParser, get_template, load_template, parse_response
from hf_response_templates.library import templates_dir
from hf_response_templates.regex_leads import (
    ANCHOR_ALL,
    ANCHOR_NONE,
    ANCHOR_SOME,
    _spaced_leads,
    _start_chars,
)
from hf_response_templates.regex_safety import _SPACE

SPACES = {chr(c) for lo, hi in _SPACE for c in range(lo, hi + 1)}


@pytest.mark.parametrize(
    "source, chars, anchored",
    [
        (r"<\|tool_call>(?:call)?:(?P<name>[^{<]+)(?=\{)", {"<"}, ANCHOR_NONE),  # in-class `{`, escaped `\{`
        (r"\}\s*<end_function_call>", {"}"}, ANCHOR_NONE),
        (r"(?P<name>a)x|b(?P<name>c)", {"a", "b"}, ANCHOR_NONE),  # a group name twice (`regex` allows it)
        (r"</think>|(?=<tool_call>)|(?=<think>)", {"<"}, ANCHOR_NONE),  # through lookahead alternatives
        (r"(?=\[TOOL_CALLS\])|</s>", {"[", "<"}, ANCHOR_NONE),
        (r"(?<=x)(?=\{)", {"{"}, ANCHOR_NONE),  # a lookbehind consumes nothing: the lookahead decides
        (r"^\s*(?:<\|python_tag\|>\s*)*(?=\{\s*\"name\")", set(), ANCHOR_ALL),  # llama3: offset 0 only
        (r"\A<x>", set(), ANCHOR_ALL),
        (r"^\s*助手：|<answer>", {"<"}, ANCHOR_SOME),
        (r"\s*```", SPACES | {"`"}, ANCHOR_NONE),
        (r"a{2}b", {"a"}, ANCHOR_NONE),
    ],
)
def test_start_chars(source, chars, anchored):
    assert _start_chars(source) == (chars, anchored)


@pytest.mark.parametrize(
    "source",
    [
        r"(?=[\s\S])",  # a zero-width match before any character
        r"(?<=\))(?=x)?",  # zero width after a lookbehind: any character can follow
        r"\w+:",  # \w: not a small set
        r"[^<]x",  # a negated class
        r".x",
        r"x{e<=1}",  # fuzzy matching: `regex`-only syntax
        r"(?i)<x>",  # case folding
        r"$",  # matches the empty string
    ],
)
def test_start_chars_unknown(source):
    assert _start_chars(source)[0] is None


#: Delimiters of shipped templates with no finite set of first characters, and why.
NO_FIRST_SET = {
    ("gemma3-pythonic", "tool_calls", "close_pattern"): "(?<=\\)\\s*\\]) is zero width after a lookbehind: any "
    "character (or the end) can follow",
    ("hunyuan-a13b", "answer_marker", "close_pattern"): "(?=[\\s\\S]) fires before any character",
}


def _shipped():
    for path in sorted(templates_dir().glob("*.json")):
        yield path.stem, load_template(json.loads(path.read_text(encoding="utf-8")))


def test_every_shipped_delimiter_has_first_characters_but_the_listed_ones():
    missing = set()
    for name, tpl in _shipped():
        for f in tpl.fields:
            for d in (f.open, f.close):
                if d is not None and d.first_chars is None:
                    missing.add((name, f.name, d.key))
        assert tpl.start_anchor.first_chars is not None, name
    assert missing == set(NO_FIRST_SET)


@pytest.mark.parametrize("name", ["llama3", "gemma4", "xlam-qwen", "llama3.2-pythonic", "gemma3-pythonic"])
def test_anchored_and_brace_templates_get_a_prefilter_past_offset_0(name):
    tpl = dict(_shipped())[name]
    watch = tpl.late_idle_watch
    assert watch is not None and (watch.first_char is not None or watch.first_search is not None)
    if name != "gemma4":  # an anchored open: the early watch has it (and no prefilter), the late one not
        assert tpl.has_early and tpl.idle_watch.first_set is None
        assert len(watch.delimiters) < len(tpl.idle_watch.delimiters)


def test_the_parser_switches_to_the_late_watch_and_drops_the_context():
    tpl = dict(_shipped())["llama3"]
    assert tpl.needs_context and not tpl.late_needs_context
    parser = ResponseParser(tpl, "")
    parser.feed("Hello")
    parser.feed(" there")
    assert parser._watch is tpl.late_idle_watch and not parser._ctx_on and parser._ctx == ""
    assert parser.finalize()[0]["content"] == "Hello there"


LLAMA3_TEXTS = [
    '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    '  <|python_tag|>{"name": "f", "parameters": {}}',
    'Sure. {"name": "f", "parameters": {}}',  # not at offset 0: prose, no tool call
    "Plain answer with a brace { and more.",
    "",
    " ",
]


@pytest.mark.parametrize("name, texts", [("llama3", LLAMA3_TEXTS), ("xlam-qwen", [
    '[{"name": "f", "arguments": {"a": 1}}]', ' [{"name": "f", "arguments": {}}]', 'x [{"name": "f"}]', "[1, 2]"])])
@given(data=st.data())
def test_streamed_equals_one_shot_across_offset_0(name, texts, data):
    text = data.draw(st.sampled_from(texts))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=6))
    _assert_streamed_as_one_shot(dict(_shipped())[name], text, cuts)


def _assert_streamed_as_one_shot(tpl, text, cuts):
    parser = ResponseParser(tpl, "")
    at = 0
    for c in [*sorted(cuts), len(text)]:
        parser.feed(text[at:c])
        at = c
    assert parser.finalize()[0] == parse_response(text, tpl, prefix="", strict=False)


def test_an_anchored_open_does_not_fire_past_offset_0():
    tpl = dict(_shipped())["llama3"]
    text = 'Sure. {"name": "f", "parameters": {}}'
    message = parse_response(text, tpl, prefix="", strict=False)
    assert message["content"] == text and not message.get("tool_calls")
    streamed = ResponseParser(tpl, "")
    for c in text:
        streamed.feed(c)
    assert streamed.finalize()[0] == message
    called = parse_response('{"name": "f", "parameters": {}}', tpl, prefix="", strict=False)
    assert called["tool_calls"][0]["function"]["name"] == "f"


# --------------------------------------------------------------------------- fixed leading texts


@pytest.mark.parametrize(
    "source, leads",
    [
        (r"(?:<tool_call>\s*<function=|<function=(?=[^>\s]+>))(?P<name>[^>\s]+)>", ("<function=", "<tool_call>")),
        (r"</function>\s*</tool_call>|</tool_call>|</function>(?=\s*\Z)", ("</function>", "</tool_call>")),
        (r"(?:<x>\s*)?<y>", ("<x>", "<y>")),
        (r"(?:<\|start\|>assistant)?<\|channel\|>", ("<|channel|>", "<|start|>assistant<|channel|>")),
        (r"ab{2}c", ("a",)),  # the counted repeat is b's
        (r"\}\s*<end>", ("}",)),
        (r"</think>|(?=<tool_call>)", None),  # a zero-width alternative starts with no fixed text
        (r"\s*x", None),
        (r"(?i)<x>", None),
        (r"a|b|c|d|e|f|g", None),  # too many: a plain search is as cheap
    ],
)
def test_literal_leads(source, leads):
    from hf_response_templates.regex_leads import _literal_leads

    assert _literal_leads(source) == leads


def test_one_shot_with_several_leads_finds_the_first_match_past_many_false_starts():
    tpl = dict(_shipped())["qwen3-coder"]
    noise = "<function=x " * 300  # the lead seen again and again, never a call
    call = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
    message = parse_response(noise + call, tpl, prefix="", strict=False)
    assert message["tool_calls"][0]["function"]["name"] == "f"
    assert message["content"].startswith("<function=x")
    parser = ResponseParser(tpl, "")
    for i in range(0, len(noise + call), 7):
        parser.feed((noise + call)[i : i + 7])
    assert parser.finalize()[0] == message


# --------------------------------------------------------------------------- delimiters that may start with a space


@pytest.mark.parametrize(
    "source, forms",
    [
        # gpt-oss's tool-call header: `\s*to=` (the run, then `to=`), or the channel first (texts cut at 8)
        (get_template("gpt-oss")["fields"]["tool_calls"]["open_pattern"],
         {(None, "<|start|"), (frozenset(SPACES), "to="), (frozenset(SPACES), "to=funct"), (None, "<|channe")}),
        # Llama 4: the anchored alternative matches nothing past offset 0; the lookbehind is read past
        (get_template("llama4-json")["fields"]["tool_calls"]["open_pattern"],
         {(frozenset(SPACES), ";"), (frozenset(SPACES), "{")}),
        (r"(?<=\})(?=\s*(?:;\s*)?\{)|\s*<\|eot\|>", {(frozenset(SPACES), ";"), (frozenset(SPACES), "{"),
                                                    (frozenset(SPACES), "<|eot|>")}),
        (r"[ \t]+x|\n{0,2}y", {(frozenset(" \t"), "x"), (frozenset("\n"), "y")}),
        (r"\s*\n<x>", {(frozenset(SPACES), "\n<x>")}),
        (r"<a>\s*b", {(None, "<a>")}),  # a run after fixed text ends it
    ],
)
def test_spaced_leads(source, forms):
    assert _spaced_leads(source) == forms


@pytest.mark.parametrize("source", [r"\s+", r"\s*$", r"\s*(?:x|)", r"\s*[^<]x", r"\s*\w", r"(?i)\s*x", r"(?=\s*)"])
def test_spaced_leads_unknown(source):
    assert _spaced_leads(source) is None  # some match has no fixed text after its run, or unknown syntax


#: Watches whose delimiters may start with a space: they had no prefilter before issue 19.
#: `("close", field)`: the watch while that field's region is open.
SPACED = [("gpt-oss", "idle_watch"), ("gpt-oss", "late_idle_watch"), ("llama4-json", "late_idle_watch"),
          ("llama4-json", ("close", "tool_calls")), ("deepseek-r1", ("close", "tool_calls")),
          ("internlm2", ("close", "tool_calls"))]
SPACED_IDS = [f"{name}.{which if isinstance(which, str) else '.'.join(which)}" for name, which in SPACED]
#: Of those, the watches whose spaced delimiter is guarded by a lookbehind instead (Llama 4's
#: `(?<=\})\s*(?:;\s*)?(?=\{...)` fires only right after a `}`): their prefilter is the guard's characters.
GUARDED = {"llama4-json.late_idle_watch"}


def _watch(name, which):
    tpl = dict(_shipped())[name]
    if isinstance(which, str):
        return getattr(tpl, which)
    (index,) = [i for i, f in enumerate(tpl.fields) if f.name == which[1]]
    return tpl.close_watches[index]


@pytest.mark.parametrize("name, which", SPACED, ids=SPACED_IDS)
def test_watches_with_spaced_delimiters_have_a_prefilter(name, which):
    watch = _watch(name, which)
    if f"{name}.{which}" in GUARDED:
        assert watch.behind == {"}"} and watch.first_search is not None
        for chunk in (" the", " dog", "Hello", " world.", ",", " 42", "the ", "x\n", "\n\n", " a\t"):
            assert watch.first_search(chunk) is None  # spaces start no match here unless a `}` is before them
        assert watch.first_search('} {"name"') is not None and watch.end_search is watch.first_search
        return
    assert " " in watch.first_set and watch.first_search is not None
    for chunk in (" the", " dog", "Hello", " world.", ",", " 42"):
        assert watch.first_search(chunk) is None  # prose chunks are skipped
    for chunk in ("the ", "x\n", "\n\n", " a\t"):
        assert watch.first_search(chunk) is not None  # a space at the end may start a match
    # at the end of the stream the rest of the text is one long chunk: the alternation would cost more than
    # the scans it skips there (one-shot parsing keeps its literal leads instead)
    assert watch.end_search is None


def test_other_watches_use_their_prefilter_at_the_end_of_the_stream_too():
    watch = dict(_shipped())["mistral-small-3.1"].late_idle_watch  # `<` or `[`
    assert watch.first_search is not None and watch.end_search is watch.first_search


def test_gpt_oss_prefilter_skips_a_t_but_not_to_equals():
    watch = _watch("gpt-oss", "late_idle_watch")
    for chunk in (" the", "texts", " tomorrow", "to be"):
        assert watch.first_search(chunk) is None
    for chunk in (" to=functions", "x to", " t", "to", "a<|"):
        assert watch.first_search(chunk) is not None


PIECES = {
    "gpt-oss": [" to=functions.f<|channel|>commentary json<|message|>", " ", "\n", "to", "=", "to=", "functions.",
                "f", "t", "x", "<|channel|>", "commentary", " json", "<|message|>", '{"a": 1}', "<|call|>",
                "<|start|>assistant", "<|end|>", "<|channel|>final", "<|channel|>analysis", "<|return|>",
                "<|constrain|>"],
    "llama4-json": ['} ;\n{"name": ', "}  <|eot|>", " ", "\n", ";", "{", "}", '"name"', ":",
                    '{"name": "f", "parameters": {}}', "x", "<|eot|>", "<|eom|>", "<|python_start|>",
                    "<|python_end|>", '"parameters": {"a": 1}}'],
    "deepseek-r1": ["\n```\n<｜tool▁call▁end｜>", " ", "\n", "`", "```", "```json", "x", "<｜tool▁call▁end｜>",
                    "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "f", '{"a": 1}',
                    "<｜end▁of▁sentence｜>"],
    "internlm2": ["}\n }\n<|action_end|>", " ", "\n", "}", "{", "x", "<|action_end|>",
                  '{"name": "f", "parameters": {"a": 1', "<|action_start|>", "<|plugin|>"],
}


@pytest.mark.parametrize("name, which", SPACED, ids=SPACED_IDS)
@settings(max_examples=scaled(40))  # every start and every cut of each text: ~50 ms an example
@given(data=st.data())
def test_the_spaced_prefilter_finds_something_in_every_chunk_a_match_starts_in(name, which, data):
    watch = _watch(name, which)
    text = "x" + "".join(data.draw(st.lists(st.sampled_from(PIECES[name]), max_size=16)))  # past offset 0
    for d in watch.delimiters:
        for i in range(1, len(text)):
            if d.literals is not None:
                starts = any(text.startswith(lit, i) for lit in d.literals)
            else:
                starts = d.pattern.match(text, i) is not None
            # a chunk holding the start: the shortest ones (larger chunks with the same end hold them); the
            # watch's prefilter finds something there, and so does the delimiter's own (`Watch.own_search`)
            own = None if d in watch.guarded else watch.own_search.get(d)  # a guarded one is searched by its guard
            back = i - watch.reach  # a scan looks this far back (the guard's character may end the chunk before)
            for cut in range(i + 1, len(text) + 1) if starts else ():
                assert watch.first_search(text[back:cut]) is not None, (d.source, text, i, cut)
                assert own is None or own(text[i:cut]) is not None, (d.source, text, i, cut)


def test_a_scan_for_one_delimiter_skips_the_regex_search_of_another():
    watch = _watch("llama4-json", "late_idle_watch")  # the JSON open (a regex) and `<|eot|>`, `<|eom|>`
    (json_open,) = watch.regexes
    assert json_open in watch.own_search
    assert watch.own_search[json_open]("a < b") is None and watch.own_search[json_open]("} {") is not None
    assert watch.first_search("a < b") is not None  # scanned: `<` may start `<|eot|>`
    assert watch.scan("a < b", 0, False, -1, frozenset(), frozenset(), None) == 5
    assert watch.scan("a <|eo", 0, False, -1, frozenset(), frozenset(), None) == 2  # the literal is held


@pytest.mark.parametrize("name", ["gpt-oss", "llama4-json", "deepseek-r1", "internlm2"])
@given(data=st.data())
def test_spaced_templates_stream_as_one_shot(name, data):
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES[name]), max_size=20)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    _assert_streamed_as_one_shot(dict(_shipped())[name], text, cuts)
