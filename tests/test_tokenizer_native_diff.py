"""Differential test against Transformers' native parser (`transformers.utils.chat_parsing`, 5.x).

Every case goes through *our* tokenizer integration (token ids in, prompt and generation decoded
together) and through the native module function on the original text (not through the tokenizer
method, which we replaced). Results must be equal on every case where native is not known to lose
data; the known differences (see the README's table) are asserted separately.
"""

from __future__ import annotations

import copy

import pytest
from _tokenizers import byte_level_tokenizer, harmony_template, qwen3_template

from hf_response_templates import ResponseParser
from hf_response_templates.tokenizer import install

chat_parsing = pytest.importorskip(
    "transformers.utils.chat_parsing", reason="native response templates are 5.x only"
)
native_parse = chat_parsing.parse_response
NativeParser = chat_parsing.ResponseParser

from engine_helpers import QWEN_XML  # noqa: E402

install()

PROMPT = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
MULTI_TURN = (
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nold\n</think>\n\nHello!<|im_end|>\n"
    "<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
)
HARMONY_PROMPT = "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant"

XML_TOOLS = QWEN_XML
COHERE_LIKE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{tool_name}", "arguments": "{parameters}"},
            },
        },
        "content": {"close": "<|im_end|>"},
    },
}
TYPED = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "count": {"open": "<think>", "close": "</think>", "content": "int"},
        "meta": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "kv-lines",
            "content_args": {"value_parser": {"name": "int"}},
        },
        "content": {"close": "<|im_end|>"},
    },
}
JOINED = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "repeats": True, "join": "\n"},
        "content": {"open": "<tool_call>", "close": "</tool_call>"},
    },
}
WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                },
            },
        },
    }
]

TOOL_JSON = '{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}'
CASES = {
    "think-and-answer": (qwen3_template(), PROMPT, "<think>\nhm\n</think>\n\nHello!<|im_end|>"),
    "prefilled-think": (qwen3_template(), PROMPT + "<think>\n", "hm, ok\n</think>\n\nHello!<|im_end|>"),
    "empty-think": (qwen3_template(), PROMPT + "<think>\n\n</think>\n\n", "Only an answer.<|im_end|>"),
    "tool-call": (
        qwen3_template(),
        PROMPT,
        f"<think>\nneed tool\n</think>\n\n<tool_call>\n{TOOL_JSON}\n</tool_call><|im_end|>",
    ),
    "two-tool-calls": (
        qwen3_template(),
        PROMPT,
        f"<tool_call>\n{TOOL_JSON}\n</tool_call>\n<tool_call>\n{TOOL_JSON.replace('Paris', 'Lyon')}\n</tool_call><|im_end|>",
    ),
    "text-then-tool": (
        qwen3_template(),
        PROMPT,
        f"Let me check.\n<tool_call>\n{TOOL_JSON}\n</tool_call><|im_end|>",
    ),
    "multi-turn-prefix": (qwen3_template(), MULTI_TURN, "<think>\nnew\n</think>\n\nAgain!<|im_end|>"),
    "unicode": (
        qwen3_template(),
        PROMPT,
        "<think>caf\u00e9 \u2615</think>Ol\u00e1 \N{GRINNING FACE} \u00e7a va<|im_end|>",
    ),
    "truncated-in-think": (qwen3_template(), PROMPT, "<think>\nstill thinking about"),
    "no-prefix-opt-out": (qwen3_template(), "", "<think>a</think>b<|im_end|>"),
    "harmony-final": (
        harmony_template(),
        HARMONY_PROMPT,
        "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>",
    ),
    "harmony-tool": (
        harmony_template(),
        HARMONY_PROMPT,
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": 2}<|call|>',
    ),
    "xml-tool": (
        XML_TOOLS,
        PROMPT,
        "<think>x</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>",
    ),
    "transform-each": (
        COHERE_LIKE,
        PROMPT,
        '<tool_call>[{"tool_name": "a", "parameters": {"x": 1}}, {"tool_name": "b", "parameters": {}}]</tool_call><|im_end|>',
    ),
    "typed-content": (
        TYPED,
        PROMPT,
        "<think> 42 </think><tool_call>a: 1\nb: 2\n\nnot a pair</tool_call>done<|im_end|>",
    ),
    "join": (JOINED, PROMPT, "<think>one</think><think>two</think><tool_call>answer</tool_call>"),
}
TOOLS_CASES = ["tool-call", "two-tool-calls", "xml-tool", "harmony-tool"]


@pytest.fixture(scope="module")
def tok():
    return byte_level_tokenizer()


def enc(tok, text):
    return tok.encode(text, add_special_tokens=False)


@pytest.mark.parametrize("name", list(CASES))
def test_parse_response_equals_native(tok, name):
    template, prefix, response = copy.deepcopy(CASES[name])
    expected = native_parse(response, template, prefix=prefix)
    assert tok.parse_response(enc(tok, response), template, prefix=enc(tok, prefix)) == expected
    assert tok.parse_response(response, template, prefix=prefix) == expected


