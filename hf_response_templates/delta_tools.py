"""Tool calls as OpenAI-style deltas: announcing calls, streaming their arguments from the partial parse of
the region (`hf_response_templates.partial`), checking them against the parsed value at the close. A mixin
of `DeltaStream`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hf_response_templates.delta_ids import Draws, draws_for
from hf_response_templates.delta_state import (
    _COMPACT_AT,
    _MISSING,
    _SURROGATE,
    _Call,
    _dumps,
    _encode_string,
    _fold,
    _get,
    _join_pieces,
    _Region,
    _same_json,
    _scrub,
    _Shape,
)
from hf_response_templates.tools import ToolSchemas, _schema_types, admits_string, cast_value


class ToolCallDeltas:
    """The tool-call half of `DeltaStream` (state lives on the stream: ``_made_rng``, ``_calls``, ``_ids``...)."""

    _tools: ToolSchemas | None
    _id_seed: int | str | None
    _made_rng: Draws | None
    _drawn: int

    def _draw(self, i: int) -> str:
        """Draw ``i`` of the id generator (`delta_ids`): the first is the completion id (when none was given at
        construction, even if one was set since), then the tool-call ids, in the order they are needed."""
        d = self._made_rng
        if d is None:
            d = self._made_rng = draws_for(self._id_seed)
        ids = d.ids
        if i < len(ids):
            return ids[i]
        if i >= d.keep:  # (past the draws kept for its seed: a generator of its own from there)
            d = self._made_rng = d.fork()
        return d.draw(i)

    def _new_id(self, index: int) -> str:
        if self._id_factory is not None:
            return self._id_factory(index)
        i = self._drawn
        self._drawn = i + 1
        return "call_" + self._draw(i)

    def _announce(self, r: _Region, name: str, call_id: str | None, out: list[dict]) -> _Call:
        index = self._next_index
        self._next_index += 1
        if call_id is None and not r.calls and r.model_id:
            call_id = r.model_id
        if call_id is None or call_id in self._ids:  # ids stay unique even if the model repeats one
            call_id = self._new_id(index)
        self._ids.add(call_id)
        call = _Call(index, call_id, name)
        r.calls.append(call)
        self._calls.append(call)
        call.ann = {
            "tool_calls": [
                {
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": _scrub(name), "arguments": ""},
                }
            ]
        }
        out.append(call.ann)
        return call

    def _send(self, call: _Call, piece: str, out: list[dict]) -> None:
        if not piece.isascii() and _SURROGATE.search(piece):
            piece = _SURROGATE.sub("\ufffd", piece)
        if call.run >= 0:
            _fold(call)
        parts = call.parts
        parts.append(piece)
        if len(parts) >= _COMPACT_AT:
            _join_pieces(parts)
        out.append({"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]})

    def _advance(self, call: _Call, stable: str, out: list[dict]) -> None:
        """Send what `stable` (the complete arguments text, scrubbed) adds to what was sent."""
        if call.stuck:
            return
        sent = call.sent
        if stable.startswith(sent):
            if len(stable) > len(sent):
                self._send(call, stable[len(sent) :], out)
        elif not sent.startswith(stable):
            call.stuck = True

    def _flag(self, call: _Call, kind: str, message: str, out: list[dict], *, in_message: bool) -> None:
        if call.error is not None:
            return
        call.error = {"type": kind, "message": message, "in_message": in_message}
        # "function" keeps the OpenAI SDK's stream helpers happy (they expect it on every tool-call delta)
        out.append(
            {"tool_calls": [{"index": call.index, "function": {"arguments": ""}, "error": dict(call.error)}]}
        )

    def _sources(self, shape: _Shape, base: tuple, value: Any, captures: dict) -> tuple:
        if shape.dynamic:
            fn = base + shape.fn_keys
            node = _get(value, fn)
            if isinstance(node, dict) and isinstance(node.get("function"), dict):
                fn = fn + ("function",)
            return ("path", fn + ("name",)), ("path", fn + ("arguments",)), None

        def src(ref: tuple | None) -> tuple | None:
            if ref is None or ref[0] != "ref":
                return ref
            _, root, keys = ref
            if shape.each:
                elem = _get(value, base)
                if isinstance(elem, dict) and root in elem:
                    return ("path", base + (root,) + keys)
            elif root == "content":
                return ("path", base + keys)
            if root in captures:
                return ("cap", captures[root], keys)
            return None

        return src(shape.name), src(shape.args), src(shape.id)

    @staticmethod
    def _resolve(src: tuple | None, partial: Any) -> tuple[str, Any, tuple | None]:
        if src is None:
            return "missing", None, None
        kind = src[0]
        if kind == "lit":
            return "complete", src[1], None
        if kind == "complex":
            return "unknown", None, None
        if kind == "cap":
            v = _get(src[1], src[2])
            return ("missing", None, None) if v is _MISSING else ("complete", v, None)
        path = src[1]
        if partial is None:
            return "missing", None, path
        v = _get(partial.value, path)
        if v is _MISSING:
            return "missing", None, path
        return ("complete" if partial.complete(path) else "partial"), v, path

    def _update_tool(self, r: _Region, out: list[dict]) -> None:
        """Announce the calls whose name is known and send the arguments that became stable."""
        if self._validated or r.follow is not None:  # (following: the partial parser's feed wrote it all)
            return
        p = r.partial
        if p is not None:
            if p.version == r.version:  # no member started or ended: only an open string can have grown
                if r.streaming is not None:
                    self._stream_string(r.streaming, out)
                return
            r.version = p.version
            if p.broken:
                return
        fast = r.fast
        if fast is not None:  # one call's arguments object is open: only its members can move
            call, node, frame, seen, depth = fast
            stack = p.stack
            if len(stack) > depth and stack[depth] is frame:  # (still open)
                if frame.version != seen:  # one of its members started or ended (not a deeper change)
                    r.fast = (call, node, frame, frame.version, depth)
                    self._members(r, call, node, frame, p, out)
                return
            r.fast = None
        srcs = r.srcs
        if srcs is not None:  # one call, its sources known (see below): the loop's one step, without the loop
            calls = r.calls
            if calls:
                call = calls[0]
            else:
                src = srcs[0]
                if src is not None and src[0] == "path" and (p is None or _get(p.value, src[1]) is _MISSING):
                    return  # (the name is not there yet: `_resolve` says "missing")
                call = self._announce_from(r, src, srcs[2], p, out)
                if call is None:
                    return
            if not call.final and not call.stuck:
                self._update_args(r, call, srcs[1], p, out)
            return
        shape = self._shape[r.name]
        if not shape.streamable:
            return
        value = _MISSING if p is None else p.value
        captures = r.captures or {}
        listy = shape.each or (shape.dynamic and isinstance(value, list))
        if listy:
            if not isinstance(value, list):
                return
            start = r.first_active
            bases = [(j,) for j in range(start, len(value))]
        else:
            start, bases = 0, [()]
        for j, base in enumerate(bases, start):
            if listy or shape.dynamic:
                name_src, args_src, id_src = self._sources(shape, base, value, captures)
            else:  # (one call, its sources depend on the captures only: worked out once they are known)
                srcs = r.srcs
                if srcs is None:
                    srcs = self._sources(shape, base, value, captures)
                    if r.captures is not None:
                        r.srcs = srcs
                name_src, args_src, id_src = srcs
            if j < len(r.calls):
                call = r.calls[j]
            else:
                call = self._announce_from(r, name_src, id_src, p, out)
                if call is None:
                    break
            if not call.final and not call.stuck:
                self._update_args(r, call, args_src, p, out)
            if listy and call.held is not None and j < len(value) - 1:
                # a later call of the list started: this one is complete (incremental mode accepts that the
                # list may still fail to parse; "validated" waits for the whole list)
                self._advance(call, call.held, out)
                call.held = None
            if listy and (call.stuck or call.final and call.held is None) and j == r.first_active:
                r.first_active += 1

    def _announce_from(self, r: _Region, name_src: tuple | None, id_src: tuple | None, p: Any,
                       out: list[dict]) -> _Call | None:
        """Announce the next call of `r` if its name (from `name_src`) is complete; None if not yet."""
        status, name, _ = self._resolve(name_src, p)
        if status != "complete" or not isinstance(name, str) or not name:
            return None
        status, call_id, _ = self._resolve(id_src, p)
        return self._announce(
            r, name, call_id if status == "complete" and isinstance(call_id, str) and call_id else None, out
        )

    def _update_args(self, r: _Region, call: _Call, src: tuple | None, p: Any, out: list[dict]) -> None:
        status, value, path = self._resolve(src, p)
        if status == "complete":
            if r.streaming is call:
                self._stream_string(call, out)  # the rest of a string member (its pieces are kept)
                r.streaming = None
            if (call.opened and call.str_key is None and type(value) is dict and call.members == len(value)
                    and not call.stuck):
                # every member was sent whole, each as json.dumps writes it (typed): the arguments are what
                # was sent and the "}" (not encoded again; the close checks the parsed value against it)
                full = call.sent + "}"
                if self._params(call.name) is None:  # (untyped: what was sent is json.dumps of `value`)
                    call.value = value
                # (all but the "}" was sent: nothing to advance)
            else:
                call.value = self._typed_args(call.name, value, r)
                full = _scrub(_dumps(call.value))
                # the closing "}" waits for the region's close: the arguments become valid JSON only once the
                # call is complete (a body can still turn out malformed after its arguments object)
                self._advance(call, full[:-1] if full.endswith("}") else "", out)
            call.final = True
            call.held = full
            return
        if status != "partial" or not isinstance(value, dict):
            return  # nothing yet, or an open list / scalar as the arguments: wait for it to complete
        frame = p.frame(value)
        if frame is None:
            return
        if not call.opened:
            call.opened = True
            if out and out[-1] is call.ann:  # announced by this very update: the "{" joins its arguments (as
                # `_merge` joins a fragment that follows the announcement; `_send` of "{" is that append)
                call.ann["tool_calls"][0]["function"]["arguments"] = "{"
                call.parts.append("{")
            else:
                self._send(call, "{", out)
        depth = next((d for d, f in enumerate(p.stack) if f is frame), None)
        if depth is not None:  # (the open containers, outermost first: see `partial.JsonPartial.stack`)
            r.fast = (call, value, frame, frame.version, depth)
        self._members(r, call, value, frame, p, out)

    def _members(self, r: _Region, call: _Call, value: dict, frame: Any, p: Any, out: list[dict]) -> None:
        """Send the members of an open arguments object that became complete, and its open string."""
        name = call.name
        keys = frame.keys
        n = call.members
        props = self._params(name) if self._tools else None
        kept = props is not None and self._kept(r)
        while n < len(keys):
            key = keys[n]
            if key == frame.open_key:
                break
            member = value[key]
            typed = member if props is None or key not in props else cast_value(member, props[key], kept)
            if call.str_key is not None and call.str_key == key:
                rest = self._string_rest(call)  # (with the closing quote: one fragment)
                call.str_key = None
                r.streaming = None
                if typed is member or (isinstance(typed, str) and typed == member):
                    self._send(call, rest + '"', out)
                else:
                    if rest:
                        self._send(call, rest, out)
                    call.stuck = True  # typing changed a streamed string: the close decides
                    return
            else:
                self._send(call, (", " if n else "") + _dumps(key) + ": " + _dumps(typed), out)
            n += 1
        call.members = n
        if n < len(keys) and call.str_key is None:
            key = keys[n]
            chunks = p.open_string(frame)
            if chunks is not None and (props is None or self._string_stays(name, key, kept)):
                call.str_key, call.str_chunks, call.str_idx = key, chunks, 0
                r.streaming = call
                # (with what the string holds already: one fragment)
                self._send(call, (", " if n else "") + _dumps(key) + ': "' + self._string_rest(call), out)
            elif r.streaming is call:
                self._stream_string(call, out)
        elif r.streaming is call:
            self._stream_string(call, out)
        if props is None and r.followable and not call.stuck:
            self._try_follow(r, call, frame, p)

    def _try_follow(self, r: _Region, call: _Call, frame: Any, p: Any) -> None:
        """Let the partial parser write the rest of the arguments object out (`JsonPartial.follow`), if it can
        and this stream stands where it does: every member sent whole, or all of the open string sent."""
        follow = getattr(p, "follow", None)
        if follow is None:
            r.followable = False
            return
        n, keys = call.members, frame.keys
        if call.str_key is None:
            if n != len(keys):
                return
        elif not (
            r.streaming is call
            and n == len(keys) - 1
            and call.str_idx == len(call.str_chunks)
            and p.open_string(frame) is call.str_chunks
        ):
            return
        done = follow(frame)
        if done:
            r.follow = call
            call.str_key = None
            r.streaming = None
        elif done is None:
            r.followable = False

    def _followed(self, r: _Region, text: str, res: Any, out: list[dict]) -> None:
        """After a `feed` of the partial parser while it writes the arguments out: send what it wrote; once it
        stopped, go on from the members it wrote."""
        call = r.follow
        piece = text if res is True else res
        if piece:
            self._send(call, piece, out)
        if r.partial.following is None:
            call.members = r.partial.followed
            r.follow = None

    def _stream_string(self, call: _Call, out: list[dict]) -> None:
        rest = self._string_rest(call)
        if rest:
            self._send(call, rest, out)

    @staticmethod
    def _string_rest(call: _Call) -> str:
        """The pieces of the streaming string not sent yet, encoded as a JSON fragment ("" if none); marks them
        sent."""
        chunks = call.str_chunks
        i = call.str_idx
        if len(chunks) <= i:
            return ""
        new = chunks[i] if len(chunks) == i + 1 else "".join(chunks[i:])
        call.str_idx = len(chunks)
        return _encode_string(new)[1:-1]

    def _params(self, name: str) -> Mapping | None:
        """The `properties` of tool `name`'s schema (None without them)."""
        if not self._tools:
            return None
        params = self._tools.by_name.get(name)
        if not params:
            return None
        props = params.get("properties")
        return props if isinstance(props, dict) else None

    def _kept(self, r: _Region) -> bool:
        """Whether region `r`'s field is a `TYPED_BODY` (`json`, `python-call-list`, or one with `value_parser_by`):
        an argument whose schema admits a string is left as written (`tools.ToolSchemas.type_tool_calls`)."""
        return bool(self._tpl.by_name[r.name].tool_typing)

    def _typed_args(self, name: str, value: Any, r: _Region) -> Any:
        props = self._params(name) if isinstance(value, dict) else None
        if props is not None:
            kept = self._kept(r)
            return {k: cast_value(v, props[k], kept) if k in props else v for k, v in value.items()}
        return value

    def _string_stays(self, name: str, key: str, kept: bool = False) -> bool:
        """Whether a string value for this parameter stays a string after tool-argument typing (`kept`: in a
        `TYPED_BODY` field, where a schema that admits a string leaves it as written)."""
        props = self._tools.by_name.get(name, {}).get("properties") if self._tools else None
        if not isinstance(props, dict) or key not in props or not isinstance(props[key], Mapping):
            return True
        if kept and "string" in _schema_types(props[key]):
            return True
        return admits_string(props[key])

    @staticmethod
    def _args_text(call: _Call | None, value: Any) -> str:
        """The parsed arguments `value` as sent: json.dumps, lone surrogates scrubbed. If `call` holds its complete
        arguments (`_Call.held`) written from a value json.dumps writes as it writes `value`, they are that text
        (checked without encoding `value`: ~4x cheaper, for arguments of any size)."""
        if call is not None and call.held is not None and call.value is not _MISSING and _same_json(value, call.value):
            return call.held
        return _scrub(_dumps(value))

    def _close_tool(self, r: _Region, value: Any, out: list[dict]) -> None:
        items = value if isinstance(value, list) else [value]
        for j, item in enumerate(items):
            fn = (
                item.get("function")
                if isinstance(item, dict) and isinstance(item.get("function"), dict)
                else item
            )
            name = fn.get("name") if isinstance(fn, dict) else None
            has_args = isinstance(fn, dict) and "arguments" in fn
            args = self._args_text(r.calls[j] if j < len(r.calls) else None, fn["arguments"]) if has_args else ""
            if j < len(r.calls):
                call = r.calls[j]
                sent = call.sent
                if call.stuck or call.name != name or not args.startswith(sent):
                    self._flag(
                        call,
                        "inconsistent",
                        "the parsed tool call differs from what was streamed "
                        f"(name {name!r}, arguments {args})",
                        out,
                        in_message=True,
                    )
                elif len(args) > len(sent):  # (`_advance`: not stuck, and `args` extends what was sent)
                    self._send(call, args[len(sent) :], out)
            else:
                call_id = item.get("id") if isinstance(item, dict) else None
                shown = name if isinstance(name, str) else ""
                call = self._announce(
                    r, shown, call_id if isinstance(call_id, str) and call_id else None, out
                )
                self._advance(call, args, out)
                if not isinstance(name, str) or not name:
                    self._flag(
                        call,
                        "invalid",
                        f"the parsed tool call has no function name: {_dumps(item)}",
                        out,
                        in_message=True,
                    )
            call.done = True
        for call in r.calls[len(items) :]:
            self._flag(
                call,
                "inconsistent",
                "this streamed tool call is not in the parsed message",
                out,
                in_message=False,
            )
        if r.length_cut:
            for call in r.calls:
                self._flag(
                    call,
                    "length",
                    "generation stopped at the token limit inside this tool call; "
                    "its arguments hold what was complete",
                    out,
                    in_message=True,
                )
