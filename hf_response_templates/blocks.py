"""Content blocks from `DeltaStream` deltas: the shared core of the Anthropic Messages and OpenAI Responses
streaming adapters (`hf_response_templates.anthropic`, `hf_response_templates.responses`).

Both APIs stream a message as a sequence of blocks (Anthropic: content blocks; Responses: output items),
each opened, filled with deltas, and closed, in the order the model wrote them. `BlockMapper` turns the
deltas of a `DeltaStream` into that sequence, keeping the interleaving of reasoning, text and tool calls:

* ``("start", block)``: a new block; ``block.kind`` is ``"reasoning"``, ``"text"`` or ``"tool"`` (with
  ``block.call_id`` and ``block.name``);
* ``("delta", block, text)``: more reasoning / text, or an arguments fragment of the tool call;
* ``("stop", block)``: the block is complete (``block.text`` holds all of it: the text, or the arguments).

A block of one kind is closed when a delta of another kind arrives (text after a tool call opens a new text
block). What the APIs have no place for is kept on the mapper, for the adapters to send as extensions:
``unparsed`` records, tool-call ``errors`` (``{"index", "id", "type", "message", "in_message"}``) and
``extras`` (other template fields, e.g. Command R7B's ``tool_plan``).
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterable, Mapping
from typing import Any

from hf_response_templates.openai import DeltaStream

__all__ = ["Block", "BlockMapper", "BlockStream", "function_tools", "sse_event"]

_ID_CHARS = string.ascii_letters + string.digits


def sse_event(event: Mapping[str, Any]) -> str:
    """One Server-Sent-Events record, ``event: <type>`` then ``data: {...}``, as both APIs send them."""
    return f"event: {event['type']}\ndata: " + json.dumps(event, separators=(",", ":")) + "\n\n"


def function_tools(tools: Iterable[Mapping[str, Any]] | None) -> list[dict] | None:
    """Tool definitions in the Chat Completions shape (``{"type": "function", "function": {...}}``) from
    Anthropic ones (``name``, ``input_schema``), Responses API ones (``{"type": "function", "name", ...}``)
    or Chat Completions ones (unchanged)."""
    if tools is None:
        return None
    out = []
    for tool in tools:
        if "input_schema" in tool:
            fn = {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool["input_schema"],
            }
            if tool.get("strict"):
                fn["strict"] = True
            out.append({"type": "function", "function": fn})
        elif tool.get("type") == "function" and "function" not in tool and "name" in tool:
            out.append({"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}})
        else:
            out.append(dict(tool))
    return out


class Block:
    """One block of the message being streamed."""

    __slots__ = ("kind", "index", "call_index", "call_id", "name", "parts", "open")

    def __init__(
        self, kind: str, index: int, call_index: int | None = None, call_id: str = "", name: str = ""
    ):
        self.kind = kind  # "reasoning" | "text" | "tool"
        self.index = index  # position among the blocks of the message
        self.call_index = call_index  # DeltaStream's tool-call index (tool blocks)
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.open = True

    @property
    def text(self) -> str:
        """Everything the block holds so far (text, or the arguments JSON of a tool call)."""
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


_TEXT_KINDS = {"reasoning_content": "reasoning", "content": "text"}


class BlockStream:
    """What the block-based adapters share: a `DeltaStream` (tool calls "validated" by default: a block
    cannot be taken back), a `BlockMapper` over its deltas, and ids."""

    def __init__(
        self,
        template: Any,
        *,
        prefix: str | None = None,
        tools: Iterable[Any] | None = None,
        tool_call_streaming: str = "validated",
        id_seed: int | str | None = None,
        **options: Any,
    ):
        self._rng = random.Random(id_seed) if id_seed is not None else random.SystemRandom()
        self.deltas = DeltaStream(
            template,
            prefix=prefix,
            tools=function_tools(list(tools)) if tools is not None else None,
            tool_call_streaming=tool_call_streaming,
            id_seed=id_seed,
            **options,
        )
        self._blocks = BlockMapper()
        self._started = False

    def _id(self, prefix: str) -> str:
        return prefix + "".join(self._rng.choice(_ID_CHARS) for _ in range(24))

    @classmethod
    def for_events(cls, template: Any, *, tools: Iterable[Any] | None = None, **options: Any) -> Any:
        """A stream fed with parser events made elsewhere (`feed_events`), e.g. by a ``ResponseStreamer``,
        as `DeltaStream.for_events` (no ``prefix``: the producer consumed the prompt)."""
        if "prefix" in options:
            raise TypeError("for_events() takes no prefix: the producer of the events consumed the prompt")
        return cls(template, tools=tools, _events_only=True, **options)

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Add generated text; return the events it completes."""
        return self._events(self.deltas.feed(text))

    def feed_events(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add parser events (a stream made by `for_events`); return the API events they complete."""
        return self._events(self.deltas.feed_events(events))

    def _events(self, deltas: list[dict]) -> list[dict[str, Any]]:
        raise NotImplementedError


class BlockMapper:
    """Turn `DeltaStream` deltas into block operations (see the module docs)."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._open: Block | None = None
        self._calls: dict[int, Block] = {}
        #: ``unparsed`` records (as in the OpenAI deltas)
        self.unparsed: list[dict] = []
        #: tool-call errors: ``{"index", "id", "type", "message", "in_message"}``
        self.errors: list[dict] = []
        #: other fields: text concatenated, other values as sent
        self.extras: dict[str, Any] = {}

    def push(self, deltas: Iterable[Mapping[str, Any]]) -> list[tuple]:
        """The block operations for these deltas."""
        ops: list[tuple] = []
        for delta in deltas:
            for key, value in delta.items():
                kind = _TEXT_KINDS.get(key)
                if kind is not None:
                    if value:
                        self._text(kind, value, ops)
                elif key == "tool_calls":
                    for entry in value:
                        self._tool(entry, ops)
                elif key == "unparsed":
                    self.unparsed.extend(value)
                elif key != "role":
                    cur = self.extras.get(key)
                    if isinstance(cur, str) and isinstance(value, str):
                        self.extras[key] = cur + value
                    elif isinstance(cur, list) and isinstance(value, list):
                        cur.extend(value)
                    else:
                        self.extras[key] = value
        return ops

    def close(self) -> list[tuple]:
        """Close the open block (at the end of the stream)."""
        ops: list[tuple] = []
        self._close(ops)
        return ops

    @property
    def has_tool_calls(self) -> bool:
        return any(b.kind == "tool" for b in self.blocks)

    def _close(self, ops: list[tuple]) -> None:
        b = self._open
        if b is not None:
            b.open = False
            self._open = None
            ops.append(("stop", b))

    def _start(self, block: Block, ops: list[tuple]) -> Block:
        self._close(ops)
        self.blocks.append(block)
        self._open = block
        ops.append(("start", block))
        return block

    def _text(self, kind: str, text: str, ops: list[tuple]) -> None:
        b = self._open
        if b is None or b.kind != kind:
            b = self._start(Block(kind, len(self.blocks)), ops)
        b.parts.append(text)
        ops.append(("delta", b, text))

    def _tool(self, entry: Mapping[str, Any], ops: list[tuple]) -> None:
        i = entry.get("index")
        fn = entry.get("function") if isinstance(entry.get("function"), Mapping) else {}
        if "id" in entry:
            b = Block("tool", len(self.blocks), i, entry["id"], fn.get("name") or "")
            self._calls[i] = self._start(b, ops)
        b = self._calls.get(i)
        if b is None:
            return
        if "error" in entry:
            self.errors.append({"index": i, "id": b.call_id, **entry["error"]})
        args = fn.get("arguments")
        if args:
            b.parts.append(args)
            if b.open:
                ops.append(("delta", b, args))
            # (a fragment for a call whose block was closed by a later one cannot be sent; its `text` has it)
