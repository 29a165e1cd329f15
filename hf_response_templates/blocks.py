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

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Block", "BlockMapper"]


class Block:
    """One block of the message being streamed."""

    __slots__ = ("kind", "index", "call_index", "call_id", "name", "parts", "open")

    def __init__(self, kind: str, index: int, call_index: int | None = None, call_id: str = "", name: str = ""):
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
