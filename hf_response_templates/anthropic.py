"""Anthropic Messages streaming events from a response template.

`MessagesStream` runs a `DeltaStream` and turns its deltas into the events of Anthropic's Messages API
(``message_start``, ``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` with
``thinking_delta``, ``text_delta`` and ``input_json_delta``, ``message_delta``, ``message_stop``), in the
order the model wrote reasoning, text and tool calls::

    >>> stream = MessagesStream(get_template("qwen3"), prefix=prompt, tools=tools, model="qwen3")
    >>> for text in pieces_of_generated_text:
    ...     for event in stream.feed(text):
    ...         send(sse_event(event))
    >>> for event in stream.finish():                 # finish("max_tokens") at the token limit
    ...     send(sse_event(event))

Tool calls are sent as ``tool_use`` blocks once their region parsed (``tool_call_streaming="validated"``,
the default here: a block cannot be taken back, so a malformed call is never started); with
``"incremental"`` their ``input_json_delta`` fragments stream as the model writes them (always a prefix of
valid JSON). Tool inputs are typed by the ``tools`` schemas (OpenAI or Anthropic format). Lone surrogates
become U+FFFD.

Extensions, on the ``message_delta`` event's ``delta`` (the SDK keeps unknown keys on its event models):
``unparsed`` (regions that failed to parse, as ``parse_response(..., strict=False)["unparsed"]``),
``tool_call_errors`` (see `DeltaStream`), and ``fields`` (other template fields).

This module is ``hf_response_templates.anthropic``; it does not import the ``anthropic`` package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.blocks import Block, BlockStream, function_tools, sse_event

__all__ = ["MessagesStream", "sse_event", "anthropic_tools"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}

#: Anthropic tool definitions (``name``, ``input_schema``) as the Chat Completions function schemas that
#: type tool arguments.
anthropic_tools = function_tools


class MessagesStream(BlockStream):
    """One generation as Anthropic Messages streaming events (see the module docs).

    Args:
        template, prefix, tools: as for `DeltaStream` (``tools`` may be Anthropic tool definitions).
        model: the ``model`` of the message.
        message_id: the message ``id`` (default ``msg_`` + 24 random letters/digits, reproducible with
            ``id_seed``).
        input_tokens: for ``message_start``'s usage (the caller counts tokens; this stream sees text).
        tool_call_streaming: "validated" (default) or "incremental".
        **options: other `DeltaStream` options (``id_seed``, ``reasoning_field``, ...).
    """

    def __init__(
        self,
        template: Any,
        *,
        prefix: str | None = None,
        tools: Iterable[Any] | None = None,
        model: str = "",
        message_id: str | None = None,
        input_tokens: int = 0,
        tool_call_streaming: str = "validated",
        id_seed: int | str | None = None,
        **options: Any,
    ):
        if "id_factory" not in options:
            options["id_factory"] = lambda i: self._id("toolu_")
        super().__init__(
            template,
            prefix=prefix,
            tools=tools,
            tool_call_streaming=tool_call_streaming,
            id_seed=id_seed,
            **options,
        )
        self.model = model
        self.message_id = message_id or self._id("msg_")
        self.input_tokens = input_tokens

    def finish(
        self,
        stop_reason: str | None = None,
        *,
        output_tokens: int = 0,
        events: Iterable[Mapping[str, Any]] = (),
    ) -> list[dict[str, Any]]:
        """End the stream: the last events, ``message_delta`` (``stop_reason``: "end_turn", "tool_use", or
        "max_tokens" when you say generation hit the token limit) and ``message_stop``. ``events``: a
        `for_events` stream's last parser events, if held back until the stop reason was known."""
        if stop_reason not in (None, "end_turn", "tool_use", "max_tokens", "stop_sequence"):
            raise ValueError(f"unknown stop_reason {stop_reason!r}")
        length = "length" if stop_reason == "max_tokens" else None
        out = self._events(self.deltas.finish(length, events=events))
        out += self._ops(self._blocks.close())
        reason = stop_reason or _STOP.get(self.deltas.finish_reason or "stop", "end_turn")
        if reason == "tool_use" and not self._blocks.has_tool_calls:
            reason = "end_turn"
        delta: dict[str, Any] = {"stop_reason": reason, "stop_sequence": None}
        b = self._blocks
        if b.unparsed:
            delta["unparsed"] = b.unparsed
        if b.errors:
            delta["tool_call_errors"] = b.errors
        if b.extras:
            delta["fields"] = b.extras
        out.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}})
        out.append({"type": "message_stop"})
        return out

    def _events(self, deltas: list[dict]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            events.append(
                {
                    "type": "message_start",
                    "message": {
                        "id": self.message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": self.model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": self.input_tokens, "output_tokens": 0},
                    },
                }
            )
        if deltas:
            events += self._ops(self._blocks.push(deltas))
        return events

    @staticmethod
    def _ops(ops: list[tuple]) -> list[dict[str, Any]]:
        events = []
        for op in ops:
            b: Block = op[1]
            if op[0] == "start":
                if b.kind == "reasoning":
                    block: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
                elif b.kind == "text":
                    block = {"type": "text", "text": ""}
                else:
                    block = {"type": "tool_use", "id": b.call_id, "name": b.name, "input": {}}
                events.append({"type": "content_block_start", "index": b.index, "content_block": block})
            elif op[0] == "delta":
                if b.kind == "reasoning":
                    delta = {"type": "thinking_delta", "thinking": op[2]}
                elif b.kind == "text":
                    delta = {"type": "text_delta", "text": op[2]}
                else:
                    delta = {"type": "input_json_delta", "partial_json": op[2]}
                events.append({"type": "content_block_delta", "index": b.index, "delta": delta})
            else:
                events.append({"type": "content_block_stop", "index": b.index})
        return events
