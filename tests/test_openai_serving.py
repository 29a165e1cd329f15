"""`openai.chat_completion_chunks` / `chat_completion_sse`: the README's server recipe as a tested helper
(issue 13, item 7), run on a tiny scripted Llama.

Two bugs of the old recipe are pinned here: a tool call cut off at `max_new_tokens` must carry
`error.type == "length"` (not `"malformed"`: the streamer finalizes its parser before the finish reason
is known), and a model with several EOS ids (gpt-oss stops on `<|call|>`) finishing exactly at the limit on
one of them is `"tool_calls"`, not `"length"`."""

from __future__ import annotations

import json

import pytest
import torch
from _tiny_model import ScriptedLogitsProcessor, tiny_model
from _tokenizers import byte_level_tokenizer, harmony_template, qwen3_template
from transformers import LogitsProcessorList

from hf_response_templates.openai import (
    SSE_DONE,
    DeltaStream,
    accumulate_deltas,
    chat_completion_chunks,
    chat_completion_sse,
)
from hf_response_templates.tokenizer import install

install()

CHATML = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
HARMONY = (
    "{% for m in messages %}{{ '<|start|>' + m['role'] + '<|message|>' + m['content'] + '<|end|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start|>assistant' }}{% endif %}"
)
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def tokenizer(chat_template: str, template: dict):
    tok = byte_level_tokenizer()
    tok.chat_template = chat_template
    tok.response_template = template
    return tok


def scripted(tok, text: str) -> tuple[dict, list[int]]:
    """generate kwargs forcing the model to write `text` (then EOS), and its token ids."""
    prompt = tok.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=True, return_dict=True)
    script = tok.encode(text, add_special_tokens=False)
    processor = ScriptedLogitsProcessor([script], len(prompt["input_ids"]), tok.eos_token_id)
    return {"logits_processor": LogitsProcessorList([processor]), "do_sample": False,
            "pad_token_id": tok.pad_token_id}, script


def deltas(chunks: list[dict]) -> list[dict]:
    return [c["choices"][0]["delta"] for c in chunks]


def tool_errors(chunks: list[dict]) -> list[str]:
    return [tc["error"]["type"] for d in deltas(chunks) for tc in d.get("tool_calls", []) if "error" in tc]


def text_mode_reference(tok, template, text: str, finish_reason):
    """The same generation through DeltaStream's text mode (which owns its parser): the oracle."""
    prompt = tok.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    stream = DeltaStream(template, prefix=prompt, tools=TOOLS, id_seed=0)
    chunks = stream.feed_chunks(text)
    return chunks + stream.finish_chunks(finish_reason)


def test_a_tool_call_cut_off_at_max_new_tokens_is_length_not_malformed():
    tok = tokenizer(CHATML, qwen3_template())
    model = tiny_model(tok)
    text = 'Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call><|im_end|>'
    kwargs, script = scripted(tok, text)
    limit = len(script) - 8  # stops inside the tool call's arguments
    chunks = list(chat_completion_chunks(model, tok, MESSAGES, tools=TOOLS, max_new_tokens=limit, id_seed=0, **kwargs))
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert tool_errors(chunks) == ["length"]
    cut = tok.decode(script[:limit], skip_special_tokens=False)
    reference = text_mode_reference(tok, qwen3_template(), cut, "length")
    assert accumulate_deltas(deltas(chunks)) == accumulate_deltas(deltas(reference))
    assert tool_errors(reference) == ["length"]


def test_a_complete_answer_is_stop_and_complete_tool_calls_are_tool_calls():
    tok = tokenizer(CHATML, qwen3_template())
    model = tiny_model(tok)
    for text, reason in [
        ("It is sunny.<|im_end|>", "stop"),
        ('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}</tool_call><|im_end|>',
         "tool_calls"),
    ]:
        kwargs, script = scripted(tok, text)
        chunks = list(chat_completion_chunks(model, tok, MESSAGES, tools=TOOLS, max_new_tokens=len(script), **kwargs))
        assert chunks[-1]["choices"][0]["finish_reason"] == reason
        assert not tool_errors(chunks)
        if reason == "tool_calls":
            args = "".join(tc["function"].get("arguments", "") for d in deltas(chunks) for tc in d.get("tool_calls", []))
            assert json.loads(args) == {"city": "Paris", "days": 3}  # typed by the tool's schema


