"""Resumed partial matching (issue 19): a chunk that continues held text (a tool-call header streamed token by
token) does not search every regex delimiter again from the start of the held text. The last scan's results
are kept (`ResponseParser._resume`, `Watch.scan(resume=...)`): a regex with no (partial) match in the held text
is searched only in the new text, one with a partial match from where it starts.

Checked here: streaming still equals one-shot for any chunking of texts full of delimiter beginnings (every
chunk boundary, so held text is continued many times in a row), and the work is what the resume promises
(counted: the characters `regex` searches per delimiter), which today's code would fail."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_response_templates.delimiters as delimiters
from hf_response_templates import ResponseParser, load_template, parse_response
from hf_response_templates.library import get_template

#: Whole delimiters the models write, whose beginnings the texts below are made of (transcribed from the
#: templates' own raw-output tests).
HEADERS = {
    "gpt-oss": [
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        "<|channel|>analysis<|message|>",
        "<|start|>assistant<|channel|>final<|message|>",
        "<|end|>",
        "<|call|>",
        ' to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>',
    ],
    "kimi-k3": [
        '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>',
        '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>',
        "<|close|>call<|sep|><|close|>tools<|sep|>",
        "<|open|>think<|sep|>",
        "<|close|>think<|sep|>",
    ],
    "seed-oss": [
        "<seed:think>",
        "</seed:think>",
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
        "<seed:eos>",
    ],
    "llama4-json": ['{"name": "get_weather", "parameters": {"city": "Paris"}}', "<|eot|>", "; ", "}"],
    "qwen3.5": ["<think>", "</think>", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"],
}


@st.composite
def held_texts(draw, name: str) -> tuple[str, list[str]]:
    """A text of whole delimiters, their beginnings and a little prose, cut at many places."""
    headers = HEADERS[name]
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        h = draw(st.sampled_from(headers))
        kind = draw(st.sampled_from(["whole", "beginning", "beginning", "noise"]))
        if kind == "whole":
            parts.append(h)
        elif kind == "beginning":
            parts.append(h[: draw(st.integers(1, len(h)))])
        else:
            parts.append(draw(st.text(alphabet=st.sampled_from(list("ab <>|=\n{}")), max_size=4)))
    text = "".join(parts)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=len(text)))))
    chunks, last = [], 0
    for c in [*cuts, len(text)]:
        if c > last:
            chunks.append(text[last:c])
            last = c
    return text, chunks


def _stream(tpl, prefix: str, chunks: list[str]) -> tuple[dict, list]:
    parser = ResponseParser(tpl, prefix)
    for chunk in chunks:
        parser.feed(chunk)
    message, _ = parser.finalize()
    return message, [(type(e).__name__, e.field, e.position) for e in parser.strict_errors]


def _oneshot(text: str, tpl, prefix: str) -> tuple[dict, list]:
    parser = ResponseParser(tpl, prefix)
    parser.feed(text)
    message, _ = parser.finalize()
    return parse_response(text, tpl, prefix=prefix, strict=False), [
        (type(e).__name__, e.field, e.position) for e in parser.strict_errors]


def _ids_dropped(message: dict) -> dict:
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        message = {**message, "tool_calls": [{k: v for k, v in c.items() if k != "id"} for c in calls]}
    return message


PREFIXES = {"gpt-oss": "<|start|>assistant", "kimi-k3": "", "seed-oss": "", "llama4-json": "", "qwen3.5": ""}


@pytest.mark.parametrize("name", sorted(HEADERS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_streaming_through_held_beginnings_equals_one_shot(name, data):
    text, chunks = data.draw(held_texts(name))
    tpl = load_template(get_template(name))
    prefix = PREFIXES[name]
    streamed, errors = _stream(tpl, prefix, chunks)
    whole, whole_errors = _stream(tpl, prefix, [text])
    assert _ids_dropped(streamed) == _ids_dropped(whole)
    assert _ids_dropped(streamed) == _ids_dropped(parse_response(text, tpl, prefix=prefix, strict=False))
    assert errors == whole_errors


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_every_character_a_chunk_equals_one_shot(name):
    tpl = load_template(get_template(name))
    prefix = PREFIXES[name]
    for text in ["".join(HEADERS[name]), "".join(reversed(HEADERS[name])), "".join(h[: len(h) // 2] for h in HEADERS[name])]:
        assert _ids_dropped(_stream(tpl, prefix, list(text))[0]) == _ids_dropped(
            parse_response(text, tpl, prefix=prefix, strict=False))


def _searched(monkeypatch) -> dict[str, int]:
    """Characters the regex delimiters' searches start before the end of their window, per field."""
    counts: dict[str, int] = {}
    real = delimiters._search_regex

    def counting(d, window, pos, *args):
        counts[d.field] = counts.get(d.field, 0) + len(window) - pos
        return real(d, window, pos, *args)

    monkeypatch.setattr(delimiters, "_search_regex", counting)
    return counts


