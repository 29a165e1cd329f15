"""`text` with `remove_pattern` / `report_as`: inline markup (Cohere's citations `<co>…</co: 0:[1]>`) taken out
of the text, streamed clean, and reported in a message key of its own, so nothing of it is lost."""

from __future__ import annotations

import pickle

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from hf_response_templates import ResponseParser, TemplateError, get_template, load_template, parse_response
from hf_response_templates.content import Markup, get_content_parser
from hf_response_templates.deltas import DeltaStream

COHERE = get_template("cohere-command-r7b")
CITE = COHERE["fields"]["content"]["content_args"]["remove_pattern"]
TURN = "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"

# Command R7B's documented form (its chat template's system prompt): "<co>span</co: 0:[1,2],1:[0]>"
ANSWER = (
    "<|START_THINKING|>The rainbow <co>emoji: 🌈</co: 0:[1]> helps.<|END_THINKING|>"
    "<|START_RESPONSE|>The capital is <co>Paris</co: 0:[1]>, on the <co>Seine</co: 0:[1,2],1:[0]>.<|END_RESPONSE|>"
    "<|END_OF_TURN_TOKEN|>"
)


def _template(**args: object) -> dict:
    return {"start_anchor": "<s>", "fields": {"content": {"content": "text", "content_args": args}}}


def _stream(template: object, chunks: list[str], prefix: str = "") -> tuple[dict, list[dict]]:
    parser = ResponseParser(template, prefix=prefix)
    events: list[dict] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, events + final


def test_cohere_citations_leave_the_cited_text_and_are_reported_with_their_sources() -> None:
    message = parse_response(ANSWER, COHERE, prefix=TURN)
    assert message["tool_plan"] == "The rainbow emoji: 🌈 helps."
    assert message["content"] == "The capital is Paris, on the Seine."
    assert message["citations"] == [
        {"field": "tool_plan", "start": 12, "end": 20, "text": "emoji: 🌈", "sources": "0:[1]"},
        {"field": "content", "start": 15, "end": 20, "text": "Paris", "sources": "0:[1]"},
        {"field": "content", "start": 29, "end": 34, "text": "Seine", "sources": "0:[1,2],1:[0]"},
    ]
    for cite in message["citations"]:  # the offsets index the message's text
        assert message[cite["field"]][cite["start"] : cite["end"]] == cite["text"]


def test_offsets_count_from_the_stripped_text_and_from_earlier_regions_of_the_field() -> None:
    template = {"start_anchor": "<s>", "fields": {"content": {
        "open": "<r>", "close": "</r>", "content": "text",
        "content_args": {"remove_pattern": CITE, "report_as": "citations"}}}}
    text = "<r>  one <co>two</co: 0:[0]></r><r>\n three <co>four</co: 1:[2]> </r>"
    message = parse_response(text, template, prefix="")
    assert message["content"] == "one two\nthree four"
    assert [message["content"][c["start"] : c["end"]] for c in message["citations"]] == ["two", "four"]


def test_prose_that_mentions_the_tags_is_content_verbatim() -> None:
    prose = "Wrap a span in <co> and close it with </co: ...> when citing; <co>unclosed spans stay"
    text = f"<|START_RESPONSE|>{prose}<|END_RESPONSE|>"
    message = parse_response(text, COHERE, prefix=TURN)
    assert message["content"] == prose
    assert "citations" not in message
    streamed, _ = _stream(COHERE, list(text), prefix=TURN)
    assert streamed == message


def test_without_a_keep_group_matches_are_removed_whole() -> None:
    template = _template(remove_pattern=r"\[\d+\]", report_as="refs")
    message = parse_response("Paris[1] is big[2].", template, prefix="")
    assert message == {"content": "Paris is big.", "refs": [
        {"field": "content", "start": 5, "end": 5, "text": ""}, {"field": "content", "start": 12, "end": 12, "text": ""}]}
    assert parse_response("a [1] b", _template(remove_pattern=r"\[\d+\]"), prefix="") == {"content": "a  b"}