def test_both_raise_on_a_region_that_does_not_parse(tok):
    response = '<tool_call>\n{"name": "get_weather", "argu'  # generation cut inside the JSON
    with pytest.raises(ValueError):
        native_parse(response, qwen3_template(), prefix=PROMPT)
    with pytest.raises(ValueError):  # ResponseParseError
        tok.parse_response(enc(tok, response), qwen3_template(), prefix=enc(tok, PROMPT))


@pytest.mark.parametrize("name", TOOLS_CASES)
def test_tool_typing_equals_native(tok, name):
    template, prefix, response = copy.deepcopy(CASES[name])
    expected = native_parse(response, template, prefix=prefix, tools=WEATHER_TOOLS)
    assert (
        tok.parse_response(enc(tok, response), template, prefix=enc(tok, prefix), tools=WEATHER_TOOLS)
        == expected
    )


def test_batch_equals_native(tok):
    names = [n for n in CASES if CASES[n][0] == qwen3_template()]
    responses = [enc(tok, CASES[n][2]) for n in names]
    prefixes = [enc(tok, CASES[n][1]) for n in names]
    expected = [native_parse(CASES[n][2], qwen3_template(), prefix=CASES[n][1]) for n in names]
    assert tok.parse_response(responses, qwen3_template(), prefix=prefixes) == expected


def merged(events):
    out = []
    for e in events:
        if e["type"] == "region_chunk" and out and out[-1][0] == "region_chunk" and out[-1][1] == e["field"]:
            out[-1] = ("region_chunk", e["field"], out[-1][2] + e["text"], e["dirty"])
        elif e["type"] == "region_chunk":
            out.append(("region_chunk", e["field"], e["text"], e["dirty"]))
        else:
            out.append((e["type"], e["field"], e.get("value")))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_streamed_events_equal_native(tok, name):
    template, prefix, response = copy.deepcopy(CASES[name])
    # feed the text token by token, as a streamer would
    ids = enc(tok, response)
    pieces = []
    for i in range(len(ids)):
        text = tok.decode(ids[: i + 1])
        done = "".join(pieces)
        if not text.endswith("\ufffd") and text.startswith(done):
            pieces.append(text[len(done) :])
    pieces.append(response[len("".join(pieces)) :])

    def run(parser):
        events = list(parser.initial_events)
        for piece in pieces:
            events += parser.feed(piece)
        message, final = parser.finalize()
        return message, merged(events + final)

    ours = run(tok.get_response_parser(template, prefix=enc(tok, prefix)))
    native_message, native_events = run(NativeParser(template, prefix=prefix))
    assert ours == (native_message, without_blank_implicit_regions(native_events, template))


def without_blank_implicit_regions(events, template):
    """Deliberate difference: native opens and closes the implicit field for the whitespace between two
    regions (open, chunk "\n\n", close ""); we open nothing there. Drop those from native's events."""
    implicit = {n for n, f in template["fields"].items() if "open" not in f and "open_pattern" not in f}
    out, i = [], 0
    while i < len(events):
        e = events[i]
        if e[0] == "region_open" and e[1] in implicit:
            j = i + 1
            if (
                j < len(events)
                and events[j][0] == "region_chunk"
                and events[j][1] == e[1]
                and not events[j][2].strip()
            ):
                j += 1
            if j < len(events) and events[j][:2] == ("region_close", e[1]) and events[j][2] == "":
                i = j + 1
                continue
        out.append(e)
        i += 1
    return out


# ----------------------------------------------------------------------- deliberate differences


def test_known_difference_text_after_the_message_end(tok):
    """Native reopens `content` after `<|im_end|>` and overwrites it with what follows (here a newline
    and pad tokens); we end the message there."""
    response = "<think>hm</think>The answer.<|im_end|>\n<|endoftext|><|endoftext|>"
    ours = tok.parse_response(response, qwen3_template(), prefix=PROMPT)
    assert ours == {"role": "assistant", "reasoning_content": "hm", "content": "The answer."}
    native = native_parse(response, qwen3_template(), prefix=PROMPT)
    assert native.get("content") != "The answer."  # native loses the answer


def test_known_difference_implicit_field_reopening(tok):
    """Native overwrites the implicit field when it reopens between tool calls; we keep the earlier text
    and append later non-blank text."""
    response = f"Let me check.\n<tool_call>\n{TOOL_JSON}\n</tool_call>\nDone checking.<|im_end|>"
    ours = tok.parse_response(response, qwen3_template(), prefix=PROMPT)
    assert ours["content"] == "Let me check.\nDone checking."
    native = native_parse(response, qwen3_template(), prefix=PROMPT)
    assert native["content"] == "Done checking."  # native lost "Let me check."
    assert ours["tool_calls"] == native["tool_calls"]


def test_parser_class_is_ours(tok):
    assert isinstance(tok.get_response_parser(qwen3_template(), prefix=""), ResponseParser)