def test_a_header_streamed_a_character_at_a_time_searches_dead_delimiters_in_new_text_only(monkeypatch):
    # gpt-oss's idle watch has three regex opens; through `...commentary to=functions.get_weather ...` only
    # `tool_calls` can still match: `content` and `thinking` must not search the held header again per chunk
    header = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    tpl = load_template(get_template("gpt-oss"))
    parser = ResponseParser(tpl, "<|start|>assistant")
    parser.feed("<|channel|>final<|message|>Hi<|end|>")
    counts = _searched(monkeypatch)
    for ch in header:
        parser.feed(ch)
    parser.feed('{"city": "Paris"}<|call|>')
    message, _ = parser.finalize()
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    n = len(header)
    # Searched again from the start of the held text on each of its n chunks, each regex would search
    # n * (n + 1) / 2 = 2,850 characters (what the code before the resume did, for all three). Resumed, a
    # delimiter is searched from its own candidate while it has one (`content` holds `<|channel|>commentary`
    # as a beginning of its own header too), then only in the new text: 292 and 94 characters.
    for field in ("content", "thinking"):
        assert counts.get(field, 0) <= 5 * n, (field, counts)
    # the live one is searched from its candidate, the start of the held text: never more than before
    # (none at all since `held_commit`: the header is held by `still_held` and committed by `commit_at`)
    assert counts.get("tool_calls", 0) <= n * (n + 1) // 2 + 2 * n  # (+ the chunk that completes it)


def test_held_text_that_dies_is_routed_and_a_later_delimiter_still_found():
    # `<|start|>assistant<|channel|>comm` is held by every open; `x` kills all of them: it is content of no
    # region (outside every region), then a real header opens
    tpl = load_template(get_template("gpt-oss"))
    text = "<|channel|>commx<|channel|>final<|message|>ok<|return|>"
    streamed = _stream(tpl, "<|start|>assistant", list(text))[0]
    assert streamed == parse_response(text, tpl, prefix="<|start|>assistant", strict=False)
    assert streamed["content"] == "ok"


def test_resume_state_is_only_used_for_the_text_it_was_found_on():
    # a delimiter firing in between (a new watch) or text routed by `feed()`'s fast path drops it
    tpl = load_template(get_template("kimi-k3"))
    parser = ResponseParser(tpl, "")
    parser.feed("<|open|>thi")
    assert parser._resume is not None
    parser.feed("nk<|sep|>a")
    assert parser._resume is None or parser._resume[0] is parser._watch
    parser.feed("b")
    message, _ = parser.finalize()
    assert message == parse_response("<|open|>think<|sep|>ab", tpl, prefix="", strict=False)


def test_a_parser_pickled_while_holding_text_goes_on_the_same():
    import copy
    import pickle

    tpl = get_template("gpt-oss")
    parser = ResponseParser(tpl, "<|start|>assistant")
    for ch in "<|channel|>commentary to=functions.get_w":
        parser.feed(ch)
    assert parser._resume is not None
    clones = [pickle.loads(pickle.dumps(parser)), copy.deepcopy(parser)]
    assert all(c._resume is None for c in clones)  # not pickled: a cache of the last scan
    rest = 'eather <|constrain|>json<|message|>{"a": 1}<|call|>'
    results = []
    for p in [parser, *clones]:
        for ch in rest:
            p.feed(ch)
        results.append(p.finalize()[0])
    assert results[0]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"a": 1}}
    assert results[1:] == [results[0]] * 2


#: Literal opens sharing beginnings (one is the start of another: `<a>` / `<a>bc`), a regex open starting like
#: them, closes: a held literal may complete, grow into a longer one, or die, across any chunk boundary.
OVERLAPPING = {
    "start_anchor": "<s>",
    "fields": {
        "x": {"open": ["<a>", "<a>bc"], "close": "</a>", "repeats": True},
        "y": {"open": "<ab", "close": ["</a>b", "</a"], "repeats": True},
        "z": {"open_pattern": r"<a(?:[0-9]+)>", "close": "</z>", "repeats": True},
        "content": {},
    }
}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["<", "a", ">", "b", "c", "/", "1", "2", "z", " ", "<a>", "</a>", "<a1>"]), max_size=24),
       st.data())
def test_literals_resumed_from_the_held_text_equal_one_shot(parts, data):
    tpl = load_template(OVERLAPPING)
    text = "".join(parts)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=len(text) + 1))))
    chunks, last = [], 0
    for c in [*cuts, len(text)]:
        if c > last:
            chunks.append(text[last:c])
            last = c
    streamed, errors = _stream(tpl, "", chunks)
    assert streamed == parse_response(text, tpl, prefix="", strict=False)
    assert errors == _stream(tpl, "", [text])[1]
