"""Zero-width and empty-matching delimiters (issue 12, item 1).

Templates written for Transformers' native parser use delimiter regexes that can match the empty
string: an open that fires at the start of the stream or at a tag (`(?:^|<think>\\s*)`, for a chat
template that pre-opens reasoning), a close at the end of the stream (`$`, `\\Z`, `\\z`), lookaheads.
Rules checked here:

* `^` / `\\A` match only at offset 0 of the cut stream: right after the prefix's last start anchor
  (so in the prefix when it runs past the anchor, at the first generated character when it ends right
  at the anchor);
* `$` / `\\Z` / `\\z` are decided at the end of the stream (`finalize`, one-shot), never while more text
  may come; an open matching at the very end of the stream opens nothing (as native);
* streaming equals one-shot for every chunking, including a chunk boundary right at the anchor, and
  both equal native when Transformers 5.x is installed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import canon, chunkings, merge_chunks, without_trace

from hf_response_templates import ResponseParser, TemplateError, load_template, parse_response

try:
    from transformers.utils import chat_parsing as native
except ImportError:  # Transformers 4.x
    native = None

ANCHOR = "<|im_start|>assistant\n"
PROMPT = "<|im_start|>user\nhi<|im_end|>\n" + ANCHOR

#: A model whose chat template pre-opens reasoning: the generation starts inside it without `<think>`,
#: or the model writes `<think>` itself.
PREOPENED = {
    "defaults": {"role": "assistant"},
    "start_anchor": ANCHOR,
    "fields": {
        "reasoning_content": {"open_pattern": "(?:<think>\\s*|^)", "close": "</think>"},
        "content": {"close": "<|im_end|>"},
    },
}
#: Mistral-style: tool calls run to the end of the stream.
TO_THE_END = {
    "defaults": {"role": "assistant"},
    "start_anchor": ANCHOR,
    "fields": {
        "tool_calls": {"open": "[TOOL_CALLS]", "close_pattern": "\\Z", "content": "json"},
        "content": {"close_pattern": "$"},
    },
}
TEMPLATES = {
    "preopened": PREOPENED,
    "start_or_tag": {**PREOPENED, "fields": {**PREOPENED["fields"],
                                            "reasoning_content": {"open_pattern": "(?:^|<think>\\s*)",
                                                                  "close": "</think>"}}},
    "to_the_end": TO_THE_END,
    "z_lower": {**TO_THE_END, "fields": {"tool_calls": {"open": "[TOOL_CALLS]", "close_pattern": "\\z",
                                                        "content": "json"},
                                         "content": {"close_pattern": "\\A<<(?=x)|\\z"}}},
    "lookahead_and_end": {
        "start_anchor": ANCHOR,
        "fields": {
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json"},
            "content": {"close_pattern": "(?=<tool_call>)|$"},
        },
    },
}
TEXTS = [
    "",
    "Hm, fine.</think>Hello!<|im_end|>",
    "<think>\nHm</think>Hi<|im_end|>",
    "Hello\n",
    'Sure. [TOOL_CALLS][{"name": "f", "arguments": {}}]',
    'Sure.<tool_call>[1]</tool_call>\n<tool_call>[2]</tool_call>',
    "<<x",
    "\n\n  ",
]
PREFIXES = [ANCHOR, PROMPT, PROMPT + "<think>\n", PROMPT + "Let me", "", "no anchor here "]


def run(template: Any, prefix: str, chunks: list[str], *, trace: bool = False) -> dict[str, Any]:
    parser = ResponseParser(template, prefix, trace=trace)
    events = list(parser.initial_events)
    for c in chunks:
        events += parser.feed(c)
    message, final = parser.finalize()
    return {"message": message, "events": merge_chunks(events + final), "errors": [str(e) for e in parser.errors]}


def native_run(template: Any, prefix: str, chunks: list[str]) -> dict[str, Any]:
    parser = native.ResponseParser(template, prefix)
    events = list(parser.initial_events)
    for c in chunks:
        events += parser.feed(c)
    message, final = parser.finalize()
    return {"message": message, "events": merge_chunks(events + final)}


def native_shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our events without the keys native does not have (`at_end`, `captures`, `position`)."""
    return merge_chunks([{k: v for k, v in e.items() if k not in ("at_end", "captures", "position")}
                         for e in without_trace(events)])


