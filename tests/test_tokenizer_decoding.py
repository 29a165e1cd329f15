"""Token ids are decoded right: special tokens kept, prompt and generation decoded together (SentencePiece
leading spaces, byte-level tokens splitting a UTF-8 character), and the padding of a batched `generate`
never leaks into a field (a real padded batch from a tiny Llama)."""

from __future__ import annotations

import pytest
import torch
from _tiny_model import scripted_generate, tiny_model
from _tokenizers import byte_level_tokenizer, metaspace_tokenizer, qwen3_template, verbatim_template

from hf_response_templates.tokenizer import (
    _split_point,
    _strip_prefix_padding,
    _strip_response_padding,
    install,
)

install()

PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def enc(tok, text):
    return tok.encode(text, add_special_tokens=False)


# ------------------------------------------------------------------------ decoding in context


def test_sentencepiece_leading_space_comes_from_decoding_with_the_prompt():
    tok = metaspace_tokenizer()
    tok.response_template = verbatim_template()  # content kept verbatim: spaces are visible
    response = tok.convert_tokens_to_ids(["\u2581Hello", "\u2581the", "re", "<|im_end|>"])
    assert tok.decode(response) == "Hello there<|im_end|>"  # alone, the first space is dropped
    prefix = enc(tok, PROMPT)
    assert tok.parse_response(response, prefix=prefix)["content"] == " Hello there"
    assert tok.parse_response([response, response], prefix=[prefix, prefix])[1]["content"] == " Hello there"
    assert (
        tok.parse_response(torch.tensor([response]), prefix=torch.tensor([prefix]))[0]["content"]
        == " Hello there"
    )


def test_byte_level_character_split_across_the_prompt_boundary():
    tok = byte_level_tokenizer()
    tok.response_template = verbatim_template()
    emoji = enc(tok, "\N{GRINNING FACE}")
    assert len(emoji) == 4  # four byte tokens
    prefix = enc(tok, PROMPT) + emoji[:2]  # a prefill that ends inside the character
    response = emoji[2:] + enc(tok, " ok<|im_end|>")
    assert "\ufffd" in tok.decode(response)  # decoded alone: garbage
    message = tok.parse_response(response, prefix=prefix)
    assert message["content"] == "\N{GRINNING FACE} ok"
    assert "\ufffd" not in message["content"]


def test_byte_level_character_split_inside_the_generation():
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    response = enc(tok, "<think>caf\u00e9 \u2615</think>\N{GRINNING FACE}!<|im_end|>")
    message = tok.parse_response(response, prefix=enc(tok, PROMPT))
    assert message == {
        "role": "assistant",
        "reasoning_content": "caf\u00e9 \u2615",
        "content": "\N{GRINNING FACE}!",
    }


def test_special_tokens_are_kept_and_spaces_not_cleaned_up():
    tok = byte_level_tokenizer(clean_up_tokenization_spaces=True)
    tok.response_template = verbatim_template()
    response = enc(tok, "a , b . c 's<|im_end|>")
    assert tok.parse_response(response, prefix=enc(tok, PROMPT))["content"] == "a , b . c 's"


def test_split_point_fallbacks():
    assert _split_point("abcdef", "abc") == 3
    assert _split_point("ab\N{GRINNING FACE}x", "ab\ufffd") == 2  # incomplete character goes to the response
    assert _split_point("abXdef", "abYd") == 2  # decoders that disagree: split where they still agree


def test_padding_helpers():
    pad, eos = 0, 2
    assert _strip_prefix_padding([0, 0, 5, 0, 6], pad) == [5, 0, 6]
    assert _strip_prefix_padding([0, 5], None) == [0, 5]
    assert _strip_response_padding([5, 6, 2, 0, 0], pad, eos) == [5, 6, 2]
    assert _strip_response_padding([5, 6, 0, 0], pad, eos) == [5, 6]
    assert _strip_response_padding([5, 2, 2, 2], None, eos) == [
        5,
        2,
    ]  # generate pads with EOS when no pad token
    assert _strip_response_padding([5, 2, 2, 2], eos, eos) == [5, 2]  # pad_token = eos_token
    assert _strip_response_padding([5, 6], pad, eos) == [5, 6]
    assert _strip_response_padding([], pad, eos) == []
    # one generation's own EOS: the same list back, not a copy (a float or bool equal to it is still replaced)
    ends = [5, 6, eos]
    assert _strip_response_padding(ends, pad, eos) is ends
    assert _strip_response_padding([eos], pad, eos) == [eos]
    assert _strip_response_padding([5, float(eos)], pad, eos) == [5, eos]
    assert type(_strip_response_padding([5, float(eos)], pad, eos)[-1]) is int
    assert _strip_response_padding([5, 6, eos], eos, eos) == [5, 6, eos]  # pad_token = eos_token: the loop, as before


