"""A hostile or broken `response_template` saved in tokenizer_config.json never stops `from_pretrained`: it
gives a `TemplateError` at once (no RecursionError, MemoryError or protobuf error on either Transformers
major), the tokenizer loads with a warning, and the error is raised when the template is used."""

from __future__ import annotations

import json
import logging
import os

import pytest
from _tokenizers import byte_level_tokenizer
from transformers import AutoTokenizer

from hf_response_templates import TemplateError
from hf_response_templates.tokenizer import install

install()


def _nested(depth: int) -> object:
    value: object = "v"
    for _ in range(depth):
        value = [value]
    return value


HOSTILE = {
    "counted repeat": {"start_anchor": "S", "fields": {"a": {"open_pattern": "a{100000000}", "close": "b"}}},
    "63 fields x 64 literals": {"start_anchor": "S", "fields": {
        f"f{i}": {"open": [f"<t{i}_{j}_" + "x" * 20 for j in range(64)], "close": "</t>"} for i in range(63)}},
    "nested 100": {"start_anchor": "S", "defaults": {"x": _nested(100)}, "fields": {"c": {}}},
    "nested 450": {"start_anchor": "S", "defaults": {"x": _nested(450)}, "fields": {"c": {}}},
    # deeper than ~480 levels, Transformers' own `convert_added_tokens` overflows the recursion limit reading
    # tokenizer_config.json before this package sees the template: from_pretrained reads it again with room
    "nested 950": {"start_anchor": "S", "defaults": {"x": _nested(950)}, "fields": {"c": {}}},
    "deep transform": {"start_anchor": "S", "fields": {"a": {"open": "<a>", "transform": _nested(300)}}},
}


def _save_with(tmp_path, template) -> str:
    byte_level_tokenizer().save_pretrained(tmp_path)
    path = os.path.join(tmp_path, "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    config["response_template"] = template
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return str(tmp_path)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_saved_template_still_loads(tmp_path, caplog, name):
    with caplog.at_level(logging.WARNING):
        tok = AutoTokenizer.from_pretrained(_save_with(tmp_path, HOSTILE[name]))
    assert "invalid response_template" in caplog.text
    assert tok.encode("hi")  # a working tokenizer
    with pytest.raises(TemplateError, match="saved response_template is invalid"):
        tok.parse_response("x", prefix="")


def test_long_literal_saved_template_loads_and_parses(tmp_path):
    # a 600-character literal used to raise RecursionError while compiling (a protobuf error on 4.46)
    literal = "<" + "x" * 598 + ">"
    template = {"start_anchor": "S", "fields": {"t": {"open": literal, "close": "</t>"}, "content": {}}}
    tok = AutoTokenizer.from_pretrained(_save_with(tmp_path, template))
    assert tok.parse_response("hi" + literal + "v</t>", prefix="") == {"content": "hi", "t": "v"}
