"""OpenAI Responses API streaming events from a response template.

`ResponsesStream` runs a `DeltaStream` and turns its deltas into the events of the Responses API, one output
item per block in the order the model wrote them: ``reasoning`` items (``response.reasoning_text.delta``),
``message`` items (``response.output_text.delta``), ``function_call`` items
(``response.function_call_arguments.delta`` / ``.done``), each between ``response.output_item.added`` and
``response.output_item.done``; ``response.created`` first and ``response.completed`` (``response.incomplete``
at the token limit) last, with the whole response::

    >>> stream = ResponsesStream(get_template("qwen3"), prefix=prompt, tools=tools, model="qwen3")
    >>> for text in pieces_of_generated_text:
    ...     for event in stream.feed(text):
    ...         send(sse_event(event))
    >>> for event in stream.finish():                 # finish("length") at the token limit
    ...     send(sse_event(event))

Function calls are sent once their region parsed (``tool_call_streaming="validated"``, the default here);
``"incremental"`` streams their arguments as the model writes them. Extensions on the final response:
``unparsed``, ``tool_call_errors`` and ``fields`` (as in `hf_response_templates.anthropic`).

This module is ``hf_response_templates.responses``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.blocks import Block, BlockStream, function_tools, sse_event

__all__ = ["ResponsesStream", "sse_event", "responses_tools"]

#: Responses API function tools (``{"type": "function", "name", "parameters"}``) as the Chat Completions
#: schemas that type tool arguments.
responses_tools = function_tools


class ResponsesStream(BlockStream):
    """One generation as Responses API streaming events (see the module docs).

    Args:
        template, prefix, tools: as for `DeltaStream` (``tools`` may be Responses API function tools).
        model: the response's ``model``.
        response_id: default ``resp_`` + 24 random letters/digits (reproducible with ``id_seed``).
        tool_call_streaming: "validated" (default) or "incremental".
        **options: other `DeltaStream` options.
    """

    def __init__(
        self,
        template: Any,
        *,
        prefix: str | None = None,
        tools: Iterable[Any] | None = None,
        model: str = "",
        response_id: str | None = None,
        created_at: int | None = None,
        tool_call_streaming: str = "validated",
        id_seed: int | str | None = None,
        **options: Any,
    ):
        super().__init__(
            template,
            prefix=prefix,
            tools=tools,
            tool_call_streaming=tool_call_streaming,
            id_seed=id_seed,
            **options,
        )
        self.model = model
        self.response_id = response_id or self._id("resp_")
        self.created_at = int(time.time()) if created_at is None else created_at
        self._items: list[dict[str, Any]] = []  # the completed output items
        self._item_ids: dict[int, str] = {}
        self._seq = 0

    def finish(
        self,
        finish_reason: str | None = None,
        *,
        usage: tuple[int, int] | None = None,
        events: Iterable[Mapping[str, Any]] = (),
    ) -> list[dict[str, Any]]:
        """End the stream: the last events, then ``response.completed`` (``response.incomplete`` with
        ``finish_reason="length"``). ``usage``: (input_tokens, output_tokens). ``events``: a `for_events`
        stream's last parser events, if held back until the finish reason was known."""
        if finish_reason not in (None, "stop", "length", "tool_calls"):
            raise ValueError(f"unknown finish_reason {finish_reason!r}")
        out = self._events(self.deltas.finish(finish_reason, events=events))
        out += self._ops(self._blocks.close())
        response = self._response("incomplete" if finish_reason == "length" else "completed")
        response["output"] = self._items
        if finish_reason == "length":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        if usage is not None:
            response["usage"] = {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "total_tokens": usage[0] + usage[1],
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            }
        b = self._blocks
        if b.unparsed:
            response["unparsed"] = b.unparsed
        if b.errors:
            response["tool_call_errors"] = b.errors
        if b.extras:
            response["fields"] = b.extras
        kind = "response.incomplete" if finish_reason == "length" else "response.completed"
        out.append(self._event(kind, response=response))
        return out

    def _response(self, status: str) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "usage": None,
        }

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return event

    def _events(self, deltas: list[dict]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            events.append(self._event("response.created", response=self._response("in_progress")))
            events.append(self._event("response.in_progress", response=self._response("in_progress")))
        if deltas:
            events += self._ops(self._blocks.push(deltas))
        return events

    def _item(self, b: Block, done: bool) -> dict[str, Any]:
        item_id = self._item_ids[b.index]
        status = "completed" if done else "in_progress"
        if b.kind == "reasoning":
            content = [{"type": "reasoning_text", "text": b.text}] if done else []
            return {"type": "reasoning", "id": item_id, "summary": [], "content": content, "status": status}
        if b.kind == "text":
            content = [_text_part(b.text)] if done else []
            return {
                "type": "message",
                "id": item_id,
                "status": status,
                "role": "assistant",
                "content": content,
            }
        return {
            "type": "function_call",
            "id": item_id,
            "call_id": b.call_id,
            "name": b.name,
            "arguments": b.text if done else "",
            "status": status,
        }

    def _ops(self, ops: list[tuple]) -> list[dict[str, Any]]:
        events = []
        for op in ops:
            b: Block = op[1]
            where = {"output_index": b.index}
            if op[0] == "start":
                self._item_ids[b.index] = self._id({"reasoning": "rs_", "text": "msg_"}.get(b.kind, "fc_"))
                events.append(self._event("response.output_item.added", item=self._item(b, False), **where))
                if b.kind != "tool":
                    part = {"type": "reasoning_text", "text": ""} if b.kind == "reasoning" else _text_part("")
                    events.append(
                        self._event(
                            "response.content_part.added",
                            item_id=self._item_ids[b.index],
                            content_index=0,
                            part=part,
                            **where,
                        )
                    )
                continue
            item_id = self._item_ids[b.index]
            if op[0] == "delta":
                if b.kind == "tool":
                    events.append(
                        self._event(
                            "response.function_call_arguments.delta", item_id=item_id, delta=op[2], **where
                        )
                    )
                else:
                    kind = (
                        "response.reasoning_text.delta"
                        if b.kind == "reasoning"
                        else "response.output_text.delta"
                    )
                    extra = {} if b.kind == "reasoning" else {"logprobs": []}
                    events.append(
                        self._event(kind, item_id=item_id, content_index=0, delta=op[2], **extra, **where)
                    )
                continue
            # stop
            if b.kind == "tool":
                events.append(
                    self._event(
                        "response.function_call_arguments.done",
                        item_id=item_id,
                        name=b.name,
                        arguments=b.text,
                        **where,
                    )
                )
            else:
                text = b.text
                if b.kind == "reasoning":
                    events.append(
                        self._event(
                            "response.reasoning_text.done",
                            item_id=item_id,
                            content_index=0,
                            text=text,
                            **where,
                        )
                    )
                    part = {"type": "reasoning_text", "text": text}
                else:
                    events.append(
                        self._event(
                            "response.output_text.done",
                            item_id=item_id,
                            content_index=0,
                            text=text,
                            logprobs=[],
                            **where,
                        )
                    )
                    part = _text_part(text)
                events.append(
                    self._event(
                        "response.content_part.done", item_id=item_id, content_index=0, part=part, **where
                    )
                )
            item = self._item(b, True)
            self._items.append(item)
            events.append(self._event("response.output_item.done", item=item, **where))
        return events


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
