"""Processors carry the tokenizer's response template (issue 13, item 2): `attach(processor)` sets it on
`processor.tokenizer`, `processor.parse_response` uses it, `save_pretrained` writes it and
`AutoProcessor.from_pretrained` loads it back (4.46 used to crash deep-copying the tokenizer)."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from _tokenizers import byte_level_tokenizer, harmony_template, qwen3_template
from transformers import AutoProcessor, AutoTokenizer, CLIPImageProcessor, LlavaProcessor

from hf_response_templates import attach, get_template
from hf_response_templates.tokenizer import install

install()

# the real Qwen3 chat template, so that attach() detects the family
CHAT_TEMPLATE = (Path(__file__).parent / "fixtures" / "chat_templates" / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
OUTPUT = '<think>Look.</think>A cat.<tool_call>{"name": "zoom", "arguments": {"x": 2}}</tool_call><|im_end|>'
EXPECTED = {
    "role": "assistant",
    "reasoning_content": "Look.",
    "content": "A cat.",
    "tool_calls": [{"type": "function", "function": {"name": "zoom", "arguments": {"x": 2}}}],
}


def llava_processor(**tokenizer_kwargs) -> LlavaProcessor:
    tok = byte_level_tokenizer(**tokenizer_kwargs)
    tok.add_tokens(["<image>"], special_tokens=True)
    return LlavaProcessor(image_processor=CLIPImageProcessor(), tokenizer=tok, chat_template=CHAT_TEMPLATE)


def test_attach_sets_the_template_on_the_processors_tokenizer():
    processor = llava_processor()
    assert attach(processor) == "qwen3"
    assert processor.tokenizer.response_template == get_template("qwen3")
    assert processor.response_template == get_template("qwen3")  # read through to the tokenizer
    assert processor.parse_response(OUTPUT, prefix="") == EXPECTED
    assert processor.parse_response([OUTPUT], prefix="") == [EXPECTED]


def test_assigning_on_the_processor_assigns_the_tokenizers_template():
    processor = llava_processor()
    processor.response_template = harmony_template()
    assert processor.tokenizer.response_template == harmony_template()
    assert "response_template" not in vars(processor)
    processor.response_template = None
    assert processor.tokenizer.response_template is None


def test_processor_save_and_auto_processor_load(tmp_path):
    processor = llava_processor()
    attach(processor)
    processor.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["response_template"] == get_template("qwen3")
    loaded = AutoProcessor.from_pretrained(str(tmp_path))  # 4.46: repr/to_dict deep-copy the tokenizer
    assert isinstance(loaded, LlavaProcessor)
    repr(loaded)
    assert loaded.tokenizer.response_template == get_template("qwen3")
    assert loaded.parse_response(OUTPUT, prefix="") == EXPECTED
    assert AutoTokenizer.from_pretrained(str(tmp_path)).response_template == get_template("qwen3")


def test_processor_copies_and_pickles():
    processor = llava_processor()
    processor.response_template = qwen3_template()
    for twin in (copy.deepcopy(processor), pickle.loads(pickle.dumps(processor))):
        assert twin.tokenizer.response_template == qwen3_template()
        assert twin.parse_response(OUTPUT, prefix="") == processor.parse_response(OUTPUT, prefix="")


def test_processor_without_template_says_so():
    processor = llava_processor()
    processor.chat_template = "{{ messages }}"  # no family to fall back on
    with pytest.raises(AttributeError, match="no `response_template`"):
        processor.parse_response(OUTPUT, prefix="")