def test_several_eos_ids_a_call_ending_exactly_at_the_limit_is_tool_calls():
    tok = tokenizer(HARMONY, harmony_template())
    model = tiny_model(tok)
    text = '<|channel|>commentary to=functions.get_weather json<|message|>{"city": "Paris"}<|call|>'
    kwargs, script = scripted(tok, text)
    stop_ids = [tok.convert_tokens_to_ids("<|return|>"), tok.convert_tokens_to_ids("<|call|>")]
    assert script[-1] == stop_ids[1] and tok.eos_token_id not in stop_ids  # the tokenizer's eos is another id
    chunks = list(chat_completion_chunks(
        model, tok, MESSAGES, tools=TOOLS, max_new_tokens=len(script), eos_token_id=stop_ids, **kwargs
    ))
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert not tool_errors(chunks)


def test_sse_lines_end_with_done():
    tok = tokenizer(CHATML, qwen3_template())
    model = tiny_model(tok)
    kwargs, script = scripted(tok, "Hello!<|im_end|>")
    lines = list(chat_completion_sse(model, tok, MESSAGES, max_new_tokens=len(script) + 1, **kwargs))
    assert lines[-1] == SSE_DONE
    assert all(line.startswith("data: {") and line.endswith("\n\n") for line in lines[:-1])
    contents = [json.loads(line[6:])["choices"][0]["delta"].get("content", "") for line in lines[:-1]]
    assert "".join(contents) == "Hello!"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_failing_generate_raises_instead_of_hanging():
    tok = tokenizer(CHATML, qwen3_template())
    model = tiny_model(tok)
    with pytest.raises(ValueError, match="no_such_option"):
        list(chat_completion_chunks(model, tok, MESSAGES, timeout=60, no_such_option=torch.tensor(1)))


# --------------------------------------------------------------------------- tool-call ids the model writes

KIMI = (
    "{% for m in messages %}{{ '<|im_user|>' + m['role'] + '<|im_middle|>' + m['content'] + '<|im_end|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_assistant|>assistant<|im_middle|>' }}{% endif %}"
)
KIMI_SPECIALS = [
    "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
    "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
]


def kimi_call(call_id: str, city: str) -> str:
    return f'<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{{"city": "{city}"}}<|tool_call_end|>'


def test_model_call_ids_go_through_the_streamer_into_the_chunks():
    # Kimi K2 writes each call's id (functions.NAME:IDX) in its open delimiter; the chunks made from the
    # ResponseStreamer's events keep it, as the text-mode stream does, and a repeated id is replaced
    from hf_response_templates.library import get_template

    tok = tokenizer(KIMI, get_template("kimi-k2"))
    tok.add_tokens(KIMI_SPECIALS, special_tokens=True)
    model = tiny_model(tok)
    for calls, want in [
        ([("functions.get_weather:0", "Paris"), ("functions.get_weather:1", "Rome")],
         ["functions.get_weather:0", "functions.get_weather:1"]),
        ([("functions.get_weather:0", "Paris"), ("functions.get_weather:0", "Rome")],
         ["functions.get_weather:0", None]),
    ]:
        text = "<|tool_calls_section_begin|>" + "".join(kimi_call(*c) for c in calls) + "<|tool_calls_section_end|>"
        kwargs, script = scripted(tok, text + "<|im_end|>")
        chunks = list(chat_completion_chunks(model, tok, MESSAGES, tools=TOOLS, id_seed=0, **kwargs))
        got = accumulate_deltas(deltas(chunks))
        ids = [c["id"] for c in got["tool_calls"]]
        assert [json.loads(c["function"]["arguments"])["city"] for c in got["tool_calls"]] == ["Paris", "Rome"]
        assert ids[0] == want[0]
        assert ids[1] == want[1] if want[1] is not None else ids[1].startswith("call_")
        assert len(set(ids)) == 2
        reference = text_mode_reference(tok, get_template("kimi-k2"), text + "<|im_end|>", None)
        assert got == accumulate_deltas(deltas(reference))
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
