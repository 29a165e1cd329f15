"""Streaming out of `generate` (SPEC "Events"): `stream_events` over a `TextIteratorStreamer`, and
`ResponseStreamer` passed straight to `generate`, with a tiny scripted Llama."""

from __future__ import annotations

import threading

import pytest
from _tiny_model import scripted_generate, tiny_model
from _tokenizers import byte_level_tokenizer, metaspace_tokenizer, qwen3_template, verbatim_template
from transformers import TextIteratorStreamer, TextStreamer
from transformers.generation.streamers import BaseStreamer

from hf_response_templates import ResponseParseError, ResponseParser
from hf_response_templates.tokenizer import NoResponseTemplateError, ResponseStreamer, install, stream_events

install()

PROMPT = "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n"
PROMPT_THINKING = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
TOOL_RESPONSE = (
    "<think>\nThe user wants the weather. I should call get_weather.\n</think>\n\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call><|im_end|>'
)
TOOL_MESSAGE = {
    "role": "assistant",
    "reasoning_content": "The user wants the weather. I should call get_weather.",
    "tool_calls": [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
        }
    ],
}
EMOJI_RESPONSE = "Think step by step.\n</think>\n\nOl\u00e1! \N{GRINNING FACE} Caf\u00e9 \u2615<|im_end|>"
EMOJI_MESSAGE = {
    "role": "assistant",
    "reasoning_content": "Think step by step.",
    "content": "Ol\u00e1! \N{GRINNING FACE} Caf\u00e9 \u2615",
}


@pytest.fixture(scope="module")
def tok():
    t = byte_level_tokenizer()
    t.response_template = qwen3_template()
    return t


def summarize(events):
    """Events with consecutive chunks of one region merged (chunk boundaries depend on tokens)."""
    out = []
    for e in events:
        if e["type"] == "region_chunk" and out and out[-1][0] == "region_chunk" and out[-1][1] == e["field"]:
            out[-1] = ("region_chunk", e["field"], out[-1][2] + e["text"], e["dirty"])
        elif e["type"] == "region_chunk":
            out.append(("region_chunk", e["field"], e["text"], e["dirty"]))
        else:
            out.append((e["type"], e.get("field"), repr(e.get("value"))))
    return out


def reference(template, prefix, response):
    """What the engine emits for the whole text at once."""
    parser = ResponseParser(template, prefix)
    events = parser.initial_events + parser.feed(response)
    message, final = parser.finalize()
    return summarize(events + final), message


def generate_in_thread(tok, prompt, response, streamer):
    errors = []

    def run():
        try:
            scripted_generate(tiny_model(tok), tok, [prompt], [response], streamer=streamer)
        except Exception as exc:  # surfaced by the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


# ------------------------------------------------------------------------------------ ResponseStreamer


def test_response_streamer_is_a_transformers_streamer(tok):
    assert issubclass(ResponseStreamer, BaseStreamer)
    assert ResponseStreamer.__module__ == "hf_response_templates.tokenizer"


@pytest.mark.parametrize(
    "prompt,response,message",
    [(PROMPT, TOOL_RESPONSE, TOOL_MESSAGE), (PROMPT_THINKING, EMOJI_RESPONSE, EMOJI_MESSAGE)],
    ids=["tool-call", "prefilled-think-and-emoji"],
)
def test_response_streamer_from_another_thread(tok, prompt, response, message):
    streamer = ResponseStreamer(tok, timeout=60)
    thread, errors = generate_in_thread(tok, prompt, response, streamer)
    events = list(streamer)
    thread.join()
    assert not errors
    assert streamer.message == message
    expected_events, expected_message = reference(qwen3_template(), prompt, response)
    assert expected_message == message
    assert summarize(events) == expected_events
    assert streamer.prefix_text == prompt
    assert not any("\ufffd" in e.get("text", "") for e in events)  # no character split in a chunk
    assert len([e for e in events if e["type"] == "region_chunk"]) > 3  # it really streamed


def test_response_streamer_in_the_same_thread_buffers_events(tok):
    streamer = ResponseStreamer(tok)
    with pytest.raises(RuntimeError, match="once the stream has ended"):
        _ = streamer.message
    scripted_generate(tiny_model(tok), tok, [PROMPT], [TOOL_RESPONSE], streamer=streamer)
    events = list(streamer)
    assert streamer.message == TOOL_MESSAGE
    assert events[-1] == {
        "type": "region_close",
        "field": "tool_calls",
        "value": TOOL_MESSAGE["tool_calls"][0],
    }
    assert list(streamer) == []  # exhausted


