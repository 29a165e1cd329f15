"""`tokenizer.response_template`: validated on assignment, saved as a key of tokenizer_config.json,
loaded back by `from_pretrained`, equal to what was assigned (SPEC "What it is for")."""

from __future__ import annotations

import json
import logging
import os

import pytest
from _tokenizers import byte_level_tokenizer, harmony_template, metaspace_tokenizer, qwen3_template
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from hf_response_templates import TemplateError, load_template
from hf_response_templates.tokenizer import install

install()


def test_assignment_validates_at_once():
    tok = byte_level_tokenizer()
    with pytest.raises(TemplateError):
        tok.response_template = {"fields": {"content": {}}}  # no start anchor
    with pytest.raises(TemplateError):
        tok.response_template = {"start_anchor": "x", "fields": {"a": {"open": "<a>", "open_pattern": "<a>"}}}
    with pytest.raises(TemplateError):
        tok.response_template = "not a dict"
    with pytest.raises(TemplateError):
        tok.response_template = {"start_anchor": "x", "fields": {"c": {"close": object()}}}
    assert tok.response_template is None  # failed assignments change nothing


def test_failed_assignment_keeps_the_previous_template():
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    with pytest.raises(TemplateError):
        tok.response_template = {"fields": {}}
    assert tok.response_template == qwen3_template()


def test_getter_returns_an_equal_copy_and_accepts_compiled_templates():
    tok = byte_level_tokenizer()
    template = qwen3_template()
    tok.response_template = template
    got = tok.response_template
    assert got == template and got is not template
    got["fields"].clear()  # mutating the copy does not change the tokenizer
    assert tok.response_template == template
    tok.response_template = load_template(harmony_template())
    assert tok.response_template == harmony_template()
    tok.response_template = None
    assert tok.response_template is None


def saved_config(path) -> dict:
    with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("make", [byte_level_tokenizer, metaspace_tokenizer])
@pytest.mark.parametrize("template", [qwen3_template(), harmony_template()], ids=["qwen3", "harmony"])
def test_save_and_load_round_trip(tmp_path, make, template):
    tok = make()
    tok.response_template = template
    tok.save_pretrained(tmp_path)
    assert saved_config(tmp_path)["response_template"] == template  # a key of tokenizer_config.json ...
    assert not [f for f in os.listdir(tmp_path) if "response" in f]  # ... and no separate file
    for loader in (PreTrainedTokenizerFast, AutoTokenizer):
        loaded = loader.from_pretrained(str(tmp_path))
        assert loaded.response_template == template
        # and it parses like the original
        text = "<think>a</think>b<|im_end|>"
        assert loaded.parse_response(text, prefix="") == tok.parse_response(text, prefix="")
    # saving the loaded one again changes nothing
    loaded.save_pretrained(tmp_path / "again")
    assert saved_config(tmp_path / "again")["response_template"] == template


def test_template_assigned_after_loading_is_saved(tmp_path):
    byte_level_tokenizer().save_pretrained(tmp_path / "plain")
    assert "response_template" not in saved_config(tmp_path / "plain")
    tok = AutoTokenizer.from_pretrained(str(tmp_path / "plain"))
    assert tok.response_template is None
    tok.response_template = qwen3_template()
    tok.save_pretrained(tmp_path / "with")
    assert saved_config(tmp_path / "with")["response_template"] == qwen3_template()
    assert AutoTokenizer.from_pretrained(str(tmp_path / "with")).response_template == qwen3_template()


def test_removing_the_template_removes_the_key(tmp_path):
    tok = byte_level_tokenizer()
    tok.response_template = qwen3_template()
    tok.save_pretrained(tmp_path / "a")
    loaded = AutoTokenizer.from_pretrained(str(tmp_path / "a"))
    loaded.response_template = None
    loaded.save_pretrained(tmp_path / "b")
    assert "response_template" not in saved_config(tmp_path / "b")
    assert AutoTokenizer.from_pretrained(str(tmp_path / "b")).response_template is None


def test_template_given_to_from_pretrained_and_init(tmp_path):
    byte_level_tokenizer().save_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(str(tmp_path), response_template=qwen3_template())
    assert tok.response_template == qwen3_template()
    tok2 = byte_level_tokenizer(response_template=harmony_template())
    assert tok2.response_template == harmony_template()


def test_unicode_regex_and_nested_values_round_trip_exactly(tmp_path):
    template = harmony_template()
    template["defaults"] = {"role": "assistant", "meta": {"lang": "pt-BR", "tags": ["olá", "☕"], "n": 1.5}}
    template["fields"]["content"]["content_args"] = {"strip": False}
    tok = byte_level_tokenizer()
    tok.response_template = template
    tok.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(str(tmp_path))
    assert loaded.response_template == template
    assert json.dumps(loaded.response_template, sort_keys=True) == json.dumps(template, sort_keys=True)


def test_invalid_saved_template_does_not_break_loading(tmp_path, caplog):
    byte_level_tokenizer().save_pretrained(tmp_path)
    config = saved_config(tmp_path)
    bad = {"start_anchor": "x", "fields": {"a": {"open": "<a>", "content": "no-such-parser"}}}
    config["response_template"] = bad
    with open(tmp_path / "tokenizer_config.json", "w", encoding="utf-8") as f:
        json.dump(config, f)
    with caplog.at_level(logging.WARNING):
        tok = AutoTokenizer.from_pretrained(str(tmp_path))
    assert "invalid response_template" in caplog.text
    assert tok.response_template == bad  # kept verbatim ...
    with pytest.raises(TemplateError, match="saved response_template is invalid"):
        tok.parse_response("x", prefix="")  # ... and the error surfaces on use
    tok.save_pretrained(tmp_path / "again")  # ... and is not lost on save
    assert saved_config(tmp_path / "again")["response_template"] == bad