@pytest.mark.parametrize("args, key, words", [
    ({"remove_pattern": "(unclosed"}, "content_args.remove_pattern", "not a valid regex"),
    ({"remove_pattern": "x*"}, "content_args.remove_pattern", "matches the empty string"),
    ({"remove_pattern": 3}, "content_args.remove_pattern", "non-empty regex string"),
    ({"report_as": "citations"}, "content_args.report_as", "needs remove_pattern"),
    ({"remove_pattern": "x", "report_as": ""}, "content_args.report_as", "non-empty string"),
    ({"remove_pattern": "x", "report_as": "content"}, "content_args.report_as", "a key the message already has"),
    ({"remove_pattern": "x", "report_as": "unparsed"}, "content_args.report_as", "a key the message already has"),
])
def test_invalid_options_name_the_field_and_key(args: dict, key: str, words: str) -> None:
    with pytest.raises(TemplateError, match=words) as info:
        load_template(_template(**args))
    assert info.value.field == "content" and info.value.key == key


PIECES = ["<co>", "</co: 0:[1]>", "</co:", " 1:[2,3]>", "Paris", " ", "\n", "<", ">", "co", "</co>", "x"]


@given(st.lists(st.sampled_from(PIECES), max_size=25), st.data())
@example(["<co>", "Paris", "</co: 0:[1]>", " ", "x"], None)
def test_streamed_chunks_are_the_clean_text_and_the_message_equals_one_shot(pieces: list[str], data) -> None:
    body = "".join(pieces)
    text = f"<|START_RESPONSE|>{body}<|END_RESPONSE|>"
    if data is None:
        cuts: list[int] = list(range(len(text)))
    else:
        cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=15))))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if a < b]
    one_shot = parse_response(text, COHERE, prefix=TURN, strict=False)
    streamed, events = _stream(COHERE, chunks, prefix=TURN)
    assert streamed == one_shot
    sent = "".join(e["text"] for e in events if e["type"] == "region_chunk" and e["field"] == "content")
    clean = Markup(regex.compile(CITE, regex.DOTALL)).sub(body)
    assert sent == clean  # every chunk is final text: the markup never reaches a consumer
    assert "<co>" not in one_shot.get("content", "") or "<co>" in clean


@given(st.lists(st.sampled_from(PIECES), max_size=25), st.integers(1, 7))
def test_openai_deltas_stream_the_clean_text(pieces: list[str], size: int) -> None:
    text = "<|START_RESPONSE|>" + "".join(pieces) + "<|END_RESPONSE|><|END_OF_TURN_TOKEN|>"
    stream = DeltaStream(COHERE, prefix=TURN)
    deltas: list[dict] = []
    for i in range(0, len(text), size):
        deltas += stream.feed(text[i : i + size])
    deltas += stream.finish()
    assert stream.warnings == []
    content = "".join(d.get("content") or "" for d in deltas)
    assert content == parse_response(text, COHERE, prefix=TURN).get("content", "")


def test_a_parser_pickles_while_a_citation_is_held() -> None:
    parser = ResponseParser(COHERE, prefix=TURN)
    parser.feed("<|START_RESPONSE|>The capital is <co>Par")
    copy = pickle.loads(pickle.dumps(parser))
    assert [e["text"] for e in copy.feed("is</co: 0:[1]>.") if e["type"] == "region_chunk"] == ["Paris."]
    assert copy.finalize()[0]["content"] == "The capital is Paris."


class _CountingPattern:
    """A compiled pattern that counts the characters each search may look at."""

    def __init__(self, source: str) -> None:
        self.pattern = regex.compile(source, regex.DOTALL)
        self.groupindex = self.pattern.groupindex
        self.looked = 0

    def search(self, text: str, pos: int = 0, **kwargs: object) -> object:
        self.looked += len(text) - pos
        return self.pattern.search(text, pos, **kwargs)


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_a_citation_that_never_closes_is_searched_in_linear_time(n: int) -> None:
    counting = _CountingPattern(CITE)
    markup = Markup(counting)  # type: ignore[arg-type]
    stream = markup.stream()
    text = "<co>" + "x" * n
    out = [stream.feed(markup, c) for c in text]
    assert "".join(out) == ""  # all held: the span may still close
    assert stream.rest(markup.sub(text)) == text  # it never did: the text is the model's, kept whole
    assert counting.looked < 3 * len(text) + 256 * 256, counting.looked  # quadratic would be ~n**2 / 2