def test_response_streamer_trace_adds_the_delimiter_events_and_changes_nothing_else(tok):
    # trace=True (what DeltaStream.for_events needs to keep a model's own tool-call ids): the parser's
    # `delimiter` and `text_dropped` events are added; the other events and the message are the same
    plain, traced = ResponseStreamer(tok), ResponseStreamer(tok, trace=True)
    for streamer in (plain, traced):
        scripted_generate(tiny_model(tok), tok, [PROMPT], [TOOL_RESPONSE], streamer=streamer)
    plain_events, traced_events = list(plain), list(traced)
    assert not any(e["type"] in ("delimiter", "text_dropped") for e in plain_events)
    delimiters = [(e["field"], e["kind"], e["text"]) for e in traced_events if e["type"] == "delimiter"]
    assert delimiters == [
        ("reasoning_content", "open", "<think>"), ("reasoning_content", "close", "</think>"),
        ("tool_calls", "open", "<tool_call>"), ("tool_calls", "close", "</tool_call>"),
        ("content", "close", "<|im_end|>"),
    ]
    others = [e for e in traced_events if e["type"] not in ("delimiter", "text_dropped")]
    assert summarize(others) == summarize(plain_events)
    assert traced.message == plain.message == TOOL_MESSAGE


def test_response_streamer_keeps_sentencepiece_leading_space():
    tok = metaspace_tokenizer()
    tok.response_template = verbatim_template()
    response = tok.convert_tokens_to_ids(["\u2581Hello", "\u2581the", "re", "!", "<|im_end|>"])
    streamer = ResponseStreamer(tok)
    scripted_generate(tiny_model(tok), tok, [PROMPT], [response], streamer=streamer)
    text = "".join(e["text"] for e in streamer if e["type"] == "region_chunk")
    assert text == " Hello there!"
    assert streamer.message["content"] == " Hello there!"


def test_response_streamer_holds_back_a_split_character(tok):
    streamer = ResponseStreamer(tok)
    streamer.put(_ids_tensor(tok, PROMPT))
    emoji = tok.encode("\N{GRINNING FACE}", add_special_tokens=False)
    for token in emoji[:-1]:
        streamer.put(_ids_tensor_1d([token]))
    assert all(e.get("text", "") == "" for e in _drain(streamer))  # nothing emitted mid-character
    streamer.put(_ids_tensor_1d(emoji[-1:]))
    assert [e["text"] for e in _drain(streamer) if e["type"] == "region_chunk"] == ["\N{GRINNING FACE}"]
    streamer.end()
    assert streamer.message["content"] == "\N{GRINNING FACE}"


