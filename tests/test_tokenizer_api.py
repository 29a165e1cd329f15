"""`tokenizer.parse_response` / `tokenizer.get_response_parser`: every input kind, broadcasting,
and the errors (SPEC "Public API")."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tokenizers import byte_level_tokenizer, char_slow_tokenizer, qwen3_template

import hf_response_templates
from hf_response_templates import ResponseParseError, TemplateError
from hf_response_templates import parse_response as engine_parse
from hf_response_templates.tokenizer import NoResponseTemplateError, install

install()

PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
PROMPT_THINKING = "<|im_start|>user\nHi there, how are you doing?<|im_end|>\n<|im_start|>assistant\n<think>\n"
TOOL_RESPONSE = (
    "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call><|im_end|>'
)
TEXT_RESPONSE = "I should greet.\n</think>\n\nOlá! Café ☕ 😀<|im_end|>"

TOOL_MESSAGE = {
    "role": "assistant",
    "reasoning_content": "The user wants the weather.",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}}
    ],
}
TEXT_MESSAGE = {"role": "assistant", "reasoning_content": "I should greet.", "content": "Olá! Café ☕ 😀"}


@pytest.fixture(scope="module")
def tok():
    t = byte_level_tokenizer()
    t.response_template = qwen3_template()
    return t


def ids(tok, text):
    return tok.encode(text, add_special_tokens=False)


def test_expected_messages_match_engine_on_text():
    # The tokenizer path must give what the engine gives on the same text.
    assert engine_parse(TOOL_RESPONSE, qwen3_template(), prefix=PROMPT) == TOOL_MESSAGE
    assert engine_parse(TEXT_RESPONSE, qwen3_template(), prefix=PROMPT_THINKING) == TEXT_MESSAGE


# ------------------------------------------------------------------------------------- one sequence

SINGLE_FORMS = {
    "str": lambda tok, text: text,
    "list[int]": lambda tok, text: ids(tok, text),
    "tuple[int]": lambda tok, text: tuple(ids(tok, text)),
    "list[np.int64]": lambda tok, text: list(np.array(ids(tok, text))),
    "numpy-1d-int64": lambda tok, text: np.array(ids(tok, text), dtype=np.int64),
    "numpy-1d-int32": lambda tok, text: np.array(ids(tok, text), dtype=np.int32),
    "torch-1d": lambda tok, text: torch.tensor(ids(tok, text)),
    "torch-2d-one-row": lambda tok, text: torch.tensor([ids(tok, text)]),  # prefix only (see below)
}


@pytest.mark.parametrize("prefix_form", list(SINGLE_FORMS))
@pytest.mark.parametrize("response_form", [f for f in SINGLE_FORMS if f != "torch-2d-one-row"])
def test_single_sequence_every_input_kind(tok, response_form, prefix_form):
    response = SINGLE_FORMS[response_form](tok, TEXT_RESPONSE)
    prefix = SINGLE_FORMS[prefix_form](tok, PROMPT_THINKING)
    assert tok.parse_response(response, prefix=prefix) == TEXT_MESSAGE


def test_prefix_as_batch_encoding(tok):
    enc = tok([PROMPT_THINKING], return_tensors="pt", add_special_tokens=False)
    assert tok.parse_response(ids(tok, TEXT_RESPONSE), prefix=enc) == TEXT_MESSAGE
    assert tok.parse_response(ids(tok, TEXT_RESPONSE), prefix=dict(enc)) == TEXT_MESSAGE


def test_generation_with_its_prompt_missing_is_misread_so_prefix_matters(tok):
    # The prompt opened <think>: without it the reasoning lands in content.
    wrong = tok.parse_response(TEXT_RESPONSE, prefix="")
    assert wrong != TEXT_MESSAGE
    assert "reasoning_content" not in wrong


# ------------------------------------------------------------------------------------------ batches


def padded_rows(tok, texts):
    rows = [ids(tok, t) for t in texts]
    width = max(map(len, rows))
    return [r + [tok.pad_token_id] * (width - len(r)) for r in rows]


def left_padded_rows(tok, texts):
    rows = [ids(tok, t) for t in texts]
    width = max(map(len, rows))
    return [[tok.pad_token_id] * (width - len(r)) + r for r in rows]


BATCH_FORMS = {
    "list[str]": lambda tok, texts, pad: list(texts),
    "list[list[int]]": lambda tok, texts, pad: [ids(tok, t) for t in texts],
    "list[torch-1d]": lambda tok, texts, pad: [torch.tensor(ids(tok, t)) for t in texts],
    "list[numpy-1d]": lambda tok, texts, pad: [np.array(ids(tok, t)) for t in texts],
    "numpy-2d": lambda tok, texts, pad: np.array(pad(tok, texts)),
    "torch-2d": lambda tok, texts, pad: torch.tensor(pad(tok, texts)),
}


@pytest.mark.parametrize("prefix_form", list(BATCH_FORMS))
@pytest.mark.parametrize("response_form", list(BATCH_FORMS))
def test_batch_every_input_kind_one_prefix_per_item(tok, response_form, prefix_form):
    responses = BATCH_FORMS[response_form](tok, [TOOL_RESPONSE, TEXT_RESPONSE], padded_rows)
    prefixes = BATCH_FORMS[prefix_form](tok, [PROMPT, PROMPT_THINKING], left_padded_rows)
    assert tok.parse_response(responses, prefix=prefixes) == [TOOL_MESSAGE, TEXT_MESSAGE]


@pytest.mark.parametrize("prefix_form", ["str", "list[int]", "torch-1d", "torch-2d-one-row"])
@pytest.mark.parametrize("response_form", list(BATCH_FORMS))
def test_single_prefix_is_broadcast_over_a_batch(tok, response_form, prefix_form):
    responses = BATCH_FORMS[response_form](tok, [TEXT_RESPONSE, "Fine.</think>Yes<|im_end|>"], padded_rows)
    prefix = SINGLE_FORMS[prefix_form](tok, PROMPT_THINKING)
    assert tok.parse_response(responses, prefix=prefix) == [
        TEXT_MESSAGE,
        {"role": "assistant", "reasoning_content": "Fine.", "content": "Yes"},
    ]


@pytest.mark.parametrize(
    "response",
    [
        lambda tok: [TEXT_RESPONSE],
        lambda tok: [ids(tok, TEXT_RESPONSE)],
        lambda tok: torch.tensor([ids(tok, TEXT_RESPONSE)]),
        lambda tok: np.array([ids(tok, TEXT_RESPONSE)]),
    ],
    ids=["list[str]", "list[list[int]]", "torch-2d", "numpy-2d"],
)
def test_one_item_batch_gives_one_item_list(tok, response):
    assert tok.parse_response(response(tok), prefix=PROMPT_THINKING) == [TEXT_MESSAGE]


def test_empty_prefix_opt_out_as_str_and_list(tok):
    text = "<think>a</think>b<|im_end|>"
    expected = {"role": "assistant", "reasoning_content": "a", "content": "b"}
    assert tok.parse_response(text, prefix="") == expected
    assert tok.parse_response(ids(tok, text), prefix=[]) == expected
    assert tok.parse_response([text, text], prefix=[]) == [expected, expected]


class FakeCudaTensor:
    """Quacks like a CUDA tensor: only usable after `.cpu()`."""

    def __init__(self, data):
        self._t = torch.tensor(data)
        self.ndim = self._t.ndim
        self.dtype = self._t.dtype
        self.moved = False

    def detach(self):
        return self

    def cpu(self):
        self.moved = True
        return self._t

    def tolist(self):  # a real CUDA tensor's tolist() would sync; we insist on cpu() first
        raise AssertionError("tolist() called before cpu()")


def test_accelerator_tensor_is_moved_to_cpu(tok):
    response, prefix = FakeCudaTensor(ids(tok, TEXT_RESPONSE)), FakeCudaTensor([ids(tok, PROMPT_THINKING)])
    assert tok.parse_response(response, prefix=prefix) == TEXT_MESSAGE
    assert response.moved and prefix.moved


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_real_cuda_tensor(tok):  # pragma: no cover - no GPU in CI
    response = torch.tensor(ids(tok, TEXT_RESPONSE), device="cuda")
    assert tok.parse_response(response, prefix=PROMPT_THINKING) == TEXT_MESSAGE


# ------------------------------------------------------------------------------------------- errors


def test_missing_prefix_explains_why(tok):
    with pytest.raises(ValueError, match=r'prefix=""'):
        tok.parse_response(TEXT_RESPONSE)
    with pytest.raises(ValueError, match="prefix"):
        tok.get_response_parser()


def test_no_template_is_a_clear_error():
    bare = byte_level_tokenizer()
    assert bare.response_template is None
    with pytest.raises(NoResponseTemplateError, match="no `response_template`"):
        bare.parse_response("x", prefix="")
    with pytest.raises(AttributeError):  # what Transformers' own method raises
        bare.parse_response("x", prefix="")
    with pytest.raises(ValueError):
        bare.get_response_parser(prefix="")


def test_template_passed_as_argument_overrides(tok):
    bare = byte_level_tokenizer()
    assert bare.parse_response(TEXT_RESPONSE, qwen3_template(), prefix=PROMPT_THINKING) == TEXT_MESSAGE
    assert bare.parse_response(TEXT_RESPONSE, schema=qwen3_template(), prefix=PROMPT_THINKING) == TEXT_MESSAGE
    compiled = hf_response_templates.load_template(qwen3_template())
    assert bare.parse_response(TEXT_RESPONSE, compiled, prefix=PROMPT_THINKING) == TEXT_MESSAGE
    parser = bare.get_response_parser(qwen3_template(), prefix=PROMPT_THINKING)
    parser.feed(TEXT_RESPONSE)
    assert parser.finalize()[0] == TEXT_MESSAGE


def test_legacy_response_schema_is_rejected_with_a_pointer(tok):
    legacy = {"type": "object", "properties": {"content": {"type": "string"}}, "x-regex": "(?P<content>.*)"}
    with pytest.raises(TemplateError, match="response_schema"):
        tok.parse_response("x", legacy, prefix="")


@pytest.mark.parametrize(
    "response,prefix,message",
    [
        (["a", "b", "c"], ["p", "q"], "3 responses but 2 prefixes"),
        ([[1, 2], [3]], [[4], [5], [6]], "2 responses but 3 prefixes"),
        ("a", ["p", "q"], "one response but a batch of 2 prefixes"),
    ],
)
def test_mismatched_lengths(tok, response, prefix, message):
    with pytest.raises(ValueError, match=message):
        tok.parse_response(response, prefix=prefix)


def test_mismatched_lengths_tensors(tok):
    with pytest.raises(ValueError, match="2 responses but 3 prefixes"):
        tok.parse_response(torch.ones(2, 3, dtype=torch.long), prefix=torch.ones(3, 4, dtype=torch.long))


@pytest.mark.parametrize(
    "bad,error,match",
    [
        (torch.ones(1, 2, 3, dtype=torch.long), ValueError, "1-D .* or 2-D"),
        (torch.ones(3), TypeError, "integer token ids"),
        (np.array([1.5, 2.0]), TypeError, "integer token ids"),
        ([1, "a"], TypeError, "integers"),
        (["a", 1], TypeError, "only strings"),
        ([[1, 2], "a"], TypeError, "list of strings or a list of token-id"),
        ({"attention_mask": [1]}, TypeError, "input_ids"),
        (3.5, TypeError, "must be a str"),
        ([True, False], TypeError, "token-id"),
    ],
)
def test_bad_inputs(tok, bad, error, match):
    with pytest.raises(error, match=match):
        tok.parse_response(bad, prefix="")


def test_get_response_parser_wants_one_sequence(tok):
    with pytest.raises(ValueError, match="single sequence"):
        tok.get_response_parser(prefix=[PROMPT, PROMPT])
    with pytest.raises(ValueError, match="single sequence"):
        tok.get_response_parser(prefix=torch.ones(2, 3, dtype=torch.long))


# ------------------------------------------------------------------------- strict, tools, parsers


def test_strict_and_lenient(tok):
    bad = "<tool_call>{not json</tool_call><|im_end|>"
    with pytest.raises(ResponseParseError):
        tok.parse_response(bad, prefix="")
    message = tok.parse_response(bad, prefix="", strict=False)
    assert message["unparsed"][0]["field"] == "tool_calls"
    assert tok.parse_response([bad], prefix="", strict=False)[0]["unparsed"]


def test_tools_type_the_arguments(tok):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                },
            },
        }
    ]
    message = tok.parse_response(ids(tok, TOOL_RESPONSE), prefix=ids(tok, PROMPT), tools=tools)
    assert message["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "days": 3}
    parser = tok.get_response_parser(prefix=PROMPT, tools=tools)
    events = parser.feed(TOOL_RESPONSE)
    closes = [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"]
    assert closes[0]["value"]["function"]["arguments"]["days"] == 3


def test_get_response_parser_with_token_id_prefix(tok):
    parser = tok.get_response_parser(prefix=torch.tensor([ids(tok, PROMPT_THINKING)]))
    # The prompt opened <think> and left it open: nothing closed yet, the model writes into it.
    assert all(e["type"] != "region_close" for e in parser.initial_events)
    events = []
    for piece in [TEXT_RESPONSE[:5], TEXT_RESPONSE[5:20], TEXT_RESPONSE[20:]]:
        events += parser.feed(piece)
    message, final = parser.finalize()
    assert message == TEXT_MESSAGE
    events += final
    chunks = "".join(
        e["text"]
        for e in parser.initial_events + events
        if e["type"] == "region_chunk" and e["field"] == "content"
    )
    assert chunks.strip() == "Olá! Café ☕ 😀"


def test_prefill_regions_are_in_initial_events(tok):
    prefix = PROMPT + "<think>\nAlready thought.\n</think>\n\n"
    parser = tok.get_response_parser(prefix=ids(tok, prefix))
    assert {
        "type": "region_close",
        "field": "reasoning_content",
        "value": "Already thought.",
    } in parser.initial_events
    parser.feed("Answer<|im_end|>")
    assert parser.finalize()[0] == {
        "role": "assistant",
        "reasoning_content": "Already thought.",
        "content": "Answer",
    }


def test_slow_python_tokenizer_has_the_api_too():
    slow = char_slow_tokenizer()
    slow.response_template = qwen3_template()
    response = "<think>hm</think> ok<|im_end|>"
    expected = {"role": "assistant", "reasoning_content": "hm", "content": "ok"}
    assert slow.parse_response(response, prefix="") == expected
    prompt_ids = slow.encode("<|im_start|>assistant\n", add_special_tokens=False)
    assert slow.parse_response(slow.encode(response, add_special_tokens=False), prefix=prompt_ids) == expected


def test_processor_forwards_to_its_tokenizer(tok):
    from transformers import ProcessorMixin

    class ChatProcessor(ProcessorMixin):
        attributes = ["tokenizer"]
        tokenizer_class = "PreTrainedTokenizerFast"

        def __init__(self, tokenizer):
            super().__init__(tokenizer)

    try:
        processor = ChatProcessor(tok)
    except Exception as exc:  # pragma: no cover - processor construction differs across versions
        pytest.skip(f"cannot build a minimal processor on this Transformers version: {exc}")
    assert processor.parse_response(ids(tok, TEXT_RESPONSE), prefix=PROMPT_THINKING) == TEXT_MESSAGE
    parser = processor.get_response_parser(prefix=PROMPT_THINKING)
    parser.feed(TEXT_RESPONSE)
    assert parser.finalize()[0] == TEXT_MESSAGE