def test_the_text_parser_declares_the_options() -> None:
    assert {"strip", "remove_pattern", "report_as"} <= set(get_content_parser("text").args)


@pytest.mark.parametrize("source", [r"^<x>", r"<x>$", r"\A<x>", r"<x>\Z", r"\b<x>", r"(?<=a)<x>", r"(?<!a)<x>",
                                    r"<y>(?:a|(?<=b)c)"])
def test_anchors_and_lookbehinds_are_refused(source: str) -> None:
    # a streamed region is cleaned chunk by chunk: these would see the edges of a chunk
    with pytest.raises(TemplateError, match="anchor") as info:
        load_template(_template(remove_pattern=source))
    assert info.value.key == "content_args.remove_pattern"
    load_template(_template(remove_pattern=r"<x>(?=y)(?!z)"))  # lookaheads are fine


GEMMA4 = get_template("gemma4")
GEMMA_TURN = "<bos><|turn>user\nHello<turn|>\n<|turn>model\n"


@pytest.mark.parametrize("prefix, output, expected", [
    # the channel opened again inside the open channel (by the prompt, or by the model itself)
    (GEMMA_TURN + "<|channel>thought\n", "<|channel>thought\nReasoning body<channel|>Final content<turn|>",
     {"reasoning_content": "Reasoning body", "content": "Final content"}),
    (GEMMA_TURN, "<|channel>thought\n<|channel>thought\nWhy<channel|>Because<turn|>",
     {"reasoning_content": "Why", "content": "Because"}),
    # the channel closed twice, or closed with none open
    (GEMMA_TURN, "<|channel>thought\nWhy<channel|><channel|>Because<turn|>",
     {"reasoning_content": "Why", "content": "Because"}),
    (GEMMA_TURN, "Because<channel|> so.<turn|>", {"content": "Because so."}),
    # the word `thought` in the text is the model's
    (GEMMA_TURN, "<|channel>thought\nA thought<channel|>My thought: yes<turn|>",
     {"reasoning_content": "A thought", "content": "My thought: yes"}),
])
def test_gemma4_stray_and_doubled_channel_markers(prefix: str, output: str, expected: dict) -> None:
    message = parse_response(output, GEMMA4, prefix=prefix)
    assert message == {"role": "assistant", **expected}
    streamed, events = _stream(GEMMA4, list(output), prefix=prefix)
    assert streamed == message
    for field, value in expected.items():
        sent = "".join(e["text"] for e in events if e["type"] == "region_chunk" and e["field"] == field)
        assert sent.strip() == value  # the markers never reach a consumer of the stream
    stream = DeltaStream(GEMMA4, prefix=prefix)
    for c in output:
        stream.feed(c)
    stream.finish()
    assert stream.warnings == []


def test_a_remove_pattern_that_runs_too_long_loses_nothing() -> None:
    # a catastrophic pattern: one-shot and streamed, the region is reported malformed with all of its text
    template = _template(remove_pattern=r"(?:x+x+)+y")
    text = "x" * 5000
    message = parse_response(text, template, prefix="", strict=False, regex_timeout=0.05)
    assert "content" not in message
    assert [(u["field"], u["text"]) for u in message["unparsed"]] == [("content", text)]
    assert "remove_pattern" in message["unparsed"][0]["error"]
    parser = ResponseParser(template, prefix="", regex_timeout=0.05)
    events = [e for i in range(0, len(text), 5) for e in parser.feed(text[i : i + 5])]
    streamed, final = parser.finalize()
    assert [(u["field"], u["text"]) for u in streamed["unparsed"]] == [("content", text)]
    assert any(e["type"] == "error" for e in events + final)