# ------------------------------------------------------------------------ a real padded batch

PROMPTS = [
    "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n"
    "<|im_start|>assistant\nHello! How can I help you today?<|im_end|>\n<|im_start|>user\n42?<|im_end|>\n"
    "<|im_start|>assistant\n",
]
RESPONSES = [
    "<think>\nThe user wants the weather. I should call get_weather.\n</think>\n\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call><|im_end|>',
    "Think step by step.\n</think>\n\nOl\u00e1! \N{GRINNING FACE}<|im_end|>",
    "<think>\n\n</think>\n\nThe answer is 42.<|im_end|>",
]
MESSAGES = [
    {
        "role": "assistant",
        "reasoning_content": "The user wants the weather. I should call get_weather.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
            }
        ],
    },
    {
        "role": "assistant",
        "reasoning_content": "Think step by step.",
        "content": "Ol\u00e1! \N{GRINNING FACE}",
    },
    {"role": "assistant", "content": "The answer is 42."},
]


@pytest.fixture(scope="module")
def generated():
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    inputs, out = scripted_generate(tiny_model(tok), tok, PROMPTS, RESPONSES)
    return tok, inputs, out


def test_the_batch_really_is_padded_on_both_sides(generated):
    tok, inputs, out = generated
    width = inputs["input_ids"].shape[1]
    assert (inputs["input_ids"][:, 0] == tok.pad_token_id).sum() == 2  # two prompts left-padded
    assert (out[:, width:][:, -1] == tok.pad_token_id).sum() == 2  # two generations right-padded
    assert tok.decode(out[0, width:]).startswith("<think>")  # the script really drove generate


def test_padded_batch_parses_without_pad_tokens(generated):
    tok, inputs, out = generated
    width = inputs["input_ids"].shape[1]
    messages = tok.parse_response(out[:, width:], prefix=inputs["input_ids"])
    assert messages == MESSAGES
    assert "<|endoftext|>" not in repr(messages)
    # the same rows one by one, and as lists
    for row in range(len(PROMPTS)):
        assert tok.parse_response(out[row, width:], prefix=inputs["input_ids"][row]) == MESSAGES[row]
    assert tok.parse_response(out[:, width:].tolist(), prefix=inputs["input_ids"].tolist()) == MESSAGES
    assert tok.parse_response(out[:, width:].numpy(), prefix=inputs["input_ids"].numpy()) == MESSAGES


def test_padded_batch_with_verbatim_content_keeps_exactly_one_eos(generated):
    tok, inputs, out = generated
    width = inputs["input_ids"].shape[1]
    template = {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {"content": {"content_args": {"strip": False}}},
    }
    messages = tok.parse_response(out[:, width:], template, prefix=inputs["input_ids"])
    for message, prompt, response in zip(messages, PROMPTS, RESPONSES, strict=True):
        prefill = prompt.rsplit("<|im_start|>assistant\n", 1)[1]  # what the prompt wrote into the message
        assert message["content"] == prefill + response  # verbatim
        assert message["content"].endswith("<|im_end|>") and "<|endoftext|>" not in message["content"]


def test_pad_token_equal_to_eos():
    tok = byte_level_tokenizer(pad_token="<|im_end|>")
    assert tok.pad_token_id == tok.eos_token_id
    template = {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {"content": {"content_args": {"strip": False}}},
    }
    tok.response_template = template
    inputs, out = scripted_generate(
        tiny_model(tok), tok, [PROMPTS[0], PROMPTS[2]], ["Hi!", "A longer answer, a bit."]
    )
    width = inputs["input_ids"].shape[1]
    assert tok.decode(out[0, width:]).endswith("<|im_end|><|im_end|>")  # padded with EOS
    messages = tok.parse_response(out[:, width:], prefix=inputs["input_ids"])
    assert [m["content"] for m in messages] == ["Hi!<|im_end|>", "A longer answer, a bit.<|im_end|>"]
