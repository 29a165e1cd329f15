"""`MessagesStream.for_events` / `ResponsesStream.for_events` (what `serve` feeds from a `ResponseStreamer`)
give the same API events as the text-fed streams, over every shipped template's raw outputs, whole and cut
inside a tool call at the token limit (the parser's closing events held back and given to ``finish``). The
producer traces delimiters (``ResponseStreamer(trace=True)``, as `serve` runs it), so ids are the same too,
the model-written ones included (a producer that does not trace gives generated ids). The difference
`DeltaStream` documents for events is the one allowed: at the token limit, a conservative ``length`` flag on
a call that closed right where generation stopped."""

from __future__ import annotations

from typing import Any

import pytest
from _chat_render import TOOLS
from test_openai_deltas import ALL_RAW

from hf_response_templates import ResponseParser
from hf_response_templates.anthropic import MessagesStream
from hf_response_templates.library import get_template
from hf_response_templates.responses import ResponsesStream


def _no_wording(value: Any) -> Any:
    """The wording of tool-call errors aside (events cannot tell "inside the call" from "right after it" at
    the token limit; the type and ``in_message`` are the same)."""
    if isinstance(value, dict):
        return {k: "" if k == "message" and isinstance(v, str) else _no_wording(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_wording(v) for v in value]
    return value


def _split_errors(events: list[dict]) -> tuple[list[dict], list[tuple]]:
    """The events without their ``tool_call_errors`` extension, and those errors as (index, type, in_message)."""
    errors: list[tuple] = []
    for event in events:
        holder = event.get("response") if event["type"].startswith("response.") else event.get("delta")
        if isinstance(holder, dict) and "tool_call_errors" in holder:
            errors += [(e["index"], e["type"], e["in_message"]) for e in holder.pop("tool_call_errors")]
    return events, errors


def _pieces(text: str) -> list[str]:
    return [text[i : i + 5] for i in range(0, len(text), 5)]


def _by_text(cls: type, template: dict, prefix: str, text: str, finish: tuple, **kwargs: Any) -> list[dict]:
    stream = cls(template, prefix=prefix, tools=TOOLS, id_seed=0, **kwargs)
    events = [e for piece in _pieces(text) for e in stream.feed(piece)]
    return events + stream.finish(*finish)


def _by_events(cls: type, template: dict, prefix: str, text: str, finish: tuple, **kwargs: Any) -> list[dict]:
    parser = ResponseParser(template, prefix, tools=TOOLS, trace=True)  # what serve's ResponseStreamer runs
    stream = cls.for_events(template, tools=TOOLS, id_seed=0, **kwargs)
    out = stream.feed_events(parser.initial_events)
    for piece in _pieces(text):
        out += stream.feed_events(parser.feed(piece))
    # as serve/generate.py: the parser's closing events wait until the finish reason is known
    return out + stream.finish(*finish, events=parser.finalize()[1])


@pytest.mark.parametrize("n", range(len(ALL_RAW)))
@pytest.mark.parametrize("cls", [MessagesStream, ResponsesStream])
def test_events_fed_streams_equal_text_fed_streams(cls: type, n: int) -> None:
    name, prefix, text = ALL_RAW[n]
    template = get_template(name)
    kwargs = {"message_id": "msg", "model": "m"} if cls is MessagesStream else {"response_id": "r", "created_at": 0}
    done = (None,)
    assert _no_wording(_by_events(cls, template, prefix, text, done, **kwargs)) == _no_wording(
        _by_text(cls, template, prefix, text, done, **kwargs)
    )
    cut = text[: max(1, text.find("{") + 4)] if "{" in text else text[: len(text) // 2]
    limit = ("max_tokens",) if cls is MessagesStream else ("length",)
    by_events, event_errors = _split_errors(_by_events(cls, template, prefix, cut, limit, **kwargs))
    by_text, text_errors = _split_errors(_by_text(cls, template, prefix, cut, limit, **kwargs))
    assert _no_wording(by_events) == _no_wording(by_text)
    # At the token limit, events cannot tell whether the region went on after a call that closed right there:
    # the events-fed stream flags such a call ("length", still in the message); it never misses a flag.
    assert set(text_errors) <= set(event_errors)
    assert all(e[1:] == ("length", True) for e in set(event_errors) - set(text_errors))
