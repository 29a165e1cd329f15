"""One generation (or ``n``) as each API's response: the stream objects of the package over a `ModelWorker`.

For every API, ``<api>_stream`` yields the Server-Sent-Events text to send and ``<api>_response`` returns
the non-streaming JSON body; both are synchronous (the ASGI app runs them in a thread). Chat Completions
uses `DeltaStream`, Messages `MessagesStream`, Responses `ResponsesStream`, all fed the parser events of
the worker's `ResponseStreamer`; the parser's closing events are given to ``finish`` together with the
finish reason (``length`` at the token limit).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from hf_response_templates.anthropic import MessagesStream
from hf_response_templates.blocks import sse_event
from hf_response_templates.openai import SSE_DONE, DeltaStream, chat_completion, sse
from hf_response_templates.responses import ResponsesStream
from hf_response_templates.serve.generate import ModelWorker, Outcome, Prepared
from hf_response_templates.serve.protocol import ApiOptions

__all__ = [
    "chat_completions_response", "chat_completions_stream", "messages_response", "messages_stream",
    "responses_response", "responses_stream",
]


def _run(worker: ModelWorker, prepared: Any, cancel: threading.Event, feed: Any) -> Outcome:
    """Stream one generation into ``feed(events)``; return its `Outcome`."""
    for item in worker.stream(prepared, cancel):
        if isinstance(item, Outcome):
            return item
        feed(item)
    raise RuntimeError("the generation ended without an outcome")  # pragma: no cover - stream always ends so


# ------------------------------------------------------------------------------------- Chat Completions


def chat_completions_stream(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> Iterator[str]:
    """``chat.completion.chunk`` SSE lines: the ``n`` choices one after the other, the usage chunk if asked,
    then ``data: [DONE]``."""
    tools = prepared.request.tools
    completion_id, created = None, int(time.time())
    usage = [0, 0]
    stream: DeltaStream | None = None
    for index in range(options.n):
        stream = DeltaStream.for_events(
            worker.template,
            tools=tools,
            model=options.model,
            completion_id=completion_id,
            created=created,
            choice_index=index,
        )
        completion_id = stream.completion_id
        outcome = None
        for item in worker.stream(prepared, cancel):
            if isinstance(item, Outcome):
                outcome = item
                break
            chunks = stream.feed_events_chunks(item)
            if chunks:
                yield "".join(sse(c) for c in chunks)
        assert outcome is not None
        usage[0], usage[1] = outcome.prompt_tokens, usage[1] + outcome.completion_tokens
        yield "".join(sse(c) for c in stream.finish_chunks(outcome.finish_reason, events=outcome.final_events))
    if options.include_usage and stream is not None:
        yield sse(stream.usage_chunk(usage[0], usage[1]))
    yield SSE_DONE


def chat_completions_response(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> dict[str, Any]:
    """The ``chat.completion`` body (``n`` choices, usage). The events also go through a `DeltaStream`, whose
    tool-call ids (the model's own where the format writes them) the response takes, as the stream would."""
    response: dict[str, Any] | None = None
    completion_tokens = 0
    for index in range(options.n):
        stream = DeltaStream.for_events(worker.template, tools=prepared.request.tools)
        outcome = _run(worker, prepared, cancel, stream.feed_events)
        stream.finish(outcome.finish_reason, events=outcome.final_events)
        completion_tokens += outcome.completion_tokens
        one = chat_completion(
            outcome.message,
            model=options.model,
            finish_reason=outcome.finish_reason,
            tool_call_ids=stream.tool_call_ids,
        )
        if response is None:
            response = one
        else:
            one["choices"][0]["index"] = index
            response["choices"].append(one["choices"][0])
    assert response is not None
    response["usage"] = {
        "prompt_tokens": prepared.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prepared.prompt_tokens + completion_tokens,
    }
    return response


# ---------------------------------------------------------------------- the block APIs (Messages, Responses)


def _block_events(
    stream: Any, worker: ModelWorker, prepared: Prepared, cancel: threading.Event, finish: Any
) -> Iterator[dict[str, Any]]:
    """A `MessagesStream` / `ResponsesStream` (made by ``for_events``) over one generation; ``finish(stream,
    outcome)`` gives its last events."""
    for item in worker.stream(prepared, cancel):
        if isinstance(item, Outcome):
            yield from finish(stream, item)
            return
        yield from stream.feed_events(item)


def _messages_events(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> Iterator[dict[str, Any]]:
    stream = MessagesStream.for_events(
        worker.template, tools=prepared.request.tools, model=options.model, input_tokens=prepared.prompt_tokens
    )

    def finish(stream: MessagesStream, outcome: Outcome) -> list[dict[str, Any]]:
        reason = "max_tokens" if outcome.finish_reason == "length" else None
        return stream.finish(reason, output_tokens=outcome.completion_tokens, events=outcome.final_events)

    return _block_events(stream, worker, prepared, cancel, finish)


def _responses_events(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> Iterator[dict[str, Any]]:
    stream = ResponsesStream.for_events(worker.template, tools=prepared.request.tools, model=options.model)

    def finish(stream: ResponsesStream, outcome: Outcome) -> list[dict[str, Any]]:
        usage = (outcome.prompt_tokens, outcome.completion_tokens)
        return stream.finish(outcome.finish_reason, usage=usage, events=outcome.final_events)

    return _block_events(stream, worker, prepared, cancel, finish)


def messages_stream(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> Iterator[str]:
    """Anthropic Messages SSE events."""
    return map(sse_event, _messages_events(worker, prepared, options, cancel))


def responses_stream(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> Iterator[str]:
    """OpenAI Responses SSE events."""
    return map(sse_event, _responses_events(worker, prepared, options, cancel))


def messages_response(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> dict[str, Any]:
    """The Anthropic ``message`` body, accumulated from the same events as the stream."""
    message: dict[str, Any] = {}
    blocks: list[dict[str, Any]] = []
    partial: dict[int, list[str]] = {}
    for event in _messages_events(worker, prepared, options, cancel):
        kind = event["type"]
        if kind == "message_start":
            message = dict(event["message"])
        elif kind == "content_block_start":
            blocks.append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            delta, block = event["delta"], blocks[event["index"]]
            if delta["type"] == "input_json_delta":
                partial.setdefault(event["index"], []).append(delta["partial_json"])
            else:
                key = "text" if delta["type"] == "text_delta" else "thinking"
                block[key] += delta[key]
        elif kind == "content_block_stop" and event["index"] in partial:
            blocks[event["index"]]["input"] = json.loads("".join(partial.pop(event["index"])))
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message.get("usage", {}), **event["usage"]}
    message["content"] = blocks
    return message


def responses_response(
    worker: ModelWorker, prepared: Prepared, options: ApiOptions, cancel: threading.Event
) -> dict[str, Any]:
    """The ``response`` body: the final event's whole response."""
    last: dict[str, Any] = {}
    for event in _responses_events(worker, prepared, options, cancel):
        last = event
    return last["response"]
