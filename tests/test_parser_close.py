"""Closing a region (`ResponseParser._close_region`): the regex timeout's ContextVar is read and set only for the
fields whose content parser runs a regex (`xml-inline`'s `tag_pattern`, a `text` field's `remove_pattern`), the
only parsers that read it; the others close without touching it (issue 19: the fixed cost per region)."""

from __future__ import annotations

import contextvars

import pytest

from hf_response_templates import ResponseParser, content


class _Counted:
    """The ContextVar, with its `get` calls counted (a ContextVar's methods cannot be patched)."""

    def __init__(self, var: contextvars.ContextVar) -> None:
        self.var = var
        self.gets = 0
        self.seen: list[float] = []

    def get(self, *default):
        self.gets += 1
        return self.var.get(*default)

    def set(self, value):
        return self.var.set(value)

    def reset(self, token):
        return self.var.reset(token)


@pytest.fixture
def counted(monkeypatch):
    c = _Counted(content.REGEX_TIMEOUT)
    monkeypatch.setattr(content, "REGEX_TIMEOUT", c)
    return c


def test_a_json_tool_call_closes_without_the_timeout_variable(counted):
    p = ResponseParser("qwen3", "<|im_start|>assistant\n")
    for chunk in ["<think>a</think>Hi", '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>', "<|im_end|>"]:
        p.feed(chunk)
    message, _ = p.finalize()
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": {"x": 1}}
    assert counted.gets == 0


def test_an_xml_inline_close_reads_the_timeout_variable(counted):
    tpl = {"start_anchor": "<s>", "fields": {"content": {"close": "<end>"}, "call": {
        "open": "<call>", "close": "</call>", "content": "xml-inline",
        "content_args": {"tag_pattern": r"<(?P<key>[a-z]+)>(?P<value>[^<]*)</[a-z]+>"}}}}
    p = ResponseParser(tpl, "", regex_timeout=0.25)
    p.feed("<call><a>1</a></call>x<end>")
    message, _ = p.finalize()
    assert message["call"] == {"a": "1"} and message["content"] == "x"
    assert counted.gets == 1  # the xml-inline close only (the text field has no remove_pattern)
