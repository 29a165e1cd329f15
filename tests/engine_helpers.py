"""Shared helpers for the engine tests: the seed's templates and event utilities."""

from __future__ import annotations

import copy
from typing import Any

from hf_response_templates import ResponseParser

SMOLLM3 = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}

QWEN_XML = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|im_end|>"},
    },
}

GPT_OSS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start|>assistant",
    "fields": {
        "reasoning_content": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "tool_calls": {
            "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"open": "<|channel|>final<|message|>", "close": ["<|return|>", "<|end|>"]},
    },
}

COHERE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "fields": {
        "tool_plan": {"open": "<|START_THINKING|>", "close": "<|END_THINKING|>"},
        "content": {"open": "<|START_RESPONSE|>", "close": "<|END_RESPONSE|>"},
        "tool_calls": {
            "open": "<|START_ACTION|>",
            "close": "<|END_ACTION|>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
        },
    },
}


def template(base: dict[str, Any], **field_updates: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of `base` with some fields replaced (value None removes the field)."""
    out = copy.deepcopy(base)
    for name, spec in field_updates.items():
        if spec is None:
            out["fields"].pop(name)
        else:
            out["fields"][name] = spec
    return out


def stream(tpl: Any, chunks: list[str], prefix: str = "", **kwargs: Any) -> tuple[dict, list[dict]]:
    """Feed `chunks` one by one; return (message, every event including initial and final ones)."""
    parser = ResponseParser(tpl, prefix, **kwargs)
    events = list(parser.initial_events)
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    message, final = parser.finalize()
    return message, events + final


def chunk_text_by_field(events: list[dict]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        if e["type"] == "region_chunk":
            out[e["field"]] = out.get(e["field"], "") + e["text"]
    return out


def merge_chunks(events: list[dict]) -> list[dict]:
    """Events with consecutive chunks of one field merged (chunking-independent view)."""
    out: list[dict] = []
    for e in events:
        if (
            e["type"] == "region_chunk"
            and out
            and out[-1]["type"] == "region_chunk"
            and out[-1]["field"] == e["field"]
        ):
            out[-1] = {**out[-1], "text": out[-1]["text"] + e["text"]}
        else:
            out.append(dict(e))
    return out


class CallCount:
    """Counts calls of a function while delegating to it."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.fn(*args, **kwargs)


def count_parser_calls(monkeypatch: Any, names: tuple[str, ...]) -> dict[str, CallCount]:
    """Patch the named `ResponseParser` methods with counters (undone by `monkeypatch`); returns them by name."""
    counters = {}
    for name in names:
        counter = counters[name] = CallCount(getattr(ResponseParser, name))
        monkeypatch.setattr(ResponseParser, name, (lambda c: lambda self, *a: c(self, *a))(counter))
    return counters


def call_snapshot(counters: dict[str, CallCount]) -> dict[str, int]:
    """The calls counted so far, by name."""
    return {name: c.calls for name, c in counters.items()}


def oneshot_plan(tpl: Any) -> Any:
    """The one-shot plan (`plan.plan_for`) of template `tpl` (a dict or a compiled template)."""
    from hf_response_templates import load_template
    from hf_response_templates.plan import plan_for

    return plan_for(load_template(tpl))


def assert_fast_loop_agrees(tpl: Any, text: str, prefix: str, general: bool = True) -> None:
    """The plan's two-state loop gives `_general`'s answer on `text` (unless `general` is false); when it answers (not
    None), the streaming parser's message without errors; and `parse_response(strict=False)` gives the streamed
    message."""
    from hf_response_templates import parse_response

    plan = oneshot_plan(tpl)
    got = plan._fast_run(text, prefix, None)
    if general:
        assert got == plan._general(text, prefix, None)
    parser = ResponseParser(tpl, prefix)
    parser.feed(text)
    streamed, _ = parser.finalize()
    if got is not None:
        assert not parser.errors and got == streamed
    assert parse_response(text, tpl, prefix=prefix, strict=False) == streamed