# --------------------------------------------------------------------------- loading


@pytest.mark.parametrize("pattern", ["^", "\\A", "$", "\\Z", "\\z", "(?:^|<think>\\s*)", "(?=<tool_call>)|$",
                                     "^\\s*", "\\b", "(?=[\\s\\S])"])
@pytest.mark.parametrize("key", ["open_pattern", "close_pattern"])
def test_anchored_empty_matching_delimiters_load(pattern: str, key: str) -> None:
    spec = {key: pattern} if key == "open_pattern" else {"open": "<x>", key: pattern}
    load_template({"start_anchor": ANCHOR, "fields": {"x": spec, "content": {}}})


@pytest.mark.parametrize("pattern", ["x*", "(?:)", "\\s*", "(?!<)", "(?:<think>)?", "\\G", "\\B"])
def test_delimiters_matching_the_empty_string_anywhere_are_still_rejected(pattern: str) -> None:
    with pytest.raises(TemplateError, match="matches the empty string, so it would fire at every position") as info:
        load_template({"start_anchor": ANCHOR, "fields": {"r": {"open_pattern": pattern}, "content": {}}})
    assert (info.value.field, info.value.key) == ("r", "open_pattern")


# --------------------------------------------------------------------------- `^` and the cut stream


def test_caret_opens_at_the_first_generated_character_when_the_prefix_ends_at_the_anchor() -> None:
    text = "Hm, fine.</think>Hello!<|im_end|>"
    expected = {"role": "assistant", "reasoning_content": "Hm, fine.", "content": "Hello!"}
    assert parse_response(text, PREOPENED, prefix=PROMPT) == expected
    for chunks in ([text], list(text), ["", "H", "m, fine.</thi", "nk>Hello!<|im_end|>"]):
        got = run(PREOPENED, PROMPT, chunks)
        assert got["message"] == expected
        assert got["events"][0] == {"type": "region_open", "field": "reasoning_content"}


def test_caret_matches_where_the_cut_prefix_starts_when_the_prefix_runs_past_the_anchor() -> None:
    # The stream is "Let me" + generation: `^` fires in the prefix, before "Let me".
    parser = ResponseParser(PREOPENED, PROMPT + "Let me")
    assert parser.initial_events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "Let me", "dirty": False},
    ]
    assert parse_response(" think.</think>Hi", PREOPENED, prefix=PROMPT + "Let me") == {
        "role": "assistant", "reasoning_content": "Let me think.", "content": "Hi"}
    # The model writing <think> itself: the tag alternative wins at offset 0 (it comes first).
    assert parse_response("<think>\nHm</think>Hi", PREOPENED, prefix=PROMPT) == {
        "role": "assistant", "reasoning_content": "Hm", "content": "Hi"}


def test_caret_never_matches_later_in_the_stream() -> None:
    # After the reasoning region closes, `^` cannot open it again, however the text is chunked (and
    # however far the 256 characters of lookbehind context have moved).
    text = "a</think>" + "x" * 600 + "\n" + "y" * 10
    expected = {"role": "assistant", "reasoning_content": "a", "content": "x" * 600 + "\n" + "y" * 10}
    assert parse_response(text, PREOPENED, prefix=ANCHOR) == expected
    assert run(PREOPENED, ANCHOR, list(text))["message"] == expected


def test_an_empty_generation_opens_nothing() -> None:
    for name, template in TEMPLATES.items():
        got = run(template, ANCHOR, [], trace=True)
        assert not [e for e in got["events"] if e["type"] == "region_open"], name
        assert parse_response("", template, prefix=ANCHOR) == template.get("defaults", {}), name