def test_response_streamer_rejects_batches(tok):
    import torch

    streamer = ResponseStreamer(tok)
    with pytest.raises(ValueError, match="batch size 1"):
        streamer.put(torch.ones(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="batch size 1"):
        list(streamer)  # the consumer sees the error too


def test_response_streamer_rejects_batches_in_generate(tok):
    streamer = ResponseStreamer(tok)
    with pytest.raises(ValueError, match="batch size 1"):
        scripted_generate(
            tiny_model(tok), tok, [PROMPT, PROMPT], [TOOL_RESPONSE, TOOL_RESPONSE], streamer=streamer
        )


def test_response_streamer_needs_a_template():
    with pytest.raises(NoResponseTemplateError):
        ResponseStreamer(byte_level_tokenizer())
    streamer = ResponseStreamer(byte_level_tokenizer(), response_template=qwen3_template())
    streamer.put(_ids_tensor(byte_level_tokenizer(), PROMPT))
    streamer.end()
    assert streamer.message == {"role": "assistant"}


def test_response_streamer_failure_at_finalize_reaches_the_consumer(tok):
    template = qwen3_template()
    template["fields"]["tool_calls"]["optional"] = False
    streamer = ResponseStreamer(tok, response_template=template)
    scripted_generate(tiny_model(tok), tok, [PROMPT], ["No tools.<|im_end|>"], streamer=streamer)
    with pytest.raises(ResponseParseError, match="required"):
        _ = streamer.message
    events = []
    with pytest.raises(ResponseParseError, match="required"):
        for event in streamer:  # every event first, then the error
            events.append(event)
    assert events[-1] == {"type": "region_close", "field": "content", "value": "No tools."}


def test_strict_false_streams_malformed_regions_into_unparsed(tok):
    bad = "<tool_call>{not json</tool_call><|im_end|>"
    streamer = ResponseStreamer(tok, strict=False)
    scripted_generate(tiny_model(tok), tok, [PROMPT], [bad], streamer=streamer)
    events = list(streamer)
    assert streamer.message["unparsed"][0]["field"] == "tool_calls"
    assert any(e["type"] == "region_malformed" for e in events)
    strict = ResponseStreamer(tok)
    scripted_generate(tiny_model(tok), tok, [PROMPT], [bad], streamer=strict)
    with pytest.raises(ResponseParseError):
        list(strict)
    stream = stream_events([bad], tok.get_response_parser(prefix=PROMPT), strict=False)
    list(stream)
    assert stream.message["unparsed"]
    stream = stream_events([bad], tok.get_response_parser(prefix=PROMPT))
    with pytest.raises(ResponseParseError):
        list(stream)


def _ids_tensor(tok, text):
    import torch

    return torch.tensor([tok.encode(text, add_special_tokens=False)])


def _ids_tensor_1d(ids):
    import torch

    return torch.tensor(ids)


def _drain(streamer):
    out = []
    while not streamer._queue.empty():
        out.append(streamer._queue.get())
    return out


# ----------------------------------------------------------------------- TextIteratorStreamer helper


def test_stream_events_over_text_iterator_streamer(tok):
    inputs = tok([PROMPT_THINKING], return_tensors="pt", add_special_tokens=False)
    streamer = TextIteratorStreamer(tok, skip_prompt=True, timeout=60)
    thread, errors = generate_in_thread(tok, PROMPT_THINKING, EMOJI_RESPONSE, streamer)
    stream = stream_events(streamer, tok.get_response_parser(prefix=inputs["input_ids"][0]))
    events = list(stream)
    thread.join()
    assert not errors
    assert stream.message == EMOJI_MESSAGE
    expected_events, _ = reference(qwen3_template(), PROMPT_THINKING, EMOJI_RESPONSE)
    assert summarize(events) == expected_events


def test_stream_events_over_plain_chunks(tok):
    parser = tok.get_response_parser(prefix=PROMPT)
    stream = stream_events(iter([TOOL_RESPONSE[:7], TOOL_RESPONSE[7:50], "", TOOL_RESPONSE[50:]]), parser)
    with pytest.raises(RuntimeError):
        _ = stream.message
    events = list(stream)
    assert stream.message == TOOL_MESSAGE
    assert summarize(events) == reference(qwen3_template(), PROMPT, TOOL_RESPONSE)[0]


def test_stream_events_refuses_streamers_that_delete_delimiters(tok):
    parser = tok.get_response_parser(prefix=PROMPT)
    with pytest.raises(ValueError, match="skip_special_tokens=True"):
        stream_events(TextIteratorStreamer(tok, skip_prompt=True, skip_special_tokens=True), parser)
    with pytest.raises(ValueError, match="skip_prompt"):
        stream_events(TextIteratorStreamer(tok), parser)


def test_the_trap_skip_special_tokens_loses_the_structure(tok):
    """Why the check above exists: the same generation decoded without special tokens parses wrong."""
    ids = tok.encode(TOOL_RESPONSE, add_special_tokens=False)
    stripped = tok.decode(ids, skip_special_tokens=True)
    assert "<tool_call>" not in stripped
    assert tok.parse_response(stripped, prefix=PROMPT) != TOOL_MESSAGE
    assert tok.parse_response(ids, prefix=PROMPT) == TOOL_MESSAGE


def test_text_streamer_is_accepted_type(tok):
    # A TextStreamer (printing) is not iterable, but the checks read the same attributes.
    with pytest.raises(ValueError, match="skip_special_tokens"):
        stream_events(
            TextStreamer(tok, skip_prompt=True, skip_special_tokens=True), tok.get_response_parser(prefix="")
        )