# --------------------------------------------------------------------------- `$`, `\Z`, `\z`


def test_end_anchors_fire_only_at_the_end_of_the_stream() -> None:
    text = 'Sure. [TOOL_CALLS][{"name": "f", "arguments": {}}]'
    parser = ResponseParser(TO_THE_END, ANCHOR, trace=True)
    events = []
    for c in text:
        events += parser.feed(c)
    # while streaming, neither end anchor fires (content ends because tool_calls opens)
    assert not [e for e in events if e["type"] == "delimiter" and e["kind"] == "close"]
    assert not [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"]
    message, final = parser.finalize()
    assert message == {"role": "assistant", "content": "Sure.", "tool_calls": [{"name": "f", "arguments": {}}]}
    # the close fired (it is not a region cut off by the end of the stream: no `at_end`)
    assert {"type": "delimiter", "field": "tool_calls", "kind": "close", "text": ""} in final
    assert {"type": "region_close", "field": "tool_calls", "value": [{"name": "f", "arguments": {}}]} in final


def test_dollar_before_a_final_newline_ends_the_message_there() -> None:
    # Python's `$` also matches before a final newline (as in native): the newline is after the message.
    got = run(TO_THE_END, ANCHOR, list("Hello\n"), trace=True)
    assert got["message"] == {"role": "assistant", "content": "Hello"}
    assert {"type": "text_dropped", "text": "\n", "reason": "after_end"} in got["events"]


# --------------------------------------------------------------------------- invariance and native


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_text_and_prefix_streams_like_one_shot(name: str) -> None:
    template = TEMPLATES[name]
    for prefix in PREFIXES:
        for text in TEXTS:
            whole = run(template, prefix, [text])
            assert parse_response(text, template, prefix=prefix, strict=False) == whole["message"]
            for chunks in (list(text), [text[:1], text[1:]], ["", text, ""]):
                assert canon(run(template, prefix, chunks)) == canon(whole), (prefix, text, chunks)


@given(st.sampled_from(sorted(TEMPLATES)), st.sampled_from(PREFIXES), st.sampled_from(TEXTS), st.data())
def test_any_chunking_equals_one_shot_including_a_boundary_at_the_anchor(name: str, prefix: str, text: str,
                                                                        data: Any) -> None:
    template = TEMPLATES[name]
    # the prefix may be cut anywhere too: the anchor's end is then a chunk boundary of the prompt
    chunks = data.draw(chunkings(text))
    whole = run(template, prefix, [text], trace=True)
    streamed = run(template, prefix, chunks, trace=True)
    assert canon(streamed) == canon(whole)
    differs = any(e["type"] == "text_dropped" and e["reason"] in ("after_end", "whitespace") for e in whole["events"])
    if native is not None and not differs:  # (documented differences: see test_same_as_native)
        assert canon(streamed["message"]) == canon(native_run(template, prefix, [text])["message"])


@pytest.mark.skipif(native is None, reason="needs Transformers 5.x (transformers.utils.chat_parsing)")
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_same_as_native(name: str) -> None:
    template = TEMPLATES[name]
    compared = 0
    for prefix in PREFIXES:
        for text in TEXTS:
            ours = run(template, prefix, [text], trace=True)
            # Documented differences (README): whitespace alone opens no implicit region, text after the
            # implicit field's close ends the message; native reopens the implicit field for both.
            if any(e["type"] == "text_dropped" and e["reason"] in ("after_end", "whitespace") for e in ours["events"]):
                continue
            theirs = native_run(template, prefix, [text])
            assert canon(ours["message"]) == canon(theirs["message"]), (prefix, text)
            assert canon(native_shape(ours["events"])) == canon(theirs["events"]), (prefix, text)
            for chunks in (list(text),):
                assert canon(run(template, prefix, chunks)["message"]) == canon(theirs["message"])
            compared += 1
    assert compared >= 12
